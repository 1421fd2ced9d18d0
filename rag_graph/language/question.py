"""What the words of a question say, before any evidence: the asker's own words apart from the
subject a follow-up borrowed from earlier turns, the options a multi-part question compares, the
role whose holder it asks for."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .words import term_set, terms, terms_held


@dataclass(frozen=True)
class Question:
    """A question as it is searched: the asker's own words, and the words it borrowed from
    elsewhere — a follow-up the thread's subject ("how is it paid?" borrows "wellness
    allowance"), a part of a multi-part question the other parts' words. Retrieval searches
    `text`, the borrowed words after the asker's in brackets; the answer writer weighs them
    apart (a borrowed word counts half, and only the asker's words say what is asked for)."""
    own: str
    carried: str = ""

    @property
    def text(self) -> str:
        return f"{self.own} ({self.carried})" if self.carried else self.own


def read(question: Question | str) -> Question:
    """A question given as text (by a test, a tool, an API caller) is all the asker's own words;
    the flow hands on the Question it read."""
    return question if isinstance(question, Question) else Question(question)


def options(part: Question, parts: list[Question]) -> tuple[set[str], set[str]]:
    """(the words only this part has, the words only the others have) when the parts ask one
    question of different options ("…my regular comp time" / "…my travel comp time": "regular",
    "travel"; "Skyline Analytics for the Standard tier - what does it cost" / "Harbor Sync for
    …"): they share at least as many words as either has of its own. Nothing for separate
    questions ("how do I set up my remote days" / "what hours must I be online")."""
    mine = set(terms(part.own))
    others = set().union(*(terms(p.own) for p in parts if p is not part))
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
