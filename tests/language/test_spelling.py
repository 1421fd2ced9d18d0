"""Typos are read as the word the corpus writes; real words and names the corpus lacks stay
as asked, so they can still be named as knowledge gaps."""
from rag_graph.language.subject import unknown_word
from rag_graph.language.spelling import correct_spelling
from rag_graph.language.words import stem

VOCABULARY = {stem(word): count for word, count in
              [("vacation", 40), ("request", 25), ("receive", 12), ("rental", 3), ("telework", 9), ("car", 8),
               ("london", 2)]}


def test_a_misspelt_word_is_read_as_the_corpus_writes_it():
    assert correct_spelling("how much vacaton do I earn?", VOCABULARY) == "how much vacation do I earn?"
    assert correct_spelling("Vacaton rules", VOCABULARY) == "Vacation rules"
    assert correct_spelling("when do I recieve it, and how do I reqeust it?", VOCABULARY) == \
        "when do I receive it, and how do I request it?"
    assert correct_spelling("is teleworkk allowed?", VOCABULARY) == "is telework allowed?"
    assert correct_spelling("hotels in Londn. Vacaton too", VOCABULARY) == "hotels in London. Vacation too"


def test_a_real_word_or_a_name_the_corpus_lacks_is_no_typo():
    # "dental" is one letter from the corpus's "rental": still a knowledge gap, not a car rental
    assert correct_spelling("is there a dental plan?", VOCABULARY) == "is there a dental plan?"
    assert correct_spelling("is Kandji on my laptop, whats the policy?", VOCABULARY) == \
        "is Kandji on my laptop, whats the policy?"
    assert correct_spelling("can I rent a cart?", VOCABULARY) == "can I rent a cart?"  # short words are left alone
    # "dever" is one edit from "Denver" and shares the stem "dev" with corpus words, but is no word
    assert correct_spelling("what's the per diem in Denver?", {stem("dev"): 4, stem("dense"): 2}) == \
        "what's the per diem in Denver?"


def test_a_question_with_typos_is_answered_as_if_spelt_right(engine):
    # Read as typed, "Londn" was the knowledge gap: "Nothing … covers “londn”"
    state = engine.run("what's the hotel cap per nigth in Londn?")
    out = state["final_output"]
    assert out["status"] == "answered" and "$325" in out["answer"], out["knowledge_gap"]
    assert state["normalized_query"] == "what's the hotel cap per night in London?"
    # and the asker is told how the question was read
    assert out["notes"] == ["I read “nigth” as “night”, “Londn” as “London”"] and "I read" not in out["answer"]


def test_a_question_declined_after_a_correction_says_how_it_was_read(engine):
    out = engine.run("Is pet insurence one of our benefits?")["final_output"]
    assert out["status"] == "insufficient_context"
    assert out["knowledge_gap"].endswith("covers “pet” in connection with Employee Handbook 2025 — Benefits › Insurance. "
                                         "(I read “insurence” as “insurance”.)")


def test_a_misspelling_of_something_no_document_covers_is_a_knowledge_gap(engine):
    # No document writes "sabbatical", so "sabatical" is no typo of a corpus word; it was answered
    # from the audit-log paragraph, whose "1 year" matched "five years".
    for question in ("is there a sabatical after five years?", "Sabatical after five years?"):
        out = engine.run(question)["final_output"]
        assert out["status"] == "insufficient_context", question
        assert "abatical”" in out["knowledge_gap"]  # as the asker wrote it
    # a capitalised word mid-sentence is a name, and names are left to the usual checks
    assert not unknown_word("orrinfeld", "Is Orrinfeld our parent company?", {})
