"""Topic bundles from record rows spread over a file's parts: the snapshot and Parquet sources read their parts
in parallel (byte ranges of a JSON lines file, the row groups of Parquet tables), where a topic's records lie
in different parts (its topic line, its versions and its clients are in three sections of a snapshot, three
tables of an export). Each part emits one row per record (key, kind, seq, record as JSON); Spark shuffles them
by key across the executors and sorts each partition by key, and the assembling task walks the sorted rows,
one key at a time, into bundles that the job judges. Namespaces' records (a few per tenant) are broadcast.

The driver takes part in none of it: the shuffle runs between executors, on their disks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry.storage._ranges import TopicBundle

from ._arrow import batches, ddl, schema
from ._source import bundle_of
from ._tasks import READ_COLUMNS, Job, Read, judged, with_reads

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PARSED = with_reads(schema(("kind", pa.string()), ("key", pa.string()), ("seq", pa.int64()), ("record", pa.string())))
# Keys assembled per shuffle partition: a task holds one key's records at a time and BUNDLES_PER_BATCH bundles.
KEYS_PER_PARTITION = 2_000


def assembled(parsed: DataFrame, partitions: int, namespaces: Any, job: Job, output: pa.Schema) -> DataFrame:
    """The job's rows over the bundles that `parsed` rows (PARSED) make, shuffled into `partitions` by key;
    the parts' read rows pass through. `namespaces` is a broadcast of {namespace: record}."""
    from pyspark.sql import functions as F

    shuffled = parsed.repartition(partitions, "key").sortWithinPartitions(F.col("key"), F.col("seq"))
    return shuffled.mapInArrow(assemble_mapper(namespaces, job, output), ddl(output))


def assemble_mapper(namespaces: Any, job: Job, output: pa.Schema) -> Any:
    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        known: Mapping[str, dict[str, Any]] = getattr(namespaces, "value", namespaces)
        passed: list[dict[str, Any]] = []
        context = TaskContext.get()
        read = Read(part=-1 - (context.partitionId() if context is not None else 0))

        def bundles() -> Iterator[TopicBundle]:
            key: str | None = None
            records: list[dict[str, Any]] = []
            for batch in inputs:
                columns = batch.to_pydict()
                for i, kind in enumerate(columns["kind"]):
                    if kind == "read":
                        passed.append({name: columns[name][i] for name, _ in READ_COLUMNS} | {"kind": "read"})
                        continue
                    row_key = columns["key"][i]
                    if row_key != key:
                        if key is not None and records:
                            yield bundle_of(key, records, known)
                        key, records = row_key, []
                        read.low = read.low or row_key
                        read.high = row_key
                    records.append(json.loads(columns["record"][i]))
            if key is not None and records:
                yield bundle_of(key, records, known)

        try:
            yield from judged(bundles(), job, read, output)
        except Exception as exc:  # noqa: BLE001 - counted: the parts' read rows say how the source was read,
            read.failed(exc)  # this task's row only when assembling itself failed (its keys low..high)
            yield from batches([read.row()], output)
        yield from batches(passed, output)

    return run
