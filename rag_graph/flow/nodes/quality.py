"""Ranking the candidates, resolving conflicts between sources, and judging the evidence."""
from __future__ import annotations

import re

from langgraph.runtime import Runtime

from ..deps import Deps
from ...tuning import DEFAULT, Tuning
from ..gap import describe_gap
from ..reads import is_outdated, text_key
from ..state import State
from ...language.words import term_set, terms_held, weighted_coverage
from ...language.markdown import sentences
from ...answer.kinds import holds_answer, wanted_answer
from ...scoring.missing import foreign_terms, subject_weights, uncovered_terms
from ...language.amounts import values
from ...scoring import deployment
from ...scoring.late import rerank_late
from ...scoring.relevance import by_relevance, query_weights, relevance_scores



def _precedence(chunk: dict) -> tuple:
    """Which of two disagreeing sources wins: current over archived, then authority, then recency."""
    return (not is_outdated(chunk), int(chunk.get("authority") or 0), chunk.get("effective_date") or "")


def _reason(winner: dict, loser: dict) -> str:
    if is_outdated(loser) and not is_outdated(winner):
        return f"{winner['title']} is current; {loser['title']} is {loser.get('status') or 'superseded'}"
    if int(winner.get("authority") or 0) != int(loser.get("authority") or 0):
        return f"{winner['title']} has higher authority"
    return f"{winner['title']} is newer ({winner.get('effective_date')} vs {loser.get('effective_date')})"


def _key_sentence(chunk: dict, weights: dict[str, float]) -> str:
    candidates = sentences(chunk["body"]) or [chunk["body"]]
    return max(candidates, key=lambda s: weighted_coverage(weights, term_set(s)))


def find_contradictions(query: str, chunks: list[dict], vocabulary, tuning: Tuning = DEFAULT) -> list[dict]:
    """Pairs of sources that state the same rule with different values. Each record names
    both chunks and values, the winner and why."""
    weights = query_weights(query, vocabulary)
    relevant = [c for c in chunks if c["coverage"] >= tuning.min_coverage][: tuning.contradiction_candidates]
    found, seen = [], set()
    for i, first in enumerate(relevant):
        for second in relevant[i + 1:]:
            if first["source_id"] == second["source_id"]:
                continue
            a, b = _key_sentence(first, weights), _key_sentence(second, weights)
            va, vb = values(a), values(b)
            if not va or not vb or va.keys() == vb.keys():
                continue
            ta = {t for t in term_set(a) if not t[0].isdigit()}
            tb = {t for t in term_set(b) if not t[0].isdigit()}
            if not ta or not tb or len(ta & tb) / len(ta | tb) < tuning.same_topic:
                continue
            winner, loser = sorted([(first, a, va), (second, b, vb)],
                                   key=lambda item: _precedence(item[0]), reverse=True)
            if _precedence(winner[0]) == _precedence(loser[0]) or loser[0]["chunk_id"] in seen:
                continue  # equal standing: nothing principled to choose by, keep both
            seen.add(loser[0]["chunk_id"])
            found.append({
                "topic": winner[0].get("section") or winner[0]["title"],
                "winner": {"chunk_id": winner[0]["chunk_id"], "title": winner[0]["title"],
                           "value": ", ".join(winner[2].values()), "effective_date": winner[0].get("effective_date", "")},
                "loser": {"chunk_id": loser[0]["chunk_id"], "title": loser[0]["title"],
                          "value": ", ".join(loser[2].values()), "effective_date": loser[0].get("effective_date", ""),
                          "status": loser[0].get("status", "")},
                "reason": _reason(winner[0], loser[0]),
            })
    return found


def rank_and_filter_context(state: State, runtime: Runtime[Deps]) -> dict:
    config = state["retrieval_config"]
    vocabulary = runtime.context.retriever.vocabulary()
    tuning = runtime.context.tuning
    scored = relevance_scores(state["retrieval_query"], state["retrieved_chunks"], vocabulary, tuning)
    kept = [c for c in scored
            if c["similarity"] >= config["score_threshold"] or c["coverage"] >= tuning.min_coverage]
    contradictions = find_contradictions(state["retrieval_query"], kept, vocabulary, tuning)
    losers = {record["loser"]["chunk_id"] for record in contradictions}
    ranked = distinct([c for c in kept if not is_outdated(c) and c["chunk_id"] not in losers])
    ranked = rerank_late(state["retrieval_query"], ranked, runtime.context.embedder, tuning)
    # A deployment's own ranker (`citebot tune --feedback`), when its state folder holds one.
    ranked = deployment.rerank(state["retrieval_query"], ranked, vocabulary, runtime.context.embedder,
                               runtime.context.ranker_file)[: config["top_k"]]
    return {"ranked_chunks": ranked, "contradictions": contradictions}


def distinct(chunks: list[dict]) -> list[dict]:
    """One chunk per text: a docs site repeats a shared section on many pages (npm's docs repeat
    each config option's section on every command page that takes it: 584 of 1,643 chunks), and
    copies would fill the ranking with one passage. The most relevant copy stands for the rest."""
    best: dict[str, dict] = {}
    for chunk in chunks:
        body = text_key(chunk)
        if body not in best or chunk["relevance"] > best[body]["relevance"]:
            best[body] = chunk
    kept = {id(chunk) for chunk in best.values()}
    return [chunk for chunk in chunks if id(chunk) in kept]


