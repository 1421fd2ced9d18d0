"""How the running bot keeps sources in sync: the periodic sync of `citebot serve`
(CITEBOT_SYNC_MINUTES) brings an upstream change into answers without anyone asking, the admin's
reload syncs the sources and names those that failed, `status` shows each source's last sync,
documents and last error, and a refresh copies the folder sources first."""
from __future__ import annotations

import time

from bot import sources
from bot.admin import Admin
from bot.shared import SharedState
from sources_harness import answer, sources_engine


def test_serve_syncs_on_its_interval_and_on_reload_and_status_tells(tmp_path):
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "parking.md").write_text("# Parking\n\n## Spots\n\nVisitor parking is on level 2.\n")
    engine = sources_engine(tmp_path, [{"name": "policies", "type": "folder", "path": str(folder)},
                                       {"name": "handbook", "type": "git", "url": str(tmp_path / "no-such-repo.git")}],
                            sync_minutes=0.02, slack_admin_ids=("UADMIN",))  # 1.2 s
    shared = SharedState(None)
    admin = Admin(engine.settings, engine, shared)
    said = []
    admin.reload("UADMIN", True, said.append)
    assert "Reloaded:" in said[-1] and "Sources that failed" in said[-1] and "handbook: git fetch failed" in said[-1]
    assert "Visitor parking is on level 2" in answer(engine, "Where is visitor parking?")[0]

    status = admin.status("UADMIN")  # sources are an admin's business (anyone else sees counts only)
    assert "• Source policies (folder): last sync 20" in status and ", 1 documents" in status
    assert "• Source handbook (git): last sync 20" in status and "last error: git fetch failed" in status

    stop = sources.start(engine, shared, engine.settings)
    try:
        (folder / "parking.md").write_text("# Parking\n\n## Spots\n\nVisitor parking is on level 5.\n")
        deadline = time.monotonic() + 120
        while "level 5" not in answer(engine, "Where is visitor parking?")[0]:
            assert time.monotonic() < deadline, "the periodic sync never brought the change"
            time.sleep(0.5)
    finally:
        stop.set()

    # A file saved into a folder source (a verified answer into CITEBOT_CORPUS) is indexed by the
    # refresh that follows, without waiting for a sync.
    (folder / "lockers.md").write_text("# Lockers\n\n## Keys\n\nLocker keys are kept by reception in box 7.\n")
    engine.refresh()
    assert "box 7" in answer(engine, "Who keeps the locker keys?")[0]
