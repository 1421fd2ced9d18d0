"""The sentences an extractive answer is made of: a candidate sentence, what is never evidence
(placeholders, form fields, pointers, the page describing itself), and how a sentence is shown
(with its list, its lead-in, the person a pronoun stands for)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import takewhile

from ..language.markdown import LIST_ITEM, code_of, is_code, own_heading
from ..language.words import STOPWORDS, term_set
from ..retrieval.entities import Gazetteer
from .clean import clean_sentence

# Never evidence: form placeholders ("[Name]", "____", "<date>") and a form's own field lines
# ("Title: CEO", "Signature:"). Template markup ("{% … %}", "{{ … }}") never reaches an answer.
PLACEHOLDER = re.compile(r"\[[A-Z][A-Za-z ]*\](?!\()|_{3,}|<[a-z][a-z _-]*>")


TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.S)


FORM_FIELD = re.compile(r"^\W*(name|title|signature|signed|date|by|position|witness|printed name)\s*:\s*\S{0,30}\W*$", re.I)


EXAMPLE = re.compile(r"\W*(?:for example|for instance|e\.g\.|example:)", re.I)


# A sentence that only sends the reader elsewhere ("Visit the [Live Captioning page](…) for
# further details.") answers nothing itself; only a "where" question is answered by it.
POINTER = re.compile(r"\W*(?:please\s+)?(?:see|visit|check(?: out)?|refer to|read|go to|head to|review)\b"
                      r"(?=.*(?:\]\(|\b(?:page|site|website|handbook|guide)\b))", re.I | re.S)


# A sentence about the page itself ("This page outlines how to sign up for and how to cancel the
# transit benefit.") says what the page covers, not what it says.
ABOUT_THE_PAGE = re.compile(r"\W*(?:this|the following) (?:page|guide|document|section|article|handbook|chapter)\s+"
                             r"(?:outlines|describes|explains|covers|lists|contains|provides|summarizes|details|"
                             r"walks|includes|is about|will (?:walk|explain|describe|cover|outline|help))\b", re.I)


NUMBERED_STEP = re.compile(r"\s*\d+[.)]\s")  # an item of a numbered list


# A sentence that opens by pointing back ("However, …", "This includes …") leans on the one before.
# So does a condition on what was just said ("If it's warranted, … we'll increase pay on January 1st"
# follows "The Radford data is reviewed once per year…").
LEANS_BACK = re.compile(r"(?:However|But|Yet|Still|Otherwise|Instead|Therefore|Thus|Hence|In addition|Also|"
                         r"That|This|These|Those|Such|It|They|Then|If (?:so|not|it|that|this|they)|"
                         r"In (?:that|this|which) case)\b")


OPENING_PRONOUN = re.compile(r"^(?P<pronoun>She|He|Her|His)\b(?P<rest>.*)$", re.S)


@dataclass
class Candidate:
    score: float
    lexical: float  # the score before the semantic re-scoring
    rank: int  # of its chunk in the context
    position: int  # within its chunk
    text: str
    chunk_id: str
    terms: set[str]
    heading: frozenset[str]  # the terms of its chunk's title and section: what the sentence is about
    answers_parts: tuple[int, ...] = ()  # sub-questions whose own search found its chunk first
    typed: bool = False  # holds the kind of answer asked for (a date for "when")
    last: int = -1  # the position of the last sentence it holds (a lead-in holds its list)
    tabular: bool = False  # a table's row or cell: its neighbours are siblings, not its context
    lead_in: str = ""  # a list item's: the sentence that leads in to its list ("…in advance for:")
    lead_at: int = -1  # and that sentence's position among the chunk's (-1: too short to be one)
    titled: bool = False  # of the kind asked for only through its heading, which the answer then shows
    # an item of a list that opens its section with no lead-in sentence: the heading that says what
    # the items are ("What is not reimbursed"), shown before it as a lead-in is
    heading_lead: str = ""

    def __post_init__(self):
        self.last = max(self.last, self.position)

    def overlaps(self, other: "Candidate") -> bool:
        """The two share a sentence of the same chunk (a lead-in with its list holds its items)."""
        return other.rank == self.rank and self.position <= other.last and other.position <= self.last


def shown_code(sentence: str, max_chars: int) -> bool:
    """A code block short enough to answer with: a command or a snippet, not a listing longer
    than an answer may be."""
    return is_code(sentence) and len(code_of(sentence)) <= max_chars


def candidate_at(candidates: list[Candidate], rank: int, position: int) -> Candidate | None:
    """The candidate sentence at a position of a chunk, if it is one."""
    return next((c for c in candidates if c.rank == rank and c.position == position), None)


def is_prose(candidate: Candidate) -> bool:
    """A sentence of running text: no list item, lead-in with its list, or table row."""
    return not (candidate.tabular or candidate.lead_in or candidate.last != candidate.position
                or LIST_ITEM.match(candidate.text) or candidate.text.rstrip().endswith(":") or is_code(candidate.text))


def with_list(lead_in: str, items: tuple[str, ...], parts: tuple[str, ...], position: int,
              asked: set[str], list_chars: int) -> tuple[str, int]:
    """A lead-in ending in ":" with the list that follows it, as one sentence, and the position
    of the list's last item among the chunk's sentences. When the question names what only one
    item holds ("…if I park a motorcycle?"), that item alone completes the lead-in. A long list
    is left to be answered item by item, and a form's list ("- [Name]", "- Title: CEO") is no
    answer at all."""
    listed = [clean_sentence(item).rstrip(".") for item in items]
    if (not items or sum(map(len, listed)) > list_chars
            or any(PLACEHOLDER.search(item) or FORM_FIELD.match(item) for item in items)):
        return lead_in, position
    naming = [item for item in listed if (term_set(item) - term_set(lead_in)) & asked]
    shown = sum(1 for _ in takewhile(lambda part: LIST_ITEM.match(part), parts[position + 1:]))
    chosen = naming if len(naming) == 1 else listed
    joiner = ". " if any(";" in item for item in chosen) else "; "  # a table's rows hold "; " already
    return f"{leading(lead_in)} {joiner.join(chosen)}.", position + min(shown, len(items))  # a nested list ends sooner


def leading(lead_in: str) -> str:
    """A lead-in as it reads before its items: an item that introduces the ones below it
    without a ":" ("- Ten days to two weeks") gets one."""
    return lead_in if lead_in.rstrip(" *_`")[-1:] in ":.!?" else f"{lead_in.rstrip()}:"


def shown_lead_in(item: Candidate, picked: list[Candidate]) -> str:
    """What a picked list item needs before it to mean what it says: its lead-in, unless that is
    picked too. "Conference events that cost more than $2,500" answers "how early?" only after
    "Three to five weeks in advance for:"; "Upgrades to business or first class, unless approved
    in advance by the CFO." reads as the opposite of what it says without "What is not reimbursed:"."""
    if not item.lead_in and item.heading_lead:
        return clean_sentence(leading(item.heading_lead))
    if not item.lead_in or any(c.rank == item.rank and c.position <= item.lead_at <= c.last for c in picked):
        return ""
    return clean_sentence(TEMPLATE_TAG.sub(" ", leading(item.lead_in)))


