"""final_output -> Block Kit: escaping, links, the don't-know shape and Slack's size limits."""
import json

from slack_sdk.models.blocks import Block

from bot.slack.render import MAX_BLOCKS, MAX_BUTTON_VALUE, MAX_SECTION, apology, render_answer, split_text


def answered(answer="Up to 3 days a week.", citations=None, notes=()):
    return {"status": "answered", "answer": answer, "notes": list(notes), "confidence": 0.9, "retrieval_attempts": 1,
            "retrieved_sources": [], "grounding_status": "grounded", "knowledge_gap": None, "errors": [],
            "citations": citations if citations is not None else [
                {"source_id": "hb", "title": "Employee Handbook 2025", "section": "Remote Work",
                 "chunk_id": "hb::remote-work::0", "url": "https://handbook.example/2025#remote-work"}]}


def texts(message):
    for block in message["blocks"]:
        if block["type"] == "section":
            yield block["text"]["text"]
        elif block["type"] == "context":
            yield from (element["text"] for element in block["elements"])


def assert_within_limits(message):
    assert len(message["blocks"]) <= MAX_BLOCKS
    assert all(len(text) <= MAX_SECTION for text in texts(message))
    assert len(message["text"]) <= MAX_SECTION
    for block in message["blocks"]:
        for element in block.get("elements", []):
            for button in (element, element.get("positive_button", {}), element.get("negative_button", {})):
                assert len(button.get("value", "")) <= MAX_BUTTON_VALUE


def test_a_long_answer_is_split_into_sections_within_slacks_limits_and_nothing_is_lost():
    sentence = "Employees may work remotely up to 3 days a week with manager approval & HR <review>. "
    long = sentence * 300  # ~26,000 characters
    citations = [{"source_id": f"doc{i}", "title": "T" * 200, "section": f"Section {i}", "chunk_id": f"c{i}" * 40,
                  "url": f"https://docs.example/{i}#s"} for i in range(60)]
    message = render_answer(answered(long, citations), ref="abc", question="q" * 5000)
    assert_within_limits(message)
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    assert len(sections) > 8
    assert " ".join(sections).split() == long.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split()
    assert "… and" in list(texts(message))[-1]  # sources that did not fit are counted, not dropped silently


def test_an_enormous_answer_is_truncated_to_fifty_blocks_with_a_marker():
    message = render_answer(answered("word " * 100_000), ref="abc")
    assert_within_limits(message)
    assert len(message["blocks"]) == MAX_BLOCKS
    sections = [b for b in message["blocks"] if b["type"] == "section"]
    assert sections[-1]["text"]["text"].endswith("(answer truncated)")


def test_splitting_never_cuts_an_escaped_entity():
    text = ("x" * 2997) + "&amp;" + ("y" * 10)
    pieces = split_text(text, 3000)
    assert pieces[0] == "x" * 2997 and pieces[1].startswith("&amp;")


def test_mrkdwn_control_characters_in_answers_and_titles_are_escaped():
    message = render_answer(answered("Use <!channel> & <https://evil.example|click>", [
        {"source_id": "s", "title": "R&D <Guide>", "section": "A|B", "chunk_id": "c",
         "url": "https://docs.example/x?a=1&b=2#s"}]), ref="r")
    shown = "\n".join(texts(message))
    assert "<!channel>" not in shown and "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" in shown
    assert "<https://docs.example/x?a=1&amp;b=2#s|R&amp;D &lt;Guide&gt; › A|B>" in shown


def test_a_citation_without_a_usable_url_is_plain_text_never_a_broken_link():
    citations = [{"source_id": "a", "title": "Office Guide", "section": "Parking", "chunk_id": "a", "url": ""},
                 {"source_id": "b", "title": "Wiki", "section": "", "chunk_id": "b", "url": "javascript:alert(1)"}]
    shown = "\n".join(texts(render_answer(answered(citations=citations), ref="r")))
    assert "• Office Guide › Parking" in shown and "• Wiki" in shown
    assert "<" not in shown


def test_the_conflict_note_is_shown_apart_from_the_answer():
    message = render_answer(answered("Up to 3 days.", notes=["an archived source, Blog, 2020, said 2 days; "
                                                             "Handbook supersedes it."]), ref="r")
    assert message["blocks"][0]["text"]["text"] == "Up to 3 days."
    assert message["blocks"][1]["elements"][0]["text"].startswith(":information_source: Note: an archived")


def test_dont_know_names_the_gap_and_where_to_ask_without_citations():
    output = {**answered(), "status": "insufficient_context", "citations": [], "confidence": 0.0,
              "answer": "I don't know: …", "knowledge_gap": "Nothing covers contractors & remote work."}
    message = render_answer(output, ref="r", ask_hint="<#C42|people-ops>")
    shown = "\n".join(texts(message))
    assert "*I don't know.*" in shown
    assert "*What's missing:* Nothing covers contractors &amp; remote work." in shown
    assert "<#C42|people-ops>" in shown and "Sources" not in shown
    assert message["blocks"][-1]["type"] == "context_actions"


def test_native_feedback_buttons_carry_the_vote_and_the_answer_reference():
    message = render_answer(answered(), ref="abc123", question="How many days?")
    block = message["blocks"][-1]
    [element] = block["elements"]
    assert block["type"] == "context_actions" and element["type"] == "feedback_buttons"
    about = {"ref": "abc123", "status": "answered", "q": "How many days?", "chunks": ["hb::remote-work::0"], "h": 0}
    assert json.loads(element["positive_button"]["value"]) == {"vote": "helpful", **about}
    assert json.loads(element["negative_button"]["value"]) == {"vote": "not_helpful", **about}


def test_every_answer_block_is_valid_block_kit_by_slack_sdks_models():
    noted = answered("Up to 3 days a week.", notes=["an older source said 2 days; the 2025 handbook supersedes it."])
    dont_know = {**answered(), "status": "insufficient_context", "citations": [], "knowledge_gap": "No contractors."}
    for output in (noted, dont_know):
        for block in render_answer(output, ref="abc123", question="How many days?", ask_hint="#hr")["blocks"]:
            parsed = Block.parse(block)
            parsed.validate_json()  # raises on a field Slack would refuse
            assert parsed.to_dict() == block  # and nothing the model does not know about


def test_a_failed_run_and_a_crash_both_read_as_an_apology_with_the_reference():
    failed = {**answered(), "status": "failed", "citations": [], "answer": "The knowledge base is empty right now."}
    assert "quote reference `r1`" in "\n".join(texts(render_answer(failed, ref="r1")))
    assert "Sorry" in apology("r2")["text"] and "`r2`" in "\n".join(texts(apology("r2")))


def test_the_graphs_notes_are_one_note_apart_from_the_answer_and_the_next_turn_reads_both():
    from bot.reply import build_reply

    reply = build_reply(answered("Up to 3 days a week.", notes=[
        "I read “remotly” as “remotely”", "an archived source said 2 days; “Handbook” supersedes it."]), ref="r")
    assert reply.body == "Up to 3 days a week."
    assert reply.note == "Note: I read “remotly” as “remotely”. An archived source said 2 days; “Handbook” supersedes it."
    assert reply.plain == f"Up to 3 days a week. ({reply.note})"  # what the thread's next turn reads
    assert build_reply(answered("Up to 3 days a week."), ref="r").plain == "Up to 3 days a week."
