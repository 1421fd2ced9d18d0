"""Where the answer is when the reply misses it:

    python -m rag_graph.tools.answer_place --out .citebot/labels --db DIR    # record + table
    python -m rag_graph.tools.answer_place --out .citebot/labels --check     # table of what is recorded

Every DEV-half answerable question (never a test half: those are not even asked; never a set kept
aside) is asked through the real flow (`Engine.run`, with its history). For each, the answering
text is looked for at every step the flow passes it through: the writer's pool (its best few
sentences, best first), the other sentences the writer scored in its context, the context's chunks
(a chunk's text may hold the answer where no sentence the writer offers does), the ranked chunks
that were not given to the writer, the chunks the search retrieved before ranking and filtering
cut them, and the whole index. Text answers when it holds a keyword the reply misses (as
`citebot eval` matches them: case-insensitive substrings), or every keyword when the reply holds
them all but leads with a sentence a person judged a distractor (eval/judged/); a pool sentence
a person judged to answer answers too. One `<set>.place.jsonl` per set (`--force` rebuilds).
The table counts, per corpus, the first step each question's answer is found at, for the
questions whose reply leads with a judged distractor and for those whose reply misses a keyword.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from ..answer.passages import EXAMPLE
from .evaluation import answer_recall, contains
from .judged_inclusion import ANSWERS, DISTRACTOR, judged_options, key, recorded
from .labels import chosen_in, record_set

SUFFIX = ".place.jsonl"
EARLY = 4  # pool places the lead models re-ordered (lead_choice); places after it are "late"
STEPS = ("pool 1-4", "pool 5+", "candidate outside the pool", "context chunk, no candidate",
         "ranked, not given to the writer", "ranked, the flow declined", "retrieved, cut by ranking", "in the index, not retrieved",
         "nowhere verbatim")


def _held(text: str, keywords: list[str]) -> list[str]:
    return [k for k in keywords if contains(text, k)]


def _chunks(chunks: list[dict], keywords: list[str]) -> list[dict]:
    return [{"chunk_id": c["chunk_id"], "held": _held(c["text"], keywords)} for c in chunks]


_INDEXED: dict[int, list[str]] = {}  # engine -> every chunk's text, read once per corpus


def _indexed(engine) -> list[str]:
    if id(engine) not in _INDEXED:
        _INDEXED.clear()
        _INDEXED[id(engine)] = [row["text"] for row in engine.index.fetch("chunk_id IS NOT NULL", limit=10 ** 7)]
    return _INDEXED[id(engine)]


def record_case(engine, case) -> dict:
    record = {"question": case.question, "split": case.split}
    if case.split != "dev" or not case.answerable or not case.keywords:
        return record
    state = engine.run(case.question, case.history)
    answer = (state.get("final_output") or {}).get("answer", "")
    keywords = case.keywords
    record.update(status=(state.get("final_output") or {}).get("status"), keywords=keywords,
                  recall=answer_recall(answer, keywords), missed=[k for k in keywords if not contains(answer, k)],
                  context=_chunks(state.get("context") or [], keywords),
                  ranked=_chunks(state.get("ranked_chunks") or [], keywords),
                  retrieved=_chunks(state.get("retrieved_chunks") or [], keywords),
                  indexed={k: sum(contains(text, k) for text in _indexed(engine)) for k in keywords},
                  pool=[], outside=[], lead=-1)
    chosen = chosen_in(engine, state, parts=True)
    if chosen is not None:
        _, _, (picked, pool, found, _, _) = chosen
        record["lead"] = next((n for n, c in enumerate(pool) if not EXAMPLE.match(c.text)), -1)
        record["picked"] = [c.text for c in picked]
        record["pool"] = [{"text": c.text, "rank": c.rank, "position": c.position, "last": c.last,
                           "held": _held(c.text, keywords)} for c in pool]
        inside = {id(c) for c in pool}
        rest = sorted((c for c in found if id(c) not in inside), key=lambda c: -c.score)
        record["outside"] = [{"text": c.text, "rank": c.rank, "position": c.position, "place": len(pool) + n,
                              "held": _held(c.text, keywords)}
                             for n, c in enumerate(rest) if _held(c.text, keywords)]
    return record


def build_set(name: str, db: Path, out: Path, force: bool) -> Path | None:
    return record_set(name, db, out, force, SUFFIX, record_case)


def lead_judgment(record: dict, judged: dict) -> str | None:
    if record.get("lead", -1) < 0:
        return None
    return judged.get(key(record["set"], record["question"], record["pool"][record["lead"]]["text"]))


def step(record: dict, judged: dict) -> str:
    """The first step of the flow at which the text answering the question is found (STEPS)."""
    wanted = set(record["missed"] or record["keywords"])

    def answers(held: list[str]) -> bool:
        return bool(wanted & set(held))

    for place, sentence in enumerate(record["pool"]):
        said = judged.get(key(record["set"], record["question"], sentence["text"]))
        if said == ANSWERS or (answers(sentence["held"]) and said != DISTRACTOR):
            return STEPS[0] if place < EARLY else STEPS[1]
    if any(answers(c["held"]) for c in record["outside"]):
        return STEPS[2]
    if any(answers(c["held"]) for c in record["context"]):
        return STEPS[3]
    given = {c["chunk_id"] for c in record["context"]}
    if any(answers(c["held"]) for c in record["ranked"] if c["chunk_id"] not in given):
        return STEPS[4] if given else STEPS[5]
    if any(answers(c["held"]) for c in record["retrieved"]):
        return STEPS[6]
    if any(record["indexed"].get(k) for k in wanted):
        return STEPS[7]
    return STEPS[8]


def table(records: list[dict], judged: dict) -> dict[str, dict[str, Counter]]:
    """Per group (replies leading with a judged distractor, replies missing a keyword), per corpus,
    the questions by the step their answer is first found at. Dev records only."""
    groups = {"lead judged distractor": {}, "reply misses a keyword": {}}
    for record in records:
        if record["split"] != "dev" or "keywords" not in record:
            continue
        found = step(record, judged)
        if lead_judgment(record, judged) == DISTRACTOR:
            groups["lead judged distractor"].setdefault(record["corpus"], Counter())[found] += 1
        if record["recall"] < 1:
            groups["reply misses a keyword"].setdefault(record["corpus"], Counter())[found] += 1
    return groups


def detail(records: list[dict], judged: dict, where: str) -> Counter:
    """For the table's questions whose answer is first found at `where` (a pool place after EARLY,
    or a candidate outside the pool): the answering sentence's chunk rank, whether it opens its chunk, whether it stands in
    the lead's chunk, and whether it is the next or previous sentence of a pool 1-4 sentence."""
    out = Counter()
    for record in records:
        if (record["split"] != "dev" or "keywords" not in record or step(record, judged) != where
                or record["recall"] == 1 and lead_judgment(record, judged) != DISTRACTOR):
            continue
        wanted = set(record["missed"] or record["keywords"])
        found = record["pool"] if where == STEPS[1] else record["outside"]
        best = next(c for c in found if wanted & set(c["held"]))
        lead = record["pool"][record["lead"]] if record["lead"] >= 0 else {}
        near = any(p["rank"] == best["rank"] and (best["position"] == p["last"] + 1 or best["position"] + 1 == p["position"])
                   for p in record["pool"][:EARLY])
        out.update([f"chunk rank {best['rank']}", "opens its chunk" if best["position"] == 0 else "later in its chunk",
                    "lead's chunk" if best["rank"] == lead.get("rank") else "another chunk",
                    "next to a pool 1-4 sentence" if near else "not next to one"])
    return out


def print_table(groups: dict[str, dict[str, Counter]]) -> None:
    for group, corpora in groups.items():
        names = sorted(corpora)
        print(f"\n{group} (dev questions): {sum(sum(c.values()) for c in corpora.values())}")
        print(f"| where the answer is | {' | '.join(names)} | all |")
        print(f"|---|{'---|' * (len(names) + 1)}")
        for name in STEPS:
            counts = [corpora[corpus][name] for corpus in names]
            print(f"| {name} | {' | '.join(map(str, counts))} | {sum(counts)} |")


def main(argv: list[str] | None = None) -> int:
    parser = judged_options(__doc__.splitlines()[0], "print the table of what is recorded; record nothing")
    args = parser.parse_args(argv)
    records, judged = recorded(args, SUFFIX, build_set)
    if not records:
        print(f"nothing recorded in {args.out}: run without --check", file=sys.stderr)
        return 1
    print_table(table(records, judged))
    for where in STEPS[1:3]:
        print(f"\n{where}: {dict(sorted(detail(records, judged, where).items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
