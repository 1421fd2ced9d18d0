"""What kind of answer a question asks for (a person, a date, a span, a frequency, a bound, an
amount), and the sentences that hold one."""
from __future__ import annotations

import re

from ..language.markdown import link_labels
from ..language.words import term_set
from ..retrieval.entities import Gazetteer

# A "who" question wants a sentence that names someone: a person the corpus names (its gazetteer
# knows them), a role or team, or an address to write to. Any run of capitalised words is no
# name ("Visit the Live Captioning InSite page"). "Who" opens the question or a clause of it
# ("…, who do they contact?", "to whom"); after a noun it asks nothing ("an expert who comes to talk").
ASKS_PERSON = re.compile(r"(?:^|[,;:()–—-]\s*|\b(?:and|but|so|or|then|to|know|sure|wonder|wondering|tell me|ask)\s+)who(?:m|se)?\b", re.I)


_ROLE_OR_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.\w+|(?<![\w@])[@#][A-Za-z][\w-]*(?:/[\w-]+)?|\b(supervisors?|managers?|directors?|team|office|officers?|"
                              r"coordinators?|administrators?|leads?|desk|department|HR|people ops|staff|committee|"
                              r"specialists?|representatives?)\b", re.I)


# What kind of answer the question asks for, and the sentences that hold one: a "when" wants a
# date or a weekday, a "how long" a span of time ("within three calendar days", not "Form 3676"),
# a "how often" a frequency, a "how many" a number. The first kind the question asks for counts.
# Capitalised: "you may" and "march" are no dates.
_MONTH = r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December)"


_MONTH_OR_DAY = rf"{_MONTH}|(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"


# "When" asks for a date where it opens a question ("when does…?", "When is…", "when's…"), not
# where it joins two clauses ("what happens when a holiday lands on my day off?").
_ASKS_DATE = re.compile(r"^\W*when\b|\bwhen(?:'s|’s|\s+(?:do|does|did|is|are|was|were|will|would|can|could|should|"
                        r"shall|must|may|might|has|have|had|am)\b)"
                        r"|\b(what (dates?|day|time)|which (dates?|days?|months?)|deadline|due)\b|\bkick in\b", re.I)


_ASKS_DURATION = re.compile(r"\bhow (long|soon|quickly|fast|far ahead|far in advance|early|late)\b"
                            r"|\bhow many (minutes|hours|days|weeks|months|years)\b", re.I)


_ASKS_FREQUENCY = re.compile(r"\bhow (often|frequently)\b", re.I)


_ASKS_AMOUNT = re.compile(r"\b(how (many|much|long|soon|far|fast|quickly|big)|what (percent|percentage|amount))\b", re.I)


# "What's the most time off I can get…?", "is there a cap on…?" ask for a bound: "a maximum of 80
# hours", "up to 27 days", "after hitting the 80 hour cap".
_ASKS_MOST = re.compile(r"\b(?:what(?:'s|’s| is| are)?|is there) (?:the |a |an |any )?(?:most|max|maximum|limit|cap|ceiling)\b", re.I)


_NUMBER = r"(?:\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b)"


_HOLDS_MOST = re.compile(rf"\b(?:max(?:imum)?|up to|at most|no more than|caps?|capped|limit(?:ed)?|ceiling)\b.{{0,40}}?{_NUMBER}"
                         rf"|{_NUMBER}[\w ]{{0,20}}?\b(?:max(?:imum)?|caps?|limit)\b", re.I)


HOLDS_AMOUNT = re.compile(rf"{_NUMBER}|\b(?:first|last)\b", re.I)


_ASKS_MONTH = re.compile(r"\b(?:what|which)\s+months?\b", re.I)  # a month's name, not "two months before"


_ANSWER_TYPES = (
    (ASKS_PERSON, _ROLE_OR_ADDRESS),
    (_ASKS_MONTH, re.compile(rf"\b({_MONTH})\b")),
    (_ASKS_DATE, re.compile(rf"\b({_MONTH_OR_DAY})\b|\b\d{{1,2}}(st|nd|rd|th)\b|\b\d{{4}}\b"
                            r"|\b\d+\s*(days?|weeks?|months?|years?)\b|\banniversary\b"
                            r"|\b(first|last|final)\s+(business\s+|work(ing)?\s+)?day\b"  # "the last day of the month"
                            r"|\bend of the (day|week|month|year|quarter|pay period)\b"
                            # a time counted from an event: "one year after it is issued"
                            r"|\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|a|an)\s+(business\s+|calendar\s+)?"
                            r"(days?|weeks?|months?|years?|pay periods?)\s+(after|before|from|prior to)\b", re.I)),
    (_ASKS_DURATION, re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a|an|few)[\s-]+"
                                r"(to[\s-]+\w+[\s-]+)?(calendar[\s-]|business[\s-]|work(ing)?[\s-])?"
                                r"(minutes?|hours?|days?|weeks?|months?|years?|pay periods?)\b|\bwithin\b|\bimmediately\b", re.I)),
    (_ASKS_FREQUENCY, re.compile(r"\b(once|twice|every|daily|weekly|monthly|annually|yearly|\w+ times)\b"
                                 r"|\b(a|per) (day|week|month|year)\b", re.I)),
    (_ASKS_MOST, _HOLDS_MOST),
    (_ASKS_AMOUNT, HOLDS_AMOUNT),
)


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


def wanted_answer(question: str) -> list[re.Pattern]:
    """The pattern of the kind of answer a question asks for (a name, a date, a number), if any."""
    return [holds for asks, holds in _ANSWER_TYPES if asks.search(question)][:1]
