"""Who may see what (CITEBOT_ACCESS): the access file, and the scope of the place a question was
asked in. In a channel, what the channel may see decides (everyone there reads the answer); in a
DM, the asker's groups decide. The scope goes to Engine.ask, which enforces it inside retrieval
(rag_graph/retrieval/scope.py). Without CITEBOT_ACCESS every place sees only the documents without an
`audience:`; an access file that is missing or malformed stops the bot at start.

    groups:
      people-ops:
        slack_users: [U0123ABCD]
        slack_usergroups: [S0PEOPLE]      # resolved with usergroups.users.list, cached
        teams_users: ["6f1c…"]            # AAD object ids
        source_groups: ["confluence:hr-team", "aad:7f3c…", "google:hr@acme.com"]  # mirrored permissions
    channels:
      C0HRTEAM: {groups: [people-ops]}    # a Slack channel id, or a Teams channel / team id
      C0ENGHELP: {sources: ["engineering/**"]}
      C0HELPDESK:                         # no groups: sees the documents for everyone
        answer: all                       # answers questions without a mention (default: mention)
        experts: {channel: C0EXPERTS, group: people-ops}   # who is asked when Citebot can't answer
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from rag_graph.config import SettingsError
from rag_graph.engine import Scope

SETTING = "CITEBOT_ACCESS"


class AccessError(SettingsError):
    """The access file cannot be used; one line naming the setting and the problem."""


def _names(values: list[str]) -> list[str]:
    if any(not value.strip() for value in values):
        raise ValueError("must not hold empty names")
    return [value.strip() for value in values]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Group(_Strict):
    slack_users: list[str] = []
    slack_usergroups: list[str] = []
    teams_users: list[str] = []
    # Groups of a source with `permissions: mirror` (rag_graph/retrieval/sources): a document
    # limited to one of them upstream is for this group here. Compared case-blind.
    source_groups: list[str] = []

    _clean = field_validator("slack_users", "slack_usergroups", "teams_users")(_names)

    @field_validator("source_groups")
    @classmethod
    def _source_groups(cls, values: list[str]) -> list[str]:
        if any(":" not in value.strip(":") for value in _names(values)):
            raise ValueError("must be written `<source kind>:<group>`, like confluence:hr-team")
        return [value.strip().lower() for value in values]


class Experts(_Strict):
    channel: str  # where questions Citebot cannot answer are posted (a Slack or Teams channel id)
    group: str  # who may save an expert's reply as a verified answer (admins may too)


class Channel(_Strict):
    groups: list[str] = []
    sources: list[str] = []  # path globs below the corpus root; empty = every document
    answer: Literal["mention", "all"] = "mention"  # all: a help channel, answered without a mention
    experts: Experts | None = None
    # A Slack Connect channel (shared with another organisation) sees only the documents for
    # everyone unless its entry says it may see what `groups` grant.
    slack_connect: bool = False

    _clean = field_validator("groups", "sources")(_names)


class _File(_Strict):
    groups: dict[str, Group] = {}
    channels: dict[str, Channel] = {}


class Access:
    def __init__(self, groups: dict[str, Group] | None = None, channels: dict[str, Channel] | None = None):
        self.groups = {name.strip().lower(): group for name, group in (groups or {}).items()}
        if bad := [name for name in self.groups if ":" in name]:  # ':' marks a source group in an audience
            raise ValueError(f"groups.{bad[0]}: a group name must not contain ':'")
        self.channels = channels or {}
        for channel_id, channel in self.channels.items():
            unknown = [g for g in channel.groups if g.lower() not in self.groups]
            if unknown:
                raise ValueError(f"channels.{channel_id}.groups names undefined group(s) {', '.join(unknown)}")
            if channel.experts and channel.experts.group.lower() not in self.groups:
                raise ValueError(f"channels.{channel_id}.experts.group names undefined group {channel.experts.group}")

    @classmethod
    def load(cls, path: Path | str | None) -> "Access":
        """The file CITEBOT_ACCESS names; None (unset) is the public-only default."""
        if path is None:
            return cls()
        path = Path(path)
        try:
            text = path.read_bytes().decode("utf-8")
        except OSError as error:
            raise AccessError(f"{SETTING}: cannot read {path} ({error.strerror or error})") from None
        except UnicodeDecodeError:
            raise AccessError(f"{SETTING}: {path} is not UTF-8 text") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: Path) -> "Access":
        """The access file's text (`path` names it in messages); raises AccessError."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            raise AccessError(f"{SETTING}: {path} is not valid YAML"
                              + (f" (line {mark.line + 1})" if mark else "")) from None
        if not isinstance(data, dict):
            raise AccessError(f"{SETTING}: {path} must be a mapping with `groups:` and `channels:`")
        # YAML reads an unquoted id such as 12345 as a number; ids are names here.
        data = {key: {str(k): v for k, v in value.items()} if isinstance(value, dict) else value
                for key, value in data.items()}
        try:
            parsed = _File.model_validate(data)
            return cls(parsed.groups, parsed.channels)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            raise AccessError(f"{SETTING}: {path}: {where}: {first['msg']}") from None
        except ValueError as error:
            raise AccessError(f"{SETTING}: {path}: {error}") from None

    # --- the scope of a place -----------------------------------------------------------------

    def place(self, *channel_ids: str | None) -> Channel:
        """The access file's entry for a place (the first of its ids it lists), else the default."""
        return next((self.channels[c] for c in channel_ids if c and c in self.channels), Channel())

    def group_members(self, name: str) -> Group:
        return self.groups.get(name.strip().lower(), Group())

    def for_channel(self, *channel_ids: str | None) -> Scope:
        """What a channel may see: the first of its ids the file lists (Teams: the channel, then
        its team); a channel the file does not list sees the documents for everyone."""
        channel = next((self.channels[c] for c in channel_ids if c and c in self.channels), Channel())
        return Scope(audiences=self._audiences(g.lower() for g in channel.groups), sources=tuple(channel.sources))

    def for_user(self, user_id: str | None,
                 usergroup_members: Callable[[str], Iterable[str]] = lambda usergroup: ()) -> Scope:
        """A DM: the groups that list the user by Slack id, through a Slack user group (members
        from `usergroup_members`), or by Teams AAD object id."""
        if not user_id:
            return Scope()
        return Scope(audiences=self._audiences(
            name for name, group in self.groups.items()
            if user_id in group.slack_users or user_id in group.teams_users
            or any(user_id in usergroup_members(usergroup) for usergroup in group.slack_usergroups)))

    def _audiences(self, names: Iterable[str]) -> frozenset[str]:
        """The groups, and the source groups they map: a mirrored document's audience."""
        names = set(names)
        return frozenset(names | {s for name in names for s in self.groups[name].source_groups})

    def unmapped(self, source_groups: Iterable[str]) -> list[str]:
        """The source groups no group maps: a document limited to those alone reaches nobody."""
        mapped = {s for group in self.groups.values() for s in group.source_groups}
        return sorted({g.lower() for g in source_groups} - mapped)
