"""`Registry.read_only()`: a view that answers every read and refuses every write with ReadOnlyError, storing
nothing and auditing nothing (the app's --read-only holds only such a view)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from registry import ReadOnlyError, Registry, RegistryError, RemoteRegistry, SchemaInfo, SchemaType
from registry._read_only import READS, WRITES

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


def test_every_public_registry_member_is_classified() -> None:
    """A member added to Registry later must be put in READS or WRITES; until then the view refuses it."""
    members = {name for name, _ in inspect.getmembers(Registry) if not name.startswith("_")}
    own = {"open", "open_file", "in_memory", "read_only", "is_read_only"}
    assert members - own == READS | WRITES
    assert not READS & WRITES
    remote = {name for name, _ in inspect.getmembers(RemoteRegistry) if not name.startswith("_")}
    assert remote - own <= READS | WRITES, "the remote facade has no member the embedded one lacks"


WRITE_CALLS = [
    ("register", lambda r: r.register(TOPIC, _avro("a", "b"), user="x")),
    ("delete", lambda r: r.delete(TOPIC, user="x")),
    ("set_namespace_policy", lambda r: r.set_namespace_policy("acme/orders", compatibility="NONE", user="x")),
    ("set_topic_policy", lambda r: r.set_topic_policy(TOPIC, compatibility="NONE", user="x")),
    ("connect_producer", lambda r: r.connect_producer(TOPIC, _avro("a", "c"), name="p")),
    ("connect_consumer", lambda r: r.connect_consumer(TOPIC, _avro("a"), subscription="s")),
    ("disconnect", lambda r: r.disconnect(TOPIC, name="p")),
    ("create_tenant", lambda r: r.create_tenant("other")),
    ("create_namespace", lambda r: r.create_namespace("acme/other")),
    ("create_topic", lambda r: r.create_topic("persistent://acme/orders/new")),
    ("batch", lambda r: r.batch()),
    ("private storage", lambda r: r._storage),
]


@pytest.mark.parametrize(("name", "call"), WRITE_CALLS, ids=[name for name, _ in WRITE_CALLS])
def test_every_write_is_refused_and_nothing_changes(reg: Registry, name: str, call) -> None:  # noqa: ANN001
    view = reg.read_only()
    before = (reg.change_token(), reg.history(TOPIC), reg.audit_trail(), reg.tenants(), reg.clients())
    with pytest.raises(ReadOnlyError, match="read-only") as refused:
        call(view)
    assert isinstance(refused.value, RegistryError)  # every shell already shows RegistryError as a message
    assert (reg.change_token(), reg.history(TOPIC), reg.audit_trail(), reg.tenants(), reg.clients()) == before


def test_reads_answer_as_the_registry_does(reg: Registry) -> None:
    view = reg.read_only()
    assert view.is_read_only and not reg.is_read_only
    assert view.read_only() is view
    assert view.get(TOPIC) == reg.get(TOPIC)
    assert view.what_if(TOPIC, _avro("a", "b")).registration.accepted
    assert view.tenants() == reg.tenants() == ["acme"]
    assert view.broker == reg.broker
    assert [e.user for e in view.audit_trail()] == ["seed"]
