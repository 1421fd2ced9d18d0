"""Settings: every variable the README lists, read from the environment and `.env`, checked once
at start; a bad value is a one-line error that names the variable, for every CLI command."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from rag_graph.config import Settings, SettingsError

ROOT = Path(__file__).resolve().parent.parent

# variable -> (a good value as written in the environment, the attribute, the value it becomes)
GOOD = {
    "CITEBOT_CORPUS": ("docs/kb", "corpus", Path("docs/kb")),
    "CITEBOT_DB": ("s3://bucket/citebot", "db", "s3://bucket/citebot"),
    "EMBEDDING_MODEL": ("/models/minilm", "embedding_model", "/models/minilm"),
    "CITEBOT_LLM": ("openai:gpt-4o-mini", "llm", "openai:gpt-4o-mini"),
    "CITEBOT_LLM_BASE_URL": ("http://127.0.0.1:8080/v1", "llm_base_url", "http://127.0.0.1:8080/v1"),
    "CITEBOT_LLM_API_KEY": ("sk-local", "llm_api_key", "sk-local"),
    "CITEBOT_LLM_TIMEOUT": ("7.5", "llm_timeout", 7.5),
    "CITEBOT_LLM_MAX_TOKENS": ("200", "llm_max_tokens", 200),
    "CITEBOT_RERANKER": ("cross-encoder:/models/ms-marco", "reranker", "cross-encoder:/models/ms-marco"),
    "CITEBOT_TOP_K": ("12", "top_k", 12),
    "CITEBOT_MAX_ATTEMPTS": ("1", "max_attempts", 1),
    "SLACK_BOT_TOKEN": ("xoxb-123", "slack_bot_token", "xoxb-123"),
    "SLACK_SIGNING_SECRET": ("s3cret", "slack_signing_secret", "s3cret"),
    "SLACK_APP_TOKEN": ("xapp-1-A", "slack_app_token", "xapp-1-A"),
    "PORT": ("8080", "port", 8080),
    "SLACK_API_URL": ("http://127.0.0.1:9/api/", "slack_api_url", "http://127.0.0.1:9/api/"),
    "ADMIN_USER_IDS": (" U1, U2 ,,", "admin_user_ids", ("U1", "U2")),
    "SLACK_ADMIN_IDS": ("U1,U2", "slack_admin_ids", ("U1", "U2")),
    "TEAMS_ADMIN_IDS": ("6f1c2e0a-0000-4000-8000-00000000beef", "teams_admin_ids", ("6f1c2e0a-0000-4000-8000-00000000beef",)),
    "CITEBOT_TEAMS_CHANNELS": ("msteams,directline", "teams_channels", ("msteams", "directline")),
    "CITEBOT_TEAMS_SERVICE_URLS": ("https://smba.example.cn", "teams_service_urls", ("https://smba.example.cn",)),
    "CITEBOT_STRICT_AUDIENCE": ("1", "strict_audience", True),
    "CITEBOT_EXCLUDE": (" _sources/, genindex.html ,", "exclude", ("_sources/", "genindex.html")),
    "CITEBOT_GAPS_SHOW_DMS": ("true", "gaps_show_dms", True),
    "CITEBOT_WORKSPACE_ADMINS": ("true", "allow_workspace_admins", True),
    "CITEBOT_ASK_HINT": ("#help-hr", "ask_hint", "#help-hr"),
    "CITEBOT_STATE_DIR": ("/var/lib/citebot", "state_dir", Path("/var/lib/citebot")),
    "CITEBOT_FEEDBACK": ("/var/log/citebot.jsonl", "feedback_path", Path("/var/log/citebot.jsonl")),
    "CITEBOT_HISTORY_TURNS": ("3", "history_turns", 3),
    "CITEBOT_ACCESS": ("/etc/citebot/access.yml", "access_path", Path("/etc/citebot/access.yml")),
    "CITEBOT_GAPS": ("/var/log/citebot-gaps.jsonl", "gaps_path", Path("/var/log/citebot-gaps.jsonl")),
    "CITEBOT_GAP_RETENTION_DAYS": ("30", "gap_retention_days", 30),
    "CITEBOT_GAP_SALT": ("pepper", "gap_salt", "pepper"),
    "CITEBOT_SOURCE_URL": ("https://github.com/acme/handbook/blob/main/{path}", "source_url",
                           "https://github.com/acme/handbook/blob/main/{path}"),
    "CITEBOT_LINK_HOSTS": (" intranet.example.com, Example.org ,", "link_hosts", ("intranet.example.com", "example.org")),
    "CITEBOT_TEAMS": ("1", "teams", True),
    "TEAMS_PORT": ("3979", "teams_port", 3979),
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID": ("app-id", "teams_client_id", "app-id"),
    "AWS_ENDPOINT_URL": ("http://127.0.0.1:9000", "aws_endpoint", "http://127.0.0.1:9000"),
    "AWS_ACCESS_KEY_ID": ("AKIA1", "aws_access_key_id", "AKIA1"),
    "AWS_SECRET_ACCESS_KEY": ("sekrit", "aws_secret_access_key", "sekrit"),
    "AWS_SESSION_TOKEN": ("tok", "aws_session_token", "tok"),
    "AWS_REGION": ("eu-west-1", "aws_region", "eu-west-1"),
    "CITEBOT_STORAGE_OPTIONS": ('{"timeout": "60s"}', "extra_storage_options", {"timeout": "60s"}),
    "CITEBOT_POLL_SECONDS": ("2.5", "poll_seconds", 2.5),
    "CITEBOT_REDIS_URL": ("redis://cache:6379/0", "redis_url", "redis://cache:6379/0"),
    "CITEBOT_AUTO_MIN_CONFIDENCE": ("0.8", "auto_min_confidence", 0.8),
    "CITEBOT_VERIFIED_DIR": ("docs/kb/verified", "verified_dir", Path("docs/kb/verified")),
    "CITEBOT_VERIFIED_DAYS": ("90", "verified_days", 90),
    "CITEBOT_SOURCES": ("sources.yml", "sources_path", Path("sources.yml")),
    "CITEBOT_SYNC_DIR": ("/var/citebot/sources", "sync_dir", Path("/var/citebot/sources")),
    "CITEBOT_SYNC_MINUTES": ("15", "sync_minutes", 15.0),
    "CONFLUENCE_EMAIL": ("bot@acme.com", "confluence_email", "bot@acme.com"),
    "CONFLUENCE_API_TOKEN": ("ATATT-x", "confluence_api_token", "ATATT-x"),
    "CITEBOT_GRAPH_TENANT_ID": ("tenant-1", "graph_tenant_id", "tenant-1"),
    "CITEBOT_GRAPH_CLIENT_ID": ("client-1", "graph_client_id", "client-1"),
    "CITEBOT_GRAPH_CLIENT_SECRET": ("s3cret", "graph_client_secret", "s3cret"),
    "CITEBOT_GRAPH_URL": ("http://127.0.0.1:9/v1.0", "graph_url", "http://127.0.0.1:9/v1.0"),
    "CITEBOT_GRAPH_AUTHORITY": ("http://127.0.0.1:9", "graph_authority", "http://127.0.0.1:9"),
    "GOOGLE_APPLICATION_CREDENTIALS": ("sa.json", "google_credentials", Path("sa.json")),
    "CITEBOT_DRIVE_URL": ("http://127.0.0.1:9/drive/v3", "drive_url", "http://127.0.0.1:9/drive/v3"),
    "CITEBOT_BIND": ("127.0.0.1", "bind", "127.0.0.1"),
    "CITEBOT_MAX_BODY_BYTES": ("65536", "max_body_bytes", 65536),
    "CITEBOT_READ_TIMEOUT": ("2.5", "read_timeout", 2.5),
    "CITEBOT_MAX_CONNECTIONS": ("64", "max_connections", 64),
    "CITEBOT_LOG_FORMAT": ("json", "log_format", "json"),
}
BAD = {
    "CITEBOT_RERANKER": ("bm25", "must be llm or cross-encoder:<model name or folder>, e.g. "
                         "cross-encoder:cross-encoder/ms-marco-MiniLM-L6-v2 (or empty for none)"),
    "CITEBOT_TOP_K": ("x", "must be an integer"),
    "CITEBOT_TOP_K ": ("0", "must be at least 1"),
    "CITEBOT_MAX_ATTEMPTS": ("two", "must be an integer"),
    "PORT": ("abc", "must be an integer"),
    "PORT ": ("70000", "must be at most 65535"),
    "CITEBOT_HISTORY_TURNS": ("-1", "must be at least 0"),
    "CITEBOT_GAP_RETENTION_DAYS": ("0", "must be at least 1"),
    "CITEBOT_WORKSPACE_ADMINS": ("maybe", "must be true or false"),
    "SLACK_API_URL": ("slack.example", "must be an http(s) URL"),
    "TEAMS_PORT": ("x", "must be an integer"),
    "CITEBOT_SOURCE_URL": ("handbook/{path}", "must be an http(s) URL containing {path} or {slug}"),
    "CITEBOT_LINK_HOSTS": ("https://intranet.example.com/wiki", "must be host names separated by commas, like docs.example.com"),
    "CITEBOT_EXCLUDE": ("_sources/,!", "has '!', which is not a gitignore-style pattern (patterns separated by commas, like _sources/,genindex.html)"),
    "CITEBOT_TEAMS": ("perhaps", "must be true or false"),
    "CITEBOT_POLL_SECONDS": ("soon", "must be a number"),
    "CITEBOT_AUTO_MIN_CONFIDENCE": ("1.5", "must be at most 1.0"),
    "CITEBOT_VERIFIED_DAYS": ("0", "must be at least 1"),
    "CITEBOT_MAX_BODY_BYTES": ("10", "must be at least 1024"),
    "CITEBOT_LOG_FORMAT": ("xml", "must be 'text' or 'json'"),
}


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No Citebot variable set and no `.env` in reach: each test sets what it means. `.env` is
    loaded into os.environ (provider SDKs read their keys there), so the environment is restored."""
    saved = dict(os.environ)
    for name in GOOD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield monkeypatch
    os.environ.clear()
    os.environ.update(saved)


