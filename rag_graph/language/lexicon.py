"""Word lists, each with why it exists: words that frame a question, name no subject, ask, point
back or lead a phrase. (Stopwords live with the tokeniser in words.py.)"""
from __future__ import annotations

import re

from .words import terms, words

# Words that frame a question rather than name its subject: their absence from the evidence
# says nothing ("what's the parking policy?" is answered by a section on parking).
FRAME_WORDS = frozenset(terms(
    "policy policies rule rules process procedure guideline guidelines option options detail details "
    "information info include includes included cover covers covered offer offers allowed allow "
    "eligible eligibility apply applies available company companies compare compared comparison "
    "differ differs difference different versus vs between true correct really actually exactly "
    "current currently latest now today still anymore nowadays "
    # the quantity asked for ("what's the cap on…", "how long…"): a document states it as
    # "up to 10 days", not as "the cap is"
    "cap limit maximum max minimum min number amount total long"))


# Words that say when, how often or how sure, or answer yes or no, never what: no knowledge gap
# is about them ("who gives the final yes on term renewals?" asks who approves). Nor is one of
# the function words the dictionary does not list as such, which would pass for a name ("…not
# sure whether a side job counts": a policy on side jobs need not write "whether").
NOT_A_SUBJECT = frozenset("ago already ever yet soon often usually maybe probably really just still "
                          "anymore currently recently lately yes no okay ok "
                          "whether unless although albeit whereas whilst lest neither whatever whichever whoever "
                          "onto toward towards upon versus vs among amongst despite beside underneath till unto "
                          "thru cannot".split())


# Words that name no subject a reader could look for: "people" in "a cap for people who've
# been here long", the "five" of "after five years".
VAGUE = frozenset("people folks someone anyone everyone something anything everything stuff thing things "
                  "day days week weeks month months year years one two three four five six seven eight nine "
                  "ten".split())


# Words that ask: not part of what a question is about, so a follow-up or a sub-question that
# has only these and stopwords asks nothing of its own.
QUESTION_WORDS = frozenset("who what when where why how which whose can could do does is are "
                           "was were will would should".split())


# Words that point back at the thread's subject: a follow-up with one of them borrows it
# ("how long does each one run?").
REFERRING = frozenset("he she him her his hers they them their it its this that these those there "
                      "one ones same".split())

# "there" of "is there…?", "are there…", "there is…" asks whether something exists and points
# at no place: in a short turn it asks of the thread's subject ("is there a cap on how many
# days?" after jury duty), in a question with a subject of its own not ("Is there a stipend for
# home office equipment?").
_EXISTENTIAL_THERE = re.compile(r"\b(?:(?:is|are|was|were)\s+there|there(?:'s|\s+(?:is|are|was|were|be)))\b", re.I)


def asks_existence(text: str) -> bool:
    """The text asks whether something exists ("is there a cap…?", "are there…")."""
    return bool(_EXISTENTIAL_THERE.search(text))


def refers_back(text: str) -> bool:
    """A word of the text points back ("it", "she", "there" as a place), "there" of "is there…?" not."""
    return any(w in REFERRING for w in words(_EXISTENTIAL_THERE.sub(" ", text)))


# Words that open a noun phrase: a compared option that opens with one ("…versus a pricey
# conference") takes the place of the phrase the other side opens the same way.
LEADS = frozenset("a an the my our your their his her its".split())
