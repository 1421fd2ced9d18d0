"""The report comparison names the questions whose final_output differs between two eval runs
(rag_graph/tools/compare_reports.py)."""
import json

from rag_graph.tools.compare_reports import main

ANSWER = {"status": "answered", "answer": "Up to 3 days a week.", "citations": [], "latency_ms": 5}


def report(tmp_path, name, *outputs):
    path = tmp_path / name
    path.write_text(json.dumps({"questions": [{"question": f"q{n}", "final_output": o} for n, o in enumerate(outputs)]}))
    return path


def test_notes_as_a_field_compare_equal_to_the_same_notes_inside_an_older_reports_answer(tmp_path, capsys):
    old = report(tmp_path, "old.json", {**ANSWER, "answer": "Up to 3 days a week. (Note: I read “x” as “y”. "
                                                  "An older source said 2 days.)"}, ANSWER)
    new = report(tmp_path, "new.json", {**ANSWER, "notes": ["I read “x” as “y”", "an older source said 2 days."],
                                        "latency_ms": 9}, {**ANSWER, "notes": []})
    assert main([str(old), str(new)]) == 0
    assert capsys.readouterr().out.strip() == "no answer changed"


def test_a_changed_note_or_answer_is_named(tmp_path, capsys):
    old = report(tmp_path, "old.json", {**ANSWER, "notes": ["an older source said 2 days."]}, ANSWER)
    new = report(tmp_path, "new.json", {**ANSWER, "notes": ["an older source said 4 days."]},
                 {**ANSWER, "answer": "Up to 4 days a week."})
    assert main([str(old), str(new)]) == 1
    shown = capsys.readouterr().out
    assert "'q0' differs in answer" in shown and "'q1' differs in answer" in shown
