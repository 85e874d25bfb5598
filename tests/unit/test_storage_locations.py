"""Storage by name, as Pulsar plugs in a SchemaStorageFactory: every location form opens the storage it names,
PostgreSQL behaves as the SQLite file does (same exports, policies in force across handles at once), and a
bad location or factory is one clear error naming it."""

from __future__ import annotations

import io
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import registry
from cli.main import main
from registry import (
    CompatibilityStrategy,
    Registry,
    RegistryNotFoundError,
    SchemaInfo,
    SchemaType,
    StorageError,
    export_snapshot,
    import_snapshot,
    seed_sample_data,
)
from registry._location import LocationKind, locate, names_remote, parse_location

CONNECTED_AT = r'"connected_at":\d+'
SCHEMA = '{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}'
WIDER = '{"type":"record","name":"R","fields":[{"name":"a","type":"string"},{"name":"b","type":"int"}]}'


def _export(reg: Registry) -> str:
    out = io.StringIO()
    export_snapshot(reg, out, audit=False)
    return out.getvalue()


@pytest.fixture(scope="module")
def sqlite_export(tmp_path_factory: pytest.TempPathFactory) -> str:
    reg = Registry.open(tmp_path_factory.mktemp("sqlite") / "r.db", create=True)
    seed_sample_data(reg)
    try:
        return _export(reg)
    finally:
        reg.close()


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [("registry.db", "sqlite", "registry.db"), ("sqlite:///rel/r.db", "sqlite", "rel/r.db"),
     ("sqlite:////abs/r.db", "sqlite", "/abs/r.db"), ("memory:", "memory", ""),
     ("postgresql://u:pw@h:5/db", "postgresql", "postgresql://u:pw@h:5/db"),
     ("postgres://h/db", "postgresql", "postgres://h/db"), ("my_pkg.store:make", "factory", "my_pkg.store:make")],
)  # fmt: skip
def test_locations_name_their_storage(text: str, kind: str, target: str) -> None:
    location = parse_location(text)
    assert (location.kind, location.target) == (kind, target)
    assert "pw" not in location.shown


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("sqlite://x.db", "sqlite:///relative/path"),
        ("mongo://h/db", "no storage is registered for mongo://"),
    ],
)
def test_bad_locations_are_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(StorageError, match=message):
        parse_location(text)


@pytest.mark.parametrize(
    ("text", "url"), [("http://h:8080", "http://h:8080"), ("  HTTPS://h/admin ", "https://h/admin")]
)
def test_a_url_locates_a_remote_registry_and_is_no_storage(text: str, url: str) -> None:
    location = locate(text)
    assert (location.kind, location.target, location.shown) == (LocationKind.REMOTE, url, url)
    assert names_remote(text)
    with pytest.raises(StorageError, match="is a remote registry, not a storage"):
        parse_location(text)


@pytest.mark.parametrize("text", ["registry.db", "sqlite:///r.db", "memory:", "postgres://h/db", "my_pkg.store:make"])
def test_a_storage_locates_as_it_parses(text: str) -> None:
    assert locate(text) == parse_location(text)
    assert not names_remote(text)
    assert locate(text).kind.sql is (locate(text).kind in (LocationKind.SQLITE, LocationKind.POSTGRESQL))


@pytest.mark.parametrize("text", ["", "ftp://x", "htp://host", "file:///etc/passwd"])
def test_only_an_http_url_names_a_remote_registry_and_asking_never_raises(text: str) -> None:
    assert not names_remote(text)


def test_locating_an_unknown_scheme_refuses_it_as_a_bad_url() -> None:
    with pytest.raises(StorageError, match="only http:// and https:// URLs name a remote registry"):
        locate("ftp://x")


@pytest.fixture
def factory_module(tmp_path: Path) -> Iterator[str]:
    """A module of the user's own with storage factories, importable for the test."""
    (tmp_path / "my_store.py").write_text(
        textwrap.dedent(
            """
            from registry.storage._memory import MemoryStorage

            made = []

            def make(location, *, create):
                made.append((location, create))
                return MemoryStorage()

            def broken(location, *, create):
                raise RuntimeError("disk on fire")

            def incomplete(location, *, create):
                return object()
            """
        ),
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    yield "my_store"
    sys.path.remove(str(tmp_path))
    sys.modules.pop("my_store", None)


def test_a_factory_of_the_users_own_makes_the_storage(factory_module: str) -> None:
    reg = Registry.open(f"{factory_module}:make", create=True)
    reg.register("acme/orders/x", SchemaInfo(SchemaType.AVRO, SCHEMA))
    assert reg.get("acme/orders/x").version == 0
    assert sys.modules[factory_module].made == [(f"{factory_module}:make", True)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [("no_such_module_here:make", "cannot import module 'no_such_module_here'"),
     ("my_store:missing", "has no callable 'missing'"),
     ("my_store:broken", "storage factory my_store:broken failed: RuntimeError: disk on fire"),
     ("my_store:incomplete", "returned a object, which lacks history, append")],
)  # fmt: skip
def test_a_bad_factory_is_one_clear_error(factory_module: str, spec: str, message: str) -> None:
    with pytest.raises(StorageError, match=message):
        Registry.open(spec, create=True)


def test_a_package_registers_a_storage_scheme_by_entry_point(factory_module: str, tmp_path: Path) -> None:
    dist = tmp_path / "my_store_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-store-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[pulsar_schema_explorer.storage]\nmystore = my_store:make\n", encoding="utf-8"
    )
    reg = Registry.open("mystore://cluster-a/registry", create=True)
    assert sys.modules[factory_module].made == [("mystore://cluster-a/registry", True)]
    assert reg.tenants() == []
    assert parse_location("mystore://ops:pw@cluster-a/registry").shown == "mystore://ops@cluster-a/registry"


