"""How the values of a snapshot record are read and checked (registry/_snapshot.py holds the format): each
field's type and range, names, policies, versions, clients and audit lines, with SnapshotError naming the line;
and how each value is written as its record. Shared by the record-at-a-time load, the bulk load
(storage/_bulk_load.py) and the range reader (storage/_ranges.py)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from .._audit import AuditAction, AuditEntry, AuditOutcome
from .._errors import InvalidArgumentError, PolicyError
from .._model import (
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityStrategy,
    NamespacePolicy,
    SchemaVersion,
    TopicPolicy,
)
from .._names import TopicName
from .._types import SchemaType

_LONG = range(-(2**63), 2**63)  # Java's long: Pulsar's versions and timestamps, and SQLite's INTEGER


class SnapshotError(InvalidArgumentError):
    """A snapshot that cannot be read: not JSON lines, an unknown kind, a missing or bad field (with its line)."""


def _version(record: Mapping[str, Any]) -> SchemaVersion:
    if "schema_base64" in record:
        try:
            data = base64.b64decode(_field(record, "schema_base64", str), validate=True)
        except binascii.Error as exc:
            raise SnapshotError(f"{_where(record)}: schema_base64 is not base64 ({exc})") from None
    else:
        data = _field(record, "schema", str, default="").encode("utf-8")
    version = _field(record, "version", int)
    if version < 0:
        raise SnapshotError(f"{_where(record)}: version must be >= 0, got {version}")
    properties = _field(record, "properties", dict, default={})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in properties.items()):
        raise SnapshotError(f"{_where(record)}: properties must map text to text, got {properties!r}")
    return SchemaVersion(
        topic=TopicName.parse(_field(record, "topic", str)).schema_id,
        version=version,
        type=SchemaType.parse(_field(record, "type", str)),
        data=data,
        properties=properties,
        timestamp=_field(record, "timestamp", int, default=0),
        deleted=_field(record, "deleted", bool, default=False),
        user=_field(record, "user", str, default=""),
    )


def _client(record: Mapping[str, Any]) -> ClientRecord:
    schema_type = _field(record, "schema_type", str, default=None)
    return ClientRecord(
        topic=str(TopicName.parse(_field(record, "topic", str)).base),
        role=ClientRole(_field(record, "role", str)),
        name=_field(record, "name", str),
        subscription=_field(record, "subscription", str, default=""),
        schema_type=None if schema_type is None else SchemaType.parse(schema_type),
        version=_non_negative(record, "version", _field(record, "version", int, default=None)),
        connected_at=_field(record, "connected_at", int, default=0),
        replicator=_field(record, "replicator", bool, default=False),
    )


def _audit(record: Mapping[str, Any]) -> AuditEntry:
    # The target is kept as written: refusals are recorded with the bad name they refused.
    return AuditEntry(
        at=_field(record, "at", int),
        user=_field(record, "user", str, default=""),
        action=AuditAction(_field(record, "action", str)),
        target=_field(record, "target", str),
        detail=_field(record, "detail", str, default=""),
        outcome=AuditOutcome(_field(record, "outcome", str, default="ok")),
    )


def _namespace_policy(policy: Mapping[str, Any]) -> NamespacePolicy:
    auto = _field(policy, "auto_update_strategy", str, default=None)
    return NamespacePolicy(
        compatibility=CompatibilityStrategy.parse(_field(policy, "compatibility", str, default="UNDEFINED")),
        auto_update_strategy=None if auto is None else AutoUpdateStrategy.parse(auto),
        allow_auto_update=_field(policy, "allow_auto_update", bool, default=None),
        allow_auto_update_with_replicator=_field(policy, "allow_auto_update_with_replicator", bool, default=True),
        validation_enforced=_field(policy, "validation_enforced", bool, default=False),
    )


def _topic_policy(policy: Mapping[str, Any]) -> TopicPolicy:
    strategy = _field(policy, "compatibility", str, default=None)
    parsed = None if strategy is None else CompatibilityStrategy.parse(strategy)
    if parsed is CompatibilityStrategy.UNDEFINED:
        raise PolicyError("a topic policy stores no UNDEFINED strategy; use null")
    return TopicPolicy(
        compatibility=parsed,
        validation_enforced=_field(policy, "validation_enforced", bool, default=None),
    )


_MISSING = object()


def _field(record: Mapping[str, Any], key: str, kind: type, *, default: Any = _MISSING) -> Any:
    value = record.get(key, _MISSING)
    if value is _MISSING or (value is None and default is None):
        if default is _MISSING:
            raise SnapshotError(f"{_where(record)}: {record.get('kind', 'policy')} record has no {key!r}")
        return default
    # bool is an int in Python; a JSON true is never a version number
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SnapshotError(
            f"{_where(record)}: {key!r} must be {kind.__name__}, got {type(value).__name__} {value!r}"[:300]
        )
    if kind is int and value not in _LONG:
        raise SnapshotError(f"{_where(record)}: {key!r} is out of range (a 64-bit signed number): {value}"[:300])
    return value


def _non_negative(record: Mapping[str, Any], key: str, value: int | None) -> int | None:
    if value is not None and value < 0:
        raise SnapshotError(f"{_where(record)}: {key!r} must be >= 0, got {value}")
    return value


def _where(record: Mapping[str, Any]) -> str:
    line = record.get("_line")
    return f"snapshot line {line}" if isinstance(line, int) else "snapshot record"


# --- writing: a value as its record -------------------------------------------------------------------

Record = dict[str, Any]


def version_record(entry: SchemaVersion) -> Record:
    record: Record = {
        "kind": "version",
        "topic": entry.topic,
        "version": entry.version,
        "type": str(entry.type),
        "deleted": entry.deleted,
        "timestamp": entry.timestamp,
        "user": entry.user,
        "properties": dict(entry.properties),
    }
    text = _as_text(entry.data)
    if text is None:
        record["schema_base64"] = base64.b64encode(entry.data).decode("ascii")
    else:
        record["schema"] = text
    return record


def client_record(client: ClientRecord) -> Record:
    return {
        "kind": "client",
        "topic": client.topic,
        "role": str(client.role),
        "name": client.name,
        "subscription": client.subscription,
        "schema_type": None if client.schema_type is None else str(client.schema_type),
        "version": client.version,
        "connected_at": client.connected_at,
        "replicator": client.replicator,
    }


def audit_record(entry: AuditEntry) -> Record:
    return {
        "kind": "audit",
        "at": entry.at,
        "user": entry.user,
        "action": str(entry.action),
        "target": entry.target,
        "detail": entry.detail,
        "outcome": str(entry.outcome),
    }


def _as_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.encode("utf-8") == data else None


def _broker_record(broker: BrokerConfig) -> Record:
    return {k: str(v) if isinstance(v, CompatibilityStrategy) else v for k, v in asdict(broker).items()}


def _namespace_policy_record(policy: NamespacePolicy) -> Record:
    return {
        "compatibility": str(policy.compatibility),
        "auto_update_strategy": None if policy.auto_update_strategy is None else str(policy.auto_update_strategy),
        "allow_auto_update": policy.allow_auto_update,
        "allow_auto_update_with_replicator": policy.allow_auto_update_with_replicator,
        "validation_enforced": policy.validation_enforced,
    }


def _topic_policy_record(policy: TopicPolicy) -> Record:
    return {
        "compatibility": None if policy.compatibility is None else str(policy.compatibility),
        "validation_enforced": policy.validation_enforced,
    }