def assess_context_quality(state: State, runtime: Runtime[Deps]) -> dict:
    """sufficient / contradictory / weak / missing, from the best chunk's similarity and term
    coverage and from question words the evidence is silent about. A weak or missing verdict
    comes with the knowledge gap it found."""
    ranked, tuning = state["ranked_chunks"], runtime.context.tuning
    vocabulary = runtime.context.retriever.vocabulary()
    if not ranked:
        return {"context_quality": "missing", "knowledge_gap": describe_gap(state, [], tuning)}
    # Late interaction orders the ranking, but the evidence is judged in order of relevance
    # (closeness in meaning and words), the measures these checks were set on. Judged in the
    # late-interaction order, 3 more of 18F's 39 answerable dev questions were declined, and
    # "Can contractors work remotely?" was answered from the employees' remote-work policy.
    judged = by_relevance(ranked)
    best, embedder = judged[0], runtime.context.embedder
    # After a rewrite the evidence may match the question in the documents' own words: the
    # rewrite (the question's content words plus the headings of the near misses) vouches too.
    searched = (state.get("query_rewrites") or [state["retrieval_query"]])[-1]
    strong = is_strong(best["similarity"], subject_coverage(state["retrieval_query"], best, vocabulary), tuning)
    if not strong and searched != state["retrieval_query"]:
        strong = matches_strongly(best, searched, vocabulary, embedder, tuning)
    if not strong:  # the question names an identifier the chunk writes verbatim ("UND_ERR_HEADERS_TIMEOUT")
        strong = any(name in best["text"] for name in identifiers(state["normalized_query"]))
    if not strong:  # a question of several parts is answered as far as one part's evidence holds
        strong = any(matches_strongly(chunk, part, vocabulary, embedder, tuning)
                     for number, part in enumerate(state.get("sub_questions") or [])
                     for chunk in ranked if number in (chunk.get("answers_parts") or ()))
    if not strong:
        missing = uncovered_terms(state["normalized_query"], judged[: tuning.judged_chunks], vocabulary, tuning)
        return {"context_quality": "weak", "knowledge_gap": describe_gap(state, missing, tuning)}
    missing = foreign_terms(state["normalized_query"], searched, judged[: tuning.judged_chunks], vocabulary, embedder, tuning)
    # "What's the most I can spend on a hotel per night for a trip to Chicago?": no document
    # names Chicago, but the hotel section gives the nightly cap for every city.
    if missing and all(names_a_case(word, state["normalized_query"]) for word in missing) and any(
            gives_asked_value(state["normalized_query"], chunk) for chunk in judged[: tuning.judged_chunks]):
        missing = []
    if missing:
        return {"context_quality": "weak", "knowledge_gap": describe_gap(state, missing, tuning)}
    quality = "contradictory" if state.get("contradictions") else "sufficient"
    return {"context_quality": quality, "knowledge_gap": None}


def gives_asked_value(question: str, chunk: dict) -> bool:
    """The question asks for a value (a date, a span, a bound, an amount, someone) and a sentence
    of the chunk gives one of that kind. A yes/no question asks for none."""
    wanted = wanted_answer(question)
    return bool(wanted) and any(holds_answer(sentence, wanted) for sentence in sentences(chunk.get("body") or chunk["text"]))


def names_a_case(word: str, question: str) -> bool:
    """The word names the asker's particular case, a name written with a capital inside the
    question ("a trip to Chicago") or a number ("a $3,000 conference"): the documents state the
    rule for every case, and when they give the value asked for, it answers this one. A word for
    whom or what the rule is for ("contractors", "interns") names no case: "How much can
    contractors spend on a hotel per night?" is still declined by a section on employees'
    hotels."""
    if any(ch.isdigit() for ch in word):
        return True
    written = re.search(rf"(?<=\w[^\w.?!]){re.escape(word)}\b", question, re.I)
    return bool(written) and written[0][0].isupper() and not written[0].isupper()


# A name from code (snake_case, SCREAMING_CASE, camelCase) or anything in backticks: written
# verbatim in a chunk, it says what the question is about, whatever else the asker wrote around
# it ("seeing a bunch of UND_ERR_HEADERS_TIMEOUT in the logs for calls to the payment gateway").
_IDENTIFIER = re.compile(r"`([^`\s]{6,})`|\b([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)\b")


def identifiers(question: str) -> list[str]:
    """The names from code the question writes, six characters or longer."""
    return [name for name in (a or b for a, b in _IDENTIFIER.findall(question)) if len(name) >= 6]


def subject_coverage(query: str, chunk: dict, vocabulary) -> float:
    """The share of the question's weight the chunk holds, not counting the words that only
    frame it ("policy", "cap", "how long") or say what the asker does ("hit", "sign"): what the
    question is about."""
    weights = subject_weights(query, vocabulary)
    return weighted_coverage(weights, terms_held(query, chunk["text"])) if weights else chunk["coverage"]


def is_strong(similarity: float, coverage: float, tuning: Tuning = DEFAULT) -> bool:
    """Close enough in meaning, or holding enough of the query's words, to need no more checks."""
    return similarity >= tuning.strong_similarity or coverage >= tuning.strong_coverage


def matches_strongly(chunk: dict, query: str, vocabulary, embedder, tuning: Tuning = DEFAULT) -> bool:
    """The chunk clears the bar the question's best chunk is held to, for another query."""
    similarity = float(embedder.encode_passages([chunk["text"]])[0] @ embedder.encode_query(query))
    return is_strong(similarity, relevance_scores(query, [chunk], vocabulary, tuning)[0]["coverage"], tuning)
