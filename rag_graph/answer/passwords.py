"""Passwords written the way people write them in prose, in the languages our readers use:
"the password is Tr0ub4dor&3xyz", "password - …", "Passwort: …", "mot de passe : …", "root pw: …",
"Credentials: admin / …". detect-secrets' keyword plugin (redact.py) reads `keyword = value` as
source code writes it; these are the shapes it misses. A masked value is replaced, its keyword kept,
so the answer still says which password it withheld."""
from __future__ import annotations

import re
from typing import Callable

# The word for a password in English, German, French, Spanish, Portuguese, Dutch, Italian, Polish
# and the Nordic languages, and the abbreviations admins write ("root pw", "pwd").
_KEYWORD = (r"(?:pass(?:word|wort|wd|code|phrase)s?|pwd|pw|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha"
            r"|wachtwoord|l[öo]senord|passord|salasana|has[łl]o|parola(?:\s+d'ordine)?)")
# "password: x", "password = x", "mot de passe : x" (French puts a space before the colon).
_STRONG = r"\s*(?::=|=>|[:=])\s*"
# "password is x", "Passwort ist x", "le mot de passe est x", "password - x": such words also
# start ordinary sentences, so the value must look like a credential (see _credential_like).
_WEAK = r"\s+(?:is|ist|est|es|é|era|was|är|er|on|jest)\s+(?:now\s+|still\s+|set\s+to\s+)?|\s*[-–—]\s+"
# A value ends before the full stop or comma after it (a "!" or "?" may be part of a password).
_VALUE = r"[\"'`]?(?P<value>[^\s\"'`]*[^\s\"'`.,;)])"
_PHRASE = re.compile(rf"(?i)\b{_KEYWORD}(?P<sep>{_STRONG}|{_WEAK}){_VALUE}")
# "Credentials: admin / hunter22", "login: admin:hunter22": the second half of the pair.
_PAIR = re.compile(r"(?i)\b(?:credentials?|log[ -]?ins?|zugangsdaten|identifiants)\s*(?:[:=-]|\s(?:are|is|sind)\s)\s*"
                   r"[\"'`]?[^\s/:,;\"'`]+[\"'`]?\s*(?:/|:|,|\s\+\s)\s*" + _VALUE)


def _classes(value: str) -> int:
    return sum(bool(re.search(pattern, value)) for pattern in (r"[a-zäöüß]", r"[A-ZÄÖÜ]", r"\d", r"[^\w\s]"))


def _looks_like_value(value: str) -> bool:
    """After a colon: "Password: must be long" is advice, "password: hunter2" is a credential."""
    return len(value) >= 8 or any(not ch.isalpha() for ch in value)


def _credential_like(value: str) -> bool:
    """After "is" or a dash: "the password is shown at reception" is no credential; a value mixing
    letters with digits or symbols ("Tr0ub4dor&3xyz", "h4ckm3") is."""
    return len(value) >= 6 and _classes(value) >= 2 and not re.fullmatch(r"[A-ZÄÖÜ]?[a-zäöüß-]+", value)


def _masker(mask: str, pattern: re.Pattern, decide: Callable[[re.Match], bool]) -> Callable[[str], str]:
    def replace(match: re.Match) -> str:
        if not decide(match):
            return match.group(0)
        start = match.start("value") - match.start(0)
        return match.group(0)[:start] + mask + match.group(0)[match.end("value") - match.start(0):]
    return lambda text: pattern.sub(replace, text)


def mask_password_phrases(text: str, mask: str) -> str:
    strong = re.compile(_STRONG)
    phrase = _masker(mask, _PHRASE, lambda m: (_looks_like_value(m["value"]) if strong.fullmatch(m["sep"])
                                               else _credential_like(m["value"])))
    pair = _masker(mask, _PAIR, lambda m: _looks_like_value(m["value"]) and m["value"] != mask)
    return pair(phrase(text))
