"""Snapshots: a whole registry as JSON lines, for backups (`export` / `import`) and the Spark pipeline.

Format (UTF-8, one JSON object per line, every object has a "kind"; blank lines are ignored)::

    {"kind": "snapshot", "format": 2, "broker": {"compatibility": "FULL", "system_topic_compatibility":
        "ALWAYS_COMPATIBLE", "allow_auto_update": true, "validation_enforced": false,
        "topic_level_policies_enabled": true}}
    {"kind": "tenant", "name": "acme"}
    {"kind": "namespace", "name": "acme/orders", "policy": {"compatibility": "BACKWARD",
        "auto_update_strategy": null, "allow_auto_update": true, "allow_auto_update_with_replicator": true,
        "validation_enforced": false}}
    {"kind": "topic", "name": "persistent://acme/orders/order-created", "namespace": "acme/orders",
        "policy": {"compatibility": "FULL_TRANSITIVE", "validation_enforced": null}}      (policy: null if none)
    {"kind": "version", "topic": "acme/orders/order-created", "version": 0, "type": "AVRO", "deleted": false,
        "timestamp": 1704099600000, "user": "ci", "properties": {}, "schema": "{...}"}
    {"kind": "client", "topic": "persistent://acme/orders/order-created", "role": "consumer", "name": "billing",
        "subscription": "billing", "schema_type": "AVRO", "version": 9, "connected_at": 1704099600000,
        "replicator": false}
    {"kind": "audit", "at": 1704099600000, "user": "ci", "action": "register",
        "target": "persistent://acme/orders/order-created", "detail": "AVRO schema stored as version 0",
        "outcome": "ok"}
    {"kind": "end", "records": 42}

- The first line is the `snapshot` header; `format` is 2. Later lines come in the order above (tenants,
  namespaces, topics, versions, clients, audit), so a reader can stream them; readers ignore unknown keys.
- The last line, `end`, counts the records before it (header included): a file cut anywhere, even at a line
  boundary, is refused, never imported in part. Format 1 files (written before the end line) still read.
- `version` lines hold every entry of a schema history, tombstones included (`deleted: true`, type NONE, empty
  schema), oldest first; `topic` is the schema id (`tenant/namespace/topic`, no domain or partition: Pulsar
  keys histories that way, §1). The stored bytes are in `schema` when they are UTF-8 text, else in
  `schema_base64` (standard base64), so a snapshot restores them byte for byte.
- `audit` lines are the audit trail (registry/_audit.py), oldest first, refusals included; importing them
  restores the trail as it was (the import itself records nothing).
- Enum values are Pulsar's names; timestamps are milliseconds since the epoch.

`import_snapshot(export_snapshot(reg))` answers every facade question as `reg` does (tenants, policies,
histories with tombstones and timestamps, clients, verdicts, the audit trail).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ._errors import InvalidArgumentError, NotSupportedError, RegistryError, StorageError
from ._model import (
    BrokerConfig,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._pulsar_version import PULSAR_VERSION_SETTING, pulsar_line
from ._registry import Registry
from ._text import readable
from ._wire import from_json, to_json
from .proposals._model import Proposal, ReviewRules
from .proposals._records import put_rules, save
from .proposals._rules import checked_rules
from .storage._base import AuditLog, StaleHistoryError
from .storage._memory import MemoryStorage
from .storage._snapshot_values import (
    SnapshotError,
    _audit,
    _broker_record,
    _client,
    _field,
    _namespace_policy,
    _namespace_policy_record,
    _topic_policy,
    _topic_policy_record,
    _version,
    _where,
    audit_record,
    client_record,
    version_record,
)
from .storage._sql import SqlStorage

if TYPE_CHECKING:
    from ._handle import SchemaRegistry

SNAPSHOT_FORMAT = 2
_READABLE_FORMATS = (1, 2)  # 1: before the end line; such a file cannot tell a cut at a line boundary
KINDS = ("snapshot", "tenant", "namespace", "topic", "version", "client", "review_rules", "proposal", "audit", "end")
_WHOLE_TRAIL = 2**62  # audit_trail's limit when exporting: every entry
_EVERY_PROPOSAL = 1_000_000  # proposals' limit when exporting (the explorer API's bound too)

Record = dict[str, Any]


# --- writing ------------------------------------------------------------------------------------------------


def snapshot_records(registry: SchemaRegistry, *, audit: bool = True) -> Iterator[Record]:
    """The registry as snapshot records, in file order (header first); read through the public facade only,
    so it works on any registry the facade opens. `audit=False` leaves out the audit trail."""
    yield {
        "kind": "snapshot",
        "format": SNAPSHOT_FORMAT,
        "broker": _broker_record(registry.broker),
        "pulsar_version": registry.pulsar_version,  # the line the registry answers as: a restore answers alike
    }
    tenants = registry.tenants()
    namespaces = [ns for tenant in tenants for ns in registry.namespaces(tenant)]
    for tenant in tenants:
        yield {"kind": "tenant", "name": tenant}
    topics: list[str] = []
    for ns in namespaces:
        yield {"kind": "namespace", "name": ns, "policy": _namespace_policy_record(registry.namespace_policy(ns))}
        topics += registry.topics(ns)
    policies = registry.broker.topic_level_policies_enabled
    for topic in topics:
        policy = registry.topic_policy(topic) if policies else TopicPolicy()
        yield {
            "kind": "topic",
            "name": topic,
            "namespace": str(TopicName.parse(topic).namespace_name),
            "policy": None if policy == TopicPolicy() else _topic_policy_record(policy),
        }
    seen: set[str] = set()
    for topic in topics:
        schema_id = TopicName.parse(topic).schema_id
        if schema_id in seen:  # persistent:// and non-persistent:// share one history (§1)
            continue
        seen.add(schema_id)
        for entry in registry.history(topic, include_deleted=True):
            yield version_record(entry)
    for client in registry.clients():
        yield client_record(client)
    yield from _proposal_records(registry, namespaces)
    if audit:
        yield from audit_records(registry)


def snapshot_head(registry: SchemaRegistry) -> tuple[Record, list[Record]]:
    """The header and the namespace records (with their policies) a snapshot starts with: what a writer of
    another format (the Parquet export) takes before it reads histories its own way, by key."""
    head = snapshot_records(registry, audit=False)
    header = next(head)
    namespaces: list[Record] = []
    for record in head:  # tenants, then namespaces, then the topics, where it stops (nothing of them read)
        if record["kind"] == "topic":
            break
        if record["kind"] == "namespace":
            namespaces.append(record)
    return header, namespaces


def audit_records(registry: SchemaRegistry) -> Iterator[Record]:
    """The whole audit trail as snapshot records, oldest first."""
    for line in reversed(registry.audit_trail(limit=_WHOLE_TRAIL)):
        yield audit_record(line)


def _proposal_records(registry: SchemaRegistry, namespaces: list[str]) -> Iterator[Record]:
    """Review rules set on a namespace, then every proposal, oldest first (with its revisions, approvals and
    comments). A broker keeps none: its snapshot has none."""
    try:
        for ns in namespaces:
            rules = registry.proposals.rules(ns)
            if rules != ReviewRules():
                yield {"kind": "review_rules", "namespace": ns, **to_json(rules)}
        for proposal in reversed(registry.proposals.list(limit=_EVERY_PROPOSAL)):
            yield {"kind": "proposal", **to_json(proposal)}
    except NotSupportedError:
        return


def export_snapshot(registry: SchemaRegistry, target: str | os.PathLike[str] | IO[str], *, audit: bool = True) -> int:
    """Write `registry` as a snapshot to a path or an open text file; returns the number of lines.
    `audit=False` leaves out the audit trail."""
    if isinstance(target, (str, os.PathLike)):
        path = Path(target)
        if path.is_dir():
            raise SnapshotError(f"cannot write a snapshot to {str(path)!r}: it is a directory")
        try:
            with path.open("w", encoding="utf-8", newline="\n") as out:
                return _write(snapshot_records(registry, audit=audit), out)
        except OSError as exc:
            raise StorageError(f"cannot write snapshot {str(path)!r}: {exc.strerror or exc}") from None
    return _write(snapshot_records(registry, audit=audit), target)


def _write(records: Iterable[Record], out: IO[str]) -> int:
    """Write the records, then the end line that counts them (how an import knows the file is whole); returns
    the number of lines. Text no UTF-8 file can hold (a lone surrogate) is written as its JSON escape."""
    count = 0
    for record in records:
        if record.get("kind") == "end":
            continue
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        out.write(readable(line))
        out.write("\n")
        count += 1
    out.write(json.dumps({"kind": "end", "records": count}, separators=(",", ":")))
    out.write("\n")
    return count + 1


# --- reading ------------------------------------------------------------------------------------------------


def read_snapshot_records(source: str | os.PathLike[str] | IO[str]) -> list[Record]:
    """Parse a snapshot into records (header first), checking each line's JSON and kind; SnapshotError names
    the line. Values inside records are checked when they are loaded."""
    return list(iter_snapshot_records(source))


def iter_snapshot_records(source: str | os.PathLike[str] | IO[str]) -> Iterator[Record]:
    """The records of a snapshot one at a time, as `read_snapshot_records` reads them, without holding the file:
    for loads that must not keep a whole registry in memory (a bulk import streams them into one transaction).
    A file cut short or edited is found only at its end, as a SnapshotError raised after its last record: a
    consumer must treat everything read before as void (an import rolls back)."""
    if not isinstance(source, (str, os.PathLike)):
        yield from _iter_lines(source, getattr(source, "name", "<snapshot>"))
        return
    path = Path(source)
    if path.is_dir():
        raise SnapshotError(f"cannot read snapshot {str(path)!r}: it is a directory, not a JSON lines file")
    try:
        with path.open("r", encoding="utf-8") as handle:
            yield from _iter_lines(handle, str(path))
    except FileNotFoundError:
        raise SnapshotError(f"snapshot file {str(path)!r} does not exist") from None
    except UnicodeDecodeError:
        raise SnapshotError(f"snapshot {str(path)!r} is not UTF-8 text") from None
    except OSError as exc:
        raise StorageError(f"cannot read snapshot {str(path)!r}: {exc.strerror or exc}") from None


def _iter_lines(lines: Iterable[str], where: str) -> Iterator[Record]:
    """The records of a snapshot (header first, the end line checked and dropped); SnapshotError names the
    line of the first problem, or says the file is cut short (after the last record)."""
    count = 0
    last = 0
    header: Record | None = None
    end: Record | None = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SnapshotError(f"{where}, line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise SnapshotError(f"{where}, line {number}: expected a JSON object, got {type(record).__name__}")
        kind = record.get("kind")
        if kind not in KINDS:
            raise SnapshotError(f"{where}, line {number}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        if not count and kind != "snapshot":
            raise SnapshotError(f"{where}, line {number}: the first line must be the snapshot header (kind snapshot)")
        if count and kind == "snapshot":
            raise SnapshotError(f"{where}, line {number}: a second snapshot header")
        if end is not None:
            raise SnapshotError(f"{where}, line {number}: a record after the end line (line {end['_line']})")
        record["_line"] = number
        if kind == "end":
            end = record
            continue
        if kind == "snapshot":
            header = record
            if header.get("format") not in _READABLE_FORMATS:
                raise SnapshotError(
                    f"{where}: unsupported snapshot format {header.get('format')!r}; expected {SNAPSHOT_FORMAT}"
                )
        count += 1
        last = number
        yield record
    if header is None:
        raise SnapshotError(f"{where}: empty snapshot (no header line)")
    if end is None and header.get("format") != 1:
        raise SnapshotError(f"{where}: truncated: the file stops at line {last} without its end line")
    if end is not None and end.get("records") != count:
        raise SnapshotError(
            f"{where}, line {end['_line']}: the end line counts {end.get('records')!r} records but the file holds "
            f"{count}: it was cut or edited"
        )


def import_snapshot(source: str | os.PathLike[str] | IO[str], *, into: Registry | None = None) -> Registry:
    """A registry holding the snapshot: a new in-memory one, or `into` (which must be empty)."""
    return registry_from_records(read_snapshot_records(source), into=into)


def registry_from_records(records: Iterable[Mapping[str, Any]], *, into: Registry | None = None) -> Registry:
    """Load snapshot records (header first) into a new in-memory registry, or into an empty `into`.

    Any subset of a snapshot's records loads, as long as each namespace, topic and history comes with the
    records it depends on: the pipeline rebuilds a registry per partition from that partition's topics.
    """
    items = iter(records)
    header = next(items, None)
    if header is None or header.get("kind") != "snapshot":
        raise SnapshotError("snapshot records must start with the snapshot header")
    line = _field(header, "pulsar_version", str, default="")  # snapshots made before Pulsar lines were stored have none
    try:
        chosen = pulsar_line(line).name if line else None
    except RegistryError as exc:
        raise SnapshotError(f"{_where(header)}: {exc}") from None
    if into is None:
        broker = _field(header, "broker", dict, default={})
        try:
            config = BrokerConfig(**broker)
        except (TypeError, RegistryError) as exc:
            raise SnapshotError(f"{_where(header)}: invalid broker settings {broker!r}: {exc}") from None
        memory = MemoryStorage()
        if chosen:
            memory.put_setting(PULSAR_VERSION_SETTING, chosen)
        registry = Registry(memory, broker=config)
    else:
        registry = into
        if registry.tenants():
            raise StorageError(f"cannot import a snapshot into {registry.location}: the registry is not empty")
    storage = registry._storage
    with registry.batch():  # one transaction: a bad record leaves `into` as it was
        if into is not None and chosen:
            storage.put_setting(PULSAR_VERSION_SETTING, chosen)
        if into is not None and isinstance(storage, SqlStorage):
            from .storage._bulk_load import bulk_load

            bulk_load(storage, items, lambda record: _load(storage, record))  # COPY on PostgreSQL; same checks
            items = iter(())
        for record in items:
            try:
                _load(storage, record)
            except SnapshotError:
                raise
            except (RegistryError, KeyError, TypeError, ValueError) as exc:
                raise SnapshotError(f"{_where(record)}: invalid {record.get('kind')} record: {exc}") from None
    if into is not None and chosen:
        into._follow_stored_line()
    return registry


def _load(storage: Any, record: Mapping[str, Any]) -> None:
    kind = record.get("kind")
    if kind == "tenant":
        storage.put_tenant(parse_tenant(_field(record, "name", str)), 0)
    elif kind == "namespace":
        ns = NamespaceName.parse(_field(record, "name", str))
        storage.put_namespace(str(ns), _namespace_policy(_field(record, "policy", dict, default={})), 0)
    elif kind == "topic":
        name = TopicName.parse(_field(record, "name", str))
        storage.put_topic(str(name.base), str(name.namespace_name), 0)
        policy = _field(record, "policy", dict, default=None)
        if policy is not None:
            storage.put_topic_policy(str(name.base), _topic_policy(policy))
    elif kind == "version":
        entry = _version(record)
        history = storage.history(entry.topic)
        latest = history[-1].version if history else None
        if latest is not None and entry.version <= latest:
            raise SnapshotError(
                f"{_where(record)}: version {entry.version} of {entry.topic} comes after version {latest}; "
                "versions must be listed oldest first"
            )
        try:
            storage.append(entry, latest)
        except StaleHistoryError:  # only one writer here; kept for the storage contract
            raise SnapshotError(f"{_where(record)}: history of {entry.topic} changed while loading") from None
    elif kind == "client":
        storage.put_client(_client(record))
    elif kind == "audit":
        if isinstance(storage, AuditLog):
            storage.append_audit(_audit(record))
    elif kind == "review_rules":
        where = str(NamespaceName.parse(_field(record, "namespace", str)))
        found = checked_rules(
            _field(record, "required_approvals", int),
            _field(record, "reviewers", list),
            _field(record, "require_proposals", bool, default=False),  # absent from snapshots made before it
        )
        put_rules(storage, where, found)
    elif kind == "proposal":
        doc = {k: v for k, v in record.items() if k != "kind"}
        try:
            proposal = from_json(Proposal, doc)
        except InvalidArgumentError as exc:
            raise SnapshotError(f"{_where(record)}: not a proposal: {exc}") from None
        if proposal.id < 1:
            raise SnapshotError(f"{_where(record)}: a proposal id is a whole number from 1, not {proposal.id}")
        save(storage, proposal)
    else:
        raise SnapshotError(f"{_where(record)}: unexpected {kind!r} record after the header")


def dumps_records(records: Iterable[Record]) -> str:
    """Records as snapshot text (used by tests and by the pipeline's round trips)."""
    out = io.StringIO()
    _write(({k: v for k, v in r.items() if k != "_line"} for r in records), out)
    return out.getvalue()
