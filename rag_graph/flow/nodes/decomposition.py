"""Multi-part questions (seed 003, decomposition): a comparison, an "X and Y" or two questions in
one message become sub-questions, each searched on its own, so that one strong part cannot fill
every slot of the top-k and leave the other part without evidence.

The split is lexical and never fills in an answer: a part that leans on the rest of the question
("…, and which months does that cover?") carries the rest's words, the same way a follow-up
carries the thread's subject (language/question.Question), so it stays searchable on its own.
"""
from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor

from langgraph.runtime import Runtime
from lemminflect import getAllLemmas

from ..deps import Deps
from ...tuning import DEFAULT, Tuning
from ...retrieval.entities import Gazetteer
from ..state import State
from ...language.words import STOPWORDS, term_set, words
from ...scoring.relevance import relevance_scores
from ...language.question import Question, options, read
from ...language.lexicon import QUESTION_WORDS
from ..reads import corpus_gazetteer, is_outdated, well_formed
from ...language.lexicon import LEADS

log = logging.getLogger(__name__)

_QUESTION_WORD = r"(?:how|what|what's|when|where|who|whom|whose|which|why|do|does|did|can|could|is|are|should|will|would|may)"
# Where one question ends and the next begins: "…limit? And how much…", "…limit and how much…",
# "…on Saturdays, and in which months…" (a question word may follow its preposition), "…core
# hours; can I…", "…from another country, and if so for how long?".
_PREPOSITION = r"(?:in|on|at|for|from|to|by|with|under|after|before|during)"
_CLAUSE_BREAK = re.compile(rf"\?\s+(?:and\s+|also\s+)?|(?:[,;]?\s+(?:and|but|also|plus)|;)\s+"
                           rf"(?=(?:{_PREPOSITION}\s+)?{_QUESTION_WORD}\b)|,?\s+and if so,?\s+", re.I)
