"""An import into a SQL registry loads in bulk (storage/_bulk_load.py: COPY on PostgreSQL, executemany on
SQLite) and gives the registry row-by-row writes give: the same export byte for byte, the same heads and
fingerprints, the same answers; and it stays all or nothing."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from registry import Registry, SchemaInfo, SchemaType, TopicQuery, export_snapshot, import_snapshot, seed_sample_data
from registry._snapshot import iter_snapshot_records, registry_from_records
from registry.storage._snapshot_values import SnapshotError


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SQLite registry filled through the facade (row by row) and its export."""
    path = tmp_path_factory.mktemp("seeded") / "seeded.db"
    reg = Registry.open(str(path), create=True)
    seed_sample_data(reg)
    out = io.StringIO()
    export_snapshot(reg, out)
    reg.close()
    return path, out.getvalue()


def _export(reg: Registry) -> str:
    out = io.StringIO()
    export_snapshot(reg, out)
    return out.getvalue()


HEADS = "SELECT schema_id, version, type, timestamp, deleted, live, fields FROM heads ORDER BY schema_id"
FINGERPRINTS = "SELECT schema_id, version, type, deleted, sha256 FROM fingerprints ORDER BY schema_id, version"


def test_a_bulk_loaded_file_equals_one_written_row_by_row(seeded: tuple[Path, str], tmp_path: Path) -> None:
    path, text = seeded
    target = tmp_path / "bulk.db"
    reg = import_snapshot(io.StringIO(text), into=Registry.open(str(target), create=True))
    assert _export(reg) == text
    assert reg.get("acme/orders/order-created").version == 13
    reg.close()
    bulk, rows = sqlite3.connect(target), sqlite3.connect(path)
    for sql in (HEADS, FINGERPRINTS):
        assert bulk.execute(sql).fetchall() == rows.execute(sql).fetchall(), sql
    # only the heads' search keys are stored (nothing reads the others); a registration computes its own
    keyed = "SELECT schema_id, version FROM schemas WHERE fields IS NOT NULL AND NOT deleted ORDER BY 1"
    heads = "SELECT schema_id, version FROM heads WHERE NOT deleted"
    assert bulk.execute(keyed).fetchall() == bulk.execute(heads).fetchall()


def test_a_bulk_loaded_registry_takes_registrations(seeded: tuple[Path, str], tmp_path: Path) -> None:
    _, text = seeded
    reg = import_snapshot(io.StringIO(text), into=Registry.open(str(tmp_path / "b.db"), create=True))
    latest = reg.get("acme/orders/order-created")
    assert reg.register("acme/orders/order-created", SchemaInfo(SchemaType.AVRO, latest.data.decode())).version == 13
    hits = reg.search_topics(TopicQuery(text="field:customerId"), limit=100)
    assert any(t.topic.endswith("order-created") for t in hits.items)


def test_a_bad_record_or_a_cut_file_leaves_the_target_empty(seeded: tuple[Path, str], tmp_path: Path) -> None:
    _, text = seeded
    lines = text.splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")  # no end line: found only after the last record
    reg = Registry.open(str(tmp_path / "t.db"), create=True)
    with pytest.raises(SnapshotError, match="without its end line"):
        registry_from_records(iter_snapshot_records(cut), into=reg)
    assert reg.tenants() == [] and reg.change_token() == Registry.open(str(tmp_path / "t.db")).change_token()
    records = list(iter_snapshot_records(io.StringIO(text)))
    topic = next(i for i, r in enumerate(records) if r["kind"] == "topic")
    with pytest.raises(SnapshotError, match="the same topics row twice"):
        registry_from_records([*records[: topic + 1], records[topic], *records[topic + 1 :]], into=reg)
    assert reg.tenants() == []


@pytest.mark.postgres
def test_postgresql_loads_with_copy_and_answers_alike(seeded: tuple[Path, str], postgres_url: str) -> None:
    _, text = seeded
    reg = Registry.open(postgres_url, create=True)
    import_snapshot(io.StringIO(text), into=reg)
    assert _export(reg) == text
    storage: Any = reg._storage
    heads = storage._read(HEADS)
    assert len(heads) == 47 and all(row[6] is not None for row in heads)
    reg.close()
