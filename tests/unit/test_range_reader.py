"""A SQL registry read by key range (registry/storage/_ranges.py): the ranges of a plan cover every topic once,
their bundles hold exactly the records an export writes for those topics, and a read says which state it saw:
one shared state on PostgreSQL (an exported snapshot), a change token compared on SQLite."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from registry import Registry, RegistryNotFoundError, SchemaInfo, SchemaType, StorageError, TopicName, seed_sample_data
from registry._snapshot import snapshot_records
from registry.storage._ranges import KeyRange, RangeReader


def _seeded(location: str) -> str:
    reg = Registry.open(location, create=True)
    seed_sample_data(reg)
    reg.close()
    return location


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _seeded(str(tmp_path_factory.mktemp("ranges") / "sample.db"))


def _exported(location: str) -> Counter[str]:
    """The export's topic, version and client records (one JSON text each), and namespace records once per
    topic that names them: what the bundles of every range must hold together."""
    with Registry.open(location) as reg:
        records = list(snapshot_records(reg, audit=False))
    namespaces = {r["name"]: r for r in records if r["kind"] == "namespace"}
    found: Counter[str] = Counter()
    for record in records:
        if record["kind"] in ("topic", "version", "client"):
            found[json.dumps(record, sort_keys=True)] += 1
    keys = {TopicName.parse(r["name"]).schema_id: r["namespace"] for r in records if r["kind"] == "topic"}
    for namespace in keys.values():
        found[json.dumps(namespaces[namespace], sort_keys=True)] += 1
    return found


def _read(location: str, per_range: int, chunk: int, within: KeyRange | None = None) -> tuple[Counter[str], list[str]]:
    found: Counter[str] = Counter()
    keys: list[str] = []
    with RangeReader(location) as reader, reader.pinned() as state:
        plan = reader.plan(per_range, within)
        for key_range, _ in plan:
            with reader.reading(state) as read:
                assert read.token == state.token
                for bundle in read.bundles(key_range, chunk=chunk):
                    assert bundle.key in key_range and bundle.namespace == bundle.key.rsplit("/", 1)[0]
                    keys.append(bundle.key)
                    for record in bundle.records:
                        found[json.dumps(record, sort_keys=True)] += 1
    return found, keys


@pytest.mark.parametrize(("per_range", "chunk"), [(1, 1), (7, 3), (1000, 500)])
def test_the_ranges_of_a_plan_hold_exactly_what_an_export_holds(sample_file: str, per_range: int, chunk: int) -> None:
    found, keys = _read(sample_file, per_range, chunk)
    assert found == _exported(sample_file)
    assert keys == sorted(keys) and len(keys) == len(set(keys))  # every key once, in key order
    # live-positions is non-persistent://, order-created persistent://: both read by their schema id
    assert {"globex/iot/live-positions", "acme/orders/order-created"} <= set(keys)


def test_a_plan_counts_histories_and_reads_no_history(sample_file: str) -> None:
    with RangeReader(sample_file) as reader:
        plan = reader.plan(10)
        assert [n for _, n in plan] == [10, 10, 10, 10, 7]
        assert plan[0][0].low is None and plan[-1][0].high is None
        assert all(a.high == b.low for (a, _), (b, _) in zip(plan, plan[1:], strict=False))
        one = reader.plan(2, KeyRange.of(namespace="acme/orders"))
    assert one[0][0].low == "acme/orders/" and one[-1][0].high == "acme/orders0"
    assert sum(n for _, n in one) == 8
    _, keys = _read(sample_file, 3, 2, KeyRange.of(tenant="initech"))
    assert keys and all(k.startswith("initech/") for k in keys)


def test_a_write_after_the_plan_shows_in_the_token_on_sqlite(tmp_path: Path) -> None:
    location = _seeded(str(tmp_path / "r.db"))
    with RangeReader(location) as reader, reader.pinned() as state:
        with Registry.open(location) as reg:
            reg.register("acme/orders/brand-new", SchemaInfo(SchemaType.STRING, ""))
        with reader.reading(state) as read:
            assert read.token > state.token  # the reader says it read a newer state than the plan's
            keys = [b.key for b in read.bundles(KeyRange.of(namespace="acme/orders"))]
    assert "acme/orders/brand-new" in keys


def test_only_sql_registries_that_exist_are_read(tmp_path: Path) -> None:
    with pytest.raises(RegistryNotFoundError, match="no registry file"):
        RangeReader(str(tmp_path / "missing.db"))
    assert not (tmp_path / "missing.db").exists()  # never created
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(RegistryNotFoundError, match="no registry in"):
        RangeReader(str(tmp_path / "empty.db"))
    with pytest.raises(StorageError, match="only a SQLite file or a PostgreSQL database"):
        RangeReader("memory:")


@pytest.mark.postgres
def test_postgresql_readers_share_one_exported_state(postgres_url: str) -> None:
    location = _seeded(postgres_url)
    found, _ = _read(location, 5, 2)
    assert found == _exported(location)
    reader = RangeReader(location)
    with reader.pinned() as state:
        assert state.snapshot
        with Registry.open(location) as reg:
            reg.register("acme/orders/brand-new", SchemaInfo(SchemaType.STRING, ""))
        other: Any = RangeReader(location)  # as a task in another process would
        with other.reading(state) as read:
            assert read.token == state.token  # the pinned state, not the newer commit
            assert "acme/orders/brand-new" not in [b.key for b in read.bundles(KeyRange.of(namespace="acme/orders"))]
        with other.reading() as latest:
            assert latest.token > state.token
    with pytest.raises(StorageError, match="at snapshot"), other.reading(state):
        pass  # the planner let go of the state: a late reader fails, never reads another state
    other.close()
    reader.close()
