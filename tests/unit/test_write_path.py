"""The write path: one commit per facade write (its audit line included), and dedup over stored digests."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry import (
    IncompatibleSchemaError,
    InvalidSchemaError,
    PoisonedHistoryError,
    Registry,
    SchemaInfo,
    SchemaType,
)
from registry._audit import AuditOutcome
from registry.storage._sqlite import SCHEMA_VERSION

TOPIC = "persistent://acme/orders/created"


def _avro(*optional: str, spaced: bool = False) -> SchemaInfo:
    fields = [{"name": "id", "type": "long"}]
    fields += [{"name": name, "type": ["null", "string"], "default": None} for name in optional]
    text = json.dumps({"type": "record", "name": "Order", "fields": fields}, indent=2 if spaced else None)
    return SchemaInfo(SchemaType.AVRO, text)


BREAKING = SchemaInfo(SchemaType.AVRO, json.dumps({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "string"}]}))  # fmt: skip
POISONED = SchemaInfo(SchemaType.AVRO, json.dumps({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long", "default": "not a long"}]}))  # fmt: skip


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with Registry.open(tmp_path / "registry.db", create=True) as registry:
        registry.set_namespace_policy("acme/orders", compatibility="BACKWARD")
        yield registry


def _commits(reg: Registry) -> list[str]:
    """The COMMIT statements this thread's connection runs from now on."""
    seen: list[str] = []
    reg._storage._dialect._connect().set_trace_callback(seen.append)  # type: ignore[attr-defined]
    return seen


def _count(statements: list[str], word: str) -> int:
    return sum(1 for s in statements if s.strip().upper() == word)


@pytest.mark.parametrize(
    "second, outcome",
    [
        pytest.param(_avro("note"), AuditOutcome.OK, id="a new version and its audit line commit together"),
        pytest.param(_avro(spaced=True), AuditOutcome.UNCHANGED, id="a duplicate commits only its audit line"),
        pytest.param(BREAKING, AuditOutcome.REFUSED, id="a refusal commits only its audit line"),
    ],
)
def test_every_registration_is_one_commit(reg: Registry, second: SchemaInfo, outcome: AuditOutcome) -> None:
    reg.register(TOPIC, _avro())
    statements = _commits(reg)
    try:
        reg.register(TOPIC, second)
    except IncompatibleSchemaError:
        pass
    assert _count(statements, "COMMIT") == 1
    assert reg.audit_trail(TOPIC)[0].outcome is outcome
    assert len(reg.history(TOPIC)) == (2 if outcome is AuditOutcome.OK else 1)


def test_a_refusal_leaves_the_change_token_alone_but_is_kept(reg: Registry, tmp_path: Path) -> None:
    reg.register(TOPIC, _avro())
    token = reg.change_token()
    with pytest.raises(IncompatibleSchemaError):
        reg.register(TOPIC, BREAKING, user="mallory")
    assert reg.change_token() == token
    with Registry.open(tmp_path / "registry.db", create=True) as again:
        assert (again.audit_trail()[0].user, again.audit_trail()[0].outcome) == ("mallory", AuditOutcome.REFUSED)


def test_a_batch_commits_its_writes_once(reg: Registry) -> None:
    statements = _commits(reg)
    with reg.batch():
        assert reg.register(TOPIC, _avro()).version == 0
        assert reg.register(TOPIC, _avro("note")).version == 1
        with pytest.raises(IncompatibleSchemaError):
            reg.register(TOPIC, BREAKING)
        assert reg.register(TOPIC, _avro("note", spaced=True)).version == 1
    assert _count(statements, "COMMIT") == 1
    assert [e.outcome for e in reg.audit_trail(TOPIC)][:4] == [
        AuditOutcome.UNCHANGED,
        AuditOutcome.REFUSED,
        AuditOutcome.OK,
        AuditOutcome.OK,
    ]


def test_an_exception_escaping_a_batch_undoes_it(reg: Registry) -> None:
    with pytest.raises(RuntimeError), reg.batch():
        reg.register(TOPIC, _avro())
        raise RuntimeError("the caller gave up")
    assert reg.history(TOPIC) == []


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_dedup_over_digests_answers_as_the_parsed_comparison(storage: str, tmp_path: Path) -> None:
    reg = Registry.in_memory() if storage == "memory" else Registry.open(tmp_path / "r.db", create=True)
    reg.set_namespace_policy("acme/orders", compatibility="ALWAYS_COMPATIBLE")
    assert [reg.register(TOPIC, _avro(*"abc"[:n])).version for n in range(3)] == [0, 1, 2]
    assert reg.register(TOPIC, _avro("a", spaced=True)).version == 1, "an equal schema in other text is a duplicate"
    assert reg.register(TOPIC, SchemaInfo(SchemaType.JSON, _avro("a").schema)).version == 3, "another type is not"
    assert reg.register(TOPIC, SchemaInfo(SchemaType.STRING, "")).version == 4
    assert reg.register(TOPIC, SchemaInfo(SchemaType.STRING, "")).version == 4
    reg.delete(TOPIC)
    assert reg.register(TOPIC, _avro()).version == 6, "versions before a tombstone are not duplicates"


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_a_poisoned_version_still_refuses_later_registrations(storage: str, tmp_path: Path) -> None:
    reg = Registry.in_memory() if storage == "memory" else Registry.open(tmp_path / "r.db", create=True)
    assert reg.register(TOPIC, POISONED).version == 0, "the first version is stored without any parse (§3.3)"
    with pytest.raises(PoisonedHistoryError, match="version 0"):
        reg.register(TOPIC, _avro())
    with pytest.raises(InvalidSchemaError, match="Invalid schema definition"):
        reg.register(TOPIC, POISONED)


def test_a_second_format_file_gets_fingerprints_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    with Registry.open(path, create=True) as reg:
        reg.set_namespace_policy("acme/orders", compatibility="BACKWARD")
        reg.register(TOPIC, _avro())
        reg.register(TOPIC, _avro("a"))
    with sqlite3.connect(path) as db:  # as format 2 left it
        db.execute("DROP TABLE fingerprints")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with Registry.open(path, create=True) as reg:
        assert reg.register(TOPIC, _avro(spaced=True)).version == 0
        assert reg.register(TOPIC, _avro("a", "b")).version == 2
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        rows = db.execute("SELECT version, equality IS NOT NULL FROM fingerprints ORDER BY version").fetchall()
    assert rows == [(0, 1), (1, 1), (2, 1)], "the digests dedup had to compute are kept"
