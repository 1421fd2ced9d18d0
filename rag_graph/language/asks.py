"""What a question asks for, in one table: a person, a month, a date, a span of time, a
frequency, a bound, an amount (the first kind a question asks for counts), and besides them a
procedure or a place. The answer writer pairs each kind with the sentences that hold one
(answer/kinds.py); a follow-up that asks for nothing of its own borrows the words that asked
from the question before it (ASKING_WORDS)."""
from __future__ import annotations

import re

# A "who" question wants someone. "Who" opens the question or a clause of it ("…, who do they
# contact?", "to whom"); after a noun it asks nothing ("an expert who comes to talk").
ASKS_PERSON = re.compile(r"(?:^|[,;:()–—-]\s*|\b(?:and|but|so|or|then|to|know|sure|wonder|wondering|tell me|ask)\s+)who(?:m|se)?\b", re.I)

ASKS_MONTH = re.compile(r"\b(?:what|which)\s+months?\b", re.I)  # a month's name, not "two months before"

# "When" asks for a date where it opens a question ("when does…?", "When is…", "when's…"), not
# where it joins two clauses ("what happens when a holiday lands on my day off?").
ASKS_DATE = re.compile(r"^\W*when\b|\bwhen(?:'s|’s|\s+(?:do|does|did|is|are|was|were|will|would|can|could|should|"
                       r"shall|must|may|might|has|have|had|am)\b)"
                       r"|\b(what (dates?|day|time)|which (dates?|days?|months?)|deadline|due)\b|\bkick in\b", re.I)

ASKS_DURATION = re.compile(r"\bhow (long|soon|quickly|fast|far ahead|far in advance|early|late)\b"
                           r"|\bhow many (minutes|hours|days|weeks|months|years)\b", re.I)

ASKS_FREQUENCY = re.compile(r"\bhow (often|frequently)\b", re.I)

# "What's the most time off I can get…?", "is there a cap on…?" ask for a bound: "a maximum of 80
# hours", "up to 27 days", "after hitting the 80 hour cap".
ASKS_MOST = re.compile(r"\b(?:what(?:'s|’s| is| are)?|is there) (?:the |a |an |any )?(?:most|max|maximum|limit|cap|ceiling)\b", re.I)

ASKS_AMOUNT = re.compile(r"\b(how (many|much|long|soon|far|fast|quickly|big)|what (percent|percentage|amount))\b", re.I)

# The table, in the order the kinds are tried: the first that matches is what is asked for.
ASKS = (
    ("person", ASKS_PERSON),
    ("month", ASKS_MONTH),
    ("date", ASKS_DATE),
    ("duration", ASKS_DURATION),
    ("frequency", ASKS_FREQUENCY),
    ("most", ASKS_MOST),
    ("amount", ASKS_AMOUNT),
)

# "how do I…?" asks for a procedure; "how many / long / often…?" for an amount.
ASKS_PROCEDURE = re.compile(r"\bhow\b(?!\s+(?:many|much|long|often|soon|far|early|late|big|fast|quickly|frequently)\b)"
                            r"|\bsteps?\b", re.I)

ASKS_PLACE = re.compile(r"\bwhere\b", re.I)

# The words that ask for a person, a date or an amount. A follow-up that asks for nothing of its
# own ("what about for a V8 upgrade?" after "who do I cc when I'm upgrading libuv?") asks for what
# the question before it did: it carries these words of it ("who"), and the answer reads the kind
# from them.
ASKING_WORDS = re.compile(r"\b(?:who(?:m|se)?|when|how (?:many|much|long|often|soon|far|early|late|quickly)|"
                          r"what (?:time|day|date|month|percent(?:age)?|amount))\b", re.I)

# Numbers written as words, as the documents write small counts ("three calendar days").
NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|twelve"


def asks_for(question: str) -> str:
    """The kind of answer the question asks for ("person", "date", "duration", …), "" if none."""
    return next((kind for kind, asks in ASKS if asks.search(question)), "")
