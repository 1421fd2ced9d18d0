"""The Agents SDK app on aiohttp: POST /api/messages behind the SDK's JWT middleware, one
AgentApplication whose routes hand activities to TeamsConversations. Configuration uses the SDK's
own names (CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID, …__CLIENTSECRET, …__TENANTID,
…__AUTHTYPE, …__ANONYMOUS_ALLOWED), read by the SDK's own loader."""
from __future__ import annotations

import logging
from typing import Mapping

from aiohttp import web
from microsoft_agents.activity import ActivityTypes, load_configuration_from_env
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import (CloudAdapter, jwt_authorization_decorator, jwt_authorization_middleware,
                                              start_agent_process)
from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnState
from microsoft_agents.hosting.core.app import ProactiveOptions

from rag_graph.config import Settings

from bot.access_file import access_file
from bot.admin import Admin
from bot.answering import Answering
from bot.feedback import feedback_log
from bot.gaps import gap_log
from bot.shared import SharedState
from bot.teams import MESSAGES_PATH, identity
from bot.teams.conversation import MARKUP, TeamsConversations
from bot.teams.experts import ESCALATE_VERB, SAVE_VERB, TeamsExperts

log = logging.getLogger(__name__)
PREFIX = "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__"


def sdk_config(env: Mapping[str, str]) -> dict:
    """The SDK's configuration from environment-style names. Anonymous requests are accepted only
    for development: ANONYMOUS_ALLOWED=true and no client id (a registered bot never takes an
    unsigned request, whatever the flag says)."""
    config = load_configuration_from_env(env)
    connection = config["CONNECTIONS"].setdefault("SERVICE_CONNECTION", {}).setdefault("SETTINGS", {})
    for name in [name for name, value in connection.items() if value == ""]:
        del connection[name]  # `NAME=` (as in .env.example) means unset, not an empty auth type
    if connection.get("CLIENTID"):
        connection["ANONYMOUS_ALLOWED"] = False
    return config


def anonymous(config: dict) -> bool:
    """Unsigned requests are accepted (development without Azure)."""
    connection = config["CONNECTIONS"]["SERVICE_CONNECTION"]["SETTINGS"]
    return not connection.get("CLIENTID") and str(connection.get("ANONYMOUS_ALLOWED", "")).lower() in ("1", "true", "yes")


def config_problem(config: dict) -> str | None:
    connection = config["CONNECTIONS"]["SERVICE_CONNECTION"]["SETTINGS"]
    if not connection.get("CLIENTID") and not anonymous(config):
        return (f"{PREFIX}CLIENTID is not set (the Azure Bot's app id); for local development without "
                f"Azure set {PREFIX}ANONYMOUS_ALLOWED=true instead")
    auth_type = str(connection.get("AUTHTYPE") or "ClientSecret").lower()
    if connection.get("CLIENTID") and auth_type == "clientsecret" and not connection.get("CLIENTSECRET"):
        return f"{PREFIX}CLIENTSECRET is required with {PREFIX}CLIENTID (or set {PREFIX}AUTHTYPE)"
    if connection.get("CLIENTID") and auth_type == "certificate" and not connection.get("CERTPFXFILE"):
        return f"{PREFIX}CERTPFXFILE (the certificate's .pfx file) is required with {PREFIX}AUTHTYPE=certificate"
    if connection.get("CLIENTID") and not connection.get("TENANTID"):
        return f"{PREFIX}TENANTID is required for a single-tenant Azure Bot"
    return None


def messages_handler(settings: Settings, engine, config: dict, shared: SharedState | None = None):
    """The handler of POST /api/messages (behind the SDK's JWT check, which the caller applies).
    `shared`: the process's shared state (one for every platform); by default, from the settings."""
    shared = shared or SharedState(settings.redis_url)
    connections = MsalConnectionManager(**config)
    adapter = CloudAdapter(connection_manager=connections)
    # Typing is shown by the proactive turn that answers, not by the turn that only schedules it.
    # Proactive sends (to the experts' channel, back to the asker) take the stored Conversation
    # itself, kept in the shared escalation records; the SDK's storage holds none of them.
    agent = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections,
                                        start_typing_timer=False, proactive=ProactiveOptions(), **config)
    gaps = gap_log(settings, shared)
    access = access_file(settings.access_path)
    experts = TeamsExperts(settings, engine, shared, access, agent.proactive, adapter)
    conversations = TeamsConversations(Answering(engine, gaps, settings.ask_hint), settings,
                                       Admin(settings, engine, shared, MARKUP, platform="teams"),
                                       shared.memory(settings.history_turns),
                                       feedback_log(settings, shared), shared.seen(), access, gaps, experts)
    agent.before_turn(conversations.first_delivery)
    # Without a handler the SDK answers the feedback invoke with 501.
    agent.invoke("message/submitAction")(conversations.on_feedback)
    agent.invoke("message/fetchTask")(conversations.on_feedback_form)  # the custom feedback loop's dialog
    agent.adaptive_card.action_execute(ESCALATE_VERB)(experts.on_escalate)
    agent.adaptive_card.action_execute(SAVE_VERB)(experts.on_save)
    agent.conversation_update("membersAdded")(conversations.on_members_added)
    agent.activity(ActivityTypes.message)(conversations.on_message)

    async def messages(request: web.Request) -> web.Response:
        try:
            activity = await request.json()  # aiohttp keeps the body: the SDK reads it again
        except ValueError:
            activity = None
        if reason := identity.refusal(activity, settings):
            log.warning("refused an activity: %s", reason)
            return web.Response(status=403, text="activity refused")
        return await start_agent_process(request, agent, adapter)

    return messages


def authenticated(handler):
    """`handler` behind the SDK's JWT check, which reads only the Authorization header (the
    configuration comes from `app["agent_configuration"]`, see `auth_configuration`)."""
    return jwt_authorization_decorator(handler)


def auth_configuration(config: dict):
    """What the SDK's JWT check reads from `app["agent_configuration"]`."""
    return MsalConnectionManager(**config).get_default_connection_configuration()


def build_web_app(settings: Settings, engine, config: dict, shared: SharedState | None = None) -> web.Application:
    """The Teams route alone on an aiohttp app (tests); `citebot serve` mounts the same handler on
    the one HTTP server (bot/web.py)."""
    # The middleware rejects a missing or malformed bearer token before any signing-key fetch.
    app = web.Application(middlewares=[jwt_authorization_middleware])
    app.router.add_post(MESSAGES_PATH, messages_handler(settings, engine, config, shared))
    app["agent_configuration"] = auth_configuration(config)
    return app
