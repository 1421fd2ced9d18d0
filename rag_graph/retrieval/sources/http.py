"""HTTP for the sources that speak it: one client per sync with a timeout, the vendor's throttling
honoured (429 or 503 with `Retry-After`, in seconds or as a date), and errors as one line that
names the status and the address, never a header (the credentials travel in headers)."""
from __future__ import annotations

import email.utils
import time

import httpx

from .base import SourceError, redact

TIMEOUT = 30.0
RETRIES = 5
MAX_WAIT = 120.0  # seconds: a longer Retry-After fails this sync; the next one tries again


def retry_after(response: httpx.Response, attempt: int) -> float:
    value = response.headers.get("Retry-After", "")
    if value.strip().isdigit():
        return float(value)
    if value:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else 1.0
    return float(2 ** attempt)  # no advice given: back off


class Http:
    def __init__(self, headers: dict | None = None, auth=None, sleep=time.sleep, follow_redirects: bool = True):
        self.client = httpx.Client(headers=headers or {}, auth=auth, timeout=TIMEOUT,
                                   follow_redirects=follow_redirects)
        self.sleep = sleep
        self.waited = 0.0  # seconds spent honouring Retry-After, for the sync report

    def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        for attempt in range(RETRIES + 1):
            try:
                response = self.client.request(method, url, **kwargs)
            except httpx.HTTPError as error:
                raise SourceError(redact(f"cannot reach {_where(url)}: {type(error).__name__}")) from None
            if response.status_code not in (429, 503) or attempt == RETRIES:
                return response
            wait = retry_after(response, attempt)
            if wait > MAX_WAIT:
                raise SourceError(f"{_where(url)} asks to wait {wait:.0f} s (HTTP {response.status_code}); next sync tries again")
            self.waited += wait
            self.sleep(wait)
        raise AssertionError("unreachable")

    def get(self, url: str, **kwargs) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def json(self, url: str, **kwargs) -> dict:
        response = self.get(url, **kwargs)
        check(response)
        try:
            return response.json()
        except ValueError:
            raise SourceError(f"{_where(url)} did not answer JSON (HTTP {response.status_code})") from None

    def close(self) -> None:
        self.client.close()


def check(response: httpx.Response) -> None:
    if response.status_code >= 400:
        hint = {401: " (check the credentials)", 403: " (the account lacks a permission: see docs/sources.md)",
                404: " (not found)"}.get(response.status_code, "")
        raise SourceError(f"HTTP {response.status_code} from {_where(str(response.request.url))}{hint}")


def _where(url: str) -> str:
    """The address without its query (a cursor, a token in an odd API): enough to act on."""
    return redact(str(url).split("?", 1)[0])
