"""The index's errors, in a module of their own so that catching them (the CLI does, around every
command) does not import LanceDB and the graph: `citebot index` with nothing to do stays quick."""
from __future__ import annotations


class RefreshError(RuntimeError):
    """The refresh did not happen; the previous version keeps serving."""


class RefreshInProgress(RefreshError):
    pass


class IndexNotReady(RuntimeError):
    pass


class ModelError(RuntimeError):
    """The embedding model cannot be used: a setting to change or a file to restore. The message
    is one line naming which (EMBEDDING_MODEL, or the file whose checksum differs)."""
