"""`/citebot [help|status|reload]`."""
from __future__ import annotations

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from ..admin import HELP, Admin
from ..render import escape


def register(app: App, admin: Admin) -> None:
    @app.command("/citebot")
    def citebot(ack: Ack, command: dict, respond: Respond, client: WebClient) -> None:
        words = (command.get("text") or "").split()
        sub = words[0].lower() if words else "help"
        if sub == "reload":
            ack()  # the admin check may call users.info: answer Slack first, reply via response_url
            admin.reload(command["user_id"], client, respond)
        elif sub == "status":
            ack(text=admin.status(), response_type="ephemeral")
        elif sub == "help":
            ack(text=HELP, response_type="ephemeral")
        else:
            ack(text=f"I don't know the command `{escape(sub)}`.\n\n{HELP}", response_type="ephemeral")
