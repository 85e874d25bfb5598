"""Two registries built from the sample with one topic of each kind of drift, policy differences and two
replication hazards (issue 44): what `compare` must report exactly, no more. Shared by the core's, the CLI's
and the served comparison's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from registry import CompatibilityStrategy, Registry, SchemaInfo, SchemaRegistry, SchemaType, seed_sample_data

S = CompatibilityStrategy

STATES = {
    "persistent://acme/orders/order-status-changed": "to_behind",
    "persistent://acme/orders/refunds-v2": "only_in_from",
    "persistent://acme/orders/b-only": "only_in_to",
    "persistent://acme/orders/order-created": "to_ahead",
    "persistent://initech/analytics/page-views": "diverged",
    "persistent://initech/analytics/report-requests": "deleted_in_to",
    "persistent://initech/analytics/tps-reports": "deleted_in_from",
    "persistent://initech/legacy/timesheets": "to_behind",
    "persistent://initech/hr/employee-records": "to_behind",
}
HAZARDS = {
    "persistent://initech/legacy/timesheets": "auto_update_disallowed",
    "persistent://initech/hr/employee-records": "incompatible",
}
POLICIES = {
    ("globex/telemetry", "compatibility", "FORWARD_TRANSITIVE", "BACKWARD_TRANSITIVE"),
    ("initech/hr", "compatibility", "ALWAYS_COMPATIBLE", "FULL"),
    ("initech/legacy", "allow_auto_update_with_replicator", True, False),
    ("persistent://acme/inventory/price-changes", "compatibility", "FORWARD", "FULL"),
}
SAFE = {"persistent://acme/orders/order-status-changed", "persistent://acme/orders/refunds-v2"}
FORMATTED = "persistent://acme/orders/formatted"  # the same schema, stored with other whitespace: `same`


def with_field(reg: SchemaRegistry, topic: str, name: str, type_: Any = None, *, default: Any = None) -> SchemaInfo:
    """The topic's latest Avro record with one more field (optional, with a default, unless `type_` given)."""
    latest = reg.get(topic)
    doc = json.loads(latest.schema)
    added: dict[str, Any] = {"name": name, "type": type_ or ["null", "string"], "default": default}
    if type_ is not None and default is None:
        added.pop("default")
    doc["fields"] = [*doc["fields"], added]
    return SchemaInfo(type=latest.type, schema=json.dumps(doc), properties={})


def without_default(reg: SchemaRegistry, topic: str, name: str) -> SchemaInfo:
    """The topic's latest Avro record with field `name`'s default removed."""
    latest = reg.get(topic)
    doc = json.loads(latest.schema)
    for item in doc["fields"]:
        if item["name"] == name:
            item.pop("default")
    return SchemaInfo(type=latest.type, schema=json.dumps(doc), properties={})


def record(name: str, *fields: str, pretty: bool = False) -> SchemaInfo:
    doc = {"type": "record", "name": name, "fields": [{"name": f, "type": "string"} for f in fields]}
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc, indent=4 if pretty else None), properties={})


def build_pair(a: Registry, b: Registry) -> None:
    """Seed both from sample_data/ and make them drift as STATES, HAZARDS and POLICIES say."""
    seed_sample_data(a)
    seed_sample_data(b)
    # to_behind, safe: two versions only A has; the second (`note` without its default) passes BACKWARD only
    # after the first, so the plan must judge them in order
    a.register("acme/orders/order-status-changed", with_field(a, "acme/orders/order-status-changed", "note"))
    a.register("acme/orders/order-status-changed", without_default(a, "acme/orders/order-status-changed", "note"))
    # only_in_from (safe) and only_in_to
    a.register("acme/orders/refunds-v2", record("Refund", "id"))
    b.register("acme/orders/b-only", record("BOnly", "id"))
    # to_ahead
    b.register("acme/orders/order-created", with_field(b, "acme/orders/order-created", "drift_marker"))
    # diverged: a different version 6 on each side
    a.register("initech/analytics/page-views", with_field(a, "initech/analytics/page-views", "referrer"))
    b.register("initech/analytics/page-views", with_field(b, "initech/analytics/page-views", "campaign"))
    # deleted on one side
    b.delete("initech/analytics/report-requests")
    a.delete("initech/analytics/tps-reports")
    # formatting alone: the same
    a.register(FORMATTED, record("Formatted", "id", "name"))
    b.register(FORMATTED, record("Formatted", "id", "name", pretty=True))
    # policies
    b.set_namespace_policy("globex/telemetry", compatibility=S.BACKWARD_TRANSITIVE)
    b.set_topic_policy("acme/inventory/price-changes", compatibility=S.FULL)
    # hazard 1: B's namespace disallows auto-update, for the replicator too
    b.set_namespace_policy("initech/legacy", allow_auto_update_with_replicator=False)
    a.register("initech/legacy/timesheets", with_field(a, "initech/legacy/timesheets", "approver"))
    # hazard 2: a breaking version A took under ALWAYS_COMPATIBLE, which B's FULL refuses; and one after it
    b.set_namespace_policy("initech/hr", compatibility=S.FULL)
    a.register("initech/hr/employee-records", with_field(a, "initech/hr/employee-records", "badge", "int"))
    a.register("initech/hr/employee-records", with_field(a, "initech/hr/employee-records", "desk"))


def build_files(folder: Path) -> tuple[Path, Path]:
    """The pair as two registry files in `folder`: (A, B)."""
    paths = folder / "a.db", folder / "b.db"
    regs = [Registry.open(p, create=True) for p in paths]
    try:
        build_pair(*regs)
    finally:
        for reg in regs:
            reg.close()
    return paths
