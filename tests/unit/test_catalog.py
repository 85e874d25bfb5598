"""The topic catalog (Registry.search_topics / topic_summary): search semantics, facets, paging, the cache
that follows every write, broken schemas, and SQLite files of the first format. Both storages."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from registry import (
    CompatibilityStrategy,
    IncompatibleSchemaError,
    InvalidArgumentError,
    Registry,
    SchemaType,
    TopicNotFoundError,
    TopicQuery,
)
from registry._catalog import page_of
from registry.storage._sqlite import SCHEMA_VERSION
from schemas import PB_MESSAGE, PB_STRING, avro_info, field, json_info, kv, primitive, protobuf_native, record

S = CompatibilityStrategy
ORDERS = "persistent://acme/orders"


def _order(*names: str) -> str:
    return record("Order", [field(n, "string", "") for n in names], "com.acme")


def populate(reg: Registry) -> None:
    """A small fleet: AVRO with nested fields, JSON, a primitive, a deleted schema, an empty topic, clients,
    a namespace strategy and a topic override."""
    reg.register(f"{ORDERS}/created", avro_info(_order("order_id", "customer_id")))
    reg.register(f"{ORDERS}/created", avro_info(_order("order_id", "customer_id", "note")))
    nested = record("Ship", [field("address", {"type": "record", "name": "Addr", "fields": [field("city", "string")]})])
    reg.register(f"{ORDERS}/shipped", avro_info(nested))
    reg.register("persistent://acme/billing/invoice", json_info(_order("invoice_id", "amount")))
    reg.register("persistent://acme/billing/raw", primitive(SchemaType.STRING))
    reg.register("persistent://globex/audit/events", avro_info(_order("event_id")))
    reg.delete("persistent://globex/audit/events")
    reg.create_topic("persistent://globex/audit/empty")
    reg.set_namespace_policy("acme/billing", compatibility="BACKWARD")
    reg.set_topic_policy("persistent://acme/billing/raw", compatibility="ALWAYS_COMPATIBLE")
    reg.connect_producer(f"{ORDERS}/created", None, name="svc")
    reg.connect_consumer(f"{ORDERS}/created", None, subscription="audit")


def topics(reg: Registry, **query: object) -> list[str]:
    page = reg.search_topics(TopicQuery(**query), limit=1000)  # type: ignore[arg-type]
    return [row.topic.rsplit("/", 2)[-2] + "/" + row.short_name for row in page.items]


def test_an_empty_registry_has_an_empty_catalog(reg: Registry) -> None:
    page = reg.search_topics()
    assert (page.total, page.items, page.has_more) == (0, (), False)


def test_rows_sum_up_each_topic(reg: Registry) -> None:
    populate(reg)
    created = reg.topic_summary(f"{ORDERS}/created")
    assert (created.schema_type, created.versions, created.latest_version) == (SchemaType.AVRO, 2, 1)
    assert created.fields == ("order_id", "customer_id", "note")
    assert (created.producers, created.consumers, created.has_clients) == (1, 1, True)
    assert (created.strategy, created.strategy_source.value) == (S.FULL, "broker default")
    rows = {r.topic: r for r in reg.search_topics(limit=100).items}
    assert rows[f"{ORDERS}/created"] == created  # the cached catalog and the one-topic read agree
    assert rows[f"{ORDERS}/shipped"].fields == ("address", "address.city")
    events = rows["persistent://globex/audit/events"]
    assert (events.schema_type, events.versions, events.deleted, events.latest_version) == (None, 0, True, None)
    assert rows["persistent://globex/audit/empty"].schema_type is None
    assert reg.topic_summary("persistent://globex/audit/events") == events
    assert rows["persistent://acme/billing/invoice"].strategy is S.BACKWARD
    raw = rows["persistent://acme/billing/raw"]
    assert (raw.strategy, raw.strategy_source.value, raw.fields) == (S.ALWAYS_COMPATIBLE, "topic", ())


def test_rows_come_in_tenant_namespace_topic_order(reg: Registry) -> None:
    populate(reg)
    assert topics(reg) == [
        "billing/invoice",
        "billing/raw",
        "orders/created",
        "orders/shipped",
        "audit/empty",
        "audit/events",
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param({"text": "ORDERS/CR"}, ["orders/created"], id="a plain word matches the name, any case"),
        pytest.param({"text": "customer"}, ["orders/created"], id="a plain word matches a field name"),
        pytest.param({"text": "city"}, ["orders/shipped"], id="nested fields are searched"),
        pytest.param({"text": "field:orders"}, [], id="field: ignores the name"),
        pytest.param({"text": "name:order_id"}, [], id="name: ignores fields"),
        pytest.param({"text": "type:json"}, ["billing/invoice"], id="type: names the latest type"),
        pytest.param({"text": "type:none"}, ["audit/empty", "audit/events"], id="type:NONE is no live schema"),
        pytest.param({"text": "acme id"}, ["billing/invoice", "orders/created"], id="all words must match"),
        pytest.param({"text": "   "}, None, id="blank text matches everything"),
        pytest.param({"tenant": "globex"}, ["audit/empty", "audit/events"], id="tenant"),
        pytest.param({"namespace": "acme/billing"}, ["billing/invoice", "billing/raw"], id="namespace"),
        pytest.param(
            {"schema_types": frozenset({SchemaType.STRING, SchemaType.JSON})},
            ["billing/invoice", "billing/raw"],
            id="schema types",
        ),
        pytest.param({"strategies": frozenset({S.BACKWARD})}, ["billing/invoice"], id="effective strategy"),
        pytest.param({"min_versions": 2}, ["orders/created"], id="at least n live versions"),
        pytest.param({"max_versions": 0}, ["audit/empty", "audit/events"], id="at most n live versions"),
        pytest.param({"has_clients": True}, ["orders/created"], id="with recorded clients"),
        pytest.param({"text": "order", "has_clients": False}, ["orders/shipped"], id="criteria combine with AND"),
    ],
)
def test_search(reg: Registry, query: dict[str, object], expected: list[str] | None) -> None:
    populate(reg)
    assert topics(reg, **query) == (topics(reg) if expected is None else expected)


def test_the_fast_search_agrees_with_the_reference_semantics(reg: Registry) -> None:
    populate(reg)
    rows = reg._catalog.catalog().rows
    texts = ["", "order", "id", "type:avro", "field:address.c", "name:billing", "zzz", "acme type:string"]
    for text, min_versions, clients in itertools.product(texts, (None, 1, 2), (None, True, False)):
        query = TopicQuery(text=text, min_versions=min_versions, has_clients=clients)
        for offset, limit in ((0, 2), (1, 50)):
            assert reg.search_topics(query, offset=offset, limit=limit) == page_of(
                rows, query, offset=offset, limit=limit
            )


def test_pages_and_facets(reg: Registry) -> None:
    populate(reg)
    first = reg.search_topics(offset=0, limit=4)
    second = reg.search_topics(offset=4, limit=4)
    assert (first.total, len(first.items), first.has_more) == (6, 4, True)
    assert (len(second.items), second.has_more) == (2, False)
    assert dict(first.by_type) == {"AVRO": 2, "JSON": 1, "STRING": 1, "NONE": 2}
    assert dict(first.by_strategy) == {"FULL": 4, "BACKWARD": 1, "ALWAYS_COMPATIBLE": 1}
    assert dict(first.by_namespace) == {"acme/billing": 2, "acme/orders": 2, "globex/audit": 2}
    assert reg.search_topics(offset=10).items == ()


@pytest.mark.parametrize(("offset", "limit"), [(-1, 10), (0, 0), (True, 5)], ids=["negative offset", "empty", "bool"])
def test_a_page_needs_a_valid_range(reg: Registry, offset: int, limit: int) -> None:
    with pytest.raises(InvalidArgumentError, match="offset"):
        reg.search_topics(offset=offset, limit=limit)


def test_an_unknown_topic_has_no_summary(reg: Registry) -> None:
    with pytest.raises(TopicNotFoundError, match="does not exist"):
        reg.topic_summary("persistent://acme/orders/nope")


def test_the_cached_catalog_follows_every_write(reg: Registry) -> None:
    populate(reg)
    before = reg.change_token()
    assert reg.search_topics(TopicQuery(text="refund")).total == 0
    reg.register(f"{ORDERS}/refunded", avro_info(_order("refund_id")))
    assert reg.change_token() != before
    assert topics(reg, text="refund") == ["orders/refunded"]
    reg.set_namespace_policy("acme/orders", compatibility="FORWARD")
    assert reg.topic_summary(f"{ORDERS}/refunded").strategy is S.FORWARD
    assert topics(reg, strategies=frozenset({S.FORWARD})) == ["orders/created", "orders/refunded", "orders/shipped"]
    reg.connect_producer(f"{ORDERS}/refunded", None, name="p")
    assert "orders/refunded" in topics(reg, has_clients=True)
    reg.delete(f"{ORDERS}/refunded", force=True)
    assert topics(reg, text="refund") == ["orders/refunded"]  # the topic stays, its schema is gone
    assert reg.topic_summary(f"{ORDERS}/refunded").schema_type is None


def test_a_refused_write_leaves_the_catalog_as_it_was(reg: Registry) -> None:
    populate(reg)
    reg.set_namespace_policy("acme/orders", compatibility="ALWAYS_INCOMPATIBLE")
    page = reg.search_topics()
    with pytest.raises(IncompatibleSchemaError):
        reg.register(f"{ORDERS}/created", avro_info(_order("x")))
    assert reg.search_topics() == page


def test_another_process_s_writes_reach_the_catalog(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Registry.open(path, create=True) as app, Registry.open(path, create=True) as cli:
        populate(app)
        assert app.search_topics().total == 6
        cli.register(f"{ORDERS}/returned", avro_info(_order("return_id")))
        assert topics(app, text="return") == ["orders/returned"]


def _corrupt(path: Path, schema_id: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schemas SET data = ?, fields = NULL WHERE schema_id = ?", (b'{"type": "rec', schema_id))
        db.execute("UPDATE heads SET fields = NULL WHERE schema_id = ?", (schema_id,))
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'changes'")


def test_a_broken_schema_never_breaks_the_list(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    with Registry.open(path, create=True) as reg:
        populate(reg)
        _corrupt(path, "acme/orders/shipped")
        page = reg.search_topics(limit=100)
        assert page.total == 6
        broken = [r for r in page.items if r.error]
        assert [r.short_name for r in broken] == ["shipped"]
        assert "not valid JSON" in broken[0].error and broken[0].fields == ()
        assert reg.topic_summary(f"{ORDERS}/shipped").error == broken[0].error
        assert topics(reg, text="customer") == ["orders/created"]


_V1_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tenants (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
CREATE TABLE namespaces (name TEXT PRIMARY KEY, tenant TEXT NOT NULL, policy TEXT NOT NULL,
    created_at INTEGER NOT NULL);
CREATE TABLE topics (name TEXT PRIMARY KEY, namespace TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE topic_policies (topic TEXT PRIMARY KEY, policy TEXT NOT NULL);
CREATE TABLE schemas (schema_id TEXT NOT NULL, version INTEGER NOT NULL, type TEXT NOT NULL, data BLOB NOT NULL,
    properties TEXT NOT NULL, timestamp INTEGER NOT NULL, deleted INTEGER NOT NULL, user TEXT NOT NULL,
    PRIMARY KEY (schema_id, version)) WITHOUT ROWID;
CREATE TABLE clients (topic TEXT NOT NULL, role TEXT NOT NULL, name TEXT NOT NULL, subscription TEXT NOT NULL,
    schema_type TEXT, version INTEGER, connected_at INTEGER NOT NULL, replicator INTEGER NOT NULL,
    PRIMARY KEY (topic, role, name, subscription));
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO tenants VALUES ('acme', 0);
INSERT INTO namespaces VALUES ('acme/orders', 'acme', '{"compatibility": "UNDEFINED"}', 0);
INSERT INTO topics VALUES ('persistent://acme/orders/created', 'acme/orders', 0);
"""


