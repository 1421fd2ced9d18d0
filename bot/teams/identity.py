"""Which activities the Teams endpoint takes, before the SDK reads them: only those of the
channels Citebot serves (`channelId: msteams`, CITEBOT_TEAMS_CHANNELS), and only those whose
replies go to a Teams service: a reply is a request from this server to the activity's
`serviceUrl`, so an address the sender chose would let anyone who reaches the endpoint (anonymous
mode has no token) make it send an answer, restricted text included, anywhere.

The hosts are those Microsoft documents for Teams (the M365 Agents SDK's TeamsServiceEndpoints:
public cloud, GCC, GCC High, DoD); CITEBOT_TEAMS_SERVICE_URLS adds origins for other sovereign
clouds, or a local connector in tests."""
from __future__ import annotations

from urllib.parse import urlparse

TEAMS_SERVICE_HOSTS = ("smba.trafficmanager.net", "smba.infra.gcc.teams.microsoft.com",
                       "smba.infra.gov.teams.microsoft.us", "smba.infra.dod.teams.microsoft.us")


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlparse(url.strip())
    try:
        port = parsed.port
    except ValueError:
        port = -1  # never equal to a listed origin's
    return parsed.scheme.lower(), (parsed.hostname or "").lower(), port


def service_url_allowed(url: str, extra: tuple[str, ...] = ()) -> bool:
    scheme, host, port = _origin(url or "")
    if scheme == "https" and host in TEAMS_SERVICE_HOSTS and port in (None, 443):
        return True
    return any((scheme, host, port) == _origin(allowed) for allowed in extra)


def refusal(activity: dict, settings) -> str | None:
    """Why the activity is refused (one line for the log), or None when it is taken."""
    if not isinstance(activity, dict):
        return None  # not JSON: the SDK answers it as malformed
    channel = activity.get("channelId")
    if channel not in settings.teams_channels:
        return f"channelId {channel!r} is not served (CITEBOT_TEAMS_CHANNELS: {', '.join(settings.teams_channels)})"
    if not service_url_allowed(str(activity.get("serviceUrl") or ""), settings.teams_service_urls):
        return (f"serviceUrl {str(activity.get('serviceUrl'))[:100]!r} is not a Teams service "
                "(add a sovereign cloud's origin to CITEBOT_TEAMS_SERVICE_URLS)")
    return None