_COMPARED = re.compile(r"\s+(?:vs\.?|versus|compared (?:to|with)|compare (?:to|with)|as opposed to|against)\s+", re.I)
_REFERS_BACK = re.compile(r"\b(that|this|it|these|those|them|they|there|same)\b", re.I)
_EXISTENTIAL = re.compile(r"\b(?:is|are|was|were|isn't|aren't)\s+there\b", re.I)  # "is there a gym benefit" points nowhere
# "…paid for annual leave and for award leave?": a second phrase led by a preposition the first
# part already used asks the same question of another thing.
_PARALLEL = re.compile(rf",?\s+(?:and|or|but also)\s+(?P<preposition>{_PREPOSITION})\s+(?P<phrase>[^,;?]+)\??$", re.I)
# "which maxes out sooner, profit-sharing shares or liquidity pool shares?": the options follow
# the question, after a comma or a colon…
_OPTIONS = re.compile(r"^(?P<frame>\W*(?:which|what|who)\b[^,;:]*?)[,:]\s+(?P<a>[^,;?]+?),?\s+or\s+(?P<b>[^,;?]+?)\s*\??$", re.I)
# …or they come first: "HSA or FSA, which should I choose?", "Basic or Standard tier - which one…?"
_OPTIONS_FIRST = re.compile(r"^\W*(?P<a>[^,;:?]+?)\s+or\s+(?P<b>[^,;:?]+?)\s*(?:[,:;]|\s-\s|\s[—–]\s)\s*"
                            r"(?P<frame>(?:which|what|who)\b[^?]*)\??$", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?(?P<a>[^\s,?]+(?:\s+[^\s,?]+)?)\s+and\s+(?:the\s+)?(?P<b>[^\s,?]+(?:\s+[^\s,?]+)?)", re.I)


def split_question(question: Question | str, gazetteer: Gazetteer | None = None,
                   tuning: Tuning = DEFAULT) -> list[Question]:
    """The sub-questions of a multi-part question, each searchable alone; [] for a single one."""
    question = read(question)
    own, carried = question.own, question.carried
    clauses = _clauses(own)
    parts = clauses if len(clauses) > 1 else (_parallel_phrases(own) or _comparison(own, gazetteer, tuning.max_option_words))
    # A later part must ask something of its own: a stray "#general" after the "?" is no question.
    parts = [p for n, p in enumerate(parts) if _content(p) and (n == 0 or _asks(p))][: tuning.max_sub_questions]
    if len(parts) < 2:
        return []
    if carried:  # a follow-up's borrowed subject belongs to every part
        parts = [f"{p} {carried}" for p in parts]
    parts = [Question(re.sub(r"\s+", " ", p).strip(" ?")) for p in parts]
    return [_completed(p, parts) for p in parts]


def _asks(part: str) -> bool:
    return bool(set(words(part)) & QUESTION_WORDS) or len(_content(part)) >= 2


def _content(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and w not in QUESTION_WORDS]


def _clauses(question: str) -> list[str]:
    return [p.strip(" ,;?—–-") for p in _CLAUSE_BREAK.split(question) if p.strip(" ,;?—–-")]


def _parallel_phrases(question: str) -> list[str]:
    """"…credit hours on a compressed schedule, and on a flexible one?": the second part is the
    first with its last phrase of that preposition replaced ("…credit hours on a flexible one")."""
    match = _PARALLEL.search(question.strip())
    if not match:
        return []
    first = question[: match.start()]
    earlier = list(re.finditer(rf"\b{match['preposition']}\b", first, re.I))
    if not earlier:
        return []
    return [first, f"{first[: earlier[-1].start()]}{match['preposition']} {match['phrase']}"]


def _comparison(question: str, gazetteer: Gazetteer | None, max_option_words: int) -> list[str]:
    """"A vs B", "A compared with B", "between A and B", "which…, A or B?", or two entities of one
    kind joined by and/or: one part per compared thing, each with the rest of the question."""
    listed = _OPTIONS.search(question.strip())
    if listed is None:
        listed = _OPTIONS_FIRST.search(question.strip())
        if listed and max(len(listed["a"].split()), len(listed["b"].split())) > max_option_words:
            listed = None  # "if we ever got bought or went public, what…?" names no options, it sets a condition
    if listed:
        a, b = listed["a"].split(), listed["b"].split()
        return [f"{listed['frame']} {' '.join(_sharing_nouns(a, b))}", f"{listed['frame']} {' '.join(_sharing_nouns(b, a))}"]
    between = _BETWEEN.search(question)
    if between:
        frame = question[: between.start()] + " " + question[between.end():]
        return [f"{between['a']} {frame}", f"{between['b']} {frame}"]
    sides = _COMPARED.split(question, maxsplit=1)
    if len(sides) == 2:
        left, right = sides[0], sides[1].strip(" ?")
        same = _same_slot(left, right)
        if same:
            return [left, same]
        return _swapped(left, sides[1], max_option_words) or [left, f"{right} {_inherited(left, right, gazetteer)}"]
    if gazetteer is None:
        return []
    mentions = gazetteer.mentions(question)
    tokens = words(question)
    for first, second in zip(mentions, mentions[1:]):
        joined = tokens[first.end:second.start]
        if first.entity.kind == second.entity.kind and joined and set(joined) <= {"and", "or", "the", "a"}:
            rest = [t for i, t in enumerate(tokens) if not (first.start <= i < second.end)]
            frame = " ".join(rest)
            return [f"{first.entity.name} {frame}", f"{second.entity.name} {frame}"]
    return []


def _inherited(left: str, right: str, gazetteer: Gazetteer | None) -> str:
    """What the short side of a comparison asks, taken from the long side without the thing
    it is compared with ("…Standard tier of Skyline Analytics compare with Harbor Sync": Harbor
    Sync's Standard tier, not Skyline Analytics')."""
    theirs = gazetteer.mentions(right) if gazetteer is not None else []
    if theirs:
        kinds = {m.entity.kind for m in theirs}
        tokens = words(left)
        drop = {i for m in gazetteer.mentions(left) if m.entity.kind in kinds for i in range(m.start, m.end)}
        return " ".join(t for i, t in enumerate(tokens) if i not in drop)
    tokens = left.split()
    drop = {i for i, w in enumerate(tokens) if i and _parallel(w, right)}
    for i in sorted(drop):  # the rest of its name goes too: "Lead Designer" against "a Lead SRE"
        for step in (-1, 1):
            j = i + step
            while 0 < j < len(tokens) and tokens[j][:1].isupper():
                drop.add(j)
                j += step
    return " ".join(w for i, w in enumerate(tokens) if i not in drop)


# Where the option after "vs" ends and the rest of the question goes on: a comma, a dash between
# spaces, a preposition or a question word ("ninja vs GN for building node locally…", "Basic vs
# Standard tier of Harbor Sync").
_OPTION_END = re.compile(rf"\s*(?:[,;:?—–]|\s-\s)|\s+(?=(?:{_PREPOSITION}|of|{_QUESTION_WORD})\b)", re.I)


def _swapped(left: str, right: str, max_option_words: int) -> list[str] | None:
    """"ninja vs GN for building node locally - which should I use?": the question goes on after
    the second option, so each part is the whole question with one option in its place ("ninja
    for building node locally…", "GN for building node locally…"). A named second option
    ("Enterprise") stands for the last name before "vs" and the words after it ("the Team plan");
    any other stands for as many words before "vs" as it has, back to a function word ("should I
    use npm ci vs npm install in CI?": "npm ci"). The shorter option shares the longer one's
    last words when they are common nouns: "short-term vs long-term disability" is about
    short-term disability, "the Team plan vs Enterprise" about the Enterprise plan; "Zoom vs
    Google Meet" shares nothing. None when nothing follows the second option."""
    end = _OPTION_END.search(right)
    if end is None or not right[end.start():].strip(" ?,;:—–-"):
        return None
    second, rest = right[: end.start()].split(), right[end.start():]
    before = left.split()
    if not second or len(second) > max_option_words:
        return None
    named = _name_starts(before) if second[0][:1].isupper() else len(before)
    size = len(before) - named if named < len(before) else len(second)
    first: list[str] = []
    for word in reversed(before):
        bare = word.lower().strip(",;:")
        if len(first) == size or bare in STOPWORDS or bare in QUESTION_WORDS or word != word.rstrip(",;:"):
            break
        first.insert(0, word)
    if not first or len(first) > max_option_words:
        return None
    lead = " ".join(before[: len(before) - len(first)])
    first, second = _sharing_nouns(first, second), _sharing_nouns(second, first)
    return [f"{lead} {' '.join(first)}{rest}".strip(), f"{lead} {' '.join(second)}{rest}".strip()]


def _name_starts(words_: list[str]) -> int:
    """Where the last run of capitalised words begins ("how does the Team plan": 3); the end
    when there is none (a question word opening the sentence is no name)."""
    at = len(words_) - 1
    while at >= 0 and not words_[at][:1].isupper():
        at -= 1
    if at < 0 or words_[at].lower() in QUESTION_WORDS:
        return len(words_)
    while at and words_[at - 1][:1].isupper() and words_[at - 1].lower() not in QUESTION_WORDS:
        at -= 1
    return at


def _sharing_nouns(option: list[str], other: list[str]) -> list[str]:
    """A shorter option with the other's last words that are common nouns ("plan" of "Team plan")."""
    if len(option) >= len(other):
        return option
    return option + [w for w in other[len(option):] if w.islower() and w not in option and "NOUN" in getAllLemmas(w)]


def _same_slot(left: str, right: str) -> str | None:
    """"…ask for a cheap training course versus a pricey conference": a right side that opens
    like a phrase of the left ("a", "my") takes that phrase's place, the last one there: "…ask
    for a pricey conference", not the whole left side after it, the other side's words and all.
    The phrase ends at its last word the right side stands in for ("a Lead Designer handle"
    against "a Lead SRE": "a Lead SRE handle"), else at the end of the left side."""
    lead = right.split()[0].lower() if right.split() else ""
    slots = [m for m in re.finditer(rf"\b{lead}\b", left, re.I) if m.start() > 0] if lead in LEADS else []
    if not slots:
        return None
    start = slots[-1].start()
    after = list(re.finditer(r"\S+", left[slots[-1].end():]))
    stands_for = [i for i, m in enumerate(after) if m.group().lower() not in STOPWORDS and _parallel(m.group(), right)]
    if not stands_for:
        return f"{left[:start]}{right}"
    last = stands_for[-1]
    while last + 1 < len(after) and after[last + 1].group()[:1].isupper():  # the rest of a name
        last += 1
    return f"{left[:start]}{right}{left[slots[-1].end() + after[last].end():]}"


def _parallel(word: str, right: str) -> bool:
    """A word of the left side that the right side stands in for ("Starter" against
    "Professional", "short-term" against "long-term"): it must not follow the right side."""
    own = set(words(word))
    other = set(words(right))
    if own & other - STOPWORDS:
        return True
    shares_part = any(part in other for part in own if part not in STOPWORDS)
    capitalised = word[:1].isupper() and right.strip()[:1].isupper()
    return shares_part or capitalised


def _completed(part: Question, parts: list[Question]) -> Question:
    """A part that points back at the rest ("which months does that cover") or names at most
    one thing borrows the other parts' words; a first part that asks a question of its own
    ("Do we get Juneteenth off?") borrows nothing from the questions after it."""
    own = set(_content(part.own))
    points_back = _REFERS_BACK.search(_EXISTENTIAL.sub(" ", part.own))
    if len(own) > 1 and not points_back or options(part, parts)[0]:
        return part  # an option's part has the rest of the question already; the other option is no part of it
    if part is parts[0] and set(words(part.own)) & QUESTION_WORDS and not points_back:
        return part
    borrowed = [w for other in parts if other is not part for w in _content(other.own) if w not in own]
    return Question(part.own, " ".join(dict.fromkeys(borrowed)))


def _headed_by(chunk: dict, theirs: set[str], own: set[str]) -> bool:
    """A section headed by another option ("Understanding travel comp time") and not by this one
    is no evidence for this part, however many of the shared words it holds ("comp time")."""
    heading = term_set(f"{chunk['title']} {chunk.get('section', '')}")
    return bool(heading & theirs) and not heading & own


def decompose_question(state: State, runtime: Runtime[Deps]) -> dict:
    parts = split_question(state["question"], corpus_gazetteer(runtime), runtime.context.tuning)
    return {"parts": parts, "sub_questions": [part.text for part in parts]}


def has_sub_questions(state: State) -> str:
    return "parts" if state.get("sub_questions") else "whole"


def retrieve_sub_questions(state: State, runtime: Runtime[Deps]) -> dict:
    """Each part searched on its own; its best chunk joins the top of the ranking, so that every
    part of the answer has evidence to cite."""
    retriever = runtime.context.retriever
    vocabulary = retriever.vocabulary()
    threshold = state["retrieval_config"]["score_threshold"]
    min_coverage = runtime.context.tuning.min_coverage
    best_of_parts: dict[str, dict] = {}
    parts = state["parts"]

    def search(part) -> list | None:
        try:
            return retriever.search(part.text, mode=state["retrieval_strategy"], top_k=runtime.context.tuning.sub_question_top_k)
        except Exception:
            log.exception("search for a sub-question failed; answering from the whole question's evidence")
            return None

    if state["retrieval_strategy"] != "keyword":
        try:  # the parts' vectors from one call of the model (~4 ms a call saved per part), then searched
            runtime.context.embedder.encode_queries([part.text for part in parts])
        except Exception:  # each search meets the fault on its own, as it would have
            log.debug("the parts could not be encoded together", exc_info=True)
    # The parts' searches side by side: each spends its time in Lance, which lets other threads
    # run, so a second core takes a part while the first searches another.
    with ThreadPoolExecutor(max_workers=len(parts) or 1, thread_name_prefix="sub-question") as pool:
        found = list(pool.map(search, parts))
    for number, (part, rows) in enumerate(zip(parts, found)):
        if rows is None:
            continue
        own, theirs = options(part, parts)
        scored = [c for c in relevance_scores(part.text, [r for r in rows if well_formed(r)], vocabulary, runtime.context.tuning)
                  if (c["similarity"] >= threshold or c["coverage"] >= min_coverage) and not is_outdated(c)
                  and not _headed_by(c, theirs, own)]
        if scored:  # the generator answers this part from this chunk first
            best = best_of_parts.setdefault(scored[0]["chunk_id"], {**scored[0], "answers_parts": []})
            best["answers_parts"].append(number)
    ranked = state["ranked_chunks"]
    merged = {c["chunk_id"]: c for c in ranked[:1]}
    for chunk_id, chunk in best_of_parts.items():
        merged[chunk_id] = {**merged.get(chunk_id, chunk), "answers_parts": chunk["answers_parts"]}
    for chunk in ranked[1:]:
        merged.setdefault(chunk["chunk_id"], chunk)
    return {"ranked_chunks": list(merged.values())[: max(len(ranked), state["retrieval_config"]["top_k"])]}
