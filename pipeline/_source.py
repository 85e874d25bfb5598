"""Read the audited registry ONCE on the driver, as snapshot records, and cut it into one bundle per topic.

A bundle holds everything the core needs to answer for that topic (its namespace with policy, the topic with
its policy, its schema history with tombstones, its recorded clients). Executors rebuild in-memory
registries from bundles (`registry_for`), so every verdict comes from `registry/`, never from this shell.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry import (
    Registry,
    RegistryError,
    SchemaRegistry,
    TopicName,
    parse_location,
    pulsar_line,
    read_snapshot_records,
    registry_from_records,
    snapshot_records,
)
from registry import open as open_registry

Record = dict[str, Any]


class SourceError(ValueError):
    """The registry to audit cannot be read; raised before Spark starts."""


@dataclass(slots=True)
class Source:
    """A registry as snapshot records, indexed for cutting into topic bundles."""

    header: Record
    label: str
    namespaces: dict[str, Record] = field(default_factory=dict)
    topics: dict[str, Record] = field(default_factory=dict)  # full base topic name -> record
    versions: dict[str, list[Record]] = field(default_factory=lambda: defaultdict(list))  # schema id -> records
    clients: dict[str, list[Record]] = field(default_factory=lambda: defaultdict(list))  # topic -> records

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], label: str) -> Source:
        items = iter(records)
        header = dict(next(items))
        header.pop("_line", None)
        source = cls(header=header, label=label)
        for raw in items:
            record = {k: v for k, v in raw.items() if k != "_line"}
            kind = record["kind"]
            if kind == "namespace":
                source.namespaces[record["name"]] = record
            elif kind == "topic":
                source.topics[str(TopicName.parse(record["name"]).base)] = record
            elif kind == "version":
                source.versions[TopicName.parse(record["topic"]).schema_id].append(record)
            elif kind == "client":
                source.clients[str(TopicName.parse(record["topic"]).base)].append(record)
        return source

    def topic_names(self, *, tenant: str | None = None, namespace: str | None = None) -> list[str]:
        """Topics in name order, optionally of one tenant or one namespace (`tenant/ns`)."""
        names = []
        for name, record in self.topics.items():
            ns = record.get("namespace") or str(TopicName.parse(name).namespace_name)
            if namespace is not None and ns != namespace:
                continue
            if tenant is not None and ns.split("/")[0] != tenant:
                continue
            names.append(name)
        return sorted(names)

    def bundle(self, topic: str) -> list[Record]:
        """Records for one topic: tenant, namespace, topic, history, clients (in snapshot order)."""
        record = self.topics[topic]
        name = TopicName.parse(topic)
        ns = str(name.namespace_name)
        namespace = self.namespaces.get(ns, {"kind": "namespace", "name": ns, "policy": {}})
        return [
            {"kind": "tenant", "name": name.tenant},
            namespace,
            record,
            *self.versions.get(name.schema_id, []),
            *self.clients.get(topic, []),
        ]

    def rows(self, topics: Iterable[str]) -> list[dict[str, Any]]:
        """One row per topic for Spark: tenant, namespace, topic and its bundle as JSON text."""
        rows = []
        for topic in topics:
            name = TopicName.parse(topic)
            rows.append(
                {
                    "tenant": name.tenant,
                    "namespace": str(name.namespace_name),
                    "topic": topic,
                    "bundle": json.dumps(self.bundle(topic), separators=(",", ":"), ensure_ascii=False),
                }
            )
        return rows

    def live_schema_ids(self) -> set[str]:
        return set(self.versions)


def load_source(
    *,
    db: str | None = None,
    url: str | None = None,
    snapshot: str | None = None,
    token: str | None = None,
    pulsar_version: str | None = None,
) -> Source:
    """Read exactly one of an embedded registry file, a remote admin URL or a snapshot; SourceError if it
    cannot be read (missing file, not a registry, malformed snapshot, unreachable endpoint). The audits judge
    as the source's Pulsar line, or as `pulsar_version` when given."""
    given = [x for x in (db, url, snapshot) if x]
    if len(given) != 1:
        raise SourceError("give exactly one source: --db PATH, --url URL or --snapshot FILE")
    try:
        if snapshot:
            source = Source.from_records(read_snapshot_records(snapshot), f"snapshot {snapshot}")
            if pulsar_version:
                source.header["pulsar_version"] = pulsar_line(pulsar_version).name
            return source
        location = parse_location(db) if db else None
        if db and location and location.kind != "sqlite":  # PostgreSQL, memory: or a storage of the user's own
            return _from_registry(
                open_registry(db, read_only=True, pulsar_version=pulsar_version), f"registry {location.shown}"
            )
        if db:
            assert location is not None
            path = Path(location.target).expanduser()
            if not path.is_file():
                raise SourceError(f"--db {db!r}: no registry file there (create one with `schema-explorer seed`)")
            return _from_registry(
                open_registry(path, read_only=True, pulsar_version=pulsar_version), f"registry {path}"
            )
        assert url is not None
        return _from_registry(
            open_registry(url, token=token, read_only=True, pulsar_version=pulsar_version), f"registry {url}"
        )
    except RegistryError as exc:
        raise SourceError(str(exc)) from None


def _from_registry(reg: SchemaRegistry, label: str) -> Source:
    try:
        return Source.from_records(list(snapshot_records(reg)), label)
    finally:
        close = getattr(reg, "close", None)
        if callable(close):
            close()


def registry_for(header: Mapping[str, Any], bundles: Iterable[list[Record]]) -> Registry:
    """An in-memory registry holding these topics' bundles (tenants and namespaces once each)."""
    tenants: dict[str, Record] = {}
    namespaces: dict[str, Record] = {}
    topics: list[Record] = []
    versions: dict[tuple[str, int], Record] = {}  # persistent:// and non-persistent:// share a history
    clients: list[Record] = []
    for bundle in bundles:
        for record in bundle:
            kind = record["kind"]
            if kind == "tenant":
                tenants[record["name"]] = record
            elif kind == "namespace":
                namespaces[record["name"]] = record
            elif kind == "topic":
                topics.append(record)
            elif kind == "version":
                versions[(TopicName.parse(record["topic"]).schema_id, record["version"])] = record
            elif kind == "client":
                clients.append(record)
    ordered = sorted(versions.items(), key=lambda item: item[0])
    return registry_from_records(
        [dict(header), *tenants.values(), *namespaces.values(), *topics, *(r for _, r in ordered), *clients]
    )


def batch_registry(header: Mapping[str, Any], bundles: Mapping[str, list[Record]]) -> tuple[Registry, dict[str, str]]:
    """One registry for a batch of topics; a topic whose bundle does not load is left out and reported
    (topic -> reason) instead of failing the batch."""
    try:
        return registry_for(header, bundles.values()), {}
    except (RegistryError, KeyError, TypeError, ValueError):
        pass
    good: list[list[Record]] = []
    errors: dict[str, str] = {}
    for topic, bundle in bundles.items():
        try:
            registry_for(header, [bundle])
            good.append(bundle)
        except (RegistryError, KeyError, TypeError, ValueError) as exc:
            errors[topic] = f"{type(exc).__name__}: {exc}"
    return registry_for(header, good), errors
