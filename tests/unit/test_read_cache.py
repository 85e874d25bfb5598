"""The embedded registry's read cache (registry/storage/_read_cache.py) never answers with something a write replaced.

Why: histories and namespace policies are served from memory between writes (the server's hot reads and
every check re-read them), while the file is shared by other processes and threads. A stale answer here would
be a wrong verdict or a version that seems lost, so every way a write can reach the file is exercised: this
object, another object on the same file (another process's view), force deletes that restart numbering,
rolled-back batches and threads racing a writer.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from registry import CompatibilityStrategy, IncompatibleSchemaError, Registry, SchemaInfo
from registry.storage._read_cache import MISSING, ReadCache
from schemas import avro_info, field, record

TOPIC = "persistent://acme/shop/orders"


def version(extra: int) -> SchemaInfo:
    fields = [field("id", "string")] + [field(f"f{k}", ["null", "long"], None) for k in range(extra)]
    return avro_info(record("Order", fields, "acme.shop"))


def latest(reg: Registry) -> int:
    return reg.history(TOPIC)[-1].version


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "registry.db"


def test_own_writes_are_read_back_at_once(path: Path) -> None:
    with Registry.open(path, create=True) as reg:
        for k in range(5):
            assert reg.register(TOPIC, version(k)).version == k
            assert latest(reg) == k and reg.get(TOPIC).version == k


def test_another_writer_on_the_same_file_is_seen(path: Path) -> None:
    with Registry.open(path, create=True) as mine, Registry.open(path, create=True) as theirs:
        mine.register(TOPIC, version(0))
        assert latest(mine) == 0  # cached now
        theirs.register(TOPIC, version(1))
        assert latest(mine) == 1
        theirs.set_namespace_policy("acme/shop", compatibility=CompatibilityStrategy.FORWARD)
        assert mine.namespace_policy("acme/shop").compatibility is CompatibilityStrategy.FORWARD
        # our own next write must not hide theirs: theirs moved the token between two of ours
        theirs.register(TOPIC, version(2))
        mine.register("persistent://acme/shop/other", version(0))
        assert latest(mine) == 2


def test_force_delete_restarts_numbering_without_stale_versions(path: Path) -> None:
    with Registry.open(path, create=True) as mine, Registry.open(path, create=True) as theirs:
        for k in range(3):
            mine.register(TOPIC, version(k))
        assert len(theirs.history(TOPIC)) == 3
        mine.delete(TOPIC, force=True)
        mine.register(TOPIC, version(7))
        for reg in (mine, theirs):
            history = reg.history(TOPIC)
            assert [e.version for e in history] == [0] and history[0].data == version(7).schema.encode()


def test_a_batch_sees_its_own_writes_and_a_rolled_back_batch_leaves_nothing(path: Path) -> None:
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, version(0))
        assert latest(reg) == 0
        with pytest.raises(RuntimeError), reg.batch():
            reg.register(TOPIC, version(1))
            assert latest(reg) == 1  # uncommitted, read inside the batch
            raise RuntimeError("undo the batch")
        assert latest(reg) == 0
        with reg.batch():
            reg.register(TOPIC, version(1))
        assert latest(reg) == 1


def test_a_refused_write_changes_nothing_cached(path: Path) -> None:
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, version(1))
        before = reg.history(TOPIC)
        with pytest.raises(IncompatibleSchemaError):
            reg.register(TOPIC, avro_info(record("Order", [field("id", "int")], "acme.shop")))
        assert reg.history(TOPIC) == before


def test_readers_racing_a_writer_never_read_an_acknowledged_version_as_missing(path: Path) -> None:
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, version(0))
        stop = threading.Event()
        errors: list[BaseException] = []

        def read() -> None:
            try:
                while not stop.is_set():
                    reg.history(TOPIC)
                    reg.get(TOPIC)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for thread in readers:
            thread.start()
        try:
            for k in range(1, 60):
                assert reg.register(TOPIC, version(k)).version == k
                assert latest(reg) == k, f"version {k} acknowledged but not read back"
        finally:
            stop.set()
            for thread in readers:
                thread.join()
        assert not errors


def test_a_store_that_raced_a_commit_is_dropped() -> None:
    cache = ReadCache()
    assert cache.lookup(5, "a") == (MISSING, 1)
    cache.store(1, "a", "old", 10)
    assert cache.lookup(5, "a")[0] == "old"
    _, generation = cache.lookup(5, "b")
    cache.committed(6, {"b"})  # a write committed while "b" was being read
    cache.store(generation, "b", "read before the commit", 10)
    assert cache.lookup(6, "b")[0] is MISSING
    assert cache.lookup(6, "a")[0] == "old"  # untouched by that commit
    cache.committed(8, set())  # a gap: another process committed 7
    assert cache.lookup(8, "a")[0] is MISSING


def _cache_at(token: int, **entries: str) -> ReadCache:
    cache = ReadCache()
    _, generation = cache.lookup(token, "")
    for key, value in entries.items():
        cache.store(generation, key, value, 1)
    return cache


def test_a_read_that_sees_this_process_commit_before_the_writer_reports_it_drops_only_what_it_wrote() -> None:
    # The writer thread announces change 6 before COMMIT; a reader thread reads token 6 before `committed`.
    cache = _cache_at(5, a="A", b="B")
    cache.committing(6, {"a"})
    assert cache.lookup(6, "a")[0] is MISSING
    assert cache.lookup(6, "b")[0] == "B"  # not everything: the server's hot reads keep their entries
    cache.committed(6, {"a"})
    assert cache.lookup(6, "b")[0] == "B"


def test_a_read_from_before_the_last_commit_misses_and_drops_nothing() -> None:
    cache = _cache_at(5, a="A", b="B")
    cache.committing(6, {"a"})
    cache.committed(6, {"a"})
    assert cache.lookup(5, "b")[0] is MISSING  # its token was read before the commit
    assert cache.lookup(6, "b")[0] == "B"


def test_an_announced_commit_that_failed_is_forgotten() -> None:
    cache = _cache_at(5, a="A", b="B")
    cache.committing(6, {"a"})
    cache.committed(None, {"a"})
    # Change 6 is then another process's, which may have changed anything.
    assert cache.lookup(6, "b")[0] is MISSING


def test_the_cache_keeps_within_its_byte_budget_oldest_first() -> None:
    cache = ReadCache(max_bytes=100)
    _, generation = cache.lookup(1, "x")
    for key in "abcde":
        cache.store(generation, key, key.upper(), 30)
    assert [cache.lookup(1, k)[0] for k in "abcde"] == [MISSING, MISSING, "C", "D", "E"]
    cache.store(generation, "huge", "H", 101)
    assert cache.lookup(1, "huge")[0] is MISSING
