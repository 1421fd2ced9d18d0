"""What kind of answer a question asks for (a person, a date, a span, a frequency, a bound, an
amount), and the sentences that hold one."""
from __future__ import annotations

import re

from ..language.asks import NUMBER_WORDS, asks_for
from ..language.markdown import link_labels
from ..language.words import term_set
from ..retrieval.entities import Gazetteer

# A "who" question wants a sentence that names someone: a person the corpus names (its gazetteer
# knows them), a role or team, or an address to write to. Any run of capitalised words is no
# name ("Visit the Live Captioning InSite page").
_ROLE_OR_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.\w+|(?<![\w@])[@#][A-Za-z][\w-]*(?:/[\w-]+)?|\b(supervisors?|managers?|directors?|team|office|officers?|"
                              r"coordinators?|administrators?|leads?|desk|department|HR|people ops|staff|committee|"
                              r"specialists?|representatives?)\b", re.I)


# The sentences that hold each kind of answer (language/asks.py says which kind is asked for): a
# "when" wants a date or a weekday, a "how long" a span of time ("within three calendar days", not
# "Form 3676"), a "how often" a frequency, a "how many" a number. Capitalised: "you may" and
# "march" are no dates.
_MONTH = r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December)"


_MONTH_OR_DAY = rf"{_MONTH}|(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"


_NUMBER = rf"(?:\d|\b(?:{NUMBER_WORDS})\b)"


_HOLDS_MOST = re.compile(rf"\b(?:max(?:imum)?|up to|at most|no more than|caps?|capped|limit(?:ed)?|ceiling)\b.{{0,40}}?{_NUMBER}"
                         rf"|{_NUMBER}[\w ]{{0,20}}?\b(?:max(?:imum)?|caps?|limit)\b", re.I)


HOLDS_AMOUNT = re.compile(rf"{_NUMBER}|\b(?:first|last)\b", re.I)


HOLDS = {
    "person": _ROLE_OR_ADDRESS,
    "month": re.compile(rf"\b({_MONTH})\b"),
    "date": re.compile(rf"\b({_MONTH_OR_DAY})\b|\b\d{{1,2}}(st|nd|rd|th)\b|\b\d{{4}}\b"
                       r"|\b\d+\s*(days?|weeks?|months?|years?)\b|\banniversary\b"
                       r"|\b(first|last|final)\s+(business\s+|work(ing)?\s+)?day\b"  # "the last day of the month"
                       r"|\bend of the (day|week|month|year|quarter|pay period)\b"
                       # a time counted from an event: "one year after it is issued"
                       rf"|\b({NUMBER_WORDS}|a|an)\s+(business\s+|calendar\s+)?"
                       r"(days?|weeks?|months?|years?|pay periods?)\s+(after|before|from|prior to)\b", re.I),
    "duration": re.compile(rf"\b(\d+|{NUMBER_WORDS}|a|an|few)[\s-]+"
                           r"(to[\s-]+\w+[\s-]+)?(calendar[\s-]|business[\s-]|work(ing)?[\s-])?"
                           r"(minutes?|hours?|days?|weeks?|months?|years?|pay periods?)\b|\bwithin\b|\bimmediately\b", re.I),
    "frequency": re.compile(r"\b(once|twice|every|daily|weekly|monthly|annually|yearly|\w+ times)\b"
                            r"|\b(a|per) (day|week|month|year)\b", re.I),
    "most": _HOLDS_MOST,
    "amount": HOLDS_AMOUNT,
}


def holds_answer(sentence: str, wanted: list[re.Pattern], people: Gazetteer | None = None) -> bool:
    """The sentence holds the kind of answer asked for; `people`, for a "who" question, adds
    the persons the corpus names. A link's address is no answer: the digits of
    "[the form](https://drive.example/file/d/13H21…)" are not a number of anything."""
    sentence = link_labels(sentence)
    return any(holds.search(sentence) for holds in wanted) or bool(
        people is not None and people.mentions(sentence, where=lambda e: e.person))


def names_someone(sentence: str, gazetteer: Gazetteer, asked: set[str]) -> bool:
    """The sentence names a person, or a name of two words or more that the question does not
    hold ("Dana Okafor", not "All Hands" of "who runs the All Hands?")."""
    return any(m.entity.person or (m.entity.kind == "name" and len(m.entity.key) >= 2
                                   and not term_set(m.entity.name) & asked)
               for m in gazetteer.mentions(link_labels(sentence)))


# "How many days a week can I work from home?" asks how much the rule allows: the answer is the
# bound ("up to 3 days a week"), not any sentence with a count in it ("…who works remotely at
# least one day a week can claim a stipend").
_ASKS_ALLOWED = re.compile(r"\bhow (?:many|much|long)\b[^?]{0,40}?\b(?:can|may|could)\s+(?:I|we|you|employees|staff|people)\b", re.I)


def wanted_answer(question: str) -> list[re.Pattern]:
    """The pattern of the kind of answer a question asks for (a name, a date, a number), if any."""
    kind = asks_for(question)
    if kind in ("duration", "amount") and _ASKS_ALLOWED.search(question):
        return [HOLDS["most"]]
    return [HOLDS[kind]] if kind else []
