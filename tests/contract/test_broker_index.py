"""A plain broker's search index (issue 22), against live `serve --admin-only` children on loopback.

Sequences, not states: a search before and after the index, a second visit answering from the cache while the
broker is read again, a write then a search, another handle's write then a refresh, a cancel then a resume, a
broker that stops answering, a cache file that cannot be read.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

import registry
from cli.main import main
from registry import (
    CACHE_ENV_VAR,
    INDEX_WORKERS,
    IndexState,
    Registry,
    SchemaInfo,
    SchemaType,
    StorageError,
    TopicQuery,
)
from registry.remote._broker_index import cache_path
from serving import seeded, served

BIG = 600  # topics in the registry a cancel is tried on


Start = Callable[..., str]


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Start]:
    """`start(db, admin_only=True) -> url`: a serve child per call, stopped when the module ends."""
    logs = tmp_path_factory.mktemp("logs")
    with ExitStack() as stack:
        yield lambda db, admin_only=True: stack.enter_context(served(db, log_dir=logs, admin_only=admin_only))


@pytest.fixture
def sample_url(start: Start, tmp_path: Path) -> str:
    """A fresh plain broker over the sample data (each test writes its own)."""
    return start(seeded(tmp_path / "broker.db", keep_clients=False))


@pytest.fixture(scope="module")
def big_url(start: Start, tmp_path_factory: pytest.TempPathFactory) -> str:
    db = tmp_path_factory.mktemp("big") / "broker.db"
    with Registry.open(db, create=True) as reg:
        reg.create_tenant("big")
        for n in range(6):
            reg.create_namespace(f"big/ns{n}")
        with reg.batch():
            for i in range(BIG):
                reg.register(f"persistent://big/ns{i % 6}/t{i:04d}", _avro(f"R{i}", "id"))
    return start(db)


def _avro(name: str, *fields: str) -> SchemaInfo:
    body = ",".join(f'{{"name":"{f}","type":"string"}}' for f in fields)
    return SchemaInfo(type=SchemaType.AVRO, schema=f'{{"type":"record","name":"{name}","fields":[{body}]}}')


def _fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str = "cache") -> Path:
    folder = tmp_path / name
    monkeypatch.setenv(CACHE_ENV_VAR, str(folder))
    return folder


def test_the_first_search_waits_for_one_complete_index_then_answers_from_it(sample_url, tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    twin = Registry.open(seeded(tmp_path / "twin.db", keep_clients=False))
    with registry.open(sample_url) as remote:
        status = remote.broker_index.status()
        assert status is not None and status.state is IndexState.IDLE and not status.ready
        assert not Path(status.cache_path).exists()  # opening creates no cache: only a search does
        before = remote.requests_sent
        for query in (None, TopicQuery(text="field:currency"), TopicQuery(strategies=frozenset({"FULL_TRANSITIVE"}))):
            assert remote.search_topics(query, limit=100) == twin.search_topics(query, limit=100)
        done = remote.broker_index.status()
        assert done is not None and done.state is IndexState.DONE and done.ready
        assert done.indexed == done.total == done.cached == 47 and done.unreadable == 0
        # Bounded: the tenants, four GETs per namespace (policies and three topic listings), two per topic (its
        # schemas and its own strategy) and one more for a topic without a live schema (deleted or none).
        namespaces = sum(len(twin.namespaces(t)) for t in twin.tenants())
        without_live = sum(1 for row in twin.search_topics(limit=100).items if row.versions == 0)
        bound = 1 + len(twin.tenants()) + 4 * namespaces + 2 * 47 + without_live
        assert remote.requests_sent - before <= bound
        assert done.requests == remote.requests_sent - before
        again = remote.requests_sent
        remote.search_topics(TopicQuery(text="name:orders"))
        assert remote.requests_sent == again  # answered from the index
    twin.close()


def test_a_second_visit_answers_from_the_cache_at_once_and_reads_the_broker_behind(start, tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    topic = "persistent://acme/orders/order-created"
    db = seeded(tmp_path / "broker.db", keep_clients=False)
    sample_url = start(db)
    with registry.open(sample_url) as first:
        old = first.search_topics(TopicQuery(text="name:order-created")).items[0]
    with Registry.open(db) as other:  # someone else registers meanwhile, not through this cache's handles
        latest = other.get(topic).info
        other.register(topic, SchemaInfo(type=latest.type, schema=_wider(latest.schema), properties=latest.properties))
    with registry.open(sample_url) as second:
        status = second.broker_index.status()
        assert status is not None and status.ready and status.cached == 47
        assert status.age_s() is not None and status.age_s() >= 0
        cached = second.search_topics(TopicQuery(text="name:order-created")).items[0]
        assert cached == old  # the cache answers at once, as old as it says
        refreshed = second.broker_index.status()
        assert refreshed is not None and refreshed.state in (IndexState.LISTING, IndexState.INDEXING, IndexState.DONE)
        second._index.wait(timeout=60)  # type: ignore[attr-defined]
        now = second.search_topics(TopicQuery(text="name:order-created")).items[0]
        assert now.latest_version == old.latest_version + 1 and now == second.topic_summary(topic)


def _wider(schema: str) -> str:
    """An Avro record with one more optional field: compatible under the sample topic's BACKWARD."""
    doc = json.loads(schema)
    doc["fields"].append({"name": "zz_index_test", "type": ["null", "string"], "default": None})
    return json.dumps(doc)


