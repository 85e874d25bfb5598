"""What every task does, whatever its source: read its own part of the registry, judge it in batches with the
core, and say how its read went.

Each task ends with one *read row* (`kind = "read"`): which part it read (a key range, a namespace, a byte
range of a snapshot file), the registry state it read (the change token, where the source has one), how many
topics and records it read, when, and why it stopped if it failed. A failed read never fails the job: the
rows judged before the failure stay (they come from the state the task read), the read row carries the
reason, and the job's summary says which parts were not read (`source_reads` under --out).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from registry.storage._ranges import TopicBundle

from ._arrow import batches

# Topic bundles judged at once (one in-memory registry each): what an executor holds at a time. A bundle holds a
# topic's whole history (20 versions of a 1 KB schema: ~26 KB), so 500 of them stay in the tens of MB.
BUNDLES_PER_BATCH = 500
READ_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("read_part", pa.int64()),
    ("read_low", pa.string()),
    ("read_high", pa.string()),
    ("read_state", pa.int64()),
    ("read_topics", pa.int64()),
    ("read_records", pa.int64()),
    ("read_error", pa.string()),
    ("read_started", pa.int64()),
    ("read_ended", pa.int64()),
)
# `source_reads`: one row per part of the source a task read.
SOURCE_READ_COLUMNS = {
    "read_part": "part",
    "read_low": "low",
    "read_high": "high",
    "read_state": "state",
    "read_topics": "topics",
    "read_records": "records",
    "read_error": "error",
    "read_started": "started_at",
    "read_ended": "ended_at",
}
ERROR_LIMIT = 500

Job = Callable[[list[TopicBundle]], list[dict[str, Any]]]
"""The core's verdicts for a batch of topic bundles, as output rows (compat_matrix.make_job, ...)."""


def with_reads(schema: pa.Schema) -> pa.Schema:
    """A job's output schema with the read row's columns."""
    return pa.schema([*schema, *(pa.field(name, kind) for name, kind in READ_COLUMNS)])


@dataclass(slots=True)
class Read:
    """How one task's read goes: filled while it reads, emitted as its read row at the end."""

    part: int
    low: str | None = None
    high: str | None = None
    state: int | None = None
    topics: int = 0
    records: int = 0
    error: str | None = None
    started: int = field(default_factory=lambda: int(time.time() * 1000))

    def failed(self, exc: BaseException) -> None:
        text = f"{type(exc).__name__}: {exc}".strip()
        self.error = text[:ERROR_LIMIT] if self.error is None else self.error

    def row(self) -> dict[str, Any]:
        return {
            "kind": "read",
            "read_part": self.part,
            "read_low": self.low,
            "read_high": self.high,
            "read_state": self.state,
            "read_topics": self.topics,
            "read_records": self.records,
            "read_error": self.error,
            "read_started": self.started,
            "read_ended": int(time.time() * 1000),
        }


def judged(bundles: Iterable[TopicBundle], job: Job, read: Read, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The job's rows for `bundles`, BUNDLES_PER_BATCH at a time, counting the topics read."""
    batch: list[TopicBundle] = []
    for bundle in bundles:
        batch.append(bundle)
        read.topics += len(bundle.topics)
        if len(batch) >= BUNDLES_PER_BATCH:
            yield from batches(job(batch), schema)
            batch = []
    if batch:
        yield from batches(job(batch), schema)


def read_part(
    read: Read, rows: Callable[[Read], Iterator[pa.RecordBatch]], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """`rows(read)`, then the read row; any failure of the read ends it as a counted error, never a failed task
    (Spark would retry it and then fail the whole job)."""
    try:
        yield from rows(read)
    except Exception as exc:  # noqa: BLE001 - a source that cannot be read (network, file, database) is counted
        read.failed(exc)
    yield from batches([read.row()], schema)
