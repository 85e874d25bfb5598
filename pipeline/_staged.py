"""Bundles the driver holds, staged as Parquet files that executors read (`RecordsSource`, the reader the key-range
and byte-range readers replaced): the tasks carry file paths, not the data, so no task grows with the registry
(a DataFrame made from a local list ships its rows inside the tasks: 158 MB at 10,000 topics)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry.storage._ranges import TopicBundle

from ._arrow import ddl
from ._tasks import BUNDLES_PER_BATCH, Job, Read, judged, read_part

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

STAGED = "tenant string, namespace string, key string, bundle string"
# At most this many bundles per partition (and BUNDLES_PER_BATCH per Parquet row group): at Spark's default (one
# row group per file, 10,000-row Arrow batches) 100,000 topics on 4 partitions made 650 MB row groups and 1 GB
# executors died of OutOfMemoryError (exit 52).
BUNDLES_PER_PARTITION = 5_000


def staged_frame(
    spark: SparkSession, bundles: list[TopicBundle], job: Job, schema: pa.Schema, partitions: int | None, work: Path
) -> DataFrame:
    """The job over `bundles`, written under `work` as one Parquet file per wanted partition and read back by
    Spark (`work` must be on storage every executor reads, as --out is; the caller removes it)."""
    import pyarrow.parquet as pq

    by_size = -(-len(bundles) // BUNDLES_PER_PARTITION)
    wanted = max(1, min(partitions or max(spark.sparkContext.defaultParallelism * 2, by_size), len(bundles) or 1))
    folder = work / "staged"
    folder.mkdir(parents=True, exist_ok=True)
    for part in range(wanted):
        chunk = bundles[part::wanted]
        table = pa.table(
            {
                "tenant": pa.array([b.tenant for b in chunk], pa.string()),
                "namespace": pa.array([b.namespace for b in chunk], pa.string()),
                "key": pa.array([b.key for b in chunk], pa.string()),
                "bundle": pa.array([json.dumps(list(b.records), separators=(",", ":")) for b in chunk], pa.string()),
            }
        )
        pq.write_table(table, folder / f"part-{part:05d}.parquet", row_group_size=BUNDLES_PER_BATCH)
    frame = spark.read.schema(STAGED).parquet(str(folder))
    if frame.rdd.getNumPartitions() != wanted:
        frame = frame.repartition(wanted)
    return frame.mapInArrow(staged_mapper(job, schema), ddl(schema))


def staged_mapper(job: Job, schema: pa.Schema) -> Any:
    """The mapInArrow function over staged rows: each task's bundles judged in batches, then its read row."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        read = Read(part=context.partitionId() if context is not None else 0)

        def rows(read: Read) -> Iterator[pa.RecordBatch]:
            def bundles() -> Iterator[TopicBundle]:
                for batch in inputs:
                    columns = batch.to_pydict()
                    for tenant, namespace, key, text in zip(
                        columns["tenant"], columns["namespace"], columns["key"], columns["bundle"], strict=True
                    ):
                        records = tuple(json.loads(text))
                        read.records += len(records)
                        yield TopicBundle(key=key, tenant=tenant, namespace=namespace, records=records)

            yield from judged(bundles(), job, read, schema)

        yield from read_part(read, rows, schema)

    return run
