"""The registry an audit reads, as a plan the driver makes from bounds alone; executors read the registry.

The driver checks the source (exists, reachable, a registry, in a format it reads), reads its header (the
broker settings and the Pulsar line the verdicts follow) and plans parts: key ranges of a SQL registry
(`_sql_source.py`), namespaces of a registry read through the facade (a remote admin API, a storage of one's
own: `_registry_source.py`), byte ranges of a snapshot file (`_snapshot_source.py`), the tables of a Parquet
export (`_parquet_source.py`). Each task then opens the source itself, reads its part as topic bundles (every
record the core needs for the topics of one key, `registry.TopicBundle`), rebuilds small in-memory registries
from them (`registry_for`) and calls the core. The driver never holds a history: its memory does not grow
with the fleet.

`RecordsSource` is the reader this replaced, kept for registries that exist only in the driver's memory
(tests, notebooks): the driver holds every record and stages the bundles as Parquet files for the executors.
"""

from __future__ import annotations

import abc
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import Registry, RegistryError, TopicName
from registry._snapshot import read_snapshot_records, registry_from_records
from registry.storage._ranges import KeyRange, TopicBundle

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from ._tasks import Job

Record = dict[str, Any]


class SourceError(ValueError):
    """The registry to audit cannot be read; raised before Spark starts."""


@dataclass(slots=True)
class Planned:
    """What the driver planned a job on: the registry state every task should read (a change token, None
    where the source has none) and, for a snapshot file, the records its end line counts."""

    state: int | None = None
    records: int | None = None


class Source(abc.ABC):
    """A registry to audit: its header, how to read it from executors, and what the driver may ask of it."""

    header: Record
    label: str
    location: str  # what the run record names (a path, a URL, a location without its password)
    consistency: str  # how its tasks see one state, for the summary

    @contextmanager
    def pinned(self) -> Iterator[Planned]:
        """The state every task reads, held for the block (the job runs inside it)."""
        yield Planned()

    @abc.abstractmethod
    def namespaces(self) -> list[str]:
        """Every namespace (`tenant/ns`): small, read on the driver."""

    @abc.abstractmethod
    def judged(
        self,
        spark: SparkSession,
        job: Job,
        schema: pa.Schema,
        scope: KeyRange,
        partitions: int | None,
        planned: Planned,
        work: Path,
    ) -> DataFrame:
        """The job's rows over every topic of `scope`, each task reading its own part of the source, plus one
        read row per part (`_tasks.py`). `work` is a folder under --out for files the tasks read, removed when
        the job is done."""

    @abc.abstractmethod
    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        """The bundles of a few keys (the topics a message archive names), read on the driver without Spark."""

    def topic_bundle(self, topic: str) -> TopicBundle | None:
        """One topic's bundle (a candidate reader's checks, before Spark starts)."""
        found = self.bundles([TopicName.parse(topic).schema_id])
        return found[0] if found else None

    def close(self) -> None:
        return None


def with_tenant(bundle: TopicBundle) -> list[Record]:
    """A bundle's records with its tenant's, as `registry_for` takes them."""
    return [{"kind": "tenant", "name": bundle.tenant}, *bundle.records]


def topics_of(bundle: TopicBundle) -> list[tuple[str, str, str]]:
    """(tenant, namespace, full base name) of each topic a bundle holds; a name that does not parse is kept as
    written (its bundle then fails to load, and the error row names it)."""
    found = []
    for name in bundle.topics:
        try:
            base = TopicName.parse(name).base
        except RegistryError:
            found.append((bundle.tenant, bundle.namespace, str(name)))
            continue
        found.append((base.tenant, str(base.namespace_name), str(base)))
    return found


def bundle_of(key: str, records: Iterable[Record], namespaces: Mapping[str, Record]) -> TopicBundle:
    """A TopicBundle from a key's topic, version and client records and the namespaces' records (a namespace
    with no record of its own has an empty policy, as the registry reads it)."""
    ns = key.rsplit("/", 1)[0]
    namespace = namespaces.get(ns) or {"kind": "namespace", "name": ns, "policy": {}}
    return TopicBundle(key=key, tenant=ns.split("/")[0], namespace=ns, records=(namespace, *records))


# --- the reader this replaced: every record on the driver -------------------------------------------------------


