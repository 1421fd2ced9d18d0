"""How the corpus folder is read: the two settings that change what an index is built from.

CITEBOT_EXCLUDE leaves files out by gitignore-style patterns (`_sources/`, `genindex.html`,
`drafts/**/*.md`, `!drafts/keep.md`), matched against each file's path below the folder. A docs
site's build folder holds every page two or three times (the HTML, the `_sources/*.txt` it was
made from, a search index), and a folder installed read-only cannot hold an ignore file of its
own, so the patterns are a setting. The gitignore rules are pathspec's, the library black and
pip's tooling use, rather than a pattern matcher of ours that users would have to learn.

CITEBOT_STRICT_AUDIENCE makes a restricted folder's documents inherit its audience
(retrieval/authoring.py). Both change what an index is built from (published.py's fingerprint),
so changing either rebuilds it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec


@dataclass(frozen=True)
class Reading:
    strict_audience: bool = False
    exclude: tuple[str, ...] = ()
    _spec: GitIgnoreSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spec", GitIgnoreSpec.from_lines(self.exclude))

    def left_out(self, relative: str) -> bool:
        """Whether CITEBOT_EXCLUDE leaves out the file at this path below the folder. Hidden files
        and YAML files never are: a folder's .citebot.yml and a document's sidecar say who may read
        it, and a pattern that caught them would keep a change of audience from rebuilding the index."""
        if not self.exclude or relative.endswith((".yml", ".yaml")) or any(
                part.startswith(".") for part in relative.split("/")):
            return False
        return self._spec.match_file(relative)

    def files(self, root: Path) -> tuple[list[Path], list[str]]:
        """Every file below root that is not left out, in a stable order; and the paths left out."""
        kept, left = [], []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = path.relative_to(root).as_posix()
            (left.append(relative) if self.left_out(relative) else kept.append(path))
        return kept, left

    def stamp(self) -> bytes:
        """What the settings add to an index's fingerprint (published.py), beside the files read:
        CITEBOT_STRICT_AUDIENCE changes who may read documents. CITEBOT_EXCLUDE needs nothing here,
        as the files it leaves out are not in the fingerprint."""
        return b"\0strict-audience" if self.strict_audience else b""

