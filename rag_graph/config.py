"""Settings and retrieval defaults: read from the environment (and `.env`) once, validated at start.

Each setting is one typed field whose alias is its environment variable, so adding a setting is
one line. `Settings(...)` holds exactly what the caller passes (tests build it that way);
`Settings.from_env(**overrides)` reads the environment and `.env`, and a bad value raises
`SettingsError` with a one-line message that names the variable.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from dotenv import find_dotenv, load_dotenv
from pydantic import (AfterValidator, AnyHttpUrl, BeforeValidator, Field, TypeAdapter, ValidationError, ValidationInfo,
                      field_validator, model_validator)
from pathspec import GitIgnoreSpec
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_DB = ".citebot/lancedb"
MAX_QUESTION_CHARS = 4000


@dataclass(frozen=True)
class RetrievalConfig:
    """The knobs of one retrieval pass; part of the graph state (`retrieval_config`)."""

    top_k: int = 8
    # Cosine similarity (query · chunk, both normalised) below which a chunk is noise.
    score_threshold: float = 0.25
    # The same bound expressed as LanceDB's cosine distance, used to cut the vector leg early.
    vector_distance_threshold: float = 0.75
    max_retrieval_attempts: int = 2

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class SettingsError(ValueError):
    """A setting with a value we cannot use; the message is one line and names the variable."""


def _comma_list(value: Any) -> Any:
    return tuple(part.strip() for part in value.split(",") if part.strip()) if isinstance(value, str) else value


def _http_url(value: str) -> str:
    TypeAdapter(AnyHttpUrl).validate_python(value)
    return value


def _link_template(value: str) -> str:
    # CITEBOT_SOURCE_URL: filled in per document (rag_graph/links.py), so it must be able to make links.
    if not re.match(r"https?://", value) or not any(p in value for p in ("{path}", "{slug}")):
        raise ValueError("must be an http(s) URL containing {path} or {slug}")
    return value


def _host_names(value: tuple[str, ...]) -> tuple[str, ...]:
    for host in value:
        if not re.fullmatch(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]", host.lower()):
            raise ValueError("must be host names separated by commas, like docs.example.com")
    return tuple(host.lower() for host in value)


def _gitignore_patterns(value: tuple[str, ...]) -> tuple[str, ...]:
    # CITEBOT_EXCLUDE (retrieval/ingest/reading.py): each one a line of a .gitignore.
    for pattern in value:
        try:
            GitIgnoreSpec.from_lines([pattern])
        except ValueError:
            raise ValueError(f"has {pattern!r}, which is not a gitignore-style pattern "
                             "(patterns separated by commas, like _sources/,genindex.html)") from None
    return value


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("must be a JSON object of LanceDB storage options") from None
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object of LanceDB storage options")
    return {str(key): str(option) for key, option in value.items()}


def _redis_url(value: str) -> str:
    if not re.match(r"(rediss?|unix)://", value):
        raise ValueError("must be a redis://, rediss:// or unix:// URL")
    return value


def _reranker(value: str) -> str:
    # CITEBOT_RERANKER (answer/rerank.py): the chat model, or a cross-encoder by hub name or folder.
    kind, _, model = value.partition(":")
    if value.strip() == "llm" or (kind.strip() == "cross-encoder" and model.strip()):
        return value.strip()
    raise ValueError("must be llm or cross-encoder:<model name or folder>, "
                     "e.g. cross-encoder:cross-encoder/ms-marco-MiniLM-L6-v2 (or empty for none)")


def _folder(value: Path) -> Path:
    if value.exists() and not value.is_dir():
        raise ValueError("must be a folder, and that path is a file")
    return value


CommaList = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_comma_list)]
ExcludePatterns = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_comma_list), AfterValidator(_gitignore_patterns)]
HostNames = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_comma_list), AfterValidator(_host_names)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
LinkTemplate = Annotated[str, AfterValidator(_link_template)]
StorageOptions = Annotated[dict[str, str], NoDecode, BeforeValidator(_json_object)]
RedisUrl = Annotated[str, AfterValidator(_redis_url)]
Folder = Annotated[Path, AfterValidator(_folder)]
Reranker = Annotated[str, AfterValidator(_reranker)]


def env(name: str, default: Any, **constraints) -> Any:
    """A field read from the environment variable `name`."""
    return Field(default, validation_alias=name, **constraints)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True,
                                      extra="forbid")

    corpus: Path = env("CITEBOT_CORPUS", Path("corpus"))
    db: str = env("CITEBOT_DB", DEFAULT_DB)
    embedding_model: str | None = env("EMBEDDING_MODEL", None)  # None = bundled all-MiniLM-L6-v2
    llm: str | None = env("CITEBOT_LLM", None)  # None = offline extractive answers
    # An OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) for CITEBOT_LLM=openai:<model>.
    llm_base_url: HttpUrl | None = env("CITEBOT_LLM_BASE_URL", None)
    llm_api_key: str | None = env("CITEBOT_LLM_API_KEY", None, repr=False)  # else the provider's own variable
    llm_timeout: float = env("CITEBOT_LLM_TIMEOUT", 20.0, gt=0)  # seconds for a whole answer, then offline
    llm_max_tokens: int = env("CITEBOT_LLM_MAX_TOKENS", 400, ge=16)
    # Orders the ranked chunks again before the answer is written; None = the ranking as it is.
    reranker: Reranker | None = env("CITEBOT_RERANKER", None)
    top_k: int = env("CITEBOT_TOP_K", 8, ge=1)
    max_attempts: int = env("CITEBOT_MAX_ATTEMPTS", 2, ge=1)
    slack_bot_token: str | None = env("SLACK_BOT_TOKEN", None, repr=False)
    slack_signing_secret: str | None = env("SLACK_SIGNING_SECRET", None, repr=False)
    slack_app_token: str | None = env("SLACK_APP_TOKEN", None, repr=False)
    slack_api_url: HttpUrl | None = env("SLACK_API_URL", None)
    port: int = env("PORT", 3000, ge=0, le=65535)
    admin_user_ids: CommaList = env("ADMIN_USER_IDS", ())  # deprecated: both platforms' ids in one list
    slack_admin_ids: CommaList = env("SLACK_ADMIN_IDS", ())  # Slack user ids (U…)
    teams_admin_ids: CommaList = env("TEAMS_ADMIN_IDS", ())  # Entra ID (AAD) object ids, never Teams' from.id
    # Activities from other Bot Framework channels (directline, webchat, …) are refused unless listed.
    teams_channels: CommaList = env("CITEBOT_TEAMS_CHANNELS", ("msteams",))
    # Where replies may go besides Microsoft's documented Teams hosts (bot/teams/identity.py):
    # origins such as https://smba.example.cn for a sovereign cloud, or a local connector in tests.
    teams_service_urls: CommaList = env("CITEBOT_TEAMS_SERVICE_URLS", ())
    allow_workspace_admins: bool = env("CITEBOT_WORKSPACE_ADMINS", False)
    ask_hint: str = env("CITEBOT_ASK_HINT", "#people-ops")
    # Where state files go (feedback, gaps, the sources' mirror): CITEBOT_STATE_DIR, else the folder
    # holding a local CITEBOT_DB (beside the index, never wherever the command runs), else .citebot.
    # A file's own variable still wins. Filled in by `_state_files`.
    state_dir: Folder | None = env("CITEBOT_STATE_DIR", None)
    feedback_path: Path | None = env("CITEBOT_FEEDBACK", None)
    history_turns: int = env("CITEBOT_HISTORY_TURNS", 8, ge=0)
    access_path: Path | None = env("CITEBOT_ACCESS", None)  # who may see what (bot/access.py)
    # A folder's .citebot.yml `audience:` is inherited by its documents without one (retrieval/authoring.py).
    strict_audience: bool = env("CITEBOT_STRICT_AUDIENCE", False)
    # Files of the corpus folder left out of the index: gitignore-style patterns, comma-separated.
    exclude: ExcludePatterns = env("CITEBOT_EXCLUDE", ())
    gaps_path: Path | None = env("CITEBOT_GAPS", None)  # unanswered questions, bad votes
    gap_retention_days: int = env("CITEBOT_GAP_RETENTION_DAYS", 90, ge=1)
    gaps_show_dms: bool = env("CITEBOT_GAPS_SHOW_DMS", False)  # the gap report quotes DM questions too
    gap_salt: str | None = env("CITEBOT_GAP_SALT", None, repr=False)  # None = generated beside the log
    source_url: LinkTemplate | None = env("CITEBOT_SOURCE_URL", None)  # links for documents without a `url`
    # Hosts (and their subdomains) whose addresses an answer may show although no cited document
    # lives there: the company's own sites. Any other bare URL in a document shows as "[link removed]".
    link_hosts: HostNames = env("CITEBOT_LINK_HOSTS", ())
    # Teams is served when asked for or when the Agents SDK has a client id (its own setting).
    teams: bool = env("CITEBOT_TEAMS", False)
    teams_client_id: str | None = env("CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID", None)
    teams_port: int = env("TEAMS_PORT", 3978, ge=0, le=65535)
    # An index on object storage (CITEBOT_DB=s3://…) is reached with the AWS SDK's own variables,
    # handed to LanceDB as storage options; CITEBOT_STORAGE_OPTIONS adds or overrides any option.
    aws_endpoint: HttpUrl | None = env("AWS_ENDPOINT_URL", None)
    aws_access_key_id: str | None = env("AWS_ACCESS_KEY_ID", None, repr=False)
    aws_secret_access_key: str | None = env("AWS_SECRET_ACCESS_KEY", None, repr=False)
    aws_session_token: str | None = env("AWS_SESSION_TOKEN", None, repr=False)
    aws_region: str | None = env("AWS_REGION", None)
    extra_storage_options: StorageOptions = env("CITEBOT_STORAGE_OPTIONS", {}, repr=False)
    # Replicas: how often a serving replica checks the index's `serving` tag, and where the state
    # replicas share lives (seen events, Teams memory, the reload lock, feedback). No URL: in-process.
    poll_seconds: float = env("CITEBOT_POLL_SECONDS", 10.0, gt=0)
    redis_url: RedisUrl | None = env("CITEBOT_REDIS_URL", None, repr=False)
    # Help channels (`answer: all` in the access file) reply unasked only at or above this
    # confidence: 0.7 keeps answers such as "Lunch is catered on Tuesdays…" (0.8) and drops
    # chatter the corpus half-matches ("can someone review my PR?" 0.63) on the bundled corpus.
    auto_min_confidence: float = env("CITEBOT_AUTO_MIN_CONFIDENCE", 0.7, ge=0, le=1)
    # Where "Save as verified answer" writes (a folder inside the corpus; None = <corpus>/verified)
    # and how many days a verified answer stays verified before it is due for review.
    verified_dir: Path | None = env("CITEBOT_VERIFIED_DIR", None)
    verified_days: int = env("CITEBOT_VERIFIED_DAYS", 180, ge=1)
    # Sources kept in sync (rag_graph/retrieval/sources): the file listing them, where their mirror
    # and sync state live, how often `citebot serve` syncs (0: only on the admin's reload), and
    # each vendor's credentials (never in the sources file, never shown).
    sources_path: Path | None = env("CITEBOT_SOURCES", None)
    sync_dir: Path | None = env("CITEBOT_SYNC_DIR", None)
    sync_minutes: float = env("CITEBOT_SYNC_MINUTES", 60.0, ge=0)
    confluence_email: str | None = env("CONFLUENCE_EMAIL", None)
    confluence_api_token: str | None = env("CONFLUENCE_API_TOKEN", None, repr=False)
    graph_tenant_id: str | None = env("CITEBOT_GRAPH_TENANT_ID", None)
    graph_client_id: str | None = env("CITEBOT_GRAPH_CLIENT_ID", None)
    graph_client_secret: str | None = env("CITEBOT_GRAPH_CLIENT_SECRET", None, repr=False)
    graph_url: HttpUrl = env("CITEBOT_GRAPH_URL", "https://graph.microsoft.com/v1.0")
    graph_authority: HttpUrl = env("CITEBOT_GRAPH_AUTHORITY", "https://login.microsoftonline.com")
    google_credentials: Path | None = env("GOOGLE_APPLICATION_CREDENTIALS", None)  # a service-account key file
    drive_url: HttpUrl = env("CITEBOT_DRIVE_URL", "https://www.googleapis.com/drive/v3")

    def admin_ids(self, platform: str) -> frozenset[str]:
        """The admins of one platform: its own list (SLACK_ADMIN_IDS, TEAMS_ADMIN_IDS) and the
        deprecated ADMIN_USER_IDS. The one place that joins them, so every admin check agrees."""
        own = {"slack": self.slack_admin_ids, "teams": self.teams_admin_ids}[platform]
        return frozenset((*own, *self.admin_user_ids))

    @property
    def documents(self) -> Path:
        """The folder the index is built from: CITEBOT_CORPUS, or the sources' mirror."""
        return self.sync_dir / "mirror" if self.sources_path else self.corpus
    # The one HTTP server of `citebot serve` (bot/web.py). No CITEBOT_BIND: 127.0.0.1 while Teams
    # takes anonymous requests (development), every interface otherwise.
    bind: str | None = env("CITEBOT_BIND", None)
    # 1 MiB: Slack's and Teams' largest payloads are tens of KB; a bigger body is refused unread.
    max_body_bytes: int = env("CITEBOT_MAX_BODY_BYTES", 1 << 20, ge=1024)
    read_timeout: float = env("CITEBOT_READ_TIMEOUT", 10.0, gt=0)  # for a request's headers, then its body
    max_connections: int = env("CITEBOT_MAX_CONNECTIONS", 1000, ge=1)
    log_format: Literal["text", "json"] = env("CITEBOT_LOG_FORMAT", "text")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, **_sources):
        return (init_settings,)  # only from_env reads the environment

    @field_validator("reranker")
    @classmethod
    def _ranker_has_a_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value == "llm" and not info.data.get("llm"):
            raise ValueError("is llm, which needs CITEBOT_LLM (the chat model that ranks): set it, "
                             "or use cross-encoder:<model name or folder>")
        return value

    @model_validator(mode="after")
    def _state_files(self) -> "Settings":
        state = self.state_dir or (Path(self.db).parent if "://" not in self.db else Path(".citebot"))
        for name, default in (("state_dir", state), ("feedback_path", state / "feedback.jsonl"),
                              ("gaps_path", state / "gaps.jsonl"), ("sync_dir", state / "sources")):
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)  # frozen: set once, while being validated
        return self

    @property
    def retrieval(self) -> RetrievalConfig:
        return RetrievalConfig(top_k=self.top_k, max_retrieval_attempts=self.max_attempts)

    @property
    def storage_options(self) -> dict[str, str]:
        """LanceDB's storage options for CITEBOT_DB (empty for a local folder with no AWS settings)."""
        options = {"aws_endpoint": self.aws_endpoint, "aws_access_key_id": self.aws_access_key_id,
                   "aws_secret_access_key": self.aws_secret_access_key,
                   "aws_session_token": self.aws_session_token, "aws_region": self.aws_region}
        options = {name: value for name, value in options.items() if value}
        if (self.aws_endpoint or "").startswith("http://"):
            options["allow_http"] = "true"  # a local S3-protocol server (MinIO, moto): plain HTTP is meant
        return {**options, **self.extra_storage_options}

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        """The environment and the `.env` found from the working directory up (real variables
        win), then `overrides` that are not None."""
        # Into os.environ, not only into our fields: a chat model's provider key (OPENAI_API_KEY, …)
        # is read from there by its own library.
        load_dotenv(find_dotenv(usecwd=True), override=False)
        given = {cls.model_fields[name].validation_alias: value
                 for name, value in overrides.items() if value is not None}
        try:
            return cls(**dict(_FromEnvironment(**given)))  # a plain Settings, equal to one built by hand
        except ValidationError as error:
            raise SettingsError(describe(error)) from None


