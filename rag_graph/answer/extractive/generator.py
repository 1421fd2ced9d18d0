"""ExtractiveGenerator (the default, offline answer writer): picks the context's own sentences
that best answer the question. It returns a draft `{"answer": str, "sentences": [{"text",
"chunk_ids"}]}` whose every sentence names the chunks it rests on; `validate_grounding` checks
that claim. It cannot invent a fact; paragraphs that give orders were already quarantined
(injection.py) before any generator sees the context."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...language.asks import ASKS_PERSON, ASKS_PROCEDURE
from ...language.markdown import sentences
from ...language.question import Question, options, read
from ...language.words import terms, terms_held, weighted_coverage
from ...retrieval.entities import Gazetteer
from ...scoring.late import best_matches
from ...scoring.relevance import query_weights
from ...tuning import DEFAULT, Tuning
from ..kinds import holds_answer, wanted_answer
from ..passage_view import around, unclear
from ..passages import Candidate
from .candidates import candidates
from .compose import compose
from .inclusion import Addition, additions
from .pick import pick
from .runner_up import runner_up


class ExtractiveGenerator:
    """Scores every sentence of the context against the question (rarity-weighted word
    overlap, the section heading, its chunk's relevance, the kind of answer asked for),
    re-scores the best few by embedding similarity, and returns the winner plus the sentences
    that finish its thought or answer another part of the question. A sentence that opens
    with "She" or "His" is given the name of the person its chunk is about; one that leads in
    to a short list ("…on a variety of topics:") carries the list."""

    # Every weight and count it uses is a field of `tuning` (tuning.py: "the offline answer writer").

    def __init__(self, vocabulary: Callable[[], tuple[dict[str, int], int]], embedder=None,
                 entities: Callable[[], Gazetteer] | None = None, tuning: Tuning = DEFAULT):
        self.vocabulary = vocabulary
        self.tuning = tuning
        self.embedder = embedder
        self.entities = entities

    def generate(self, question: Question | str, context: list[dict], prompt: str,
                 parts: list[Question | str] = ()) -> dict:
        question, parts = read(question), [read(part) for part in parts]
        chosen = self._chosen(question, context, parts)
        if chosen is None:
            return {"answer": "", "sentences": []}
        picked, found = chosen[0], chosen[2]
        self._answer_parts(parts, found, picked)
        return compose(picked, context, parts, self.tuning, self._parts_answered)

    def additions(self, question: Question, context: list[dict], chosen) -> tuple[str, list[Addition]]:
        """The answer as picked and the pool sentences that could join it (`inclusion.additions`);
        `chosen` is what `_chosen` returned. Measured by `rag_graph.tools.tune_inclusion` and
        `judged_inclusion`, never added to an answer: no threshold adds more answering sentences
        than distractors (docs/how-answers-are-made.md)."""
        picked, pool, found, weights, closeness = chosen
        asked = set(terms(question.own))
        asked_held = {rank: asked & terms_held(question.own, chunk["text"]) for rank, chunk in enumerate(context)}
        return additions(pool, picked, weights, asked_held, closeness,
                         lambda shown: compose(shown, context, [], self.tuning, self._parts_answered)["answer"],
                         self.tuning, self._closeness(question))

    def _chosen(self, question: Question, context: list[dict], parts: list[Question]):
        """The sentences the answer quotes (before a multi-part question's parts), the pool (best first), every
        candidate, the question's weights and each pool sentence's (cosine, late interaction);
        None when the context offers no sentence."""
        weights = self._weights(question)
        found = self._candidates(question, context, weights)
        if not found:
            return None
        scored, similarity, late = self.scored_pool(question, found, context)
        closeness = {id(c): (s, l) for c, s, l in zip(scored, similarity, late)}
        pool = sorted(scored, key=lambda c: -c.score)  # best first
        # A multi-part question is covered part by part; otherwise any sentence that adds an
        # unanswered side of the question may join.
        asker = question.own
        picked = pick(pool, found, weights, self.tuning, others=not parts,
                      asked=set(terms(asker)), procedure=bool(ASKS_PROCEDURE.search(asker)))
        if not parts and unclear(pool, self.tuning):  # the passage comes right after the best, ahead of the others
            picked[1:1] = around(picked[0], found, picked, self.tuning, self._closeness(question))
        if not parts:
            other = runner_up(pool, picked, found, set(weights), self.tuning)
            if other is not None:
                picked.append(other)
        return picked, pool, found, weights, closeness

    def _answer_parts(self, parts: list[Question], found: list[Candidate], picked: list[Candidate]) -> None:
        """The part the picked sentences answer least goes first: with room for one more sentence,
        the turnstiles of "…fingerprinted for my badge, and where do I get it working on the
        turnstiles?" need it more than a second sentence on fingerprints."""
        covered = [weighted_coverage(self._weights(part), set().union(*(c.terms | c.heading for c in picked)))
                   for part in parts]
        for number, part in sorted(enumerate(parts), key=lambda item: covered[item[0]]):
            if len(picked) >= self.tuning.max_sentences:
                break
            answer = self._best_for(number, parts, found, picked)
            if answer is not None:
                picked.append(answer)

    def _closeness(self, question: Question):
        """Each text's cosine to the question, by the embedding model (None without one)."""
        if self.embedder is None:
            return None
        asked = self.embedder.encode_query(question.text)
        return lambda texts: (self.embedder.encode_passages(texts) @ asked).tolist()

    def scored_pool(self, question: Question, found: list[Candidate],
                    context: list[dict]) -> tuple[list[Candidate], list[float], list[float]]:
        """The best few candidates, their scores raised by the sentence's closeness in meaning to
        the question (one embedding, and late interaction token by token), with those two
        measures of each (what `answer.choice.measure` reads)."""
        pool = sorted(found, key=lambda c: -c.score)[: self.tuning.semantic_pool]
        similarity = late = [0.0] * len(pool)
        if self.embedder is not None:
            similarity = (self.embedder.encode_passages([c.text for c in pool])
                          @ self.embedder.encode_query(question.text)).tolist()
            late = self._late_interaction(question, pool, context)
            for candidate, close, fine in zip(pool, similarity, late):
                candidate.score += self.tuning.semantic_weight * close
                candidate.score += self.tuning.sentence_late_weight * fine
        return pool, similarity, late

    def _late_interaction(self, question: Question, pool: list[Candidate], context: list[dict]) -> list[float]:
        """Each sentence's mean, over the question's tokens, of the best cosine to one of its own
        tokens (as `evidence.late_interaction` scores a chunk). A follow-up's borrowed subject
        counts half, as in the word score. A sentence whose tokens cannot be found (a table row
        rewritten as a sentence) gets the pool's mean: no reward and no penalty."""
        own, carried = question.own, question.carried
        asked = [(self.embedder.query_tokens(own), 1.0)]
        if carried.strip():
            asked.append((self.embedder.query_tokens(carried), self.tuning.carried_weight))
        chunks = {c["chunk_id"]: c for c in context}
        places: dict[str, list[int]] = {}  # chunk -> where its candidates stand in the pool
        for at, candidate in enumerate(pool):
            places.setdefault(candidate.chunk_id, []).append(at)
        runs = []  # per chunk, the sentences each of its candidates shows
        for chunk_id, mine in places.items():
            parts = sentences(chunks[chunk_id]["body"])
            runs.append([parts[pool[at].position: pool[at].last + 1] for at in mine])
        read = self.embedder.sentence_tokens([chunks[chunk_id]["text"] for chunk_id in places], runs)
        found = {at: tokens for mine, tokens_of in zip(places.values(), read) for at, tokens in zip(mine, tokens_of)}
        scores = {}
        for at, tokens in found.items():
            if tokens is not None:
                best = [(best_matches(query, tokens), weight) for query, weight in asked]
                scores[at] = float(sum(weight * b.sum() for b, weight in best)
                                   / sum(weight * len(b) for b, weight in best))
        neutral = sum(scores.values()) / len(scores) if scores else 0.0
        return [scores.get(at, neutral) for at in range(len(pool))]

    def _parts_answered(self, kept: list, parts: list[Question]) -> dict[int, int]:
        """For each chunk shown (by rank), the first part of the question its sentences answer: a
        multi-part answer takes the parts in the order they were asked, whatever order the chunks
        rank in (late interaction may rank the second part's chunk first). A sentence answers the
        part it is closest to in meaning: the parts share most of their words ("can I earn credit
        hours on a compressed schedule" / "on a flexible one"), and the few they do not may be as
        common in the sentence ("Core hours…, whether you are in the office or at home")."""
        if len(parts) < 2 or self.embedder is None:
            return {candidate.rank: 0 for candidate, _, _ in kept}
        asked = np.stack([self.embedder.encode_query(part.text) for part in parts])
        closest = (self.embedder.encode_passages([candidate.text for candidate, _, _ in kept]) @ asked.T).argmax(axis=1)
        first: dict[int, int] = {}
        for (candidate, _, _), part in zip(kept, closest.tolist()):
            first[candidate.rank] = min(first.get(candidate.rank, part), part)
        return first

    def _weights(self, question: Question) -> dict[str, float]:
        """Term weights of a question; words carried over from elsewhere (a follow-up's subject,
        a sub-question's borrowed context) count half."""
        weights = query_weights(question.text, self.vocabulary())
        own_terms = set(terms(question.own))
        for term in terms(question.carried):
            if term not in own_terms:
                weights[term] *= self.tuning.carried_weight
        return weights

    def _best_for(self, number: int, parts: list[Question], candidates: list[Candidate],
                  picked: list[Candidate]) -> Candidate | None:
        """The sentence that best answers one part of the question (in the light of the whole
        question, and preferably from the chunk that part's own search found first), unless the
        sentences already picked cover that part."""
        part = parts[number]
        weights = self._weights(part)
        # What only this part asks about ("standard" of "Standard tier of Harbor Sync…" beside
        # "Basic tier of Harbor Sync…"): a sentence on the Basic tier shares five of its six
        # words, and answers nothing of it.
        own = options(part, parts)[0]
        # One sentence must answer the part: scraps of two ("regular work hours" in a sentence
        # about travel comp time) do not answer "what happens to my regular comp time".
        if any(weighted_coverage(weights, c.terms | c.heading) >= self.tuning.part_covered and own <= c.terms | c.heading
               for c in picked):
            return None
        covered = set().union(*(c.terms | c.heading for c in picked))
        asker = part.own
        wanted = wanted_answer(asker)
        people = self.entities() if self.entities is not None and ASKS_PERSON.search(asker) else None
        tuning = self.tuning

        def fit(c: Candidate) -> float:
            typed = tuning.answer_type_bonus if holds_answer(c.text, wanted, people) else 0.0
            found = tuning.part_evidence_bonus if number in c.answers_parts else 0.0
            return weighted_coverage(weights, c.terms | c.heading) + c.lexical * tuning.part_lexical_weight + typed + found

        pool = [c for c in sorted(candidates, key=lambda c: -fit(c))[: self.tuning.semantic_pool]
                if not any(p.overlaps(c) or p.text == c.text for p in picked)]
        if not pool or self.embedder is None:
            return None
        closeness = self.embedder.encode_passages([c.text for c in pool]) @ self.embedder.encode_query(part.text)
        best, near = max(zip(pool, closeness.tolist()), key=lambda item: fit(item[0]) + item[1])
        adds = weighted_coverage(weights, (best.terms | best.heading) - covered)
        return best if adds > 0 or near >= self.tuning.part_closeness else None

    def _candidates(self, question: Question, context: list[dict], weights: dict[str, float]) -> list[Candidate]:
        gazetteer = self.entities() if self.entities is not None else None
        return candidates(question, context, weights, self.tuning, gazetteer)