def test_a_first_format_file_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as db:
        db.executescript(_V1_DDL)
        for version, names, deleted in ((0, ("a",), 0), (1, (), 1), (2, ("order_id", "b"), 0), (3, ("order_id",), 0)):
            data = b"" if deleted else _order(*names).encode()
            db.execute(
                "INSERT INTO schemas VALUES ('acme/orders/created', ?, ?, ?, '{}', ?, ?, '')",
                (version, "NONE" if deleted else "AVRO", data, version, deleted),
            )
    with Registry.open(path, create=True) as reg:
        row = reg.topic_summary(f"{ORDERS}/created")
        assert reg.search_topics().items == (row,)
        assert (row.versions, row.latest_version, row.fields) == (2, 3, ("order_id",))
        assert reg.register(f"{ORDERS}/created", avro_info(_order("order_id", "c"))).version == 4
        assert reg.search_topics(TopicQuery(text="field:c")).total == 1
        assert [e.action.value for e in reg.audit_trail()] == ["register"]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def _key_value_and_protobuf(reg: Registry) -> None:
    """A KEY_VALUE topic with record key and value, one with a primitive key, and a PROTOBUF_NATIVE topic
    whose root message holds a message field (and refers to itself, which the walk must not follow)."""
    key, value = _order("customer_id"), _order("cart_id", "sku")
    reg.register(f"{ORDERS}/carts", kv(key, value))
    reg.register(f"{ORDERS}/holds", kv(None, _order("hold_id"), key_type=SchemaType.STRING))
    messages = {
        "Entry": [
            ("entry_id", 1, PB_STRING),
            ("money", 2, PB_MESSAGE, ".ledger.Money"),
            ("next", 3, PB_MESSAGE, ".ledger.Entry"),
        ],
        "Money": [("currency_code", 1, PB_STRING)],
    }
    reg.register(f"{ORDERS}/ledger", protobuf_native(messages, "Entry", package="ledger"))


