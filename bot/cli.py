"""`citebot index|sync|ask|chat|graph|demo|eval|bench|gaps|serve`."""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path

# First: it quiets LanceDB's Rust loggers, which read their variables when LanceDB is imported.
from bot.logs import configure as configure_logging  # noqa: I001
from rag_graph.config import Settings, SettingsError
from rag_graph.engine import Engine
from rag_graph.errors import ModelError, RefreshError, RefreshInProgress
from rag_graph.tools.evaluation import SPLITS
from bot.reply import CLOSEST, HEDGE, label, with_notes

log = logging.getLogger("citebot")

DEMO_QUESTIONS = [
    "How many days per week can employees work remotely?",
    "what about contractors?",  # a follow-up to the first: same thread
    "Does the company offer a company car or lease scheme?",
]


def _settings(args) -> Settings:
    return Settings.from_env(corpus=Path(args.corpus) if getattr(args, "corpus", None) else None,
                             db=getattr(args, "db", None))


def _engine(args, refresh: bool = True, figures: bool = False, many: bool = True):
    """The engine, its index refreshed and warm. `figures`: the refresh always runs, for its
    figures (`engine.index.last_refresh`)."""
    settings = _settings(args)
    engine = Engine(settings)
    if not refresh:
        return engine
    # Nothing changed since the last refresh (its stamp, as `citebot index` reads it): nothing to
    # load and compare (0.05 s on the bundled corpus, 0.7 s on a 246-page handbook).
    unchanged = Engine.unchanged_index(settings) if engine.ready and not figures else None
    if unchanged is not None:
        for message in unchanged["skipped"]:
            log.warning(message)
    else:
        try:
            engine.refresh()  # skipped files are logged as warnings
        except RefreshError as error:
            if isinstance(error, RefreshInProgress) or not engine.ready:
                raise
            # As `citebot serve` does: the last good index answers, and the reader is told.
            print(f"warning: {error}; answering from it", file=sys.stderr, flush=True)
    engine.warm_up(many)  # a model that cannot load is one line here, not a failure mid-question
    return engine


def _access(args):
    """The scope of the place `--channel` / `--as-user` name (the channel decides, as in chat);
    neither: the documents meant for everyone."""
    from bot.access import Access

    if not (args.channel or args.as_user):
        return None
    settings = _settings(args)
    access = Access.load(settings.access_path)
    if args.channel:
        return access.for_channel(args.channel)
    if settings.slack_bot_token:  # Slack user groups are resolved as the bot resolves them
        from bot.slack.app import web_client
        from bot.slack.usergroups import UsergroupMembers

        return access.for_user(args.as_user, UsergroupMembers(web_client(settings)))
    return access.for_user(args.as_user)


def format_answer(output: dict) -> str:
    lines = [HEDGE] if output.get("hedged") and output["status"] == "answered" else []
    lines.append(with_notes(output))
    if output["citations"]:
        lines.append("Sources:")
        for c in output["citations"]:
            lines.append(f"  - {label(c)}" + (f" <{c['url']}>" if c["url"] else ""))
    if output.get("knowledge_gap"):
        lines.append(f"Knowledge gap: {output['knowledge_gap']}")
    if (output.get("closest") or {}).get("url"):
        lines.append(f"{CLOSEST} {label(output['closest'])} <{output['closest']['url']}>")
    lines.append(f"[{output['status']}, confidence {output['confidence']}, "
                 f"{output['retrieval_attempts']} attempt(s), {output['grounding_status']}]")
    return "\n".join(lines)


