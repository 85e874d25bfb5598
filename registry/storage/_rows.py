"""How stored rows map to the model, shared by the SQL backends (SQLite and PostgreSQL): a `schemas` row as a
SchemaVersion, policies as JSON text, and the equality-key mark both stores keep in `meta`."""

from __future__ import annotations

import json
from typing import Any

from .._audit import AuditAction, AuditEntry, AuditOutcome
from .._model import (
    AutoUpdateStrategy,
    ClientRecord,
    ClientRole,
    CompatibilityStrategy,
    NamespacePolicy,
    SchemaVersion,
    TopicPolicy,
)
from .._text import readable_mapping
from .._types import SchemaType
from ._base import Fingerprint

# Which equality key (`AvroSchema.equality_key`) the stored equality digests were made with. Bump it whenever
# that key changes; files with another mark forget their digests (NULL), which dedup then recomputes from the
# stored text as it does for any version it has no digest for. 2: an enum's default left out and numeric text
# defaults of float/double fields read as numbers, as Java Avro's Schema.equals sees them.
EQUALITY_FORM = "2"


def history_size(entries: tuple[SchemaVersion, ...]) -> int:
    return sum(len(e.data) + 256 for e in entries)


def schema_version_of(schema_id: str, row: tuple[Any, ...]) -> SchemaVersion:
    """A `schemas` row (version, type, data, properties, timestamp, deleted, user) as a SchemaVersion."""
    v, t, d, p, ts, dl, u = row
    return SchemaVersion(
        topic=schema_id,
        version=int(v),
        type=SchemaType(str(t)),
        data=bytes(d),
        properties=readable_mapping(json.loads(str(p))),  # files from before check_text may hold lone surrogates
        timestamp=int(ts),
        deleted=bool(dl),
        user=str(u),
    )


def topic_policy_to_json(policy: TopicPolicy) -> str:
    return json.dumps({"compatibility": policy.compatibility, "validation_enforced": policy.validation_enforced})


def topic_policy_from_json(text: str) -> TopicPolicy:
    raw = json.loads(text)
    strategy = raw.get("compatibility")
    return TopicPolicy(
        compatibility=CompatibilityStrategy(strategy) if strategy else None,
        validation_enforced=raw.get("validation_enforced"),
    )


def namespace_policy_to_json(policy: NamespacePolicy) -> str:
    return json.dumps(
        {
            "compatibility": policy.compatibility,
            "auto_update_strategy": policy.auto_update_strategy,
            "allow_auto_update": policy.allow_auto_update,
            "allow_auto_update_with_replicator": policy.allow_auto_update_with_replicator,
            "validation_enforced": policy.validation_enforced,
        }
    )


def namespace_policy_from_json(text: str) -> NamespacePolicy:
    raw = json.loads(text)
    auto = raw.get("auto_update_strategy")
    return NamespacePolicy(
        compatibility=CompatibilityStrategy(raw.get("compatibility") or "UNDEFINED"),
        auto_update_strategy=AutoUpdateStrategy(auto) if auto else None,
        allow_auto_update=raw.get("allow_auto_update"),
        allow_auto_update_with_replicator=bool(raw.get("allow_auto_update_with_replicator", True)),
        validation_enforced=bool(raw.get("validation_enforced", False)),
    )


def fingerprint_of(row: tuple[Any, ...]) -> Fingerprint:
    """A `fingerprints` row (version, type, deleted, sha256, equality)."""
    v, t, dl, sha, eq = row
    return Fingerprint(version=int(v), type=SchemaType(str(t)), deleted=bool(dl), sha256=bytes(sha),
                       equality=None if eq is None else bytes(eq))  # fmt: skip


def client_of(row: tuple[Any, ...]) -> ClientRecord:
    """A `clients` row (topic, role, name, subscription, schema_type, version, connected_at, replicator)."""
    t, r, n, s, st, v, c, rep = row
    return ClientRecord(topic=str(t), role=ClientRole(str(r)), name=str(n), subscription=str(s),
                        schema_type=SchemaType(str(st)) if st else None, version=None if v is None else int(v),
                        connected_at=int(c), replicator=bool(rep))  # fmt: skip


def client_row(client: ClientRecord) -> tuple[Any, ...]:
    return (client.topic, str(client.role), client.name, client.subscription,
            None if client.schema_type is None else str(client.schema_type), client.version, client.connected_at,
            client.replicator)  # fmt: skip


def audit_entry_of(row: tuple[Any, ...]) -> AuditEntry:
    """An `audit` row (at, user, action, target, detail, outcome)."""
    at, u, a, t, d, o = row
    return AuditEntry(at=int(at), user=str(u), action=AuditAction(str(a)), target=str(t), detail=str(d),
                      outcome=AuditOutcome(str(o)))  # fmt: skip


def audit_row(entry: AuditEntry) -> tuple[Any, ...]:
    """(at, user, action, target, tenant, namespace, detail, outcome) of an audit line."""
    return (entry.at, entry.user, str(entry.action), entry.target, entry.tenant, entry.namespace, entry.detail,
            str(entry.outcome))  # fmt: skip


def audit_query(target: str | None, limit: int, mark: str) -> tuple[str, list[object]]:
    """The WHERE, ORDER and LIMIT of an audit read (`mark` is the driver's placeholder, ? or %s): the same
    test as _audit.is_within, this target or a topic or namespace inside it, newest first."""
    sql, params = "", []
    if target is not None:
        sql = f" WHERE target = {mark} OR namespace = {mark}"
        params = [target, target]
        if "/" not in target:
            sql += f" OR tenant = {mark}"
            params.append(target)
    return sql + f" ORDER BY id DESC LIMIT {mark}", [*params, limit]
