"""The stemmer and the word reader (rag_graph/language/): the forms of one word share a stem,
words that only look alike keep their own, and a word reads the same however it is typed. The
rankings these rules protect are in tests/scoring/test_ranking.py."""
import pytest

from rag_graph.language.words import stem, terms


@pytest.mark.parametrize("forms", [
    # an s that is no plural: 'bonus' was 'bonu', so "bonuses" read as silent about "bonus"
    ("serious", "seriously"), ("class", "classes"), ("access", "accessed"), ("status", "statuses"),
    # 'ly' is stripped from adverbs only
    ("apply", "applies", "applied"), ("easily", "easy"), ("monthly", "month"),
    # a final e is dropped only where it leaves the same word
    ("fare", "fares", "fared"), ("care", "caring", "cared"), ("car", "cars"), ("rate", "rating"),
    ("site", "sites"), ("delete", "deleted", "deleting"), ("hire", "hired"),
], ids=lambda forms: "-".join(forms))
def test_the_forms_of_one_word_share_a_stem(forms):
    assert len({stem(word) for word in forms}) == 1, {word: stem(word) for word in forms}


@pytest.mark.parametrize("word, other", [
    ("apply", "app"), ("early", "ear"), ("fare", "far"), ("care", "car"), ("rate", "rat"), ("site", "sit"),
])
def test_words_that_only_look_alike_keep_their_own_stems(word, other):
    assert stem(word) != stem(other)


@pytest.mark.parametrize("typed, written", [
    ("Résumé, café, naïve", "resume, cafe, naive"),  # LanceDB's full-text leg folds accents; so do we
    ("whats the cap, ive asked and dont know, im new", "what's the cap, I've asked and don't know, I'm new"),
], ids=["accents", "apostrophes-dropped-in-chat"])
def test_a_word_reads_the_same_however_it_is_typed(typed, written):
    assert terms(typed) == terms(written)