def cmd_index(args) -> int:
    from bot.access import Access
    from bot.shared import SharedState

    settings = _settings(args)
    # The replicas re-read the access file when it changes; a file they would refuse stops the
    # index job too, with its error, before anything is published.
    Access.load(settings.access_path)
    started = time.perf_counter()
    unchanged = None if args.rollback else Engine.unchanged_index(settings)
    if unchanged is not None:  # the everyday cron run: answered without opening (or importing) LanceDB
        for message in unchanged["skipped"]:
            log.warning(message)
        _print_refresh({**unchanged, "embedded": 0, "deleted": 0, "seconds": time.perf_counter() - started}, args.json,
                       settings)
        return 0
    # The index job and the replicas' reloads take turns.
    job = (lambda: Engine.roll_back(settings)) if args.rollback else (lambda: Engine.index_corpus(settings))
    done = SharedState(settings.redis_url).reload_lock.run(job)
    if done is None:
        raise RefreshInProgress("a reload is already running (on a replica or another index job)")
    if args.rollback:
        print(f"serving index version {done} (replicas follow within CITEBOT_POLL_SECONDS)")
    else:
        _print_refresh(done.as_dict(), args.json, settings)
    return 0


def _print_refresh(stats: dict, as_json: bool, settings) -> None:
    from bot.losses import silent_losses

    losses = silent_losses(stats, settings)
    if as_json:
        print(json.dumps({**{k: v for k, v in stats.items()
                             if k in ("documents", "chunks", "embedded", "deleted", "seconds", "formats", "skipped")},
                          "losses": losses}, ensure_ascii=False))
        return
    print(f"{stats['documents']} documents, {stats['chunks']} chunks, {stats['embedded']} embedded, "
          f"{stats['deleted']} deleted in {stats['seconds']:.2f} s (serving index version {stats['version']}; "
          "versions count LanceDB's writes, not builds: a first build is already past 1)")
    print("files: " + ", ".join(f"{suffix} {counts['read']} read" + (f", {counts['skipped']} skipped" if counts["skipped"] else "")
                                for suffix, counts in sorted(stats["formats"].items())))
    for line in losses:
        print(f"warning: {line}", file=sys.stderr)


def cmd_sync(args) -> int:
    from bot.access import Access
    from bot.shared import SharedState
    from bot.sources import report_lines

    settings = _settings(args)
    access = Access.load(settings.access_path)  # names the documents nobody may read
    engine = _engine(args, refresh=False)
    report = SharedState(settings.redis_url).reload_lock.run(lambda: engine.sync(args.source))
    if report is None:
        raise RefreshInProgress("a reload is already running (on a replica or another sync)")
    print(json.dumps(report.as_dict(), indent=2, ensure_ascii=False) if args.json else "\n".join(report_lines(report, access)))
    return 1 if report.failed or report.refresh_error else 0


def cmd_ask(args) -> int:
    history = json.loads(Path(args.history).read_text()) if args.history else []
    access = _access(args)
    engine = _engine(args, many=False)  # one question: nothing warmed for the next ones
    output = engine.ask(args.question, history, access=access)
    print(json.dumps(output, indent=2, ensure_ascii=False) if args.json else format_answer(output))
    return 0 if output["status"] != "failed" else 1


def cmd_chat(args) -> int:
    access = _access(args)
    engine = _engine(args)
    history: list[dict] = []
    interactive = sys.stdin.isatty()
    if interactive:
        print("Ask a question (an empty line or Ctrl-D ends the conversation).")
    for line in sys.stdin:
        question = line.strip()
        if not question:
            break
        output = engine.ask(question, history, access=access)
        print(("" if interactive else f"> {question}\n") + format_answer(output) + "\n", flush=True)
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": with_notes(output)}]
        history = history[-2 * engine.settings.history_turns:]
    return 0


def cmd_graph(args) -> int:
    print(Engine.graph_mermaid())
    return 0