def test_fields_inside_key_value_parts_and_protobuf_messages_are_searched(reg: Registry) -> None:
    """Issue 19: plain and `field:` search reach KEY_VALUE key and value fields and PROTOBUF_NATIVE fields,
    nested ones by dotted path."""
    _key_value_and_protobuf(reg)
    assert reg.topic_summary(f"{ORDERS}/carts").fields == ("key.customer_id", "value.cart_id", "value.sku")
    assert reg.topic_summary(f"{ORDERS}/holds").fields == ("value.hold_id",)
    assert reg.topic_summary(f"{ORDERS}/ledger").fields == ("entry_id", "money", "money.currency_code", "next")
    assert topics(reg, text="field:customer_id") == ["orders/carts"]
    assert topics(reg, text="field:value.sku") == ["orders/carts"]
    assert topics(reg, text="hold_id") == ["orders/holds"]
    assert topics(reg, text="field:money.currency") == ["orders/ledger"]
    assert topics(reg, text="currency_code type:PROTOBUF_NATIVE") == ["orders/ledger"]


def test_a_file_searched_before_it_knew_these_fields_learns_them_on_open(tmp_path: Path) -> None:
    """Files written before KEY_VALUE and protobuf fields were search keys stored none for them; opening
    recomputes them once (meta `fields_form`), in `schemas` and in `heads`."""
    path = tmp_path / "old.db"
    with Registry.open(path, create=True) as reg:
        _key_value_and_protobuf(reg)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schemas SET fields = '' WHERE type IN ('KEY_VALUE', 'PROTOBUF_NATIVE')")
        db.execute("UPDATE heads SET fields = '' WHERE type IN ('KEY_VALUE', 'PROTOBUF_NATIVE')")
        db.execute("DELETE FROM meta WHERE key = 'fields_form'")
    with Registry.open(path) as reg:
        assert topics(reg, text="field:currency_code") == ["orders/ledger"]
        assert topics(reg, text="field:key.customer_id") == ["orders/carts"]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM heads WHERE fields = ''").fetchone() == (0,)
