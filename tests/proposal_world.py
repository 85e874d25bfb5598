"""The small world the proposal tests share: one namespace, one topic with a first Avro version, and the people
who propose, review and apply there (`import proposal_world` from any test module: tests/ is on the path)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from registry import Actor, Registry, Role, SchemaInfo, SchemaType

NS = "acme/orders"
TOPIC = f"persistent://{NS}/order-created"
ALICE = Actor("alice", Role.PRODUCER)
BOB = Actor("bob", Role.PRODUCER)
CAROL = Actor("carol", Role.PRODUCER)
VIEWER = Actor("victor", Role.VIEWER)
OPS = Actor("ops", Role.ADMIN)


def avro(*fields: str, required: str | None = None, extra: dict[str, object] | None = None) -> SchemaInfo:
    """An `Order` record: `id`, then each of `fields` as an optional string (a backward-compatible addition),
    then `required` as a string without a default (a change BACKWARD refuses); `extra` adds top-level keys."""
    doc = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}]
        + [{"name": f, "type": ["null", "string"], "default": None} for f in fields]
        + ([{"name": required, "type": "string"}] if required else []),
        **(extra or {}),
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


@contextmanager
def proposal_registry(
    path: Path, *, compatibility: str | None = "BACKWARD", namespaces: tuple[str, ...] = ()
) -> Iterator[Registry]:
    """A registry file at `path` with the `acme` tenant, NS (under `compatibility`; None: the broker default)
    and each of `namespaces`, and TOPIC's first version, `avro()`."""
    with Registry.open(path, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        for namespace in namespaces:
            reg.create_namespace(namespace)
        if compatibility is not None:
            reg.set_namespace_policy(NS, compatibility=compatibility)
        reg.register(TOPIC, avro())
        yield reg