def cmd_demo(args) -> int:
    engine = _engine(args, figures=True)
    stats = engine.index.last_refresh
    print(f"Indexed {stats.documents} documents into {stats.chunks} chunks "
          f"({stats.embedded} embedded) from {engine.settings.corpus}\n")
    history: list[dict] = []
    latencies = []
    for question in DEMO_QUESTIONS:
        started = time.perf_counter()
        output = engine.ask(question, history)
        latencies.append((time.perf_counter() - started) * 1000)
        print(f"Q: {question}\n{format_answer(output)} ({latencies[-1]:.0f} ms)\n")
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": with_notes(output)}]
    print(f"Median answer time, warm and in-process: {statistics.median(latencies):.0f} ms")
    return 0


def cmd_eval(args) -> int:
    from rag_graph.tools.evaluation import main

    args.access = _access(args)
    return main(args)


def cmd_gaps(args) -> int:
    from bot.gaps import gap_log, parse_since, report_text, topics
    from bot.shared import SharedState
    from bot.verified import VerifiedAnswers, due_text

    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings = _settings(args)
    records = gap_log(settings, SharedState(settings.redis_url)).read(since)
    found = topics(records, _engine(args, refresh=False).embed) if records else []
    due = VerifiedAnswers(settings).due()
    if args.json:
        print(json.dumps({"records": len(records), "topics": found, "due_for_review": [
            {"question": v.question, "verified_by": v.verified_by, "verified_at": v.verified_at.isoformat(),
             "review_by": v.review_by.isoformat(), "path": str(v.path)} for v in due]}, indent=2, ensure_ascii=False))
    else:
        window = f"last {args.since}" if args.since else f"last {settings.gap_retention_days} days"
        print(f"{len(records)} unanswered question(s) and negative vote(s), {len(found)} topic(s), {window}:")
        print(report_text(found))
        if due:
            print("\n" + due_text(due))
    return 0


def cmd_bench(args) -> int:
    from rag_graph.tools.bench import main

    return main(args)


def cmd_tune(args) -> int:
    if args.feedback is not None:
        from bot.feedback import FeedbackLog
        from bot.shared import SharedState
        from rag_graph.tools.tune_feedback import run as learn_from_votes

        settings = _settings(args)
        # the votes as the bot keeps them: a file named here, else CITEBOT_FEEDBACK (or Redis)
        votes = (FeedbackLog(Path(args.feedback)) if args.feedback
                 else FeedbackLog(settings.feedback_path, SharedState(settings.redis_url)))
        return learn_from_votes(args, settings, votes.read(), args.feedback or str(settings.feedback_path))
    if args.grounding is not None:
        from rag_graph.tools.tune_grounding import run as fit_grounding

        return fit_grounding(args.grounding, args.out, args.check)
    from rag_graph.tools.tune import run

    return run(args)


