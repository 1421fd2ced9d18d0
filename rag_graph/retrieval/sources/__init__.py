"""Documents where companies keep them: each source (a folder, a git repository, a website,
Confluence, SharePoint / OneDrive, Google Drive) is fetched into its own folder of a local mirror,
incrementally, and the index is built from the mirror exactly as from CITEBOT_CORPUS.

    sources file (CITEBOT_SOURCES) -> settings.py
    one module per source type     -> folder.py git.py web.py confluence.py sharepoint.py google_drive.py
    what every source hands back   -> base.py (Document, Changes, SourceError)
    the mirror and the sync state  -> mirror.py, state.py
    running them, the report       -> sync.py
"""
from .settings import SourcesError, load_sources
from .sync import SyncReport, sources_status, sync, sync_folders

__all__ = ["SourcesError", "SyncReport", "load_sources", "sources_status", "sync", "sync_folders"]
