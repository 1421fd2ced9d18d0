"""Thin Bolt listeners: ack, hand the work to a bot module, let it render."""
