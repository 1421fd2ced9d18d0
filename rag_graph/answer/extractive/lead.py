"""Which pool sentence the answer leads with, as the tools measure it. The writer's score ranks
its pool (best first); judged on the dev halves, the first sentence it quotes is itself a
distractor (the other plan's figure, the next rule, another group's case) in 66 of 306
questions, and in 29 of those a pool sentence judged to answer stands beside it. `rows` gives
the signals the writer has about each pool sentence, side by side, for
`rag_graph.tools.lead_choice`, which counts those leads and fits a ranking model on judged pairs
with each corpus held out. Not used by replies: the fitted model moving a sentence ahead of the
lead by a margin lost an 18F handbook test half 0.027 of answer recall end to end
(docs/measuring.md, "Judged sentences: the lead")."""
from __future__ import annotations

from ...language.markdown import LIST_ITEM
from ...language.words import weighted_coverage
from ..passages import Candidate, is_prose

# Per pool sentence: its score as a share of the best's, its score before the re-scoring by
# meaning as a share of the pool's best, its closeness in meaning (cosine, late interaction) and
# how far behind the pool's closest, the question's weight its own words hold and its heading
# adds, whether it holds the kind of answer asked for, its chunk's rank and its place in the chunk,
# its length, what kind of text it is, and of its words the share the question holds.
FEATURES = ("share", "lexical_share", "similarity", "similarity_gap", "late", "late_gap", "coverage",
            "heading", "typed", "chunk_rank", "position", "chars", "prose", "list_item", "tabular", "asked_share")


def rows(pool: list[Candidate], closeness: dict[int, tuple[float, float]], weights: dict[str, float],
         asked: set[str]) -> list[list[float]]:
    """One row of FEATURES per pool sentence, in the pool's order (best first)."""
    if not pool:
        return []
    best = max(pool[0].score, 1e-9)
    lexical = max(max(c.lexical for c in pool), 1e-9)
    near = [closeness.get(id(c), (0.0, 0.0)) for c in pool]
    closest, finest = max(s for s, _ in near), max(l for _, l in near)
    out = []
    for candidate, (similarity, late) in zip(pool, near):
        own = candidate.terms or {""}
        out.append([candidate.score / best, candidate.lexical / lexical, similarity, closest - similarity, late,
                    finest - late, weighted_coverage(weights, candidate.terms),
                    weighted_coverage(weights, set(candidate.heading) - candidate.terms), float(candidate.typed),
                    float(candidate.rank), float(min(candidate.position, 5)), len(candidate.text) / 300,
                    float(is_prose(candidate)), float(bool(LIST_ITEM.match(candidate.text))),
                    float(candidate.tabular), len(own & asked) / len(own)])
    return out

