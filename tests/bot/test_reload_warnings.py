"""Every authoring slip of tests/test_authoring_slips.py is a warning in the admin's reload reply
(issue: fail closed, finding 2), over HTTP against FakeSlack."""
from __future__ import annotations

from bot_harness import ADMIN, fake, start_bot  # noqa: F401 (fixtures)
from rag_graph.config import Settings
from rag_graph.engine import Engine
from test_authoring_slips import SLIPS

WARNED = ("stray.md", "no-value.md", "empty-list.md", "audiences.md", "capital.md", "groups.md", "titel.md",
          "people-ops/bands.md")


def test_the_reload_reply_lists_every_warning(start_bot, fake, tmp_path):  # noqa: F811
    for name, text in SLIPS.items():
        (tmp_path / "kb" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kb" / name).write_text(text, encoding="utf-8")
    bot = start_bot(Engine(Settings(corpus=tmp_path / "kb", db=str(tmp_path / "db"))))
    bot.command("reload", user_id=ADMIN, response="reload")
    reply = fake.wait_for("response_url", timeout=300, predicate=lambda c: "Reloaded" in c.args["text"])[0].args["text"]
    assert f"Warnings ({len(WARNED)})" in reply, reply
    for name in WARNED:
        assert name in reply, (name, reply)
