"""Name the questions whose answer differs between two eval runs:
`python -m rag_graph.tools.compare_reports OLD NEW` (two report files, or two folders of them).

A restructure must change no answer: every field of `final_output` is compared except the
timing. Exit 1 when any question differs, so a script can stop on it. Reports written before
`notes` became a field of `final_output` carried the notes in the answer, after it in brackets;
both shapes are compared in that one (`_as_one_text`), so a report of either age compares.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

IGNORED = {"latency_ms", "elapsed_ms"}  # timings differ run to run


def _outputs(path: Path) -> dict[str, dict]:
    report = json.loads(path.read_text())
    outputs = {}
    for entry in report["questions"]:
        key = entry["question"] + "".join(f" | {turn['content']}" for turn in entry.get("history") or [])
        outputs[key] = _as_one_text({k: v for k, v in entry["final_output"].items() if k not in IGNORED})
    return outputs


def _as_one_text(output: dict) -> dict:
    """The output with its notes in the answer, as finalize_answer wrote them until they became
    a field: "<answer> (Note: <first>. <Second>…)"."""
    notes = output.pop("notes", None) or []
    notes = [note.rstrip(".") if at < len(notes) - 1 else note for at, note in enumerate(notes)]
    if notes:
        joined = ". ".join([*notes[:1], *(note[0].upper() + note[1:] for note in notes[1:])])
        output["answer"] = f"{output['answer']} (Note: {joined})"
    return output


def compare(old: Path, new: Path) -> list[str]:
    """One line per differing question (and per report found on one side only)."""
    if old.is_dir():
        names = sorted({p.name for p in old.glob("*.json")} | {p.name for p in new.glob("*.json")})
        return [line for name in names for line in
                (compare(old / name, new / name) if (old / name).exists() and (new / name).exists()
                 else [f"{name}: only in {'old' if (old / name).exists() else 'new'}"])]
    before, after = _outputs(old), _outputs(new)
    lines = []
    for question in before.keys() | after.keys():
        a, b = before.get(question), after.get(question)
        if a != b:
            fields = sorted(k for k in (a or {}).keys() | (b or {}).keys() if (a or {}).get(k) != (b or {}).get(k))
            lines.append(f"{old.name}: {question[:100]!r} differs in {', '.join(fields)}")
    return sorted(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lines = compare(Path(argv[0]), Path(argv[1]))
    print("\n".join(lines) if lines else "no answer changed")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
