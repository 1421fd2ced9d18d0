"""The picked sentences written as one answer: what fits in the room, in the order the question's
parts were asked, each list with its lead-in, and the subject that says which is which when the
sentences come from several documents or sections."""
from __future__ import annotations

from typing import Callable

from ...language.markdown import LIST_ITEM, is_code, own_heading
from ...language.words import term_set
from ...tuning import Tuning
from ..clean import clean_sentence, join_sentences
from ..passages import Candidate, document_subject, section_subject, shown_lead_in

Kept = tuple[Candidate, str, bool]  # a sentence that fits, its cleaned text, whether its subject labels it
PartsAnswered = Callable[[list[Kept], list[str]], dict[int, int]]


def compose(picked: list[Candidate], context: list[dict], parts: list[str], tuning: Tuning,
            parts_answered: PartsAnswered) -> dict:
    """The draft `{"answer", "sentences"}`; `parts_answered` says, per chunk shown (by rank), the
    first part of the question its sentences answer."""
    subjects = _subjects(picked, context, parts)
    kept = _fitting(picked, subjects, tuning)
    out, previous = [], None
    several = len({subjects[c.chunk_id] for c, _, _ in kept}) > 1  # what did not fit names nothing
    part_of = parts_answered(kept, parts)
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


def _subjects(picked: list[Candidate], context: list[dict], parts: list[str]) -> dict[str, str]:
    """Per chunk, the subject that labels its sentences: the document's, or the section's when
    the parts are answered from several sections of one document, or the heading itself when
    the heading holds the answer."""
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
    return subjects


def _fitting(picked: list[Candidate], subjects: dict[str, str], tuning: Tuning) -> list[Kept]:
    """The picked sentences that fit in the answer's room, best first: what does not fit is
    what matters least."""
    several = len({subjects[c.chunk_id] for c in picked}) > 1
    kept, length = [], 0
    for candidate in picked:
        text = clean_sentence(candidate.text)
        if any(text == other for _, other, _ in kept):  # one policy written in two sections
            continue
        subject = subjects[candidate.chunk_id]
        # Answers from several documents say which is which ("Leave types: …"); a sentence whose
        # heading holds the answer says that heading.
        label = candidate.titled or (several and not term_set(subject) <= candidate.terms)
        lead = len(shown_lead_in(candidate, picked))
        if kept and length + len(text) + lead + (len(subject) + 2) * label > tuning.max_answer_chars:
            continue
        kept.append((candidate, text, label))
        length += len(text) + lead + (len(subject) + 2) * label + 1
    return kept
