"""How well a chunk answers a query, in numbers that can be explained: cosine similarity from
the embedding, and the share of the query's (rarity-weighted) terms the chunk contains; for the
top candidates, late interaction too.

LanceDB's fused hybrid score is rank-based and min-max normalised per query, so it orders a
result list but says nothing absolute; these measures do."""
from __future__ import annotations

import re

import numpy as np

from lemminflect import getAllLemmas

from ..language.text import STOPWORDS, idf, sentences, stem, term_set, terms, terms_held
from ..language.text import words as _words

# Weights of cosine similarity, term coverage and BM25 (relative to the best BM25 of the query)
# in a chunk's relevance; measured on both eval sets (`citebot eval`), see the issue notes.
WEIGHTS = (0.59, 0.35, 0.06)


_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")  # a word as written, hyphens and all ("part-time", "wi-fi")


# Phrases that ask for a description of their subject and name nothing a document would write:
# "what does a cycle look like?" is about a cycle, and no section on cycles says "look".
_DESCRIBE = re.compile(r"\blooks? like\b|\bwhat(?:'s|’s| is) the (?:deal|story) with\b|\btell me (?:more )?about\b", re.I)


# "Who is our COO?" asks who holds a role: "Our COO runs the All Hands" names the role, not its
# holder, and is no answer; only a sentence that names someone is (else the bot says it doesn't know).
_ASKS_HOLDER = re.compile(r"^\W*who\s*(?:is|are|was|'s|’s)\s+(?:our|the|your|my)\s+(?:[\w-]+\s+){0,3}?"
                          r"(?P<role>CEO|COO|CTO|CFO|CIO|CISO|CPO|CRO|CMO|VP|founders?|co-?founders?|president|chair\w*|"
                          r"owner|boss|head of [\w ]+|director of [\w ]+)\W*$", re.I)


def role_asked(question: str) -> str:
    """The role whose holder the question asks for ("COO" of "who is our COO?"), "" if none."""
    match = _ASKS_HOLDER.search(question)
    return match["role"] if match else ""


def holds_role(text: str, role: str) -> bool:
    """The text names the role, as the asker wrote it or, for an acronym, written out
    ("CEO": "Chief Executive Officer")."""
    return term_set(role) <= terms_held(role, text)


def query_weights(query: str, vocabulary: tuple[dict[str, int], int]) -> dict[str, float]:
    """Rarity weight of each of the query's terms. A hyphenated word the corpus never writes
    joined ("part-time" where documents say "part time") counts as its parts only: its joined
    form would be a word no chunk can contain, the rarest term of the query and a false gap."""
    frequency, total = vocabulary
    query = _DESCRIBE.sub(" ", query)
    unwritten = {t for word in _TOKEN.findall(query) if "-" in word for t in terms(word.replace("-", ""))
                 if t not in frequency}
    return {term: idf(frequency.get(term, 0), total) for term in dict.fromkeys(terms(query))
            if term not in unwritten}


def relevance_scores(query: str, chunks: list[dict], vocabulary) -> list[dict]:
    """Copies of the chunks with `coverage` and `relevance` added, best first."""
    weights = query_weights(query, vocabulary)
    total = sum(weights.values()) or 1.0
    best_keyword = max([float(c.get("keyword_score") or 0.0) for c in chunks] + [1e-9])
    scored = []
    for chunk in chunks:
        have = terms_held(query, chunk["text"])
        coverage = sum(w for t, w in weights.items() if t in have) / total
        similarity = float(chunk.get("similarity") or 0.0)
        keyword = float(chunk.get("keyword_score") or 0.0) / best_keyword
        relevance = WEIGHTS[0] * similarity + WEIGHTS[1] * coverage + WEIGHTS[2] * keyword
        scored.append({**chunk, "coverage": round(coverage, 4), "relevance": round(relevance, 4)})
    return sorted(scored, key=lambda c: (-c["relevance"], -int(c.get("authority") or 0),
                                         _descending(c.get("effective_date") or "")))


# Late interaction (ColBERT's MaxSim over the embedding model's own token vectors): each query
# token meets its best match in the chunk, word by word, where one pooled vector per text blurs
# them. Re-ranking the top 10 by relevance + 2 x this score raised MRR on both halves of the 18F
# sets and of the thread sets (18F test .664 -> .749), and cost .02 on the small bundled corpus;
# see the issue 10 notes.
LATE_CANDIDATES = 10
LATE_WEIGHT = 2.0


def late_interaction(query: str, chunks: list[dict], embedder) -> list[float]:
    """For each chunk, the mean over the query's tokens of the best cosine to any of the
    chunk's tokens (stored at index time)."""
    asked = embedder.query_tokens(query)
    return [float(best_matches(asked, tokens).mean())
            for tokens in embedder.passage_tokens([c["text"] for c in chunks])]


