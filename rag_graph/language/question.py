"""What the words of a question say, before any evidence: the words that ask, the subject a
follow-up carried over from earlier turns, the options a multi-part question compares."""
from __future__ import annotations

import re

from .words import term_set, terms, terms_held

# A follow-up carries the thread's subject after the asker's own words, in brackets:
# "how is it paid? (wellness allowance)".
_CARRIED = re.compile(r"\s\(([^()]*)\)$")


def split_follow_up(query: str) -> tuple[str, str]:
    """(the asker's own words, the subject carried over from earlier turns) of a resolved query."""
    match = _CARRIED.search(query)
    return (query[: match.start()], match.group(1)) if match else (query, "")


def options(part: str, parts: list[str]) -> tuple[set[str], set[str]]:
    """(the words only this part has, the words only the others have) when the parts ask one
    question of different options ("…my regular comp time" / "…my travel comp time": "regular",
    "travel"; "Skyline Analytics for the Standard tier - what does it cost" / "Harbor Sync for
    …"): they share at least as many words as either has of its own. Nothing for separate
    questions ("how do I set up my remote days" / "what hours must I be online")."""
    mine = set(terms(split_follow_up(part)[0]))
    others = set().union(*(terms(split_follow_up(p)[0]) for p in parts if p is not part))
    own, theirs, shared = mine - others, others - mine, mine & others
    return (own, theirs) if shared and len(shared) >= max(len(own), len(theirs)) else (set(), set())


# "Who is our COO?" asks who holds a role: "Our COO runs the All Hands" names the role, not its
# holder, and is no answer; only a sentence that names someone is (else the bot says it doesn't know).
_ASKS_HOLDER = re.compile(r"^\W*who\s*(?:is|are|was|'s|’s)\s+(?:our|the|your|my)\s+(?:[\w-]+\s+){0,3}?"
                          r"(?P<role>CEO|COO|CTO|CFO|CIO|CISO|CPO|CRO|CMO|VP|founders?|co-?founders?|president|chair\w*|"
                          r"owner|boss|head of [\w ]+|director of [\w ]+)\W*$", re.I)


def role_asked(question: str) -> str:
    """The role whose holder the question asks for ("COO" of "who is our COO?"), "" if none."""
    match = _ASKS_HOLDER.search(question)
    return match["role"] if match else ""


def holds_role(text: str, role: str) -> bool:
    """The text names the role, as the asker wrote it or, for an acronym, written out
    ("CEO": "Chief Executive Officer")."""
    return term_set(role) <= terms_held(role, text)