def test_memory_locations_open_an_empty_registry() -> None:
    reg = Registry.open("memory:")
    assert reg.tenants() == [] and reg.location == "memory:"


@pytest.mark.postgres
def test_a_database_without_a_registry_is_not_made_by_a_read(postgres_url: str) -> None:
    with pytest.raises(RegistryNotFoundError, match="no registry in the database"):
        registry.open(postgres_url)
    import psycopg

    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT to_regclass('meta')").fetchone() == (None,)


@pytest.mark.postgres
def test_postgresql_holds_what_sqlite_holds(postgres_url: str, sqlite_export: str) -> None:
    reg = registry.open(postgres_url, create=True)
    try:
        seed_sample_data(reg)
        # recorded clients carry the time the seeding connected them: the one difference two seedings have
        assert re.sub(CONNECTED_AT, "", _export(reg)) == re.sub(CONNECTED_AT, "", sqlite_export)
    finally:
        reg.close()


@pytest.mark.postgres
def test_migration_from_sqlite_to_postgresql_and_back_is_byte_identical(
    postgres_server: str, sqlite_export: str, tmp_path: Path
) -> None:
    import postgres

    into_pg = Registry.open(postgres.fresh_database(postgres_server), create=True)
    import_snapshot(io.StringIO(sqlite_export), into=into_pg)
    from_pg = _export(into_pg)
    into_pg.close()
    back = Registry.open(tmp_path / "back.db", create=True)
    import_snapshot(io.StringIO(from_pg), into=back)
    assert from_pg == sqlite_export and _export(back) == sqlite_export
    back.close()


@pytest.mark.postgres
def test_two_servers_on_one_database_see_each_others_writes_at_once(postgres_url: str) -> None:
    one = registry.open(postgres_url, create=True)
    other = registry.open(postgres_url)
    try:
        one.register("acme/orders/x", SchemaInfo(SchemaType.AVRO, SCHEMA))
        assert other.get("acme/orders/x").version == 0  # cached on `other` from now on
        one.set_namespace_policy("acme/orders", compatibility=CompatibilityStrategy.ALWAYS_INCOMPATIBLE)
        assert other.effective_policy("persistent://acme/orders/x").compatibility.value is (
            CompatibilityStrategy.ALWAYS_INCOMPATIBLE
        )
        refused = other.check("acme/orders/x", SchemaInfo(SchemaType.AVRO, WIDER))
        assert not refused.compatible
        one.set_namespace_policy("acme/orders", compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
        assert other.register("acme/orders/x", SchemaInfo(SchemaType.AVRO, WIDER)).version == 1
        assert [e.version for e in one.history("acme/orders/x")] == [0, 1]
    finally:
        one.close()
        other.close()


@pytest.mark.postgres
def test_an_unreachable_database_is_one_error_without_the_password(postgres_server: str) -> None:
    port = int(postgres_server.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(StorageError) as caught:
        Registry.open(f"postgresql://postgres:s3cret@127.0.0.1:{port}/no_such_db")
    assert "no_such_db" in str(caught.value) and "s3cret" not in str(caught.value)


@pytest.mark.postgres
def test_the_cli_reads_writes_exports_and_imports_a_postgresql_registry(
    postgres_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import postgres

    source, target = postgres.fresh_database(postgres_server), postgres.fresh_database(postgres_server)
    schema = tmp_path / "s.avsc"
    schema.write_text(SCHEMA, encoding="utf-8")
    assert main(["check", "-t", "acme/orders/x", "--file", str(schema), "--db", source]) == 2  # never made by a read
    assert "no registry in" in capsys.readouterr().err
    assert main(["seed", "--db", source]) == 0
    assert main(["upload", "-t", "acme/orders/x", "--file", str(schema), "--db", source]) == 0
    assert main(["export", str(tmp_path / "a.jsonl"), "--db", source, "--no-audit"]) == 0
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", target]) == 0
    assert main(["export", str(tmp_path / "b.jsonl"), "--db", target, "--no-audit"]) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", target]) == 2  # not empty: never merged
    assert "is not empty" in capsys.readouterr().err


@pytest.mark.postgres
def test_the_spark_sources_read_a_postgresql_registry(postgres_url: str) -> None:
    from pipeline._open import load_source

    reg = registry.open(postgres_url, create=True)
    seed_sample_data(reg)
    reg.close()
    with_password = postgres_url.replace("postgres@", "postgres:hunter2@")  # trust auth ignores it
    source = load_source(db=with_password)
    with source.pinned() as planned:
        assert planned.state is not None
        found = source.topic_bundle("persistent://acme/orders/order-created")
    assert found is not None and found.namespace == "acme/orders"
    assert "acme/orders" in source.namespaces()
    assert "hunter2" not in source.label and source.label == f"registry {parse_location(postgres_url).shown}"
    assert "hunter2" not in repr(source) and "hunter2" not in source.target  # tasks carry the target


@pytest.mark.postgres
def test_opening_a_database_as_another_pulsar_line_writes_nothing(postgres_server: str) -> None:
    import postgres

    postgres_url = postgres.fresh_database(postgres_server)
    registry.open(postgres_url, create=True).close()
    before = registry.open(postgres_url)
    token = before.change_token()
    before.close()
    reg = registry.open(postgres_url, pulsar_version="3.0")  # answers as 3.0; the stored line stays unset
    assert reg.pulsar_version == "3.0" and reg.change_token() == token
    reg.close()
    made = Registry.open(postgres.fresh_database(postgres_server), create=True, pulsar_version="3.0")
    assert made.stored_pulsar_version() == "3.0"  # a new registry stores the line it was made as
    made.close()