def test_this_handles_writes_show_in_its_next_search(sample_url, tmp_path, monkeypatch):
    """Write, then search: the catalog row equals the topic's summary read straight from the broker."""
    _fresh_cache(monkeypatch, tmp_path)
    created = "persistent://acme/orders/index-new-topic"
    cancelled = "persistent://acme/orders/order-cancelled"

    def row(reg: Registry, topic: str):  # noqa: ANN202
        page = reg.search_topics(TopicQuery(namespace="acme/orders"), limit=100)
        return next(r for r in page.items if r.topic == topic)

    with registry.open(sample_url) as remote:
        remote.search_topics(limit=1)
        remote.register(created, _avro("IndexNew", "id"))
        assert row(remote, created) == remote.topic_summary(created)
        remote.set_namespace_policy("acme/orders", compatibility="FORWARD")
        assert row(remote, "persistent://acme/orders/order-created").strategy.value == "FORWARD"
        remote.set_topic_policy(cancelled, compatibility="ALWAYS_COMPATIBLE")
        assert row(remote, cancelled) == remote.topic_summary(cancelled)
        remote.delete(created)
        gone = row(remote, created)
        assert gone == remote.topic_summary(created) and gone.deleted and gone.schema_type is None


def test_cancel_keeps_what_was_read_and_the_next_run_resumes(big_url, tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path, "full")
    with registry.open(big_url) as reference:
        reference.broker_index.refresh()
        full = reference._index.wait(timeout=120)  # type: ignore[attr-defined]
        assert full.state is IndexState.DONE and full.indexed == BIG
    _fresh_cache(monkeypatch, tmp_path, "cancelled")
    with registry.open(big_url) as remote:
        remote.broker_index.refresh()
        deadline = time.monotonic() + 60
        while (remote.broker_index.status().indexed < 50) and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.01)
        remote.broker_index.cancel()
        at_cancel = remote.requests_sent
        stopped = remote._index.wait(timeout=60)  # type: ignore[attr-defined]
        assert stopped.state is IndexState.CANCELLED and not stopped.ready
        assert 50 <= stopped.cached < BIG and stopped.indexed < BIG
        # Only the reads in flight finished after the cancel (two requests a topic): nothing more was asked.
        assert remote.requests_sent - at_cancel <= INDEX_WORKERS * 2
        _cancel_as_soon_as_started(remote)
        with pytest.raises(StorageError, match="not complete"):
            remote.search_topics()  # it resumes the index and waits; the user cancels meanwhile
        resumed = remote.broker_index.refresh()
        assert resumed is not None
        final = remote._index.wait(timeout=120)  # type: ignore[attr-defined]
        assert final.state is IndexState.DONE and final.cached == BIG
        assert final.requests < full.requests  # the topics read before the cancel were not read again
        assert remote.search_topics(TopicQuery(text="name:t0599")).total == 1


def _cancel_as_soon_as_started(remote: Registry) -> None:
    """A search waiting for an index that a user cancels meanwhile ends with a clear error, not a half answer."""
    import threading

    def cancel() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = remote.broker_index.status()
            if status is not None and status.running:
                remote.broker_index.cancel()
                return
            time.sleep(0.001)

    threading.Thread(target=cancel, daemon=True).start()


