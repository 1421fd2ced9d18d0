"""Microsoft Teams: the Agents SDK app (app.py) over the one answering service."""

# Here rather than in app.py, so that a Slack-only `citebot serve` routes it without importing
# the Agents SDK (25 MB and a second of start-up).
MESSAGES_PATH = "/api/messages"
