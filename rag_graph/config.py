"""Settings and retrieval defaults, read from the environment (and `.env`) once per process."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from dotenv import load_dotenv

DEFAULT_DB = ".citebot/lancedb"
MAX_QUESTION_CHARS = 4000


class SettingError(ValueError):
    """A setting with a value Citebot cannot use; the message names the setting."""


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


def _env_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True)
class Settings:
    corpus: Path = Path("corpus")
    db: str = DEFAULT_DB
    embedding_model: str | None = None  # None = bundled all-MiniLM-L6-v2 (see embeddings.py)
    llm: str | None = None  # None = offline extractive answers
    slack_bot_token: str | None = None
    slack_signing_secret: str | None = None
    slack_app_token: str | None = None
    slack_api_url: str | None = None
    port: int = 3000
    admin_user_ids: tuple[str, ...] = ()
    allow_workspace_admins: bool = False
    ask_hint: str = "#people-ops"
    feedback_path: Path = Path(".citebot/feedback.jsonl")
    history_turns: int = 8
    source_url: str | None = None  # link template for documents without a `url` (rag_graph/links.py)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        load_dotenv(override=False)
        env = os.environ
        settings = cls(
            corpus=Path(env.get("CITEBOT_CORPUS", "corpus")),
            db=env.get("CITEBOT_DB", DEFAULT_DB),
            embedding_model=env.get("EMBEDDING_MODEL") or None,
            llm=env.get("CITEBOT_LLM") or None,
            slack_bot_token=env.get("SLACK_BOT_TOKEN") or None,
            slack_signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
            slack_app_token=env.get("SLACK_APP_TOKEN") or None,
            slack_api_url=env.get("SLACK_API_URL") or None,
            port=int(env.get("PORT", "3000")),
            admin_user_ids=_env_list(env.get("ADMIN_USER_IDS", "")),
            allow_workspace_admins=env.get("CITEBOT_WORKSPACE_ADMINS", "").lower() in ("1", "true", "yes"),
            ask_hint=env.get("CITEBOT_ASK_HINT", "#people-ops"),
            feedback_path=Path(env.get("CITEBOT_FEEDBACK", ".citebot/feedback.jsonl")),
            history_turns=int(env.get("CITEBOT_HISTORY_TURNS", "8")),
            source_url=env.get("CITEBOT_SOURCE_URL") or None,
            retrieval=RetrievalConfig(
                top_k=int(env.get("CITEBOT_TOP_K", "8")),
                max_retrieval_attempts=int(env.get("CITEBOT_MAX_ATTEMPTS", "2")),
            ),
        )
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})