def is_heading(sentence: str, heading: frozenset[str]) -> bool:
    """A heading is no answer: a line that only repeats its section's heading, or a short line
    in Title Case with no sentence end that is no list item ("Pay And Benefits During Leave")."""
    text = re.sub(r"[*_#`]", "", sentence).strip()
    title_case = (not LIST_ITEM.match(sentence) and len(text.split()) <= 8 and text[-1:] not in ".!?:" and not re.search(r"\d", text)
                  and all(w[:1].isupper() for w in text.split() if w.lower() not in STOPWORDS))
    return title_case or term_set(text) <= heading


def section_subject(chunk: dict) -> str:
    section = own_heading(chunk.get("section") or "")
    return "" if section.endswith("?") else section


def document_subject(title: str) -> str:
    """What a document is about: "Skyline Analytics — Pricing" is about Skyline Analytics."""
    return re.split(r"\s+[—–|]\s+|:\s+", title)[0].strip()


def name_the_subject(sentence: str, chunk: dict, gazetteer: Gazetteer) -> str:
    """ "She was recognized for…" names nobody: the person its section is about stands in for
    the pronoun. That person is the last one the chunk names before the sentence, else the one
    its heading or title names; the chunk's own text holds the name, so grounding still holds."""
    opening = OPENING_PRONOUN.match(sentence)
    if not opening:
        return sentence
    body = chunk["body"]
    before = body[: body.find(sentence[:40])] if sentence[:40] in body else ""
    person = None
    for text in (before, chunk.get("section", ""), chunk["title"]):
        people = [m.entity for m in gazetteer.mentions(text, where=lambda e: e.person)]
        if people:
            person = people[-1]
            break
    if person is None:
        return sentence
    name = f"{person.name}'s" if opening["pronoun"] in ("Her", "His") else person.name
    return name + opening["rest"]
