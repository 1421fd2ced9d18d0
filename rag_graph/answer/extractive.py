"""ExtractiveGenerator (the default, offline answer writer): picks the context's own sentences
that best answer the question. It returns a draft `{"answer": str, "sentences": [{"text",
"chunk_ids"}]}` whose every sentence names the chunks it rests on; `validate_grounding` checks
that claim. It cannot invent a fact; paragraphs that give orders were already quarantined
(injection.py) before any generator sees the context."""
from __future__ import annotations

from itertools import takewhile
from typing import Callable

import numpy as np

from ..language.markdown import (
    LIST_ITEM,
    is_code,
    lead_ins,
    link_labels,
    lists,
    own_heading,
    sentences,
    table_sentences,
)
from ..language.question import holds_role, options, role_asked, split_follow_up
from ..language.words import term_set, terms, terms_held, weighted_coverage, words
from ..retrieval.entities import Gazetteer
from ..scoring.late import best_matches, standing
from ..scoring.relevance import by_relevance, query_weights
from ..tuning import DEFAULT, Tuning
from .clean import clean_sentence, join_sentences
from .kinds import ASKS_PERSON, HOLDS_AMOUNT, holds_answer, names_someone, wanted_answer
from .passages import (
    ABOUT_THE_PAGE,
    ASKS_PLACE,
    ASKS_PROCEDURE,
    EXAMPLE,
    FORM_FIELD,
    LEANS_BACK,
    NUMBERED_STEP,
    PLACEHOLDER,
    POINTER,
    TEMPLATE_TAG,
    Candidate,
    candidate_at,
    document_subject,
    is_heading,
    is_prose,
    name_the_subject,
    section_subject,
    shown_code,
    shown_lead_in,
    with_list,
)


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

    def generate(self, question: str, context: list[dict], prompt: str, parts: list[str] = ()) -> dict:
        weights = self._weights(question)
        candidates = self._candidates(question, context, weights)
        if not candidates:
            return {"answer": "", "sentences": []}
        pool = sorted(candidates, key=lambda c: -c.score)[: self.tuning.semantic_pool]
        if self.embedder is not None:
            vectors = self.embedder.encode_passages([c.text for c in pool])
            for candidate, similarity in zip(pool, vectors @ self.embedder.encode_query(question)):
                candidate.score += self.tuning.semantic_weight * float(similarity)
            for candidate, late in zip(pool, self._late_interaction(question, pool, context)):
                candidate.score += self.tuning.sentence_late_weight * late
        # A multi-part question is covered part by part; otherwise any sentence that adds an
        # unanswered side of the question may join.
        asker = split_follow_up(question)[0]
        picked = self._pick(sorted(pool, key=lambda c: -c.score), candidates, weights, others=not parts,
                            asked=set(terms(asker)), procedure=bool(ASKS_PROCEDURE.search(asker)))
        # The part the picked sentences answer least goes first: with room for one more sentence,
        # the turnstiles of "…fingerprinted for my badge, and where do I get it working on the
        # turnstiles?" need it more than a second sentence on fingerprints.
        covered = [weighted_coverage(self._weights(part), set().union(*(c.terms | c.heading for c in picked)))
                   for part in parts]
        for number, part in sorted(enumerate(parts), key=lambda item: covered[item[0]]):
            if len(picked) >= self.tuning.max_sentences:
                break
            answer = self._best_for(number, parts, candidates, picked)
            if answer is not None:
                picked.append(answer)
        subjects = {c["chunk_id"]: document_subject(c["title"]) for c in context}
        if len(parts) > 1 and len({subjects[c.chunk_id] for c in picked}) == 1:
            # The parts answered from several sections of one document say which is which by
            # section ("Employee Profit Sharing: …max out your shares at 6 years"); a heading that
            # asks a question ("Does Relay support SSO?") names no subject.
            sections = {c["chunk_id"]: section_subject(c) or subjects[c["chunk_id"]] for c in context}
            if len({sections[c.chunk_id] for c in picked}) > 1:
                subjects = sections
        titled = {c.chunk_id for c in picked if c.titled}  # the heading holds the answer: it says it
        subjects.update({c["chunk_id"]: own_heading(c.get("section") or "") for c in context if c["chunk_id"] in titled})
        several = len({subjects[c.chunk_id] for c in picked}) > 1
        kept, length = [], 0
        for candidate in picked:  # best first: what does not fit is what matters least
            text = clean_sentence(candidate.text)
            if any(text == other for _, other, _ in kept):  # one policy written in two sections
                continue
            subject = subjects[candidate.chunk_id]
            # Answers from several documents say which is which ("Leave types: …"); a sentence whose
            # heading holds the answer says that heading.
            label = candidate.titled or (several and not term_set(subject) <= candidate.terms)
            lead = len(shown_lead_in(candidate, picked))
            if kept and length + len(text) + lead + (len(subject) + 2) * label > self.tuning.max_answer_chars:
                continue
            kept.append((candidate, text, label))
            length += len(text) + lead + (len(subject) + 2) * label + 1
        out, previous = [], None
        several = len({subjects[c.chunk_id] for c, _, _ in kept}) > 1  # what did not fit names nothing
        part_of = self._parts_answered(kept, parts)
        ordered = sorted(kept, key=lambda k: (part_of[k[0].rank], k[0].rank, k[0].position))
        led = set()  # the lists whose lead-in is shown
        for at, (candidate, text, label) in enumerate(ordered):
            subject = subjects[candidate.chunk_id]
            lead = shown_lead_in(candidate, picked)
            if lead and (candidate.rank, candidate.lead_in) not in led:
                led.add((candidate.rank, candidate.lead_in))
                text = f"{lead} {text}"
            following = ordered[at + 1][0] if at + 1 < len(ordered) else None
            if text.endswith(":") and not (following and following.rank == candidate.rank
                                           and following.position > candidate.last
                                           and (following.tabular or LIST_ITEM.match(following.text)
                                                or is_code(following.text))):
                # a lead-in whose long list is not shown ("…11 public holidays in 2025:") is a statement
                text = text[:-1] + "."
            if (several or candidate.titled) and label and subject != previous:  # once per run of sentences
                text = f"{subject}:{text}" if text.startswith("\n") else f"{subject}: {text}"  # code keeps its lines
            previous = subject
            out.append({"text": text, "chunk_ids": [candidate.chunk_id]})
        return {"answer": join_sentences([s["text"] for s in out]), "sentences": out}

    def _late_interaction(self, question: str, pool: list[Candidate], context: list[dict]) -> list[float]:
        """Each sentence's mean, over the question's tokens, of the best cosine to one of its own
        tokens (as `evidence.late_interaction` scores a chunk). A follow-up's borrowed subject
        counts half, as in the word score. A sentence whose tokens cannot be found (a table row
        rewritten as a sentence) gets the pool's mean: no reward and no penalty."""
        own, carried = split_follow_up(question)
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

    def _parts_answered(self, kept: list, parts: list[str]) -> dict[int, int]:
        """For each chunk shown (by rank), the first part of the question its sentences answer: a
        multi-part answer takes the parts in the order they were asked, whatever order the chunks
        rank in (late interaction may rank the second part's chunk first). A sentence answers the
        part it is closest to in meaning: the parts share most of their words ("can I earn credit
        hours on a compressed schedule" / "on a flexible one"), and the few they do not may be as
        common in the sentence ("Core hours…, whether you are in the office or at home")."""
        if len(parts) < 2 or self.embedder is None:
            return {candidate.rank: 0 for candidate, _, _ in kept}
        asked = np.stack([self.embedder.encode_query(part) for part in parts])
        closest = (self.embedder.encode_passages([candidate.text for candidate, _, _ in kept]) @ asked.T).argmax(axis=1)
        first: dict[int, int] = {}
        for (candidate, _, _), part in zip(kept, closest.tolist()):
            first[candidate.rank] = min(first.get(candidate.rank, part), part)
        return first

    def _weights(self, question: str) -> dict[str, float]:
        """Term weights of a question; words carried over from elsewhere (a follow-up's subject,
        a sub-question's borrowed context) count half."""
        weights = query_weights(question, self.vocabulary())
        own, carried = split_follow_up(question)
        own_terms = set(terms(own))
        for term in terms(carried):
            if term not in own_terms:
                weights[term] *= self.tuning.carried_weight
        return weights

    def _best_for(self, number: int, parts: list[str], candidates: list[Candidate],
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
        asker = split_follow_up(part)[0]
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
        closeness = self.embedder.encode_passages([c.text for c in pool]) @ self.embedder.encode_query(part)
        best, near = max(zip(pool, closeness.tolist()), key=lambda item: fit(item[0]) + item[1])
        adds = weighted_coverage(weights, (best.terms | best.heading) - covered)
        return best if adds > 0 or near >= self.tuning.part_closeness else None

    def _candidates(self, question: str, context: list[dict], weights: dict[str, float]) -> list[Candidate]:
        asker = split_follow_up(question)[0]
        # A follow-up that asks for nothing itself asks for what it carries: "what about for a V8
        # upgrade? (who cc upgrading)" wants a person, a team or an address.
        kind = asker if wanted_answer(asker) else question
        wanted, asked = wanted_answer(kind), set(terms(asker))
        gazetteer = self.entities() if self.entities is not None else None
        people = gazetteer if ASKS_PERSON.search(kind) else None
        role, t = role_asked(asker), self.tuning
        out = []
        # A chunk lower in relevance order pays for it; its late-interaction score already counts
        # in its standing. Measured: paying for the late-interaction order instead lost the
        # keyword of 3 dev answers ("how long is paid parental leave here?" got the eligibility rule).
        relevance_place = {c["chunk_id"]: place for place, c in enumerate(by_relevance(context))}
        for rank, chunk in enumerate(context):
            heading = term_set(f"{chunk['title']} {chunk.get('section', '')}")
            parts, tables = sentences(chunk["body"]), table_sentences(chunk["body"])
            led = lead_ins(chunk["body"])
            for position, sentence in enumerate(parts):
                if not is_code(sentence) and (PLACEHOLDER.search(sentence) or FORM_FIELD.match(sentence)):
                    continue  # a command's "<pkg>" is a parameter, no form's blank
                lead = led.get(sentence, "") if sentence not in tables else ""  # a row names its columns
                last, tabular = position, sentence in tables
                if sentence.endswith(":") or sentence in lists(chunk["body"]):
                    sentence, last = with_list(sentence, lists(chunk["body"]).get(sentence, ()), parts, position, asked,
                                             t.list_chars)
                if is_code(sentence):
                    if not shown_code(sentence, t.max_answer_chars):
                        continue
                else:
                    sentence = TEMPLATE_TAG.sub(" ", sentence).strip()
                    if sentence.endswith(":") and position + 1 < len(parts) and shown_code(parts[position + 1], t.max_answer_chars):
                        # "Adding it to your ~/.zshrc will make the completions available everywhere:"
                        # holds the commands it leads in to, as a lead-in holds its list.
                        sentence, last = f"{sentence}\n{parts[position + 1]}", position + 1
                    elif len(words(sentence)) < 3 or is_heading(sentence, heading):
                        continue
                if gazetteer is not None:
                    sentence = name_the_subject(sentence, chunk, gazetteer)
                    if role and not (names_someone(sentence, gazetteer, asked) and holds_role(sentence, role)):
                        continue
                own = terms_held(asker, sentence)  # "performance improvement plans" holds the asker's "PIP"
                score = (weighted_coverage(weights, own) + t.heading_weight * weighted_coverage(weights, heading - own)
                         + t.standing_weight * standing(chunk, t) - t.place_penalty * relevance_place[chunk["chunk_id"]]
                         - t.long_sentence_penalty * max(0.0, len(sentence) / t.long_sentence_chars - t.long_sentence_free))
                typed = holds_answer(sentence, wanted, people)
                # "Announcement (one week in advance of the planned release)" answers "how far in
                # advance…?" for every sentence below it. Not for a "how many": a heading's number
                # is as often a step's ("Step 1 - Submit a time request").
                titled = (not typed and people is None and HOLDS_AMOUNT not in wanted
                          and holds_answer(own_heading(chunk.get("section") or ""), wanted))
                typed = typed or titled
                if typed:
                    score += t.answer_type_bonus
                if (POINTER.match(sentence) and len(words(link_labels(sentence))) <= 20 and not ASKS_PLACE.search(asker)
                        or ABOUT_THE_PAGE.match(sentence)):
                    score -= t.pointer_penalty
                out.append(Candidate(score, score, rank, position, sentence, chunk["chunk_id"], own, heading,
                                      tuple(chunk.get("answers_parts") or ()), typed, last, tabular,
                                      lead, parts.index(lead) if lead in parts else -1, titled))
        return out

    def _pick(self, pool: list[Candidate], candidates: list[Candidate], weights: dict[str, float],
              others: bool, asked: set[str], procedure: bool = False) -> list[Candidate]:
        t = self.tuning
        # An example ("For example: you went on FMLA for 4 weeks…") illustrates a rule; it is not one.
        best = next((c for c in pool if not EXAMPLE.match(c.text)), pool[0])
        if is_code(best.text):  # a command comes with the sentence that leads in to it, if one does
            best = next((c for c in candidates if c.rank == best.rank and c.last == best.position
                         and c.position == best.position - 1), best)
        picked, covered = [best], set(best.terms)
        total = sum(weights.values()) or 1.0
        follower = self._follower(best, candidates)
        if procedure and NUMBERED_STEP.match(best.text) and not best.tabular:
            for step in self._earlier_steps(best, candidates):
                picked.append(step)
                covered |= step.terms
            if len(picked) >= t.max_sentences:
                follower = None
        if follower is not None:
            picked.append(follower)
            covered |= follower.terms
        rival = next((c for c in pool if c is not best and not EXAMPLE.match(c.text)), None)
        if others and rival is not None and self._ties(rival, best, picked):
            picked.append(rival)
            covered |= rival.terms
        # A sentence from elsewhere must answer another part of the question.
        for candidate in [c for c in pool if c is not best] if others else []:
            if len(picked) >= t.max_sentences:
                break
            adds = sum(weights[t] for t in candidate.terms if t in weights and t not in covered)
            if (not any(c.overlaps(candidate) for c in picked)
                    and adds >= t.adds_share * total and candidate.score >= t.adds_score * best.score):
                picked.append(candidate)
                covered |= candidate.terms
        # The sentence before may state the rule that the best one only elaborates ("Users are
        # prohibited from deleting messages." before "Do not abuse the edit command…"): it must
        # hold at least half as much of the asker's own words as the best one (a borrowed subject
        # does not count: the day shift before the night shift asked about is a sibling; a scene-
        # setting line that shares one common word is no rule), and it is no preamble to
        # the date or number asked for. It comes last: a sentence answering another side of the
        # question has the better claim to the room.
        before = next((c for c in candidates if c.rank == best.rank and c.position == best.position - 1
                       and not c.overlaps(best)), None)  # a lead-in that holds its list holds the best already
        if (before is not None and before not in picked and not best.tabular
                and (LEANS_BACK.match(best.text) and not before.text.rstrip().endswith(":") or is_code(best.text))):
            # "However, term appointments need to be renewed" says nothing without the sentence
            # it answers, nor a command without the one that says what it does: that one comes
            # right after the best, ahead of every other.
            picked.insert(1, before)
            return picked[: t.max_sentences]
        own = {t: w for t, w in weights.items() if t in asked}
        if (others and len(picked) < t.max_sentences and before is not None and before not in picked and not best.tabular
                and before.score >= t.before_score * best.score and own
                and weighted_coverage(own, before.terms) >= t.before_coverage * weighted_coverage(own, best.terms)
                and (before.typed or not best.typed) and not before.text.rstrip().endswith(":")):
            picked.append(before)
        # With room left, a passage that answers sentence after sentence is shown on ("…may receive
        # GSA provided computers. If the contractor needs the GSA network, they must use one. If
        # they can complete their work using VDI, they … may use their company computer.").
        third = candidate_at(candidates, best.rank, follower.last + 1) if follower in picked else None
        if (third is not None and len(picked) < t.max_sentences and is_prose(follower)
                and is_prose(third) and not EXAMPLE.match(third.text) and third.score >= t.continues * best.score
                and not any(c.overlaps(third) for c in picked)):
            picked.append(third)
        return picked

    def _follower(self, best: Candidate, candidates: list[Candidate]) -> Candidate | None:
        """The next sentence of the same passage, which often finishes the thought."""
        after = sorted((c for c in candidates if c.rank == best.rank and c.position > best.last),
                       key=lambda c: c.position)
        follower = after[0] if after and after[0].position == best.last + 1 and not best.tabular else None
        if best.text.rstrip().endswith(":"):
            # A lead-in ("…a payroll deduction for medical insurance:") means nothing without what
            # follows it: of a list, the item that answers the question.
            items = list(takewhile(lambda c: LIST_ITEM.match(c.text), after))
            return max(items, key=lambda c: c.score) if items else follower
        if follower is not None and (follower.score < self.tuning.follower_share * best.score
                                     or LIST_ITEM.match(best.text) or EXAMPLE.match(follower.text)):
            # However long the best sentence, the next one may say how ("…can apply for and become
            # a triager. Open a PR on the README.md with…"). A list's next item is an alternative to
            # the best, not its continuation, and an example only illustrates it.
            return None
        return follower

    def _earlier_steps(self, best: Candidate, candidates: list[Candidate]) -> list[Candidate]:
        """A numbered step is done after the steps before it: "Under Security Clearance, click
        the plus icon" answers "how can I check my clearance?" only after step 1 ("On your HR
        Links homepage… click View/Update Personal Info"). The nearest earlier steps come first."""
        earlier = list(takewhile(lambda c: c is not None and NUMBERED_STEP.match(c.text) and c.lead_in == best.lead_in,
                                 (candidate_at(candidates, best.rank, p) for p in range(best.position - 1, -1, -1))))
        return earlier[: self.tuning.max_sentences - 1]

    def _ties(self, rival: Candidate, best: Candidate, picked: list[Candidate]) -> bool:
        """The scorer's runner-up, from the same passage's running text and within a hair of the
        best, answers as well as the best does: both are shown, since the score cannot tell them
        apart ("…offers 20 days of vacation…" beside "…rolls over… with a maximum bank of 27 days").
        Not a restatement of the best, not one of a list's or table's alternatives ("Five to ten
        days in advance for: online courses…" is not "Three to five weeks…: conferences…"); the
        caller asks only outside a multi-part answer, whose room belongs to the parts."""
        t = self.tuning
        return (rival.rank == best.rank and rival.score >= t.tie * best.score
                and is_prose(best) and is_prose(rival)
                and rival.typed >= best.typed and not any(c.overlaps(rival) for c in picked)
                and len(rival.terms & best.terms) < t.same_topic * len(rival.terms | best.terms))


