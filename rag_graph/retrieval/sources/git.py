"""A git repository (any URL `git clone` takes: https, ssh, file, a path), one branch, optionally
one sub-folder, incremental by commit. A bare clone is kept beside the mirror; each sync fetches
the branch and reads the diff between the last synced commit and the new tip, so a force-push
(history rewritten) is handled like any other change: the diff of the two trees. Credentials stay
in the URL or git's own credential helpers and are cut from every message."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path, PurePosixPath

import yaml

from ..loaders import MARKDOWN_SUFFIXES, SIDECAR_SUFFIXES, SUFFIXES, source_url
from .base import Changes, Document, SourceError, redact

TIMEOUT = 600  # seconds for one git command (a first clone of a large repository)


class Fetcher:
    def __init__(self, source, settings):
        self.source = source
        self.clone = settings.sync_dir / "git" / source.name
        self.prefix = source.path.strip("/")

    def _git(self, *args: str, binary: bool = False):
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password
        command = args[2] if args[0] == "-C" else args[0]
        try:
            done = subprocess.run(["git", *args], capture_output=True, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            raise SourceError(f"git {command} took more than {TIMEOUT} s") from None
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            # git says what went wrong on its "fatal:" line; hints follow it
            reason = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "")
            raise SourceError(redact(f"git {command} failed: {reason or f'exit status {done.returncode}'}"))
        return done.stdout if binary else done.stdout.decode()

    def _tip(self) -> str:
        branch = self.source.branch
        if not (self.clone / "HEAD").is_file():
            self.clone.parent.mkdir(parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet", str(self.clone))
        # +: a force-pushed branch replaces ours; the old commit stays in the clone for the diff.
        self._git("-C", str(self.clone), "fetch", "--quiet", "--no-tags", "--", self.source.url,
                  f"+refs/heads/{branch}:refs/heads/{branch}")
        return self._git("-C", str(self.clone), "rev-parse", f"refs/heads/{branch}^{{commit}}").strip()

    def fetch(self, state) -> Changes:
        tip = self._tip()
        last = state.cursor.get("commit")
        if last == tip and state.files:
            return Changes(cursor={"commit": tip})
        if last and self._has(last):
            changed, deleted = self._diff(last, tip)
            full = False
        else:  # first sync, or the clone lost the old commit: list the whole tree
            changed, deleted, full = self._tree(tip), [], True
        changed = self._with_sidecars(changed, tip)
        documents = [self._document(tip, path) for path in changed if self._wanted(path)]
        return Changes(upserts=[d for d in documents if d], deletes=deleted, cursor={"commit": tip}, full=full)

    def _has(self, commit: str) -> bool:
        try:
            self._git("-C", str(self.clone), "cat-file", "-e", f"{commit}^{{commit}}")
            return True
        except SourceError:
            return False

    def _scope(self) -> list[str]:
        return ["--", self.prefix] if self.prefix else []

    def _tree(self, commit: str) -> list[str]:
        out = self._git("-C", str(self.clone), "ls-tree", "-r", "-z", "--name-only", commit, *self._scope())
        return [p for p in out.split("\0") if p]

    def _diff(self, old: str, new: str) -> tuple[list[str], list[str]]:
        out = self._git("-C", str(self.clone), "diff", "--name-status", "-z", "--no-renames", old, new, *self._scope())
        fields = [f for f in out.split("\0") if f]
        changed, deleted = [], []
        for status, path in zip(fields[::2], fields[1::2]):
            (deleted if status.startswith("D") else changed).append(path)
        return changed, [self._key(p) for p in deleted if self._wanted(p)]

    def _with_sidecars(self, paths: list[str], commit: str) -> list[str]:
        """A changed sidecar (`a.pdf.yml`) changes the document it describes."""
        out = list(paths)
        for path in paths:
            if _is_sidecar(path):
                main = path.rsplit(".", 1)[0]
                if main not in out and self._exists(commit, main):
                    out.append(main)
        return out

    def _exists(self, commit: str, path: str) -> bool:
        return bool(self._git("-C", str(self.clone), "ls-tree", "--name-only", commit, "--", path).strip())

    def _wanted(self, path: str) -> bool:
        """Documents only; a sidecar travels with its document (merged with the link)."""
        name = PurePosixPath(path)
        return (name.suffix.lower() in SUFFIXES and not _is_sidecar(path)
                and not any(part.startswith(".") for part in name.parts))

    def _key(self, path: str) -> str:
        return path[len(self.prefix):].lstrip("/") if self.prefix else path

    def _document(self, commit: str, path: str) -> Document | None:
        relative = self._key(path)
        content = self._git("-C", str(self.clone), "cat-file", "blob", f"{commit}:{path}", binary=True)
        meta = {}
        if self.source.link:
            meta["url"] = source_url(self.source.link, relative)
        if PurePosixPath(path).suffix.lower() not in MARKDOWN_SUFFIXES:
            meta = {**meta, **self._sidecar(commit, path)}  # the repository's own sidecar wins
        return Document(key=relative, path=relative, content=content, meta=meta, authoritative=False)

    def _sidecar(self, commit: str, path: str) -> dict:
        for suffix in SIDECAR_SUFFIXES:
            if self._exists(commit, path + suffix):
                text = self._git("-C", str(self.clone), "cat-file", "blob", f"{commit}:{path}{suffix}")
                try:
                    data = yaml.safe_load(text) or {}
                except yaml.YAMLError:
                    return {}
                return data if isinstance(data, dict) else {}
        return {}


def _is_sidecar(path: str) -> bool:
    name = PurePosixPath(path)
    return name.suffix.lower() in SIDECAR_SUFFIXES and PurePosixPath(name.stem).suffix.lower() in SUFFIXES
