"""A Parquet export (`schema-explorer export --format parquet DIR`, pipeline/_parquet_format.py) as an audit's
source (`--parquet DIR`).

The driver checks that every table the audits read is there and is this tool's (its columns and their types,
from one file's footer each), reads the one-row `registry` table (the header) and the namespaces (a few per
tenant; broadcast to every task). Spark reads the topics, versions and clients tables on the executors (a
`--tenant`/`--namespace` scope prunes partition folders); each row becomes a snapshot record keyed by schema
id, and pipeline/_assemble.py shuffles them into bundles. A row that cannot be read is counted with its reason.

An export is a file set that does not change: its state is the registry's change token when it was exported
(in `registry`), which the run record names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from registry import RegistryError, TopicName
from registry.parquet import (
    PARTITIONED,
    TABLES,
    check_parquet_export,
    export_header,
    namespace_record,
    parquet_record,
    partitioned_rows,
    table_files,
)
from registry.storage._ranges import KeyRange, TopicBundle

from ._arrow import batches, ddl
from ._assemble import KEYS_PER_PARTITION, PARSED, assembled
from ._source import Planned, Source, SourceError, bundle_of
from ._tasks import Job, Read, read_part

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_SPARK_TYPES = {pa.string(): "string", pa.int64(): "bigint", pa.bool_(): "boolean", pa.binary(): "binary"}


def spark_ddl(name: str) -> str:
    """A table's Spark schema, its partition columns included."""
    columns = []
    for f in TABLES[name]:
        kind = "map<string,string>" if pa.types.is_map(f.type) else _SPARK_TYPES[f.type]
        columns.append(f"`{f.name}` {kind}")
    columns += [f"`{p}` string" for p in PARTITIONED.get(name, ())]
    return ", ".join(columns)


@dataclass(slots=True)
class ParquetSource(Source):
    header: dict[str, Any]
    label: str
    location: str
    folder: Path
    namespace_records: dict[str, dict[str, Any]]
    topics: int
    change_token: int | None
    consistency: str = "an export: the registry as it was when exported"

    @classmethod
    def open(cls, folder: Path) -> ParquetSource:
        folder = folder.expanduser().resolve()
        try:
            registry = check_parquet_export(folder)
        except RegistryError as exc:
            raise SourceError(f"--parquet {str(folder)!r}: {exc}") from None
        namespaces = {}
        header = export_header(registry)
        for row in partitioned_rows(folder, "namespaces"):
            record = namespace_record(row)
            namespaces[record["name"]] = record
        topics = sum(pq.ParquetFile(f).metadata.num_rows for f in table_files(folder, "topics"))
        return cls(
            header=header,
            label=f"Parquet export {folder}",
            location=str(folder),
            folder=folder,
            namespace_records=namespaces,
            topics=topics,
            change_token=registry["change_token"],
        )

    @contextmanager
    def pinned(self) -> Iterator[Planned]:
        """The state the export was written from (its registry's change token), which the run record names."""
        yield Planned(state=self.change_token)

    def namespaces(self) -> list[str]:
        return sorted(self.namespace_records)

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
        from pyspark.sql import functions as F

        frames = []
        tenant, namespace = scope_names(scope)
        for number, name in enumerate(("topics", "versions", "clients")):
            frame = spark.read.schema(spark_ddl(name)).parquet(str(self.folder / name))
            if tenant is not None:
                frame = frame.filter(F.col("tenant") == tenant)
            if namespace is not None:
                frame = frame.filter(F.col("namespace") == namespace)
            frames.append(frame.mapInArrow(rows_mapper(name, number, scope), ddl(PARSED)))
        parsed = frames[0].unionByName(frames[1]).unionByName(frames[2])
        cores = spark.sparkContext.defaultParallelism
        shuffle = partitions or max(cores * 2, -(-self.topics // KEYS_PER_PARTITION))
        shared = spark.sparkContext.broadcast(self.namespace_records)
        return assembled(parsed, shuffle, shared, job, schema)

    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        """A few keys read on the driver with pyarrow: each key's partition folder, filtered by schema id."""
        import pyarrow.dataset as ds

        found: dict[str, list[dict[str, Any]]] = {}
        for key in sorted(set(keys)):
            tenant, local, _ = key.split("/", 2)
            for name in ("topics", "versions", "clients"):
                folder = self.folder / name / f"tenant={_escape(tenant)}" / f"namespace={_escape(local)}"
                if not folder.is_dir():
                    continue
                table = ds.dataset(folder, format="parquet").to_table()
                for row in table.to_pylist():
                    record = parquet_record(name, tenant, local, row)
                    if _key_of(record) == key:
                        found.setdefault(key, []).append(record)
        return [bundle_of(k, found[k], self.namespace_records) for k in sorted(found)]


def _escape(value: str) -> str:
    from ._parquet_format import escape

    return escape(value)


def scope_names(scope: KeyRange) -> tuple[str | None, str | None]:
    """(tenant, namespace's own name) when `scope` is one tenant's or one namespace's keys (KeyRange.of)."""
    if scope.low is None or not scope.low.endswith("/"):
        return None, None
    prefix = scope.low[:-1]
    if "/" in prefix and scope == KeyRange.of(namespace=prefix):
        tenant, namespace = prefix.split("/")
        return tenant, namespace
    if "/" not in prefix and scope == KeyRange.of(tenant=prefix):
        return prefix, None
    return None, None


def _key_of(record: dict[str, Any]) -> str:
    return TopicName.parse(record["name"] if record["kind"] == "topic" else record["topic"]).schema_id


def rows_mapper(table: str, number: int, scope: KeyRange) -> Any:
    """The mapInArrow function over one table's rows: each row as a keyed record row (PARSED)."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        read = Read(part=number * 1_000_000 + (context.partitionId() if context is not None else 0), low=table)

        def rows(read: Read) -> Iterator[pa.RecordBatch]:
            problems: list[str] = []
            for batch in inputs:
                out = []
                for row in batch.to_pylist():
                    try:
                        record = parquet_record(table, row["tenant"], row["namespace"], row)
                        key = _key_of(record)
                        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
                    except Exception as exc:  # noqa: BLE001 - a row that cannot be read is counted, with its reason
                        problems.append(f"{type(exc).__name__}: {exc}")
                        continue
                    read.records += 1
                    if key in scope:
                        read.topics += table == "topics"
                        out.append({"kind": record["kind"], "key": key, "seq": row.get("version") or 0, "record": text})
                yield from batches(out, PARSED)
            if problems:
                read.error = f"{len(problems)} {table} row(s) not read; first: {problems[0]}"

        yield from read_part(read, rows, PARSED)

    return run