def best_matches(asked: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """For each question token, its best cosine to one of the text's tokens (MaxSim)."""
    return (asked @ tokens.T).max(axis=1)


def rerank_late(query: str, ranked: list[dict], embedder) -> list[dict]:
    """The top candidates re-ordered by their `standing`, each with its `late` score."""
    head = ranked[:LATE_CANDIDATES]
    if len(head) < 2:
        return ranked
    scored = [{**c, "late": round(late, 4)} for c, late in zip(head, late_interaction(query, head, embedder))]
    return sorted(scored, key=lambda c: -standing(c)) + ranked[LATE_CANDIDATES:]


def standing(chunk: dict) -> float:
    """Where a chunk ranks: its relevance, with its late-interaction score once it has one,
    on relevance's scale."""
    relevance = float(chunk.get("relevance") or 0.0)
    if chunk.get("late") is None:
        return relevance
    return (relevance + LATE_WEIGHT * chunk["late"]) / (1 + LATE_WEIGHT)


def by_relevance(chunks: list[dict]) -> list[dict]:
    """The chunks in order of relevance, whatever order late interaction gave them (stable:
    ties keep their rank)."""
    return sorted(chunks, key=lambda c: -float(c.get("relevance") or 0.0))


def _descending(date: str) -> str:
    return "".join(chr(0x10FFFF - ord(ch)) for ch in date)


# Words that frame a question rather than name its subject: their absence from the evidence
# says nothing ("what's the parking policy?" is answered by a section on parking).
FRAME_WORDS = frozenset(terms(
    "policy policies rule rules process procedure guideline guidelines option options detail details "
    "information info include includes included cover covers covered offer offers allowed allow "
    "eligible eligibility apply applies available company companies compare compared comparison "
    "differ differs difference different versus vs between true correct really actually exactly "
    "current currently latest now today still anymore nowadays "
    # the quantity asked for ("what's the cap on…", "how long…"): a document states it as
    # "up to 10 days", not as "the cap is"
    "cap limit maximum max minimum min number amount total long"))


# What the asker does ("when do I hit…", "before I buy…", "I have to sign…"): the word after a
# personal pronoun or after "want to", "have to"…. Documents say it in their own words ("hit the
# max" is "max out"), so it is neither the question's subject nor a gap. A modal is no cue:
# "can contractors…" puts the subject after it.
_ASKER_DOES = re.compile(r"\b(?:i|we|you|they|he|she|(?:want|need|have|has|going|able|allowed|ok|okay|supposed|"
                         r"expected|how|plan|try) to)\s+(?=([a-z]+)\b)", re.I)


def subject_weights(query: str, vocabulary) -> dict[str, float]:
    """The query's term weights without the words that frame it or say what the asker does."""
    does = {t for word in _ASKER_DOES.findall(query) for t in terms(word)}
    return {t: w for t, w in query_weights(query, vocabulary).items() if t not in FRAME_WORDS and t not in does}


def uncovered_terms(query: str, chunks: list[dict], vocabulary, min_share: float = 0.2) -> list[str]:
    """Query words that carry real weight yet occur in none of the chunks."""
    weights = subject_weights(query, vocabulary)
    total = sum(weights.values()) or 1.0
    seen = set().union(*(terms_held(query, c["text"]) for c in chunks)) if chunks else set()
    stems = [t for t, w in weights.items() if t not in seen and w / total >= min_share]
    originals = {}  # each stem as the asker wrote it, "wi-fi" included
    for token in _TOKEN.findall(query.lower()):
        for word in (token, *token.split("-")):
            for t in stems:
                if terms(word.replace("-", "")) == [t]:
                    originals.setdefault(t, word)
    return [originals.get(t, t) for t in stems]


# Words that say when, how often or how sure, or answer yes or no, never what: no knowledge gap
# is about them ("who gives the final yes on term renewals?" asks who approves). Nor is one of
# the function words the dictionary does not list as such, which would pass for a name ("…not
# sure whether a side job counts": a policy on side jobs need not write "whether").
_NOT_A_SUBJECT = frozenset("ago already ever yet soon often usually maybe probably really just still "
                           "anymore currently recently lately yes no okay ok "
                           "whether unless although albeit whereas whilst lest neither whatever whichever whoever "
                           "onto toward towards upon versus vs among amongst despite beside underneath till unto "
                           "thru cannot".split())


def names_a_subject(word: str, question: str = "") -> bool:
    """A question word that can name what the question is about: not a frame word ("ago"),
    and a word English can use as a noun, or no dictionary word at all (a name, an acronym:
    "HSA", "Juneteenth"). A word that is only ever a verb, adjective or adverb ("lived",
    "attach", "far") is what the question asks about its subject, and documents say it in
    their own words: its absence from the evidence is no knowledge gap. In the question, a
    verb's -ing form before a noun names a kind of that thing as a noun would: the "signing"
    of "a signing bonus", the "parking" of "a parking permit"."""
    if word in _NOT_A_SUBJECT or word in STOPWORDS or stem(word) in STOPWORDS:
        return False
    kinds = getAllLemmas(word)
    if "VERB" in kinds and re.search(rf"\b{re.escape(word)}\s+(?:off|over|up|out|down|back|through)\b", question, re.I):
        return False  # a phrasal verb ("sign off", "goes over") says what is done, not to what
    return not kinds or "NOUN" in kinds or "PROPN" in kinds or bool(kind_named(word, question))


def kind_named(word: str, question: str) -> str:
    """The thing an -ing word is a kind of in the question ("signing bonus"), "" if none."""
    if not word.endswith("ing"):
        return ""
    following = re.search(rf"\b{re.escape(word)}\s+([a-z]+)\b", question, re.I)
    noun = following[1].lower() if following else ""
    return f"{word} {noun}" if noun and noun not in STOPWORDS and "NOUN" in getAllLemmas(noun) else ""


FOREIGN_MARGIN = 0.03


def foreign_terms(question: str, search_query: str, chunks: list[dict], vocabulary, embedder) -> list[str]:
    """The subject the evidence is silent about ("contractors" in a question about contractors'
    remote work): a weighty question word that no top chunk contains and whose removal brings
    the query *closer* to the best chunk. A synonym the documents phrase differently ("PTO" for
    paid time off) moves the query away when removed, so it does not count as missing."""
    words = [word for word in uncovered_terms(question, chunks, vocabulary) if names_a_subject(word, question)]
    if not words:
        return []
    # A word neither the corpus nor the dictionary knows, written in lower case, is a misspelling
    # of something the corpus lacks ("sabatical"): no vector can say what it is close to.
    unknown = [word for word in words if unknown_word(word, question, vocabulary[0])]
    words = [word for word in words if word not in unknown]
    reduced = [re.sub(rf"\b{re.escape(word)}\b", " ", search_query, flags=re.I) for word in words]
    best = embedder.encode_passages([chunks[0]["text"]])[0]
    closeness = float(embedder.encode_query(search_query) @ best)
    foreign = unknown + [word for word, without in zip(words, embedder.encode(reduced) @ best)
                         if float(without) - closeness > FOREIGN_MARGIN]
    return [word for word in foreign if not has_synonym(word, chunks, embedder)]


def unknown_word(word: str, question: str, frequency: dict[str, int]) -> bool:
    """Five letters or more, in lower case as asked or opening a sentence (not a name or an
    acronym), in no document and no dictionary."""
    written = re.search(rf"\b{re.escape(word)}\b|(?:^|[.!?]\s+)(?i:{re.escape(word)})\b", question)
    return (len(word) >= 5 and written is not None and word.isalpha() and stem(word) not in frequency
            and not getAllLemmas(word))


SYNONYM = 0.6  # cosine of two single words that name the same thing ("quit" / "stop", "buy" / "purchasing")


SYNONYM_SENTENCES = 3  # where a synonym is looked for: the evidence's sentences nearest the word


def has_synonym(word: str, chunks: list[dict], embedder) -> bool:
    """The evidence says it in other words: a word close to the missing one, in the sentences
    of the top chunks nearest to it. Sentence vectors were stored at index time; only the
    words of those few sentences are encoded, not every word of the chunks."""
    target = embedder.encode_query(word)
    parts = list(dict.fromkeys(s for c in chunks for s in sentences(c.get("body") or c["text"])))
    if parts:
        nearest = np.argsort(-(embedder.encode_passages(parts) @ target))[:SYNONYM_SENTENCES]
        parts = [parts[i] for i in nearest]
    vocabulary = sorted({w for s in parts for w in _words(s) if w not in STOPWORDS and len(w) > 2
                         and not w[0].isdigit()})
    if not vocabulary:
        return False
    closeness = embedder.encode_passages(vocabulary) @ target
    return float(closeness.max()) >= SYNONYM


_VALUE = re.compile(
    r"(?:[$£€]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:%|percent|days?|weeks?|months?|years?|hours?))",
    re.I)


def values(text: str) -> dict[str, str]:
    """Amounts, percentages and durations (comparison key -> as written): what two sources on
    the same rule disagree about."""
    found = {}
    for value in _VALUE.findall(text):
        written = re.sub(r"\s+", " ", value)
        found.setdefault(written.lower().rstrip("s"), written)
    return found