def test_every_variable_settings_read_is_documented_and_tested_here():
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", (ROOT / "README.md").read_text(), re.M))
    read = {field.validation_alias for field in Settings.model_fields.values()}
    assert read == set(GOOD) and read <= documented
    example = set(re.findall(r"^([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read <= example


def test_defaults_when_nothing_is_set(clean_env):
    settings = Settings.from_env()
    assert settings == Settings()
    assert (settings.corpus, settings.db, settings.port, settings.top_k) == (Path("corpus"), ".citebot/lancedb", 3000, 8)
    assert settings.slack_app_token is None and settings.admin_user_ids == ()
    assert settings.retrieval.top_k == 8 and settings.retrieval.max_retrieval_attempts == 2


@pytest.mark.parametrize("variable", GOOD)
def test_each_variable_is_read_from_the_environment(clean_env, variable):
    raw, attribute, expected = GOOD[variable]
    clean_env.setenv(variable, raw)
    assert getattr(Settings.from_env(), attribute) == expected


def test_every_variable_is_read_from_dotenv_and_the_environment_wins(clean_env, tmp_path):
    (tmp_path / ".env").write_text("".join(f"{name}={raw}\n" for name, (raw, _, _) in GOOD.items()))
    clean_env.setenv("PORT", "9000")
    settings = Settings.from_env()
    for name, (_, attribute, expected) in GOOD.items():
        assert getattr(settings, attribute) == (9000 if name == "PORT" else expected), name


def test_empty_values_mean_the_default(clean_env, tmp_path):
    # .env.example ships every variable, most of them empty: copying it must change nothing.
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text())
    assert Settings.from_env() == Settings()


def test_command_line_overrides_win_and_none_means_not_given(clean_env):
    clean_env.setenv("CITEBOT_DB", "from-env")
    assert Settings.from_env(db="from-flag").db == "from-flag"
    assert Settings.from_env(db=None).db == "from-env"


def test_retrieval_config_follows_the_settings(clean_env):
    clean_env.setenv("CITEBOT_TOP_K", "5")
    clean_env.setenv("CITEBOT_MAX_ATTEMPTS", "1")
    retrieval = Settings.from_env().retrieval
    assert (retrieval.top_k, retrieval.max_retrieval_attempts) == (5, 1)


def test_secrets_stay_out_of_the_settings_repr():
    shown = repr(Settings(slack_bot_token="xoxb-SECRET", slack_signing_secret="SIGN", slack_app_token="xapp-APP"))
    assert "SECRET" not in shown and "SIGN" not in shown and "xapp-APP" not in shown


@pytest.mark.parametrize("variable, raw", [("CITEBOT_REDIS_URL", "http://citebot:hunter2@cache:6379"),
                                           ("CITEBOT_STORAGE_OPTIONS", '{"aws_secret_access_key": hunter2}')])
def test_a_bad_secret_bearing_value_is_named_but_never_echoed(clean_env, variable, raw):
    clean_env.setenv(variable, raw)
    with pytest.raises(SettingsError) as caught:
        Settings.from_env()
    message = str(caught.value)
    assert message.startswith(f"{variable} must be ") and "hunter2" not in message


@pytest.mark.parametrize("variable", BAD, ids=list(BAD))
def test_a_bad_value_is_an_error_that_names_the_variable(clean_env, variable):
    raw, phrase = BAD[variable]
    clean_env.setenv(variable.strip(), raw)
    with pytest.raises(SettingsError) as caught:
        Settings.from_env()
    assert str(caught.value) == f"{variable.strip()} {phrase} (got {raw!r})"


def test_state_files_go_beside_the_index_or_into_the_state_folder_never_the_current_folder(clean_env, tmp_path):
    beside = Settings.from_env(db=str(tmp_path / "srv" / "lancedb"))
    assert beside.state_dir == tmp_path / "srv"
    assert (beside.feedback_path, beside.gaps_path, beside.sync_dir) == (
        tmp_path / "srv" / "feedback.jsonl", tmp_path / "srv" / "gaps.jsonl", tmp_path / "srv" / "sources")
    clean_env.setenv("CITEBOT_STATE_DIR", "/var/lib/citebot")
    clean_env.setenv("CITEBOT_GAPS", "/var/log/gaps.jsonl")  # a file's own variable still wins
    chosen = Settings.from_env(db="s3://bucket/index")
    assert (chosen.feedback_path, chosen.gaps_path, chosen.sync_dir) == (
        Path("/var/lib/citebot/feedback.jsonl"), Path("/var/log/gaps.jsonl"), Path("/var/lib/citebot/sources"))


def test_a_state_folder_that_is_a_file_is_one_line_naming_the_setting(clean_env, tmp_path, capsys):
    (tmp_path / "state").write_text("not a folder")
    clean_env.setenv("CITEBOT_STATE_DIR", str(tmp_path / "state"))
    assert main(["index"]) == 2
    assert capsys.readouterr().err == (f"error: CITEBOT_STATE_DIR must be a folder, and that path is a file "
                                       f"(got {str(tmp_path / 'state')!r})\n")


def test_several_bad_values_are_all_named_on_one_line(clean_env):
    clean_env.setenv("PORT", "abc")
    clean_env.setenv("CITEBOT_TOP_K", "x")
    with pytest.raises(SettingsError) as caught:
        Settings.from_env()
    message = str(caught.value)
    assert "\n" not in message and "PORT must be an integer" in message and "CITEBOT_TOP_K must be an integer" in message


@pytest.mark.parametrize("command", [["index"], ["ask", "hi"], ["chat"], ["demo"], ["serve"], ["graph"],
                                     ["eval", "--tests", "x.jsonl"], ["bench", "--skip-scale"]])
def test_every_command_refuses_a_bad_setting_with_one_line(clean_env, capsys, command):
    clean_env.setenv("CITEBOT_TOP_K", "x")
    assert main(command) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: CITEBOT_TOP_K must be an integer (got 'x')\n" and captured.out == ""


def test_the_installed_entry_point_prints_no_traceback(tmp_path):
    env = {**os.environ, "PORT": "abc", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "serve"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == "error: PORT must be an integer (got 'abc')\n"
