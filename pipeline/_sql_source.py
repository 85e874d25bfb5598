"""A SQLite file or a PostgreSQL database, read by key range from the executors (`registry.RangeReader`).

The driver opens the registry only to read its header and to plan: `RangeReader.plan` cuts the key space
into ranges of about TOPICS_PER_PART histories with boundaries computed by the database, so the driver holds
a few hundred keys, never a history. Each task opens the location itself and reads its range, 500 keys at a
time, inside one read transaction.

One state: on PostgreSQL the driver holds a REPEATABLE READ transaction open for the job and every task opens
its exported snapshot, so all tasks read one committed state. A SQLite file cannot share one: each task reads
its range in one transaction and records the change token it saw; the job compares them with the token of the
plan and names the ranges read from a newer state (`_reads` in pipeline/jobs.py).

The file must be on a path every executor sees (a shared mount); PostgreSQL must be reachable from every
executor, with its password from the executors' environment (`executor_settings`: PGPASSWORD passed from the
driver's environment as `spark.executorEnv.PGPASSWORD`, which Spark redacts) or a ~/.pgpass there; never in a
task, never on a command line (docs/guide/spark.md "On a cluster").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pyarrow as pa

from registry import open as open_registry
from registry._location import LocationKind, parse_location
from registry._snapshot import snapshot_records
from registry.storage._ranges import KeyRange, RangeReader, ReadState, TopicBundle

from ._arrow import ddl
from ._source import Planned, Source, SourceError
from ._tasks import Job, Read, judged, read_part

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Histories per task: small tasks (a few seconds each), so a slow or failed one costs little and the progress
# bar moves; a million topics make 500 of them.
TOPICS_PER_PART = 2_000
PARTS = "part bigint, low string, high string"


@dataclass(slots=True)
class SqlSource(Source):
    header: dict[str, Any]
    label: str
    location: str
    target: str  # what tasks open: a PostgreSQL URL without its password (they read PGPASSWORD)
    postgres: bool
    consistency: str = ""
    password: str | None = field(default=None, repr=False)  # from the URL given, for the executors' environment
    _state: ReadState | None = None

    @classmethod
    def open(cls, db: str, *, pulsar_version: str | None = None) -> SqlSource:
        where = parse_location(db)
        postgres = where.kind is LocationKind.POSTGRESQL
        target = db if postgres else str(Path(where.target).expanduser().resolve())
        password = None
        if postgres:
            target, password = without_password(db)
            if password is not None:  # the driver's own reads (and a local run's tasks) take it from there too
                os.environ["PGPASSWORD"] = password
        if not postgres and not Path(target).is_file():
            raise SourceError(f"--db {db!r}: no registry file there (create one with `schema-explorer seed`)")
        RangeReader(target).close()  # reachable, a registry, in a format tasks can read
        reg = open_registry(target, read_only=True, pulsar_version=pulsar_version)
        try:
            header = dict(next(iter(snapshot_records(reg))))
        finally:
            reg.close()
        consistency = (
            "one exported PostgreSQL snapshot, opened by every task"
            if postgres
            else "a read transaction per task on the SQLite file, its change token compared with the plan's"
        )
        return cls(
            header=header,
            label=f"registry {where.shown if postgres else target}",
            location=where.shown if postgres else target,
            target=target,
            postgres=postgres,
            consistency=consistency,
            password=password,
        )

    @contextmanager
    def pinned(self) -> Iterator[Planned]:
        with RangeReader(self.target) as reader, reader.pinned() as state:
            self._state = state
            try:
                yield Planned(state=state.token)
            finally:
                self._state = None

    def namespaces(self) -> list[str]:
        reg = open_registry(self.target, read_only=True)
        try:
            return sorted(ns for tenant in reg.tenants() for ns in reg.namespaces(tenant))
        finally:
            reg.close()

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
        with RangeReader(self.target) as reader:
            total = sum(n for _, n in reader.plan(10**12, scope))
            wanted = partitions or max(spark.sparkContext.defaultParallelism * 2, -(-total // TOPICS_PER_PART))
            plan = reader.plan(max(1, -(-total // max(wanted, 1))), scope)
        parts = [(i, r.low, r.high) for i, (r, _) in enumerate(plan)]
        frame = spark.createDataFrame(spark.sparkContext.parallelize(parts, len(parts)), PARTS)
        return frame.mapInArrow(range_mapper(self.target, self._state, job, schema), ddl(schema))

    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        """A few keys read on the driver (each its own one-key range)."""
        found: list[TopicBundle] = []
        with RangeReader(self.target) as reader, reader.reading(self._state) as read:
            for key in sorted(set(keys)):
                found += read.bundles(KeyRange(key, key + "\x01"))  # PostgreSQL text holds no NUL
        return found


def range_mapper(target: str, state: ReadState | None, job: Job, schema: pa.Schema) -> Any:
    """The mapInArrow function over part rows (part, low, high): each task reads its key range at `state`."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in inputs:
            columns = batch.to_pydict()
            for part, low, high in zip(columns["part"], columns["low"], columns["high"], strict=True):
                read = Read(part=part, low=low, high=high)

                def rows(read: Read, low: str | None = low, high: str | None = high) -> Iterator[pa.RecordBatch]:
                    with RangeReader(target) as reader, reader.reading(state) as reading:
                        read.state = reading.token
                        yield from judged(counted(reading.bundles(KeyRange(low, high)), read), job, read, schema)

                yield from read_part(read, rows, schema)

    return run


def counted(bundles: Iterator[TopicBundle], read: Read) -> Iterator[TopicBundle]:
    for bundle in bundles:
        read.records += len(bundle.records)
        yield bundle


def without_password(url: str) -> tuple[str, str | None]:
    """A PostgreSQL URL without its password (in the user part or a `password=` parameter), and the password:
    tasks are serialised and shipped, so the URL they carry must hold no secret."""
    parts = urlsplit(url)
    password = parts.password
    netloc = parts.netloc
    if password is not None:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name == "password":
            password = value
        else:
            query.append((name, value))
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment)), password


def executor_settings(source: Source) -> dict[str, str]:
    """Spark settings a source needs on the executors: PostgreSQL's password (given in the URL, or the driver's
    PGPASSWORD) as `spark.executorEnv.PGPASSWORD`, so tasks connect without it in a URL, a task or a command
    line. Spark hides settings whose name holds "password" in its UI and logs (spark.redaction.regex)."""
    if isinstance(source, SqlSource) and source.postgres:
        password = source.password or os.environ.get("PGPASSWORD")
        if password:
            return {"spark.executorEnv.PGPASSWORD": password}
    return {}
