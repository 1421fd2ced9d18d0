"""`/citebot reload|status|help`, end to end over HTTP against FakeSlack."""
import shutil
import threading

from bot_harness import (  # noqa: F401 (fixtures)
    ADMIN, QUESTION, answers, bot, fake, mrkdwn_of, own_engine, quiet_for, start_bot)


def responses(fake, name="cmd"):
    return [call.args["text"] for call in fake.calls("response_url") if call.path == f"/response/{name}"]


def wait_response(fake, containing, name="cmd", timeout=60):
    return fake.wait_for("response_url", timeout=timeout,
                         predicate=lambda c: c.path == f"/response/{name}" and containing in c.args["text"])[0]


def test_non_admins_are_refused_politely_and_nothing_is_reloaded(start_bot, own_engine, fake):
    bot = start_bot(own_engine)
    version = own_engine.index.version
    assert bot.command("reload", user_id="U1") == {}
    wait_response(fake, "only Citebot admins")
    quiet_for(bot)
    assert len(responses(fake)) == 1
    assert own_engine.index.version == version


def test_workspace_admins_may_reload_when_that_is_enabled(start_bot, own_engine, fake):
    bot = start_bot(own_engine, allow_workspace_admins=True)
    fake.users["UWSADMIN"]["is_admin"] = True
    bot.command("reload", user_id="UWSADMIN")
    wait_response(fake, "Reloaded:")
    assert fake.calls("users.info")[0].args["user"] == "UWSADMIN"


def test_admin_reload_reports_stats_and_answers_still_work(start_bot, own_engine, corpus_copy, fake):
    bot = start_bot(own_engine)
    handbook = corpus_copy / "handbook" / "employee-handbook-2025.md"
    handbook.write_text(handbook.read_text() + "\n\n## Sabbaticals\n\nAfter five years employees may take "
                        "a paid sabbatical of four weeks.\n")
    bot.command("reload", user_id=ADMIN)
    wait_response(fake, "Reloading the documents")
    report = wait_response(fake, "Reloaded:").args["text"]
    assert "20 documents" in report and "re-embedded" in report and "index version" in report
    assert own_engine.index.last_refresh.embedded >= 1

    bot.mention("How long is the sabbatical after five years?")
    assert "four weeks" in mrkdwn_of(answers(fake)[0])
    bot.mention(QUESTION, ts="1700000900.000100")
    assert "3 days a week" in mrkdwn_of(answers(fake, 2)[1])


def test_a_second_reload_while_one_runs_is_refused_politely(start_bot, own_engine, fake, monkeypatch):
    bot = start_bot(own_engine)
    release, real_refresh = threading.Event(), own_engine.refresh

    def slow_refresh():
        release.wait(30)
        return real_refresh()

    monkeypatch.setattr(own_engine, "refresh", slow_refresh)
    bot.command("reload", user_id=ADMIN, response="first")
    wait_response(fake, "Reloading the documents", name="first")
    bot.command("reload", user_id=ADMIN, response="second")
    assert "already running" in wait_response(fake, "already", name="second").args["text"]
    release.set()
    wait_response(fake, "Reloaded:", name="first")
    assert not any("Reloaded" in text for text in responses(fake, "second"))


def test_a_failed_reload_reports_the_error_and_the_old_index_keeps_serving(start_bot, own_engine,
                                                                            corpus_copy, fake):
    bot = start_bot(own_engine)
    version = own_engine.index.version
    shutil.rmtree(corpus_copy)
    bot.command("reload", user_id=ADMIN)
    report = wait_response(fake, "Reload failed").args["text"]
    assert "previous index keeps serving" in report
    assert own_engine.index.version == version

    bot.mention(QUESTION)
    assert "3 days a week" in mrkdwn_of(answers(fake)[0])


def test_status_shows_versions_counts_and_the_last_reload(bot, engine):
    text = bot.command("status", user_id=ADMIN)["text"]
    meta = engine.index.metadata()
    assert text.startswith("*Citebot ")
    assert f"index version {meta['version']}, {meta['documents']} documents, {meta['chunks']} chunks" in text
    assert "Last reload: " in text and "UTC" in text
    # Anyone else counts what the place may read (the bundled corpus is all public).
    assert f"{meta['documents']} documents you can ask about here" in bot.command("status")["text"]


def test_help_and_unknown_subcommands_explain_the_commands(bot):
    for text in ("help", "", "frobnicate"):
        reply = bot.command(text)["text"]
        assert "/citebot reload" in reply and "/citebot status" in reply
    assert "`frobnicate`" in bot.command("frobnicate")["text"]
