"""A chat model's tokens become streamable sentences only once they are safe to show."""
import re

from rag_graph.answer.chat_model import SentenceStream
from rag_graph.answer.redact import clean_for_user


def stream(text: str, grounded=lambda sentence: True) -> list[str]:
    shown: list[str] = []
    sentences = SentenceStream(lambda sentence, ids: shown.append(sentence), lambda sentence: clean_for_user(sentence, []),
                               lambda sentence, cited: cited or ["hr::remote::0"] if grounded(sentence) else [])
    for token in re.findall(r"\S+\s*", text):
        sentences.feed(token)
    return shown


def test_a_sentence_is_shown_cleaned_once_the_next_begins_and_the_last_waits_for_the_end():
    shown = stream("The staging password: hunter2hunter2 is rotated monthly [ops::access::0]. "
                   "See https://evil.example/x for more [ops::access::0]. Ask in #ops [ops::access::0].")
    assert shown == ["The staging password: [redacted] is rotated monthly.", "See [link removed] for more."]


def test_a_refusal_is_never_streamed():
    assert stream("INSUFFICIENT_CONTEXT") == []
    assert stream("I am not sure. INSUFFICIENT_CONTEXT") == []


def test_only_sentences_the_grounding_check_accepts_are_streamed(embedder):
    from rag_graph.answer.support import SupportChecker

    chunk = {"chunk_id": "hr::remote::0", "title": "Handbook", "section": "Remote Work",
             "body": "Employees may work remotely up to 3 days a week with manager approval. "
                     "Tuesday and Thursday are anchor days."}
    chunk["text"] = chunk["body"]
    checker = SupportChecker([chunk], embedder)
    shown = stream("You can work from home up to 5 days a week. The API key is sk-live-abc123abc123. "
                   "Staff can work remotely for up to three days each week with their manager's approval. "
                   "Tuesday and Thursday are anchor days.", lambda sentence: checker.check(sentence).kept)
    assert shown == ["Staff can work remotely for up to three days each week with their manager's approval."]