class _FromEnvironment(Settings):
    # Variables by their exact names only: a stray `DB` or `port` in the environment is not ours.
    model_config = SettingsConfigDict(validate_by_name=False, case_sensitive=True,
                                      env_ignore_empty=True, extra="ignore")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, **_sources):
        return (init_settings, env_settings)


_PHRASES = {"int_parsing": "must be an integer", "int_from_float": "must be an integer",
            "bool_parsing": "must be true or false", "greater_than_equal": "must be at least {ge}",
            "less_than_equal": "must be at most {le}", "url_parsing": "must be an http(s) URL",
            "url_scheme": "must be an http(s) URL", "greater_than": "must be more than {gt}",
            "float_parsing": "must be a number", "literal_error": "must be {expected}"}


def describe(error: ValidationError) -> str:
    """`CITEBOT_TOP_K must be an integer (got 'x')`, one clause per bad variable."""
    parts = []
    for item in error.errors(include_url=False):
        name = str(item["loc"][0]) if item["loc"] else "settings"
        phrase = _PHRASES.get(item["type"], item["msg"].removeprefix("Value error, "))
        phrase = phrase.format(**item.get("ctx") or {}) if item["type"] in _PHRASES else phrase
        shown = "its value is not shown: it may hold a secret" if name in _secret_names() else f"got {item['input']!r}"
        parts.append(f"{name} {phrase} ({shown})")
    return "; ".join(parts)


def _secret_names() -> set[str]:
    """The variables kept out of repr (tokens, keys, a Redis URL with its password): an error
    names them but never echoes their value into a log."""
    return {str(field.validation_alias) for field in Settings.model_fields.values() if not field.repr}
