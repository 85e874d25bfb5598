"""The first migration users meet: a registry written by the release before proposals (tests/fixtures/) is read
as it is, changing nothing, and migrated in place by its first write, in that write's transaction; a newer
format is refused in one line. SQLite and PostgreSQL."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

import registry
from registry import Actor, Registry, Role, SchemaInfo, SchemaType, StorageError
from registry.storage._sqlite import SCHEMA_VERSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TOPIC = "persistent://acme/orders/order-created"
ALICE = Actor("alice", Role.PRODUCER)


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows and the format: what "changes nothing" compares."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "registry.db"
    shutil.copy(FIXTURES / "registry-format-3.db", path)
    with sqlite3.connect(path) as db:  # as this project's files are on disk: WAL
        db.execute("PRAGMA journal_mode = WAL")
    return path


def test_an_old_file_is_read_as_it_is_and_changes_nothing(old_file: Path) -> None:
    before = _dump(old_file)
    assert before["meta"] and ("schema_version", "3") in before["meta"] and "proposals" not in before
    with registry.open(old_file) as reg:
        assert reg.pulsar_version == "4.0"
        assert [v.version for v in reg.history(TOPIC)] == [0, 1]
        assert reg.topic_policy(TOPIC).compatibility == "FULL" and len(reg.clients(TOPIC)) == 1
        assert reg.proposals.list() == [] and reg.audit_trail()[0].user == "alice"
        assert reg.search_topics().total == 2
    with registry.open(old_file, read_only=True) as view:
        assert view.get(TOPIC).version == 1
    assert _dump(old_file) == before
    assert not list(old_file.parent.glob("*.backup"))


def test_the_first_write_migrates_in_place_and_keeps_everything(old_file: Path) -> None:
    before = _dump(old_file)
    with Registry.open(old_file) as reg:
        made = reg.proposals.propose_schema(TOPIC, reg.get(TOPIC).info, title="same again", actor=ALICE)
        assert made.id == 1
    after = _dump(old_file)
    assert ("schema_version", str(SCHEMA_VERSION)) in after["meta"] and len(after["proposals"]) == 1
    for table in ("tenants", "namespaces", "topics", "topic_policies", "schemas", "clients", "heads"):
        assert after[table] == before[table], table
    assert not list(old_file.parent.glob("*.backup"))  # the copy lasts only until the migration commits
    with Registry.open(old_file) as again:
        assert again.proposals.get(1).title == "same again"


def test_a_refused_first_write_still_migrates_with_its_audit_line(old_file: Path) -> None:
    """A refusal commits its audit line, and the migration with it: what a transaction leaves is whole."""
    with Registry.open(old_file) as reg, pytest.raises(registry.InvalidSchemaError):
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema="{broken"))
    with sqlite3.connect(old_file) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_a_migration_that_fails_leaves_the_old_file_whole_and_its_copy_beside_it(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _dump(old_file)

    def broken(self: object, db: object, found: int) -> None:
        raise sqlite3.OperationalError("disk I/O error")  # what a failing disk answers halfway

    monkeypatch.setattr("registry.storage._sqlite.SqliteDialect.migrate", broken)
    old_file.chmod(0o600)
    with Registry.open(old_file) as reg, pytest.raises(StorageError, match="disk I/O error"):
        reg.create_tenant("other")
    assert _dump(old_file) == before
    (copy,) = old_file.parent.glob("*.format-3.backup")
    assert _dump(copy) == before
    assert copy.stat().st_mode & 0o777 == 0o600  # no more readable than the file it copies
    assert [p.name for p in old_file.parent.iterdir() if ".migrating-" in p.name] == []


def test_a_newer_format_is_refused_in_one_line(old_file: Path) -> None:
    with sqlite3.connect(old_file) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StorageError) as refused:
        registry.open(old_file)
    message = str(refused.value)
    assert "newer release (storage format 99" in message and f"up to {SCHEMA_VERSION}" in message
    assert "\n" not in message


# --- reading changes no byte ---------------------------------------------------------------------------------


def _read_everything(path: Path) -> None:
    with registry.open(path) as reg:
        assert [v.version for v in reg.history(TOPIC)] == [0, 1]
        assert reg.proposals.list() == [] and reg.search_topics().total == 2 and reg.audit_trail()
        assert reg.topic_policy(TOPIC).compatibility == "FULL"
    with registry.open(path, read_only=True) as view:
        assert view.get(TOPIC).version == 1


def _journal(path: Path) -> bytes:
    """The file header's write and read versions: 1 1 in rollback-journal mode, 2 2 in WAL mode."""
    return path.read_bytes()[18:20]


