"""`/citebot [help|status|reload|gaps]`."""
from __future__ import annotations

import logging

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.admin import Admin
from bot.slack.render import escape

log = logging.getLogger(__name__)


def is_workspace_admin(client: WebClient, user_id: str) -> bool:
    try:
        user = client.users_info(user=user_id)["user"]
    except SlackApiError as error:
        log.warning("users.info failed for %s: %s", user_id, error.response.get("error"))
        return False
    return any(user.get(flag) for flag in ("is_admin", "is_owner", "is_primary_owner"))


def register(app: App, admin: Admin) -> None:
    @app.command("/citebot")
    def citebot(ack: Ack, command: dict, respond: Respond, client: WebClient) -> None:
        words = (command.get("text") or "").split()
        sub = words[0].lower() if words else "help"
        if sub in ("reload", "gaps"):
            ack()  # the admin check may call users.info: answer Slack first, reply via response_url
            user = command["user_id"]
            allowed = admin.is_listed(user) or (admin.settings.allow_workspace_admins
                                                and is_workspace_admin(client, user))
            if sub == "reload":
                admin.reload(user, allowed, respond)
            else:  # response_url replies are ephemeral by default: only the admin sees the report
                respond(admin.gaps(user, allowed))
        elif sub == "status":
            channel, user = command.get("channel_id") or "", command.get("user_id")
            place = admin.access.for_user(user) if channel.startswith("D") else admin.access.for_channel(channel)
            ack(text=admin.status(user, place), response_type="ephemeral")
        elif sub == "help":
            ack(text=admin.help(), response_type="ephemeral")
        else:
            ack(text=f"I don't know the command `{escape(sub)}`.\n\n{admin.help()}", response_type="ephemeral")
