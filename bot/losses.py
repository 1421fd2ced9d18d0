"""What an index build cannot show as written, because a setting is missing: said once at the end
of `citebot index` and when `citebot serve` starts, so the admin hears of it before a user does.

- documents without a `url` while CITEBOT_SOURCE_URL is unset: cited, but without a link;
- documents with an `audience` while CITEBOT_ACCESS is unset: hidden from every answer (fail
  closed: nobody can be shown to belong to the audience)."""
from __future__ import annotations

EXAMPLES = 3


def _some(paths: list[str]) -> str:
    return ", ".join(paths[:EXAMPLES]) + (f" and {len(paths) - EXAMPLES} more" if len(paths) > EXAMPLES else "")


def silent_losses(stats: dict, settings) -> list[str]:
    """One line per loss, empty when there is none. `stats`: a refresh's figures (RefreshStats.as_dict,
    or the last build's figures an unchanged run reads back)."""
    lines = []
    unlinked, restricted = stats.get("unlinked") or [], stats.get("restricted") or []
    if unlinked and not settings.source_url:
        lines.append(f"{_count(unlinked)} without a `url` ({_some(unlinked)}) {_is(unlinked)} cited without a link: "
                     f"give {_it(unlinked)} a `url` in {_its(unlinked)} front matter or set CITEBOT_SOURCE_URL")
    if restricted and settings.access_path is None:
        lines.append(f"{_count(restricted)} with an `audience` ({_some(restricted)}) {_is(restricted)} hidden from "
                     "every answer because CITEBOT_ACCESS is unset: set it to the access file that names their groups")
    return lines


def _count(paths: list[str]) -> str:
    return f"{len(paths)} document{'s' if len(paths) != 1 else ''}"


def _is(paths: list[str]) -> str:
    return "is" if len(paths) == 1 else "are"


def _it(paths: list[str]) -> str:
    return "it" if len(paths) == 1 else "them"


def _its(paths: list[str]) -> str:
    return "its" if len(paths) == 1 else "their"
