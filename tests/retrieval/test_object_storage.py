"""The index on object storage (CITEBOT_DB=s3://…) against a real S3-protocol server, one writer
and replicas that follow the `serving` tag, rollback and the cleanup of old versions."""
from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import boto3
import pytest

from bot.cli import main
from rag_graph.retrieval import index as index_module
from rag_graph.retrieval import refresh as refresh_module
from rag_graph.config import Settings, SettingsError
from rag_graph.retrieval.index import Index, RefreshError
from rag_graph.language.words import stem
from servers import BUCKET
from test_index import DOCS, corpus  # noqa: F401 (fixture)


@pytest.fixture
def settings(s3, corpus) -> Settings:  # noqa: F811
    """Settings for a fresh prefix of the bucket, as `Settings.from_env` reads them."""
    env = {**s3.env, "CITEBOT_DB": f"s3://{BUCKET}/{uuid.uuid4().hex[:8]}/lancedb", "CITEBOT_CORPUS": str(corpus)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        yield Settings.from_env()


def open_index(settings: Settings, embedder) -> Index:
    return Index(settings.db, embedder, settings.storage_options)


def test_aws_settings_become_lancedb_storage_options(settings, s3):
    assert settings.storage_options == {
        "aws_endpoint": s3.endpoint, "aws_access_key_id": "testing", "aws_secret_access_key": "testing",
        "aws_region": "us-east-1", "allow_http": "true"}  # a plain-http endpoint is a local one
    extra = Settings(db="s3://b/p", extra_storage_options={"aws_endpoint": "https://s3.example.com", "timeout": "30s"})
    assert extra.storage_options == {"aws_endpoint": "https://s3.example.com", "timeout": "30s"}


@pytest.mark.parametrize("name, value, message", [
    ("CITEBOT_STORAGE_OPTIONS", "{nope", "CITEBOT_STORAGE_OPTIONS must be a JSON object of LanceDB storage options"),
    ("AWS_ENDPOINT_URL", "minio:9000", "AWS_ENDPOINT_URL must be an http(s) URL"),
    ("CITEBOT_REDIS_URL", "localhost:6379", "CITEBOT_REDIS_URL must be a redis://, rediss:// or unix:// URL"),
    ("CITEBOT_POLL_SECONDS", "0", "CITEBOT_POLL_SECONDS must be more than 0"),
])
def test_a_bad_scaling_setting_is_one_line_naming_it(monkeypatch, name, value, message):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as error:
        Settings.from_env()
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_the_index_lives_in_the_bucket_and_answers_every_search_mode(settings, embedder, corpus, s3, monkeypatch):  # noqa: F811
    stats = open_index(settings, embedder).refresh(corpus)
    assert (stats.documents, stats.chunks) == (3, 3)
    prefix = settings.db.removeprefix(f"s3://{BUCKET}/")
    keys = [o["Key"] for o in boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1",
                                           aws_access_key_id="testing", aws_secret_access_key="testing")
            .list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]]
    tables = {key.removeprefix(prefix + "/").split("/")[0] for key in keys}
    assert {"chunks.lance", "passage_vectors.lance", "entities.lance", "vocabulary.lance"} <= tables

    replica = open_index(settings, embedder)  # another process: everything it reads comes from the bucket
    assert replica.search("ZX-4411", mode="keyword", top_k=1)[0]["source_id"] == "hardware"
    assert replica.search("are pets allowed in the workplace", mode="semantic", top_k=1)[0]["source_id"] == "office"
    assert replica.search("are pets allowed in the workplace", mode="hybrid", top_k=1)[0]["anchor"] == "animals"
    scanned = []
    real = index_module._column
    monkeypatch.setattr(index_module, "_column", lambda table, name: scanned.append(name) or real(table, name))
    frequency, chunks = replica.vocabulary()
    assert "text" not in scanned, "the term counts were not read from the index's own storage"
    assert chunks == 3 and frequency[stem("dongle")] == 1