def cmd_serve(args) -> int:
    from bot.serve import serve

    return serve(_settings(args))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citebot", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, handler, help_text, corpus=True):
        sub = commands.add_parser(name, help=help_text)
        if corpus:
            sub.add_argument("--corpus", help="folder of markdown documents (CITEBOT_CORPUS)")
            sub.add_argument("--db", help="LanceDB URI (CITEBOT_DB)")
        sub.set_defaults(handler=handler)
        return sub

    def place(sub):
        sub.add_argument("--channel", help="answer as in this channel (a Slack or Teams channel id of CITEBOT_ACCESS)")
        sub.add_argument("--as-user", help="answer as in a DM with this user (Slack user id or Teams AAD object id)")
        return sub

    index = command("index", cmd_index, "build or refresh the index")
    index.add_argument("--json", action="store_true")
    index.add_argument("--rollback", action="store_true",
                       help="serve the previous published version again (moves the serving tag back)")
    sync = command("sync", cmd_sync, "fetch what changed in the sources (CITEBOT_SOURCES), then refresh the index")
    sync.add_argument("--source", help="only this source (its name in CITEBOT_SOURCES)")
    sync.add_argument("--json", action="store_true")
    ask = place(command("ask", cmd_ask, "answer one question"))
    ask.add_argument("question")
    ask.add_argument("--history", help="JSON file: a list of {role, content} turns before the question")
    ask.add_argument("--json", action="store_true", help="print the graph's final_output")
    place(command("chat", cmd_chat, "a terminal conversation: each line is the next turn of one thread"))
    command("graph", cmd_graph, "print the flow as a Mermaid diagram", corpus=False).add_argument(
        "--mermaid", action="store_true", help="(the default and only format)")
    command("demo", cmd_demo, "index the corpus and answer three sample questions")
    ev = place(command("eval", cmd_eval, "measure retrieval and answer quality on a question set"))
    ev.add_argument("--tests", required=True, help="JSONL question set")
    ev.add_argument("--split", choices=("all", *SPLITS), default="all",
                    help="score the dev half, the test half, or all (also reports each half)")
    ev.add_argument("--k", type=int, help="score the first K ranked chunks (default: CITEBOT_TOP_K, what the bot ranks)")
    ev.add_argument("--out", help="write the JSON report here")
    ev.add_argument("--baseline", action="store_true", help="also score the fixed-size dense-only baseline")
    ev.add_argument("--tune", action="append", metavar="NAME=VALUE",
                    help="try another value of a weight or threshold (a field of rag_graph/tuning.py); repeatable")
    bench = commands.add_parser("bench", help="measure indexing, refresh, query latency, scale and memory")
    bench.add_argument("--corpus", help="corpus to copy and index (default: the 37signals and 18F handbooks "
                                        "next to the repo if present, else corpus/)")
    bench.add_argument("--db", help="folder for the bench's scratch tables (default: a temp dir)")
    bench.add_argument("--questions", help="JSONL questions for the latency step (default: the corpus's eval set)")
    bench.add_argument("--out", default=".citebot/bench.json")
    bench.add_argument("--skip-scale", action="store_true", help="skip the 10k/100k/1M synthetic step")
    bench.add_argument("--repeat", type=int, default=3, help="timed passes over the questions")
    bench.set_defaults(handler=cmd_bench)
    tune = commands.add_parser("tune", help="fit the thread reader, measure a chunk ranker and a sentence scorer, on the labeled eval questions")
    tune.add_argument("--labels", default=".citebot/labels", help="folder built by python -m rag_graph.tools.labels")
    tune.add_argument("--out", help="folder for thread.json (default: the shipped one, in rag_graph/scoring)")
    tune.add_argument("--check", action="store_true", help="report the cross-validated figures, write nothing")
    tune.add_argument("--exclude", nargs="*", default=[], help="corpora left out of the fit (a held-out eval's model)")
    tune.add_argument("--feedback", nargs="?", const="", metavar="FILE",
                      help="learn this deployment's chunk ranker from its 👍/👎 votes (default file: CITEBOT_FEEDBACK) "
                           "and write it into CITEBOT_STATE_DIR only if it beats the shipped weights held out")
    tune.add_argument("--corpus", help="with --feedback: the deployment's documents (CITEBOT_CORPUS)")
    tune.add_argument("--db", help="with --feedback: the deployment's index (CITEBOT_DB)")
    tune.add_argument("--grounding", nargs="?", const=".citebot/eval-indexes", metavar="DB_ROOT",
                      help="fit the grounding check's accept/drop decision on eval/grounding/ instead (grounding.json); "
                           "DB_ROOT: one index per corpus, built on first use")
    tune.set_defaults(handler=cmd_tune)
    gaps = command("gaps", cmd_gaps, "what readers asked and could not find, grouped into topics")
    gaps.add_argument("--since", help="only this recent: 30d, 12h, 2w (default: the whole retention period)")
    gaps.add_argument("--json", action="store_true")
    command("serve", cmd_serve, "run the bot: Slack and/or Microsoft Teams, whichever is configured")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        # Every setting is checked before any command starts work.
        configure_logging(args.verbose, Settings.from_env().log_format)
        return args.handler(args)
    except (SettingsError, RefreshError, ModelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