def test_a_broker_that_stops_answering_fails_the_index_with_the_reason(tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    db = seeded(tmp_path / "broker.db", keep_clients=False)
    with ExitStack() as own:
        url = own.enter_context(served(db, log_dir=tmp_path, admin_only=True))
        remote = registry.open(url)
    try:  # the server is gone now
        with pytest.raises(StorageError, match=r"not complete \(failed.*cannot reach"):
            remote.search_topics()
        status = remote.broker_index.status()
        assert status is not None and status.state is IndexState.FAILED and "cannot reach" in status.error
    finally:
        remote.close()


def test_an_unreadable_or_foreign_cache_is_rebuilt_never_answered_from(sample_url, tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    with registry.open(sample_url) as remote:
        path = Path(remote.broker_index.status().cache_path)  # type: ignore[union-attr]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a SQLite file" * 100)
    with registry.open(sample_url) as remote:
        assert remote.search_topics(limit=100).total == 47
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # the user's alone
    import sqlite3

    with sqlite3.connect(path) as db:  # a cache another format (or another URL) wrote
        db.execute("UPDATE meta SET value = 'elsewhere' WHERE key = 'url'")
    with registry.open(sample_url) as remote:
        status = remote.broker_index.status()
        assert status is not None and not status.ready and status.cached == 0
        assert remote.search_topics(limit=100).total == 47


def test_the_cache_is_per_cluster_and_per_token_and_never_names_a_secret():
    url = "http://broker.example:8080"
    paths = {
        cache_path(url, None),
        cache_path(url, "a-token"),
        cache_path(url, "another"),
        cache_path("http://broker.example:8081", None),
    }
    assert len(paths) == 4
    assert cache_path(url, "a-token").name.startswith("broker.example_8080-")
    assert "secret" not in str(cache_path("http://ops:secret@broker.example:8080", "secret-token"))


def test_a_write_the_index_cannot_follow_makes_the_next_search_read_the_broker(sample_url, tmp_path, monkeypatch):
    """The write stands on the broker; an index that missed it must not answer as if complete."""
    _fresh_cache(monkeypatch, tmp_path)
    created = "persistent://acme/orders/index-missed-write"
    with registry.open(sample_url) as remote:
        remote.search_topics(limit=1)
        index = remote._index  # type: ignore[attr-defined]
        real = index._reread
        index._reread = lambda parts: (_ for _ in ()).throw(StorageError("the cache disk is full"))
        remote.register(created, _avro("Missed", "id"))  # the write succeeds
        status = remote.broker_index.status()
        assert status is not None and not status.ready and "missed a write" in status.error
        index._reread = real
        assert remote.search_topics(TopicQuery(text="name:index-missed-write")).total == 1  # read afresh


def test_registries_that_search_themselves_have_no_index(tmp_path, start):
    with Registry.open(tmp_path / "r.db", create=True) as embedded:
        assert embedded.broker_index is None and embedded.read_only().broker_index is None
    with registry.open(start(seeded(tmp_path / "s.db"), admin_only=False)) as over_serve:
        assert over_serve.broker_index is None


def test_a_read_only_view_may_follow_and_refresh_the_index(sample_url, tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    with registry.open(sample_url) as remote:
        view = remote.read_only()
        assert view.broker_index is not None and view.broker_index.refresh() is not None
        remote._index.wait(timeout=60)  # type: ignore[attr-defined]
        assert view.broker_index.status().ready  # type: ignore[union-attr]
        assert view.broker_index.cancel() is not None


def test_the_cli_indexes_with_progress_and_searches(sample_url, tmp_path, monkeypatch, capsys):
    _fresh_cache(monkeypatch, tmp_path)
    assert main(["index", "--url", sample_url]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("done: 47 of 47 topics read") and f"{INDEX_WORKERS} in flight" in out
    assert "indexing:" in err
    assert main(["search", "field:currency", "--url", sample_url]) == 0
    out, err = capsys.readouterr()
    assert "persistent://acme/orders/order-created\tAVRO" in out and "of 8 topics" in err
    assert main(["index", "--db", str(seeded(tmp_path / "file.db"))]) == 0
    assert "searches without an index" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad:
        main(["search", "--limit", "0", "--url", sample_url])
    assert bad.value.code == 2 and "--limit: must be at least 1, got 0" in capsys.readouterr().err


def test_a_cache_folder_that_cannot_be_made_is_one_clear_error(sample_url, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV_VAR, str(blocker / "cache"))
    with registry.open(sample_url) as remote:
        assert remote.broker_index.status().cached == 0  # type: ignore[union-attr]  # asking creates nothing
        with pytest.raises(StorageError, match=f"cannot use the search index cache .*{CACHE_ENV_VAR}"):
            remote.search_topics()
        assert remote.tenants()  # the registry itself still answers
