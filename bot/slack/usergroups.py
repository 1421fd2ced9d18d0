"""Members of Slack user groups (usergroups.users.list), for the access file's
`slack_usergroups`: cached for a few minutes, since every DM question asks."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)
TTL_SECONDS = 300  # a member added to a group is heard within five minutes


class UsergroupMembers:
    def __init__(self, client: WebClient, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.client, self.ttl, self.clock = client, ttl, clock
        self._cache: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, usergroup: str) -> frozenset[str]:
        now = self.clock()
        with self._lock:
            cached = self._cache.get(usergroup)
        if cached and now - cached[0] < self.ttl:
            return cached[1]
        try:
            members = frozenset(self.client.usergroups_users_list(usergroup=usergroup).get("users") or ())
        except SlackApiError as error:
            # Not knowing the members means not granting the group; the next question asks again.
            log.warning("usergroups.users.list failed for %s: %s", usergroup, error.response.get("error"))
            return frozenset()
        with self._lock:
            self._cache[usergroup] = (now, members)
        return members