@dataclass(slots=True)
class RecordsSource(Source):
    """A registry whose records the driver holds (an in-memory registry, tests): bundles are staged as Parquet
    under OUT/_staging for the executors (pipeline/_staged.py), so no task carries them."""

    header: Record
    label: str
    location: str = ""
    consistency: str = "read once by the driver"
    namespace_records: dict[str, Record] = field(default_factory=dict)
    topics: dict[str, Record] = field(default_factory=dict)  # full base topic name -> record
    versions: dict[str, list[Record]] = field(default_factory=lambda: defaultdict(list))  # schema id -> records
    clients: dict[str, list[Record]] = field(default_factory=lambda: defaultdict(list))  # topic -> records

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], label: str, location: str = "") -> RecordsSource:
        items = iter(records)
        header = dict(next(items))
        header.pop("_line", None)
        source = cls(header=header, label=label, location=location)
        for raw in items:
            record = {k: v for k, v in raw.items() if k != "_line"}
            kind = record["kind"]
            if kind == "namespace":
                source.namespace_records[record["name"]] = record
            elif kind == "topic":
                source.topics[str(TopicName.parse(record["name"]).base)] = record
            elif kind == "version":
                source.versions[TopicName.parse(record["topic"]).schema_id].append(record)
            elif kind == "client":
                source.clients[str(TopicName.parse(record["topic"]).base)].append(record)
        return source

    def namespaces(self) -> list[str]:
        return sorted(self.namespace_records)

    def topic_names(self, *, tenant: str | None = None, namespace: str | None = None) -> list[str]:
        """Topics in name order, optionally of one tenant or one namespace (`tenant/ns`)."""
        scope = KeyRange.of(tenant=tenant, namespace=namespace)
        return sorted(name for name in self.topics if TopicName.parse(name).schema_id in scope)

    def key_bundles(self, keys: Iterable[str]) -> list[TopicBundle]:
        """One bundle per key, its topics, history and clients (in snapshot order)."""
        by_key: dict[str, list[str]] = defaultdict(list)
        for topic in self.topics:
            by_key[TopicName.parse(topic).schema_id].append(topic)
        found = []
        for key in keys:
            if key not in by_key:
                continue
            topics = sorted(by_key[key])
            records = [self.topics[t] for t in topics] + self.versions.get(key, [])
            records += [c for t in topics for c in self.clients.get(t, [])]
            found.append(bundle_of(key, records, self.namespace_records))
        return found

    def judged(
        self,
        spark: SparkSession,
        job: Job,
        schema: pa.Schema,
        scope: KeyRange,
        partitions: int | None,
        planned: Planned,
        work: Path,
    ) -> DataFrame:
        from ._staged import staged_frame

        keys = sorted(k for k in self._keys() if k in scope)
        return staged_frame(spark, self.key_bundles(keys), job, schema, partitions, work)

    def _keys(self) -> set[str]:
        return {TopicName.parse(t).schema_id for t in self.topics}

    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        return self.key_bundles(keys)


def records_source(reg: Registry | Any, label: str) -> RecordsSource:
    """The reader this replaced, for a registry in this process: every record read now, on the driver."""
    from registry._snapshot import snapshot_records

    return RecordsSource.from_records(list(snapshot_records(reg)), label)


def snapshot_file_source(path: str, label: str | None = None) -> RecordsSource:
    """A snapshot file read whole on the driver (the reader this replaced; tests compare with it)."""
    return RecordsSource.from_records(
        read_snapshot_records(path), label or f"snapshot {path}", str(Path(path).resolve())
    )


# --- on the executors: registries from bundles ----------------------------------------------------------------


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


def batch_registry(header: Mapping[str, Any], batch: Iterable[TopicBundle]) -> tuple[Registry, dict[str, str]]:
    """One registry for a batch of topic bundles; a key whose rows could not be read (`TopicBundle.problem`) or
    whose bundle does not load is left out and reported (key -> reason) instead of failing the batch."""
    errors = {b.key: b.problem for b in batch if b.problem is not None}
    bundles = {b.key: with_tenant(b) for b in batch if b.problem is None}
    try:
        return registry_for(header, bundles.values()), errors
    except (RegistryError, KeyError, TypeError, ValueError):
        pass
    good: list[list[Record]] = []
    for key, bundle in bundles.items():
        try:
            registry_for(header, [bundle])
            good.append(bundle)
        except (RegistryError, KeyError, TypeError, ValueError) as exc:
            errors[key] = f"{type(exc).__name__}: {exc}"
    return registry_for(header, good), errors
