"""The embedded SQLite store: durable, shared safely by processes, and clear about unusable files."""

from __future__ import annotations

import ast
import json
import multiprocessing
import re
import sqlite3
from pathlib import Path

import pytest

from registry import CompatibilityStrategy, Registry, RegistryNotFoundError, SchemaInfo, SchemaType, StorageError
from registry._location import remote_url

TOPIC = "persistent://acme/race/orders"
PROCESSES, PUTS = 4, 15


def _schema(process: int, i: int) -> str:
    fields = [{"name": "id", "type": "long"}, {"name": f"p{process}_{i}", "type": "string", "default": ""}]
    return json.dumps({"type": "record", "name": "Order", "fields": fields})


def _register_many(
    path: str, process: int, start: multiprocessing.synchronize.Event, out: multiprocessing.Queue
) -> None:
    reg = Registry.open(path, create=True)
    start.wait()
    acked = []
    for i in range(PUTS):
        text = _schema(process, i)
        acked.append((reg.register(TOPIC, SchemaInfo(SchemaType.AVRO, text)).version, text))
        # every process also re-posts a shared schema: concurrent identical puts must yield one version
        acked.append((reg.register(TOPIC, SchemaInfo(SchemaType.AVRO, _schema(99, 0))).version, _schema(99, 0)))
    reg.close()
    out.put(acked)


@pytest.mark.slow
def test_processes_registering_at_once_never_duplicate_or_skip_a_version(tmp_path: Path) -> None:
    path = str(tmp_path / "registry.db")
    reg = Registry.open(path, create=True)
    reg.set_namespace_policy("acme/race", compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=_register_many, args=(path, p, start, out)) for p in range(PROCESSES)]
    for w in workers:
        w.start()
    start.set()
    acked = [item for _ in workers for item in out.get(timeout=120)]
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0

    history = reg.history(TOPIC)
    versions = [v.version for v in history]
    assert versions == list(range(len(versions))), "versions are dense and start at 0"
    assert len(versions) == PROCESSES * PUTS + 1, "each distinct schema stored once, the shared one too"
    stored = {v.version: v.data.decode() for v in history}
    for version, text in acked:
        assert stored[version] == text, f"acknowledged version {version} holds what was registered"
    assert len({v for v, t in acked if t == _schema(99, 0)}) == 1


def test_a_registry_file_keeps_everything_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "registry.db"
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(SchemaType.STRING, ""), user="alice")
        reg.set_namespace_policy("acme/race", compatibility="BACKWARD", allow_auto_update=False)
        reg.set_topic_policy(TOPIC, compatibility="FULL_TRANSITIVE")
        reg.connect_consumer(TOPIC, None, subscription="audit")
        reg.delete(TOPIC)
    with Registry.open(path, create=True) as reg:
        assert [(v.version, v.deleted, v.user) for v in reg.history(TOPIC, include_deleted=True)] == [
            (0, False, "alice"),
            (1, True, ""),
        ]
        assert reg.namespace_policy("acme/race").allow_auto_update is False
        assert reg.topic_policy(TOPIC).compatibility is CompatibilityStrategy.FULL_TRANSITIVE
        assert [c.subscription for c in reg.clients(TOPIC)] == ["audit"]
        assert reg.tenants() == ["acme"] and reg.topics("acme/race") == [TOPIC]


def test_a_file_that_is_not_a_registry_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(StorageError, match="notes.db"):
        Registry.open(path)


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "registry.db"
    Registry.open(path, create=True).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="newer release"):
        Registry.open(path)


def test_equality_digests_of_an_older_equality_key_are_recomputed(tmp_path: Path) -> None:
    """A file written before dedup followed Schema.equals holds digests of the old key (which counted an enum's
    default): reopening forgets them, so an enum-default-only change is still found to be a duplicate."""
    path = tmp_path / "registry.db"

    def enum_schema(default: str) -> SchemaInfo:
        enum = {"type": "enum", "name": "E", "symbols": ["A", "B"], "default": default}
        return SchemaInfo(
            SchemaType.AVRO, json.dumps({"type": "record", "name": "R", "fields": [{"name": "e", "type": enum}]})
        )

    with Registry.open(path, create=True) as reg:
        assert reg.register(TOPIC, enum_schema("A")).version == 0
    with sqlite3.connect(path) as db:  # as an older version left it: another digest, no equality mark
        db.execute("UPDATE fingerprints SET equality = zeroblob(32)")
        db.execute("DELETE FROM meta WHERE key = 'equality_form'")
    with Registry.open(path) as reg:
        assert reg.register(TOPIC, enum_schema("B")).version == 0
        assert len(reg.history(TOPIC)) == 1


