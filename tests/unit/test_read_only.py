"""`handle.read_only()`: a handle that answers every read and refuses every write with ReadOnlyError, storing
nothing and auditing nothing (the app's --read-only holds only such a handle). It implements the whole
`SchemaRegistry` contract through ForwardingRegistry, member by member, so a type checker sees what it offers."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import registry
from registry import (
    ReadOnlyError,
    ReadOnlyRegistry,
    Registry,
    RegistryError,
    RemoteRegistry,
    SchemaInfo,
    SchemaRegistry,
    SchemaType,
)
from registry._forwarding import ForwardingRegistry

TOPIC = "persistent://acme/orders/o"


def _avro(*fields: str) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "O",
        "fields": [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


@pytest.fixture
def reg(tmp_path: Path) -> Registry:
    reg = Registry.open(tmp_path / "r.db", create=True)
    reg.register(TOPIC, _avro("a"), user="seed")
    return reg


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


# What only an embedded registry does: recording clients, group commits, the stored Pulsar line, its caches'
# usage, opening.
EMBEDDED_ONLY = {
    "batch",
    "cache_usage",
    "connect_consumer",
    "connect_producer",
    "disconnect",
    "set_pulsar_version",
    "stored_pulsar_version",
    "open",
    "open_file",
    "in_memory",
}


# Each abstract member of the contract, placed: a member added to SchemaRegistry fails the test below until it
# is placed here, and a write placed here is refused by ReadOnlyRegistry before the test passes. `close` ends
# the wrapped handle too (the read-only one is the only handle its holder has).
READS = {  # and broker_index, concrete (None unless a handle has one), forwarded
    "audit_trail", "broker", "change_token", "check", "clients", "close", "connected_clients",
    "diff", "effective_policy", "find_version", "get", "history", "location", "namespace_policy", "namespaces",
    "policy_impact", "preview_policy", "pulsar", "records_clients", "search_topics", "tenants", "topic_policy",
    "topic_summary", "topics", "upgrade_plan", "what_if",
}  # fmt: skip
WRITES = {"register", "delete", "set_policy", "create_tenant", "create_namespace", "create_topic"}
VIEWS = {"read_only"}  # a read-only handle is its own
HANDED_OUT = {"proposals", "webhooks"}  # interfaces of their own: a read-only handle hands out read-only ones
ITS_OWN = {"is_read_only"}  # concrete on SchemaRegistry (False)


def test_the_read_only_handle_forwards_the_contract_and_refuses_its_writes() -> None:
    """ForwardingRegistry defines every abstract member itself (nothing inherited, no __getattr__), so one
    added to SchemaRegistry is abstract there until someone writes how it forwards; ReadOnlyRegistry overrides
    exactly the writes (and what it hands out), so every other member forwards a read."""
    contract = set(SchemaRegistry.__abstractmethods__)
    assert not ForwardingRegistry.__abstractmethods__ and not ReadOnlyRegistry.__abstractmethods__
    assert contract <= set(vars(ForwardingRegistry)), contract - set(vars(ForwardingRegistry))
    assert "__getattr__" not in vars(ForwardingRegistry) and "__getattr__" not in vars(ReadOnlyRegistry)
    placed = READS | WRITES | HANDED_OUT | VIEWS
    assert contract == placed, contract ^ placed
    overridden = {name for name in vars(ReadOnlyRegistry) if not name.startswith("_")}
    assert overridden == WRITES | HANDED_OUT | VIEWS | ITS_OWN


def test_both_registries_offer_the_contract_and_only_the_embedded_one_more() -> None:
    contract = _public(SchemaRegistry)
    assert _public(Registry) - contract == EMBEDDED_ONLY
    assert _public(RemoteRegistry) == contract


def test_registry_open_gives_a_read_only_handle_and_never_creates_one(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(RegistryError, match="never creates"):
        registry.open(missing, create=True, read_only=True)
    assert not missing.exists()
    Registry.open(missing, create=True).close()
    with registry.open(missing, read_only=True) as handle:
        assert isinstance(handle, ReadOnlyRegistry) and handle.is_read_only
        with pytest.raises(ReadOnlyError):
            handle.create_tenant("t")


WRITE_CALLS = [
    ("register", lambda r: r.register(TOPIC, _avro("a", "b"), user="x").version),
    ("delete", lambda r: r.delete(TOPIC, user="x")),
    ("set_namespace_policy", lambda r: r.set_namespace_policy("acme/orders", compatibility="NONE", user="x")),
    ("set_topic_policy", lambda r: r.set_topic_policy(TOPIC, compatibility="NONE", user="x")),
    ("create_tenant", lambda r: r.create_tenant("other")),
    ("create_namespace", lambda r: r.create_namespace("acme/other")),
    ("create_topic", lambda r: r.create_topic("persistent://acme/orders/new")),
]


@pytest.mark.parametrize(("name", "call"), WRITE_CALLS, ids=[name for name, _ in WRITE_CALLS])
def test_every_write_is_refused_and_nothing_changes(reg: Registry, name: str, call) -> None:  # noqa: ANN001
    view = reg.read_only()
    before = (reg.change_token(), reg.history(TOPIC), reg.audit_trail(), reg.tenants(), reg.clients())
    with pytest.raises(ReadOnlyError, match="read-only") as refused:
        call(view)
    assert isinstance(refused.value, RegistryError)  # every shell already shows RegistryError as a message
    assert (reg.change_token(), reg.history(TOPIC), reg.audit_trail(), reg.tenants(), reg.clients()) == before


@pytest.mark.parametrize("name", ["connect_producer", "batch", "set_pulsar_version", "_storage", "_inner_storage"])
def test_what_only_an_embedded_registry_does_is_not_on_the_read_only_handle(reg: Registry, name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(reg.read_only(), name)


def test_reads_answer_as_the_registry_does(reg: Registry) -> None:
    view = reg.read_only()
    assert view.is_read_only and not reg.is_read_only
    assert view.read_only() is view
    assert view.get(TOPIC) == reg.get(TOPIC)
    assert view.what_if(TOPIC, _avro("a", "b")).registration.accepted
    assert view.tenants() == reg.tenants() == ["acme"]
    assert view.broker == reg.broker
    assert [e.user for e in view.audit_trail()] == ["seed"]


def test_a_forwarding_handle_answers_and_writes_as_the_one_it_wraps(reg: Registry) -> None:
    """What ReadOnlyRegistry does not override is ForwardingRegistry's: the wrapped handle's answer, writes too."""
    through = ForwardingRegistry(reg)
    assert not through.is_read_only and through.read_only().is_read_only
    assert through.register(TOPIC, _avro("a", "b"), user="x").version == 1
    assert through.set_namespace_policy("acme/orders", compatibility="FULL", user="x") == reg.namespace_policy(
        "acme/orders"
    )
    assert through.proposals.list() == reg.proposals.list() == [] and through.broker_index is None
    assert [e.user for e in through.audit_trail(limit=2)] == ["x", "x"]
