"""What a short follow-up pointing back may stand for besides the thread's subject: the thing
only the last answer named ("is it open on weekends?" after "Use the ethics line, run by an
independent provider"). The flow searches this reading when the first one's evidence is weak
(flow/nodes/reading.py)."""
from __future__ import annotations

import re

from ..language.lexicon import QUESTION_WORDS, refers_back
from ..language.question import Question
from ..language.words import STOPWORDS, stem, words
from ..tuning import DEFAULT, Tuning
from . import followup

# "if it's a breaking change": this "it" points at no thing, the answer named none.
_IT_IS_A = re.compile(r"\bit(?:'s|’s|\s+is|\s+was)\s+an?\b", re.I)


def points_back_short(question: str) -> bool:
    """A short turn with a word pointing back ("is it open on weekends?", "who approves it?"):
    at most GATE_WORDS words of its own, the thread reader's gate, since in a longer one the
    word mostly points at a thing the question names ("I'll mostly just use it for data, is
    that a problem?")."""
    return refers_back(_IT_IS_A.sub(" ", question)) and len(followup.own_words(question)) <= followup.GATE_WORDS


def answer_reading(question: Question, history: list[dict], frequency: dict[str, int],
                   tuning: Tuning = DEFAULT) -> Question | None:
    """The turn read as pointing at what the last answer named: the resolved question with the
    answer's rarest words the thread had not asked about (corpus frequency; words with digits
    are amounts, not things). None when the turn was not read as a follow-up, does not point
    back, or the answer names nothing new."""
    if not question.carried or not points_back_short(question.own):
        return None
    asked = next((t["content"] for t in reversed(history) if t["role"] == "user"), "")
    answered = next((t["content"] for t in reversed(history) if t["role"] == "assistant"), "")
    said = set(words(question.own)) | set(words(question.carried)) | set(words(asked))
    fresh = [w for w in dict.fromkeys(words(answered))
             if w not in said and w not in STOPWORDS and w not in QUESTION_WORDS
             and not any(c.isdigit() for c in w) and frequency.get(stem(w))]
    fresh = sorted(fresh, key=lambda w: frequency[stem(w)])[: tuning.answer_carried]  # stable: ties keep the answer's order
    return Question(question.own, f"{question.carried} {' '.join(fresh)}") if fresh else None
