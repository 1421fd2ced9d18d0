"""The reply-defect counter (rag_graph/tools/reply_defects.py): each kind counted on replies a
reader would call defective, and not on the same replies written right."""
import json

from rag_graph.tools.reply_defects import count, defects, main

EXPENSES = ("Travel and Expenses › What is not reimbursed\n\n- Traffic and parking fines.\n"
            "- Upgrades to business or first class, unless approved in advance by the CFO.\n"
            "- Lost or stolen personal items.")


def entry(answer: str, citations: list[dict], retrieved=(), status="answered", split="dev") -> dict:
    return {"question": "q", "split": split, "retrieved": list(retrieved),
            "final_output": {"status": status, "answer": answer, "citations": citations}}


def cited(chunk_id: str, section: str = "Remote Work", url: str = "https://h.example/2025#remote-work") -> dict:
    return {"chunk_id": chunk_id, "title": "Employee Handbook 2025", "section": section, "url": url}


def test_one_section_cited_twice_is_a_duplicate_link_two_sections_are_not():
    assert defects(entry("Up to 3 days.", [cited("rw::0"), cited("rw::1")]))["dup_link"] == 1
    assert defects(entry("Up to 3 days.", [cited("rw::0"), cited("x::0", "Other", "https://h.example/2025#other")]))["dup_link"] == 0
    # a decline shows no sources: nothing of it is counted
    assert defects(entry("I don't know.", [cited("rw::0"), cited("rw::1")], status="insufficient_context"))["dup_link"] == 0


def test_a_list_item_shown_without_its_heading_is_bare_and_with_it_is_not():
    chunk = {"chunk_id": "te::nr::0", "text": EXPENSES}
    source = [cited("te::nr::0", "What is not reimbursed", "https://h.example/te#nr")]
    bare = defects(entry("Upgrades to business or first class, unless approved in advance by the CFO.", source, [chunk]))
    assert bare["bare_item"] == 1 and bare["bare_short"] == 0
    assert defects(entry("Travel: Lost or stolen personal items.", source, [chunk]))["bare_short"] == 1
    led = "What is not reimbursed: Upgrades to business or first class, unless approved in advance by the CFO."
    assert defects(entry(led, source, [chunk]))["bare_item"] == 0


def test_two_sentences_of_nearly_the_same_words_are_a_near_duplicate():
    twice = ("Config: The four relevant files are: npm's built-in configuration file (`/path/to/npm/npmrc`). "
             "The four relevant files are: npm builtin config file (`/path/to/npm/npmrc`).")
    assert defects(entry(twice, []))["near_dup"] == 1
    assert defects(entry("The four relevant files are: npm's built-in configuration file. "
                         "Per-user config lives in ~/.npmrc.", []))["near_dup"] == 0


def test_counts_per_set_and_half_and_examples_never_read_a_test_half(tmp_path, capsys):
    report = {"questions": [entry("Up to 3 days.", [cited("rw::0"), cited("rw::1")]),
                            entry("Up to 4 days.", [cited("rw::0"), cited("rw::1")], split="test")]}
    (tmp_path / "corpus.json").write_text(json.dumps(report))
    tally = count(tmp_path)
    assert tally[("corpus", "dev")]["dup_link"] == 1 and tally[("corpus", "test")]["answered"] == 1
    main([str(tmp_path), "--examples"])
    shown = capsys.readouterr().out
    assert "Up to 3 days." in shown and "Up to 4 days." not in shown