def test_a_replica_follows_the_serving_tag_and_never_sees_a_half_built_version(settings, embedder, corpus, monkeypatch):  # noqa: F811
    writer = open_index(settings, embedder)
    writer.refresh(corpus)
    replica = open_index(settings, embedder)
    assert replica.follow() is False  # nothing moved: one read of the tag, no checkout

    (corpus / "travel.md").write_text(DOCS["travel.md"].replace("second class", "first class"))
    validating, release = threading.Event(), threading.Event()
    real_validate = Index._validate

    def held(table, wanted):  # the new version is written, its checks have not finished
        validating.set()
        release.wait(30)
        return real_validate(table, wanted)

    monkeypatch.setattr(Index, "_validate", staticmethod(held))
    worker = threading.Thread(target=writer.refresh, args=(corpus,))
    worker.start()
    assert validating.wait(30)
    assert replica.follow() is False
    assert "second class" in replica.search("rail tickets", top_k=1)[0]["text"]
    release.set()
    worker.join(30)

    assert replica.follow() is True and replica.version == writer.version
    assert "first class" in replica.search("rail tickets", top_k=1)[0]["text"]
    assert replica.vocabulary()[0]["first"] == 1


def test_rollback_moves_the_tag_back_and_holds_until_the_documents_change(settings, embedder, corpus, monkeypatch):  # noqa: F811
    writer = open_index(settings, embedder)
    writer.refresh(corpus)
    good = writer.version
    (corpus / "travel.md").write_text(DOCS["travel.md"].replace("second class", "first class"))
    writer.refresh(corpus)
    replica = open_index(settings, embedder)

    assert main(["index", "--rollback"]) == 0  # the CLI, over the same settings
    assert replica.follow() is True and replica.version == good
    assert "second class" in replica.search("rail tickets", top_k=1)[0]["text"]
    assert replica.vocabulary()[0].get("first", 0) == 0  # the rolled-back version's own counts

    # The index job runs again over the same documents: the rollback holds.
    assert main(["index"]) == 0
    assert open_index(settings, embedder).version == good
    # Nothing earlier to go back to: a clear error, the tag stays.
    with pytest.raises(RefreshError, match="no published index version before"):
        open_index(settings, embedder).roll_back()
    # New documents publish a new version as usual.
    (corpus / "travel.md").write_text(DOCS["travel.md"].replace("second class", "sleeper"))
    writer.refresh(corpus)
    assert replica.follow() is True and "sleeper" in replica.search("rail tickets", top_k=1)[0]["text"]


@pytest.mark.filterwarnings("ignore:optimize\\(cleanup_older_than=0\\)")
def test_cleanup_removes_old_versions_but_never_a_tagged_one(settings, embedder, corpus, monkeypatch):  # noqa: F811
    monkeypatch.setattr(refresh_module, "CLEANUP_AFTER", timedelta(0))  # every untagged version is old
    writer = open_index(settings, embedder)
    writer.refresh(corpus)
    first = writer.version
    oldest_reader = open_index(settings, embedder)  # a replica that has not followed yet
    for word in ("first", "sleeper", "couchette", "standard"):
        (corpus / "travel.md").write_text(DOCS["travel.md"].replace("second", word))
        writer.refresh(corpus)
    table = writer.table
    versions = [v["version"] for v in table.list_versions()]
    published = refresh_module._published(table.tags.list())
    assert len(published) == refresh_module.KEEP_PUBLISHED and published[-1] == writer.version
    assert set(versions) == set(published) | {max(versions)}, "untagged versions were kept"
    assert first not in versions
    # The replica still on the first version was reading a version no longer kept: it moves on
    # at its next poll, and the versions that are kept answer.
    assert oldest_reader.follow() is True
    assert "standard" in oldest_reader.search("rail tickets", top_k=1)[0]["text"]
    assert writer.roll_back() == published[-2]


def test_a_replica_started_before_the_first_build_serves_it_once_published(settings, embedder, corpus):  # noqa: F811
    replica = open_index(settings, embedder)
    writer = open_index(settings, embedder)
    assert not replica.ready and replica.follow() is False
    writer.refresh(corpus)
    assert replica.follow() is True and replica.ready and replica.documents == 3
