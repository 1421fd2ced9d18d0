"""The sources file (CITEBOT_SOURCES): which sources to keep in sync, checked at start with
one-line errors that name the setting, the source and the field. Secrets never live here: they
come from the environment (rag_graph/config.py), and each source says which ones it needs."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...config import Settings, SettingsError

SETTING = "CITEBOT_SOURCES"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


class SourcesError(SettingsError):
    """The sources file cannot be used; one line naming the setting and the problem."""


class _Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    permissions: Literal["none", "mirror"] = "none"

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("must be 1-40 lower-case letters, digits, '-' or '_' (it names a folder)")
        return value

    def needs(self, settings: Settings) -> str | None:
        """The first missing setting this source needs, or None."""
        return None


def _http(value: str) -> str:
    if not re.match(r"https?://[^/\s]+", value):
        raise ValueError("must be an http(s) URL")
    return value


class FolderSource(_Source):
    type: Literal["folder"]
    path: Path | None = None  # default: CITEBOT_CORPUS


class GitSource(_Source):
    type: Literal["git"]
    url: str  # anything `git clone` takes: https, ssh, file, a local path
    branch: str = "main"
    path: str = ""  # a sub-folder of the repository
    link: str | None = None  # citation links, as CITEBOT_SOURCE_URL: {path} / {slug}

    @field_validator("link")
    @classmethod
    def _link(cls, value):
        if value is not None and (not re.match(r"https?://", value) or not ("{path}" in value or "{slug}" in value)):
            raise ValueError("must be an http(s) URL containing {path} or {slug}")
        return value

    @field_validator("branch")
    @classmethod
    def _branch(cls, value):
        if not re.fullmatch(r"[\w./-]+", value) or value.startswith("-") or ".." in value:
            raise ValueError("must be a branch name")
        return value


class WebSource(_Source):
    type: Literal["web"]
    sitemap: str | None = None
    start: str | None = None
    include: list[str] = []  # URL prefixes the crawl stays within (default: the start or sitemap's folder)
    max_pages: int = Field(500, ge=1)
    max_depth: int = Field(5, ge=0)
    delay_seconds: float = Field(0.5, ge=0)  # between two requests to the site
    user_agent: str = "Citebot"

    _urls = field_validator("sitemap", "start")(lambda value: value if value is None else _http(value))

    @field_validator("include")
    @classmethod
    def _prefixes(cls, value):
        return [_http(v) for v in value]

    def model_post_init(self, _context) -> None:
        if bool(self.sitemap) == bool(self.start):
            raise ValueError("give either `sitemap:` or `start:`")


class ConfluenceSource(_Source):
    type: Literal["confluence"]
    url: str  # https://acme.atlassian.net/wiki
    spaces: list[str] = Field(min_length=1)
    everyone: list[str] = []  # groups that stand for the whole company (confluence-users): not a restriction

    _url = field_validator("url")(_http)

    def needs(self, settings: Settings) -> str | None:
        for name, value in (("CONFLUENCE_EMAIL", settings.confluence_email),
                            ("CONFLUENCE_API_TOKEN", settings.confluence_api_token)):
            if not value:
                return name
        return None


class SharePointSource(_Source):
    type: Literal["sharepoint", "onedrive"]
    site: str | None = None  # https://acme.sharepoint.com/sites/handbook: its document libraries
    drive: str | None = None  # or one drive id (a OneDrive, or one library)
    everyone: list[str] = []  # group object ids or site group names that stand for the whole company

    _site = field_validator("site")(lambda value: value if value is None else _http(value))

    def model_post_init(self, _context) -> None:
        if bool(self.site) == bool(self.drive):
            raise ValueError("give either `site:` or `drive:`")

    def needs(self, settings: Settings) -> str | None:
        for name, value in (("CITEBOT_GRAPH_TENANT_ID", settings.graph_tenant_id),
                            ("CITEBOT_GRAPH_CLIENT_ID", settings.graph_client_id),
                            ("CITEBOT_GRAPH_CLIENT_SECRET", settings.graph_client_secret)):
            if not value:
                return name
        return None


class DriveSource(_Source):
    type: Literal["google_drive"]
    folder: str
    domains: list[str] = []  # the company's own domains: a file shared with one of them is for everyone

    def needs(self, settings: Settings) -> str | None:
        path = settings.google_credentials
        if not path:
            return "GOOGLE_APPLICATION_CREDENTIALS"
        if not Path(path).is_file():
            return f"GOOGLE_APPLICATION_CREDENTIALS (no file at {path})"
        return None


Source = Annotated[Union[FolderSource, GitSource, WebSource, ConfluenceSource, SharePointSource, DriveSource],
                   Field(discriminator="type")]


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sources: list[Source] = Field(min_length=1)


def load_sources(settings: Settings) -> list:
    """The sources CITEBOT_SOURCES lists; without it, the CITEBOT_CORPUS folder alone (indexed in
    place, as before there were sources). Raises SourcesError with one line."""
    path = settings.sources_path
    if path is None:
        return [FolderSource(name="corpus", type="folder", path=settings.corpus)]
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise SourcesError(f"{SETTING}: cannot read {path} ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise SourcesError(f"{SETTING}: {path} is not valid YAML" + (f" (line {mark.line + 1})" if mark else "")) from None
    try:
        sources = _File.model_validate(data if isinstance(data, dict) else {"sources": data}).sources
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"] if part not in _TYPE_TAGS)
        raise SourcesError(f"{SETTING}: {path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    seen = set()
    for source in sources:
        if source.name in seen:
            raise SourcesError(f"{SETTING}: {path}: two sources are named {source.name!r}")
        seen.add(source.name)
        if source.type == "folder" and source.path is None:
            source = source.model_copy(update={"path": settings.corpus})
        if missing := source.needs(settings):
            raise SourcesError(f"{SETTING}: source {source.name!r} ({source.type}) needs {missing}")
    return [s.model_copy(update={"path": settings.corpus}) if s.type == "folder" and s.path is None else s
            for s in sources]


_TYPE_TAGS = {"folder", "git", "web", "confluence", "sharepoint", "onedrive", "google_drive"}
