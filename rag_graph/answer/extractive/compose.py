"""The picked sentences written as one answer: what fits in the room, in the order the question's
parts were asked, each list with its lead-in, and the subject that says which is which when the
sentences come from several documents or sections."""
from __future__ import annotations

from typing import Callable

from ...language.markdown import LIST_ITEM, is_code, own_heading
from ...language.words import term_set, words
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
        headed = False  # the lead-in shown is the section's heading
        if lead and (candidate.rank, candidate.lead_in or candidate.heading_lead) not in led:
            led.add((candidate.rank, candidate.lead_in or candidate.heading_lead))
            headed = not candidate.lead_in
            if headed and candidate.titled:  # the heading is the subject already
                lead = ""
            text = f"{lead} {text}" if lead else text
        following = ordered[at + 1][0] if at + 1 < len(ordered) else None
        if text.endswith(":") and not (following and following.rank == candidate.rank
                                       and following.position > candidate.last
                                       and (following.tabular or LIST_ITEM.match(following.text)
                                            or is_code(following.text))):
            # a lead-in whose long list is not shown ("…11 public holidays in 2025:") is a statement
            text = text[:-1] + "."
        if (several or candidate.titled) and label and subject != previous:  # once per run of sentences
            # the heading that leads in to an item is said as the Sources say it: "Onboarding ›
            # First-week checklist: Two YubiKeys registered.", not "Onboarding: First-week checklist: …"
            joiner = " › " if headed and lead else ": "
            text = f"{subject}:{text}" if text.startswith("\n") else f"{subject}{joiner}{text}"  # code keeps its lines
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


# Words that turn a sentence into its opposite; stopwords to the term sets, so looked for apart.
_NEGATIONS = frozenset("no not never cannot can't don't doesn't isn't aren't won't without unless except".split())


def repeats(text: str, shown: str, share: float) -> bool:
    """The text says again what `shown` says ("18F was officially launched within GSA on March 19,
    2014." after "GSA officially launched 18F on March 19, 2014."): the two share `share` of their
    terms, or `shown` holds all of the text's (a table row after the lead-in that listed the
    table), and the text adds no number and neither holds a "not" the other lacks ("…max out at
    10 years" is no repeat of "…at 6 years", nor "Credit hours: No" of "Credit hours: Yes")."""
    terms, before = term_set(text), term_set(shown)
    if text == shown:
        return True
    if not terms or len(terms & before) < share * len(terms | before) and not terms <= before:
        return False
    differ = {w.lower() for w in words(text)} ^ {w.lower() for w in words(shown)}
    return not (differ & _NEGATIONS or any(ch.isdigit() for term in terms - before for ch in term))


def _fitting(picked: list[Candidate], subjects: dict[str, str], tuning: Tuning) -> list[Kept]:
    """The picked sentences that fit in the answer's room, best first: what does not fit is
    what matters least."""
    several = len({subjects[c.chunk_id] for c in picked}) > 1
    kept, length, said = [], 0, []  # said: each kept sentence with its lead-in, as the reader sees it
    for candidate in picked:
        text = clean_sentence(candidate.text)
        lead = shown_lead_in(candidate, picked)
        if any(repeats(f"{lead} {text}", other, tuning.repeat_share) for other in said):  # one policy written twice
            continue
        subject = subjects[candidate.chunk_id]
        # Answers from several documents say which is which ("Leave types: …"); a sentence whose
        # heading holds the answer says that heading.
        label = candidate.titled or (several and not term_set(subject) <= candidate.terms)
        if kept and length + len(text) + len(lead) + (len(subject) + 2) * label > tuning.max_answer_chars:
            continue
        kept.append((candidate, text, label))
        said.append(f"{lead} {text}")
        length += len(text) + len(lead) + (len(subject) + 2) * label + 1
    return kept
