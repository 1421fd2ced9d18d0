"""Whether a chunk supports a sentence a chat model wrote: a faithful paraphrase is kept; a wrong
number, a number moved to another name, a flipped negation, an invented claim, a pleasantry or a
fragment is not. (The labelled set in eval/grounding/sentences.jsonl measures the same rules.)"""
import pytest

from rag_graph.answer.chat_model import cited_sentences
from rag_graph.answer.support import SupportChecker, answers

REMOTE = ("Employees may work remotely up to 3 days a week with manager approval. Tuesday and Thursday "
          "are our company-wide anchor days: everyone who is not travelling or on leave is expected in the office. "
          "Working from home still has to be safe and secure.")
HOTELS = ("The nightly hotel cap is $250 including taxes. In high-cost cities (New York, San Francisco, Boston, "
          "London and Tokyo) the cap is $325 per night.")


def chunk(chunk_id: str, body: str) -> dict:
    return {"chunk_id": chunk_id, "title": "Employee Handbook 2025", "section": chunk_id, "body": body,
            "text": f"Employee Handbook 2025\n{chunk_id}\n{body}"}


@pytest.fixture(scope="module")
def checker(embedder):
    return SupportChecker([chunk("remote", REMOTE), chunk("hotels", HOTELS)], embedder)


@pytest.mark.parametrize("sentence, supported_by", [
    ("Staff can work from home for up to three days each week, provided their manager agrees.", "remote"),
    ("Tuesdays and Thursdays are anchor days when everyone is expected in the office.", "remote"),
    ("In London the hotel cap is $325 per night.", "hotels"),
    ("Employees may work remotely up to 5 days a week with manager approval.", None),
    ("Employees may work remotely up to 3 days a week without manager approval.", None),
    ("The hotel cap in London is $250.", None),
    ("Employees who live far from Denver may work remotely every day.", None),
    ("Let me know if you have any other questions!", None),
    ("4.", None),
])
def test_a_sentence_is_kept_only_when_a_chunk_supports_it(checker, sentence, supported_by):
    assert checker.check(sentence).chunk_id == supported_by


def test_citations_in_any_common_form_are_read_and_pleasantries_left_out():
    got = cited_sentences(["Remote work is allowed [hr::remote::0, hr::hotels::0].",
                           "Approval is needed (hr::remote::0).", "Hope this helps!"])
    assert got == [{"text": "Remote work is allowed.", "chunk_ids": ["hr::remote::0", "hr::hotels::0"]},
                   {"text": "Approval is needed.", "chunk_ids": ["hr::remote::0"]}]


def test_true_sentences_about_something_else_are_no_answer(embedder):
    """The real model answered a question about the training budget with a true sentence about
    onboarding buddies: supported, and no answer. One sentence about the question is enough."""
    question = "what's our yearly budget for courses and conferences?"
    buddy = "Every new hire gets a buddy from a different team who has been at Orrinfold for at least one year."
    assert not answers(question, [buddy], embedder)
    assert answers(question, [buddy, "Each employee has a yearly learning budget for courses and conferences."], embedder)