@pytest.mark.parametrize("kind", ["format 3, as the release before wrote it", "the current format, rollback journal"])
def test_reading_a_rollback_journal_file_changes_none_of_its_bytes_until_the_first_write(
    tmp_path: Path, kind: str
) -> None:
    """docs/guide/serve.md: an older file is read as it is. Opening used to put it in WAL mode, which rewrites
    its header."""
    path = tmp_path / "registry.db"
    shutil.copy(FIXTURES / "registry-format-3.db", path)
    if kind.startswith("the current"):
        with Registry.open(path) as reg:
            reg.create_tenant("migrated")  # the first write: the current format, and WAL
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)  # as `import` leaves one
    before = path.read_bytes()
    assert _journal(path) == b"\x01\x01"
    _read_everything(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["registry.db"]
    with Registry.open(path) as reg:
        reg.create_tenant("written")
    assert _journal(path) == b"\x02\x02"  # WAL from the first write on
    with Registry.open(path) as reg:
        assert "written" in reg.tenants() and [v.version for v in reg.history(TOPIC)] == [0, 1]


# --- the migration's copy -----------------------------------------------------------------------------------


@pytest.mark.parametrize("planted", ["a symlink to another file", "a dangling symlink", "a file"])
def test_the_copy_before_migrating_never_goes_through_a_path_that_exists(old_file: Path, planted: str) -> None:
    """The copy's name is predictable: whatever is already there (a symlink planted to have the copy overwrite
    its target, or a copy an interrupted migration left) is refused and left alone, and nothing is migrated."""
    backup = old_file.with_name("registry.db.format-3.backup")
    victim = old_file.parent / "victim.txt"
    if planted == "a file":
        backup.write_bytes(b"someone's file")
    else:
        if planted.startswith("a symlink to"):
            victim.write_bytes(b"someone's file")
        backup.symlink_to(victim)
    before = _dump(old_file)
    with Registry.open(old_file) as reg, pytest.raises(StorageError) as refused:
        reg.create_tenant("other")
    message = str(refused.value)
    assert f"{str(backup)!r} is in the way" in message and "nothing was changed" in message and "\n" not in message
    assert _dump(old_file) == before
    if planted == "a file":
        assert backup.read_bytes() == b"someone's file"
    else:
        assert backup.is_symlink() and os.readlink(backup) == str(victim)
        assert victim.read_bytes() == b"someone's file" if planted.startswith("a symlink to") else not victim.exists()
    assert sorted(p.name for p in old_file.parent.iterdir() if ".migrating-" in p.name) == []
    backup.unlink()  # moved away, as the message says: the next write migrates
    with Registry.open(old_file) as reg:
        reg.create_tenant("other")
    assert ("schema_version", str(SCHEMA_VERSION)) in _dump(old_file)["meta"]
    assert not backup.exists() and not backup.is_symlink()


# --- a stored format that no release wrote ------------------------------------------------------------------


@pytest.mark.parametrize("marker", ["abc", "4.5", "", "-1", "0", " 3", "3\n", "٣", "9" * 5000])
def test_a_stored_format_that_is_not_a_whole_number_from_1_is_refused_in_one_line(old_file: Path, marker: str) -> None:
    with sqlite3.connect(old_file) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (marker,))
    before = old_file.read_bytes()
    for opened in ({}, {"read_only": True}):
        with pytest.raises(StorageError) as refused:
            registry.open(old_file, **opened)
        message = str(refused.value)
        assert str(old_file) in message and repr(marker[:40])[:-1] in message and "not a whole number >= 1" in message
        assert "\n" not in message
    assert old_file.read_bytes() == before


@pytest.mark.postgres
@pytest.mark.parametrize("marker", ["abc", "-1"])
def test_a_postgresql_stored_format_that_is_not_a_whole_number_is_refused(postgres_server: str, marker: str) -> None:
    import psycopg

    import postgres

    dsn = postgres.fresh_database(postgres_server)
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute((FIXTURES / "registry-postgres-format-1.sql").read_text())
        db.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (marker,))
    with pytest.raises(StorageError) as refused:
        registry.open(dsn)
    assert "the registry database postgresql://" in str(refused.value) and repr(marker) in str(refused.value)
    with psycopg.connect(dsn) as db:
        assert db.execute("SELECT to_regclass('proposals') IS NULL").fetchone() == (True,)  # nothing migrated


@pytest.mark.postgres
def test_an_old_postgresql_registry_is_read_then_migrated_by_its_first_write(postgres_server: str) -> None:
    import psycopg

    import postgres

    dsn = postgres.fresh_database(postgres_server)
    with psycopg.connect(dsn, autocommit=True) as db:
        db.execute((FIXTURES / "registry-postgres-format-1.sql").read_text())

    def format_and_tables() -> tuple[str, bool]:
        with psycopg.connect(dsn) as db:
            (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            (has,) = db.execute("SELECT to_regclass('proposals') IS NOT NULL").fetchone()
            return str(version), bool(has)

    with registry.open(dsn) as reg:
        assert [v.version for v in reg.history(TOPIC)] == [0, 1] and reg.proposals.list() == []
    assert format_and_tables() == ("1", False)  # reading changed nothing
    with registry.open(dsn) as reg:
        reg.proposals.propose_schema(TOPIC, reg.get(TOPIC).info, title="first", actor=ALICE)
        assert [p.title for p in reg.proposals.list()] == ["first"]
    assert format_and_tables() == ("2", True)
