"""Every sentence of the context as a candidate answer, scored against the question: the
rarity-weighted overlap with the asker's words and the section heading, its chunk's standing,
the kind of answer asked for (a date, a person, an amount), and what is never an answer."""
from __future__ import annotations

from dataclasses import dataclass

from ...language.asks import ASKS_PERSON, ASKS_PLACE
from ...language.markdown import (
    is_code,
    lead_ins,
    link_labels,
    lists,
    opening_items,
    own_heading,
    sentences,
    table_sentences,
)
from ...language.question import Question, holds_role, role_asked
from ...language.words import term_set, terms, terms_held, weighted_coverage, words
from ...retrieval.entities import Gazetteer
from ...scoring.late import standing
from ...scoring.relevance import by_relevance
from ...tuning import Tuning
from ..kinds import HOLDS_AMOUNT, holds_answer, names_someone, wanted_answer
from ..passages import (
    ABOUT_THE_PAGE,
    FORM_FIELD,
    PLACEHOLDER,
    POINTER,
    TEMPLATE_TAG,
    Candidate,
    is_heading,
    name_the_subject,
    shown_code,
    with_list,
)


@dataclass(frozen=True)
class _Asked:
    """What the candidates are scored against, read once per question."""
    asker: str  # the asker's own words, without a follow-up's borrowed subject
    wanted: list  # the kinds of answer asked for (answer/kinds.py)
    terms: set[str]  # the asker's own terms
    weights: dict[str, float]
    gazetteer: Gazetteer | None
    people: Gazetteer | None  # the gazetteer, when the question asks for a person
    role: str  # the role whose holder is asked for ("COO"), "" if none


def candidates(question: Question, context: list[dict], weights: dict[str, float], tuning: Tuning,
               gazetteer: Gazetteer | None) -> list[Candidate]:
    asker = question.own
    # A follow-up that asks for nothing itself asks for what it carries: "what about for a V8
    # upgrade?" with "who cc upgrading" wants a person, a team or an address.
    kind = asker if wanted_answer(asker) else question.text
    asked = _Asked(asker, wanted_answer(kind), set(terms(asker)), weights, gazetteer,
                   gazetteer if ASKS_PERSON.search(kind) else None, role_asked(asker))
    # A chunk lower in relevance order pays for it; its late-interaction score already counts
    # in its standing. Measured: paying for the late-interaction order instead lost the
    # keyword of 3 dev answers ("how long is paid parental leave here?" got the eligibility rule).
    relevance_place = {c["chunk_id"]: place for place, c in enumerate(by_relevance(context))}
    return [candidate for rank, chunk in enumerate(context)
            for candidate in _of_chunk(rank, chunk, relevance_place[chunk["chunk_id"]], asked, tuning)]


def _of_chunk(rank: int, chunk: dict, place: int, asked: _Asked, t: Tuning) -> list[Candidate]:
    heading = term_set(f"{chunk['title']} {chunk.get('section', '')}")
    parts, tables = sentences(chunk["body"]), table_sentences(chunk["body"])
    led = lead_ins(chunk["body"])
    # items of a list that opens the section, short enough to lean on its heading; one that leads
    # in to what follows it ("* Grant access:" and its command) says itself what it is
    opening = {item for item in opening_items(chunk["body"])
               if len(words(item)) < t.heading_lead_words and not item.rstrip().endswith(":")}
    section = own_heading(chunk.get("section") or "")
    out = []
    for position, sentence in enumerate(parts):
        if not is_code(sentence) and (PLACEHOLDER.search(sentence) or FORM_FIELD.match(sentence)):
            continue  # a command's "<pkg>" is a parameter, no form's blank
        lead = led.get(sentence, "") if sentence not in tables else ""  # a row names its columns
        tabular = sentence in tables
        shown = _shown(sentence, position, parts, chunk, heading, asked, t)
        if shown is None:
            continue
        sentence, last = shown
        if asked.gazetteer is not None:
            sentence = name_the_subject(sentence, chunk, asked.gazetteer)
            if asked.role and not (names_someone(sentence, asked.gazetteer, asked.terms)
                                   and holds_role(sentence, asked.role)):
                continue
        own = terms_held(asked.asker, sentence)  # "performance improvement plans" holds the asker's "PIP"
        score = (weighted_coverage(asked.weights, own) + t.heading_weight * weighted_coverage(asked.weights, heading - own)
                 + t.standing_weight * standing(chunk, t) - t.place_penalty * place
                 - t.long_sentence_penalty * max(0.0, len(sentence) / t.long_sentence_chars - t.long_sentence_free))
        typed = holds_answer(sentence, asked.wanted, asked.people)
        # "Announcement (one week in advance of the planned release)" answers "how far in
        # advance…?" for every sentence below it. Not for a "how many": a heading's number
        # is as often a step's ("Step 1 - Submit a time request").
        titled = (not typed and asked.people is None and HOLDS_AMOUNT not in asked.wanted
                  and holds_answer(own_heading(chunk.get("section") or ""), asked.wanted))
        typed = typed or titled
        if typed:
            score += t.answer_type_bonus
        if (POINTER.match(sentence) and len(words(link_labels(sentence))) <= 20 and not ASKS_PLACE.search(asked.asker)
                or ABOUT_THE_PAGE.match(sentence)):
            score -= t.pointer_penalty
        out.append(Candidate(score, score, rank, position, sentence, chunk["chunk_id"], own, heading,
                             tuple(chunk.get("answers_parts") or ()), typed, last, tabular,
                             lead, parts.index(lead) if lead in parts else -1, titled,
                             section if parts[position] in opening and not lead else ""))
    return out


def _shown(sentence: str, position: int, parts: list[str], chunk: dict, heading: frozenset[str],
           asked: _Asked, t: Tuning) -> tuple[str, int] | None:
    """The sentence as an answer would show it (with the list or the commands it leads in to,
    without template markup) and the position of its last sentence; None when it is never shown."""
    last = position
    if sentence.endswith(":") or sentence in lists(chunk["body"]):
        sentence, last = with_list(sentence, lists(chunk["body"]).get(sentence, ()), parts, position, asked.terms,
                                   t.list_chars)
    if is_code(sentence):
        return (sentence, last) if shown_code(sentence, t.max_answer_chars) else None
    sentence = TEMPLATE_TAG.sub(" ", sentence).strip()
    if sentence.endswith(":") and position + 1 < len(parts) and shown_code(parts[position + 1], t.max_answer_chars):
        # "Adding it to your ~/.zshrc will make the completions available everywhere:"
        # holds the commands it leads in to, as a lead-in holds its list.
        return f"{sentence}\n{parts[position + 1]}", position + 1
    if len(words(sentence)) < 3 or is_heading(sentence, heading):
        return None
    return sentence, last
