"""A Google Drive source against a faithful local fake of Google's token endpoint and the Drive
API v3: a folder tree listed, then followed through the changes feed; Google Docs exported with
their heading links; trashed and removed files leave the index; sharing mirrored (anyone and the
company's domain are public, users and groups by email), an unmapped group's file reaches nobody,
and a sharing change takes effect at the next sync."""
from __future__ import annotations

import pytest

from bot.access import Access
from bot.sources import report_lines
from fake_drive import DOC, FOLDER, FakeDrive
from sources_harness import answer, source_report, sources_engine

COMPANY = {"type": "domain", "role": "reader", "domain": "acme.com"}
HR = {"type": "group", "role": "reader", "emailAddress": "hr@acme.com"}
BOARD = {"type": "group", "role": "reader", "emailAddress": "board@acme.com"}
OWNER = {"type": "user", "role": "owner", "emailAddress": "owner@acme.com"}


def doc(title: str, heading: str, heading_id: str, text: str) -> bytes:
    return (f'<html><head><meta content="text/html; charset=UTF-8"><title>{title}</title></head><body class="c1">'
            f'<p class="title"><span>{title}</span></p><h2 class="c2" id="{heading_id}"><span>{heading}</span></h2>'
            f'<p class="c3"><span>{text}</span></p></body></html>').encode()


@pytest.fixture
def drive(tmp_path):
    with FakeDrive() as drive:
        drive.root = "0RootFolderId"
        drive.travel = drive.add("Travel policy", drive.root, DOC,
                                 doc("Travel policy", "Hotels", "h.k3x9m1", "Hotels are booked up to 180 dollars a night, per KITTIWAKETRAVEL."),
                                 [OWNER, COMPANY])
        sub = drive.add("People", drive.root, FOLDER, grants=[OWNER])
        drive.reviews = drive.add("Reviews.md", sub, "text/markdown",
                                  b"# Reviews\n\n## Calibration\n\nCalibration uses the code GANNETREVIEW.\n", [OWNER, HR])
        drive.deal = drive.add("Deal.md", drive.root, "text/markdown", b"# Deal\n\n## Name\n\nThe deal is called SKUAROOM.\n", [OWNER, BOARD])
        drive.add("Budget", drive.root, "application/vnd.google-apps.spreadsheet", grants=[OWNER, COMPANY])
        drive.add("Elsewhere.md", "0OtherFolder", "text/markdown", b"# Elsewhere\n\nNot ours: PETRELAWAY.\n", [COMPANY])
        yield drive


@pytest.fixture
def access(tmp_path):
    path = tmp_path / "access.yml"
    path.write_text("groups:\n  people-ops:\n    source_groups: ['google:hr@acme.com']\nchannels:\n  C0HR: {groups: [people-ops]}\n")
    return Access.load(path)


def test_drive_files_and_their_sharing_are_mirrored(tmp_path, drive, access):
    engine = sources_engine(tmp_path, [{"name": "drive", "type": "google_drive", "folder": drive.root,
                                        "permissions": "mirror", "domains": ["acme.com"]}],
                            google_credentials=drive.key_file(tmp_path), drive_url=f"{drive.url}/drive/v3")
    drive.throttled("/drive/v3/files", 1)
    report = engine.sync()
    assert not report.failed and source_report(report, "drive").documents == 3
    lines = "\n".join(report_lines(report, access))
    assert "visible to nobody: drive/deal-" in lines and "google:board@acme.com" in lines
    assert any("Budget" in note for note in source_report(report, "drive").notes)

    public, hr = access.for_channel("C0GENERAL"), access.for_channel("C0HR")
    text, links = answer(engine, "How much can a hotel cost per night?", public)
    assert "180 dollars" in text
    assert f"https://docs.google.com/document/d/{drive.travel}/edit?usp=drivesdk#heading=h.k3x9m1" in links
    assert "GANNETREVIEW" not in answer(engine, "What code does calibration use?", public)[0]
    assert "GANNETREVIEW" in answer(engine, "What code does calibration use?", hr)[0]
    assert "SKUAROOM" not in answer(engine, "What is the deal called?", hr)[0]
    assert "PETRELAWAY" not in answer(engine, "What is not ours?", public)[0]

    drive.log.clear()
    unchanged = engine.sync()
    assert unchanged.refresh.embedded == 0 and not drive.calls("/export") and not drive.calls("alt=media")

    drive.edit(drive.travel, doc("Travel policy", "Hotels", "h.k3x9m1", "Hotels are booked up to 210 dollars a night, per KITTIWAKETRAVEL."))
    drive.trash(drive.reviews)
    drive.share(drive.deal, [OWNER, COMPANY])  # now shared with the whole company
    report = engine.sync()
    assert source_report(report, "drive").removed == 1 and source_report(report, "drive").changed == 2
    assert "210 dollars" in answer(engine, "How much can a hotel cost per night?", public)[0]
    assert "GANNETREVIEW" not in answer(engine, "What code does calibration use?", hr)[0]
    assert "SKUAROOM" in answer(engine, "What is the deal called?", public)[0]

    drive.share(drive.travel, [OWNER, BOARD])  # taken back from the company
    engine.sync()
    assert "KITTIWAKETRAVEL" not in answer(engine, "How much can a hotel cost per night?", public)[0]
