"""A registry read through the facade, by namespace, from the executors: a remote admin API (a broker, or
`schema-explorer serve`) and a storage of one's own (`package.module:factory`, a registered scheme).

The driver lists the namespaces (a request per tenant) and plans one part per namespace; each task opens the
registry itself and reads its namespace topic by topic (`registry.namespace_bundles`): its requests run one
at a time, so an executor has at most as many requests in flight as it runs tasks, whatever the fleet's size.
A token for a remote API reaches the executors in their environment (`SCHEMA_EXPLORER_TOKEN`, set from the
driver's as `spark.executorEnv.*`), never inside a task. A cluster named by a client.conf or a pulsarctl context
(`--client-conf`, `--context`) is reached by each executor reading that file itself: a task carries the file's
absolute path (and the context's name), never a credential, so nothing secret passes through Spark. On a cluster
of machines the file, and those it names (trust store, key files), must be at the same path on the workers.

No single state: an admin API has no snapshot and no change token, so each namespace is read at its own time
during the run, and a change made meanwhile shows in the namespaces read after it. The job says so, with the
time each namespace was read (`source_reads`). A storage of one's own with a change token has each task's
token compared with the plan's instead, as a SQLite file has.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry import open as open_registry
from registry._location import remote_url
from registry._snapshot import snapshot_records
from registry.remote._connection import PULSARCTL_CONFIG
from registry.storage._ranges import KeyRange, TopicBundle, namespace_bundles

from ._arrow import ddl
from ._source import Planned, Source
from ._tasks import Job, Read, judged, read_part

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from registry import SchemaRegistry

TOKEN_ENV = "SCHEMA_EXPLORER_TOKEN"
PARTS = "part bigint, namespace string"


@dataclass(frozen=True, slots=True)
class Reach:
    """How the driver and every task open the registry: a location (a token, if any, from the environment), or
    a client.conf's absolute path, or a pulsarctl context's name and its config file. Paths and names only: the
    credentials stay in the files, which whoever opens reads."""

    target: str | None
    client_conf: str | None = None
    context: str | None = None
    pulsarctl_config: str | None = None
    pulsar_version: str | None = None

    @classmethod
    def by_file(cls, *, client_conf: str | None, context: str | None, pulsar_version: str | None) -> Reach:
        """A client.conf or a context, as named on the driver: the files resolved to absolute paths, which an
        executor's working folder and home (not the driver's) cannot change."""
        if client_conf is not None:
            return cls(None, client_conf=str(Path(client_conf).expanduser().resolve()), pulsar_version=pulsar_version)
        config = str(PULSARCTL_CONFIG.expanduser().resolve())
        return cls(None, context=context, pulsarctl_config=config, pulsar_version=pulsar_version)

    def open(self) -> SchemaRegistry:
        if self.target is None:
            return open_registry(
                client_conf=self.client_conf,
                context=self.context,
                pulsarctl_config=self.pulsarctl_config,
                read_only=True,
                pulsar_version=self.pulsar_version,
            )
        token = os.environ.get(TOKEN_ENV) or None
        return open_registry(self.target, token=token, read_only=True, pulsar_version=self.pulsar_version)


@dataclass(slots=True)
class RegistrySource(Source):
    header: dict[str, Any]
    label: str
    location: str
    reach: Reach
    remote: bool
    all_namespaces: list[str]
    consistency: str = ""

    @classmethod
    def open(cls, reach: Reach, *, token: str | None = None) -> RegistrySource:
        """`token`: the driver's, for a location (the tasks read theirs from the environment)."""
        if reach.target is None:
            reg = reach.open()
        else:
            reg = open_registry(reach.target, token=token, read_only=True, pulsar_version=reach.pulsar_version)
        remote = reach.target is None or remote_url(reach.target) is not None
        try:
            header = dict(next(iter(snapshot_records(reg))))
            namespaces = sorted(ns for tenant in reg.tenants() for ns in reg.namespaces(tenant))
            shown = str(getattr(reg, "location", reach.target))
        finally:
            close = getattr(reg, "close", None)
            if callable(close):
                close()
        consistency = (
            "none: an admin API gives no single state; each namespace is read at its own time"
            if remote
            else "a change token per namespace read, compared with the plan's"
        )
        return cls(
            header=header,
            label=f"registry {shown}",
            location=(reach.target or shown) if remote else shown,
            reach=reach,
            remote=remote,
            all_namespaces=namespaces,
            consistency=consistency,
        )

    @contextmanager
    def pinned(self) -> Iterator[Planned]:
        if self.remote:
            yield Planned()
            return
        assert self.reach.target is not None  # a registry of one's own, named by its location
        reg = open_registry(self.reach.target, read_only=True)
        try:
            token = reg.change_token()
        finally:
            reg.close()
        yield Planned(state=token)

    def namespaces(self) -> list[str]:
        return list(self.all_namespaces)

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
        wanted = [ns for ns in self.all_namespaces if f"{ns}/" in scope or _overlaps(ns, scope)]
        parts = [(i, ns) for i, ns in enumerate(wanted)]
        frame = spark.createDataFrame(spark.sparkContext.parallelize(parts, max(1, len(parts))), PARTS)
        mapper = namespace_mapper(self.reach, not self.remote, scope, job, schema)
        return frame.mapInArrow(mapper, ddl(schema))

    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        """A few keys read on the driver, topic by topic."""
        reg = self.reach.open()
        try:
            found: list[TopicBundle] = []
            for namespace in sorted({k.rsplit("/", 1)[0] for k in keys}):
                if namespace in self.all_namespaces:
                    found += namespace_bundles(reg, namespace, set(keys))
            return found
        finally:
            reg.close()


def _overlaps(namespace: str, scope: KeyRange) -> bool:
    """Whether any key of `namespace` can fall in `scope` (a tenant's or a namespace's range, or everything)."""
    low, high = f"{namespace}/", f"{namespace}0"
    return (scope.high is None or low < scope.high) and (scope.low is None or high > scope.low)


def namespace_mapper(reach: Reach, tokens: bool, scope: KeyRange, job: Job, schema: pa.Schema) -> Any:
    """The mapInArrow function over part rows (part, namespace): each task opens the registry and reads its
    namespace; `tokens`: the registry has a change token worth recording (not an admin API)."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in inputs:
            columns = batch.to_pydict()
            for part, namespace in zip(columns["part"], columns["namespace"], strict=True):
                read = Read(part=part, low=namespace, high=namespace)

                def rows(read: Read, namespace: str = namespace) -> Iterator[pa.RecordBatch]:
                    reg = reach.open()
                    try:
                        bundles = (b for b in namespace_bundles(reg, namespace) if b.key in scope)
                        yield from judged(_counted(bundles, read), job, read, schema)
                        if tokens:
                            read.state = reg.change_token()  # after the read: any change before its end shows
                    finally:
                        reg.close()

                yield from read_part(read, rows, schema)

    return run


def _counted(bundles: Iterator[TopicBundle], read: Read) -> Iterator[TopicBundle]:
    for bundle in bundles:
        read.records += len(bundle.records)
        yield bundle


def executor_token() -> dict[str, str]:
    """The admin API token for the executors' environment (Spark redacts settings named like a token)."""
    token = os.environ.get(TOKEN_ENV)
    return {f"spark.executorEnv.{TOKEN_ENV}": token} if token else {}
