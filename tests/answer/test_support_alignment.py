"""A chat model's sentence is checked where its facts stand, not anywhere in the chunk: a number
taken from another clause, list item or table cell, a name from another row, or a word the
evidence only negates is dropped, and the faithful paraphrase of the same passage kept."""
import dataclasses

import pytest

from rag_graph.answer.support import SupportChecker
from rag_graph.tuning import DEFAULT

ON_CALL = ("The primary on-call engineer receives a stipend of $350 per week, and the secondary receives $150 "
           "per week, paid through payroll in the following month. Public holidays on a shift earn an extra $100.")
RESPONSE = ("| Priority | Starter | Team | Professional | Enterprise |\n"
            "|----------|---------|------|--------------|------------|\n"
            "| P1 | 1 business day | 4 business hours | 1 hour | 30 minutes, 24/7 |\n"
            "| P2 | 1 business day | 8 business hours | 4 hours | 2 hours, 24/7 |\n\n"
            "P1 tickets on Professional and Enterprise page the engineering on-call rotation automatically.")
PARKING = ("The building has 20 reserved parking spaces for Orrinfold in the underground garage. They are shared "
           "on a first-come, first-served basis and cannot be booked, except for the 2 accessible spaces next to the lift.")
FSA = ("There is a separate type of FSA for dependent care, and the max for that plan is $7,500/year or "
       "$3,750/year if you split this with a partner.")
NPM_CI = ("If dependencies in the package lock do not match those in package.json, npm ci will exit with an error, "
          "instead of updating the package lock.")


def chunk(chunk_id: str, body: str) -> dict:
    return {"chunk_id": chunk_id, "title": "Handbook", "section": chunk_id, "body": body,
            "text": f"Handbook › {chunk_id}\n\n{body}"}


CHUNKS = [chunk("on-call pay", ON_CALL), chunk("first response times", RESPONSE), chunk("parking", PARKING),
          chunk("fsa", FSA), chunk("npm ci", NPM_CI)]


@pytest.fixture(scope="module")
def checker(embedder):
    return SupportChecker(CHUNKS, embedder)


@pytest.mark.parametrize("sentence, supported_by", [
    ("The primary on-call engineer gets $350 a week, and the secondary gets $150 a week.", "on-call pay"),
    ("The secondary on-call engineer is paid $350 per week.", None),  # the primary's amount
    ("For Professional, the first response time of a P1 ticket is 1 hour.", "first response times"),
    ("For Professional, the first response time of a P1 ticket is 4 hours.", None),  # P2's, or the Team plan's
    ("P1 tickets on the Starter plan page the on-call rotation automatically.", None),  # Starter is in the table only
    ("The dependent care FSA is capped at $7,500 a year.", "fsa"),  # the number of the clause after the name
])
def test_numbers_and_names_must_stand_where_the_sentence_puts_them(checker, sentence, supported_by):
    assert checker.check(sentence).chunk_id == supported_by


@pytest.mark.parametrize("sentence, supported_by", [
    ("Parking spaces in the garage cannot be booked.", "parking"),
    ("You may book one of the parking spaces.", None),
    ("When the package lock does not match package.json, npm ci exits with an error.", "npm ci"),
    ("npm ci updates the package lock when its dependencies do not match package.json.", None),
])
def test_a_word_the_evidence_only_negates_cannot_be_stated(checker, sentence, supported_by):
    verdict = checker.check(sentence)
    assert verdict.chunk_id == supported_by
    assert supported_by or verdict.reason == "negation"


def test_the_runs_tuning_decides_what_a_negation_bears_on(embedder):
    """negation_scope is read from the run's tuning, not the default: with no words in scope a
    negation bears on nothing, and the flipped sentence is let through."""
    blind = SupportChecker(CHUNKS, embedder, dataclasses.replace(DEFAULT, negation_scope=0))
    assert blind.check("You may book one of the parking spaces.").reason != "negation"