def test_a_directory_is_not_a_registry_file(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="directory"):
        Registry.open(tmp_path)


def test_the_core_imports_no_ui_web_or_spark_package() -> None:
    # architecture.md: the core imports no streamlit, fastapi, pydantic or pyspark. httpx (the remote
    # registry) and altair/pandas (registry.views.charts/tables, never imported by the facade) are allowed.
    forbidden = {"streamlit", "fastapi", "pydantic", "pyspark", "starlette", "uvicorn"}
    core = Path(__file__).resolve().parents[2] / "registry"
    for module in core.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{module.name} imports {name}"


def test_a_missing_file_is_not_made_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(RegistryNotFoundError, match=f"no registry at {re.escape(str(path))}"):
        Registry.open(path)
    assert not path.exists()
    Registry.open(path, create=True).close()
    Registry.open(path).close()  # now it exists


@pytest.mark.parametrize(
    "location",
    ["ftp://x", "HTTPX://host", "file:///etc/passwd", "  gopher://x  "],
    ids=["ftp", "unknown scheme", "file url", "spaced other scheme"],
)
def test_a_url_of_another_scheme_is_refused_not_taken_for_a_file(tmp_path: Path, location: str) -> None:
    with pytest.raises(StorageError, match="only http:// and https://"):
        Registry.open(location, create=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("location", "url"),
    [
        ("HTTP://host:8080", "http://host:8080"),
        ("  https://host/admin/v2 ", "https://host/admin/v2"),
        ("Https://h", "https://h"),
        ("relative/file.db", None),
        ("host:8080", None),
    ],
    ids=["upper-case scheme", "spaces around", "mixed case", "a path", "host and port is a file name"],
)
def test_remote_url_reads_the_scheme_in_any_case(location: str, url: str | None) -> None:
    assert remote_url(location) == url


# --- a broker's topic stats, as the remote registry reads them (issue 22) ----------------------------------

PULSAR_STATS = {  # the shape of Pulsar 3.x TopicStatsImpl, trimmed of rates and counters
    "msgRateIn": 12.5,
    "publishers": [
        {
            "producerId": 0,
            "producerName": "orders-api-0-17",
            "address": "/10.0.0.5:53122",
            "connectedSince": "2026-11-20T08:15:02.113Z",
            "clientVersion": "Pulsar-Java-v3.3.1",
            "metadata": {},
        }
    ],
    "subscriptions": {
        "fulfilment": {
            "type": "Shared",
            "msgBacklog": 4,
            "consumers": [
                {"consumerName": "c-2", "address": "/10.0.0.9:4100", "connectedSince": "2026-11-20T08:16:00Z"},
                {"consumerName": "c-1", "address": "/10.0.0.8:4100", "connectedSince": "2026-11-20T08:16:01Z"},
            ],
        },
        "audit": {"type": "Exclusive", "consumers": []},
    },
    "replication": {},
}


def test_connected_clients_are_read_from_pulsars_topic_stats() -> None:
    from registry import ClientRole
    from registry.remote._backend import connected_from_stats

    found = connected_from_stats("persistent://acme/orders/order-created", PULSAR_STATS)
    assert [(c.role, c.subscription, c.name) for c in found] == [
        (ClientRole.CONSUMER, "fulfilment", "c-1"),
        (ClientRole.CONSUMER, "fulfilment", "c-2"),
        (ClientRole.PRODUCER, "", "orders-api-0-17"),
    ]
    assert found[0].subscription_type == "Shared" and found[0].address == "/10.0.0.8:4100"
    assert found[2].client_version == "Pulsar-Java-v3.3.1" and found[2].connected_since == "2026-11-20T08:15:02.113Z"
    assert connected_from_stats("t", {"publishers": [], "subscriptions": {}}) == []


@pytest.mark.parametrize("body", [[], "stats", {"publishers": {}, "subscriptions": {}}, {"subscriptions": []}])
def test_what_is_not_topic_stats_is_a_storage_error_naming_it(body: object) -> None:
    from registry import StorageError
    from registry.remote._backend import connected_from_stats

    with pytest.raises(StorageError, match="stats of t"):
        connected_from_stats("t", body)
