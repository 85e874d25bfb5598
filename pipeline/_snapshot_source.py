"""A snapshot file (JSON lines, registry/_snapshot.py) read by byte range from the executors.

The driver reads only the file's ends: the header (first line: broker settings, Pulsar line), the end line
(last line: how many records the file holds) and the tenant and namespace lines at its head (namespaces with
their policies, a few per tenant; broadcast to every task). It plans byte ranges; each task opens the file on
a path every executor sees, reads the lines that start in its range (a line belongs to the range its first byte
is in), and emits one row per topic, version and client record, keyed by schema id (pipeline/_assemble.py
shuffles them into bundles). A line that cannot be read is counted with its byte offset and reason; the job
compares the records read with the end line's count, so a file cut or edited is reported, never a silent pass.

A file does not change under a job (write a new one and rename it): the state is the file as the plan saw it,
its size and modification time, checked again by every task.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry import RegistryError, TopicName
from registry._pulsar_version import pulsar_line
from registry.storage._ranges import KeyRange, TopicBundle

from ._arrow import batches, ddl
from ._assemble import KEYS_PER_PARTITION, PARSED, assembled
from ._source import Planned, Source, SourceError, bundle_of
from ._tasks import Job, Read, read_part

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BYTES_PER_PART = 64 << 20  # a part's lines are parsed as they are read: memory stays one Arrow batch
BYTES_PER_KEY = 1_800  # a guess at a topic's bytes (3 versions of a 500-byte schema), to size the shuffle
PARTS = "part bigint, low bigint, high bigint"
_HEAD_KINDS = ("snapshot", "tenant", "namespace")
_COUNTED = ("snapshot", "tenant", "namespace", "topic", "version", "client", "review_rules", "proposal", "audit")


@dataclass(slots=True)
class SnapshotSource(Source):
    header: dict[str, Any]
    label: str
    location: str
    path: Path
    size: int
    mtime: int
    records: int | None  # what the end line counts; None for a format-1 file (no end line)
    head_end: int  # byte offset of the first line after the tenant and namespace lines
    namespace_records: dict[str, dict[str, Any]]
    consistency: str = "a file that must not change during the job (its size and time are checked by every task)"

    @classmethod
    def open(cls, path: Path) -> SnapshotSource:
        path = path.expanduser().resolve()
        where = str(path)
        if not path.exists():
            raise SourceError(f"snapshot file {where!r} does not exist")
        if path.is_dir():
            raise SourceError(f"snapshot {where!r} is a directory, not a JSON lines file (a Parquet export: --parquet)")
        stat = path.stat()
        header, namespaces, head_end = _read_head(path)
        records = _read_end(path, stat.st_size, header)
        line = header.get("pulsar_version")
        if line:
            try:
                pulsar_line(str(line))
            except RegistryError as exc:
                raise SourceError(f"{where}, line 1: {exc}") from None
        header.pop("_line", None)
        return cls(
            header=header,
            label=f"snapshot {where}",
            location=where,
            path=path,
            size=stat.st_size,
            mtime=stat.st_mtime_ns,
            records=records,
            head_end=head_end,
            namespace_records=namespaces,
        )

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
        cores = spark.sparkContext.defaultParallelism
        count = max(cores * 2, -(-self.size // BYTES_PER_PART))
        step = -(-self.size // count)
        parts = [(i, low, min(low + step, self.size)) for i, low in enumerate(range(0, self.size, step))] or [(0, 0, 0)]
        frame = spark.createDataFrame(spark.sparkContext.parallelize(parts, len(parts)), PARTS)
        mapper = parse_mapper(str(self.path), self.size, self.mtime, self.head_end, scope)
        parsed = frame.mapInArrow(mapper, ddl(PARSED))
        shuffle = partitions or max(cores * 2, -(-self.size // (BYTES_PER_KEY * KEYS_PER_PARTITION)))
        shared = spark.sparkContext.broadcast(self.namespace_records)
        return assembled(parsed, shuffle, shared, job, schema)

    @contextmanager
    def pinned(self) -> Iterator[Planned]:
        yield Planned(records=self.records)

    def bundles(self, keys: list[str]) -> list[TopicBundle]:
        """A few keys' bundles by one pass over the file on the driver, keeping only lines that name them (a
        substring test first: most lines are never parsed)."""
        wanted = set(keys)
        found: dict[str, list[dict[str, Any]]] = {}
        with self.path.open("rb") as handle:
            for raw in handle:
                if not any(key.encode() in raw for key in wanted):
                    continue
                try:
                    record = json.loads(raw)
                    key = _key(record)
                except (ValueError, RegistryError, KeyError, TypeError):
                    continue
                if key in wanted and record.get("kind") in ("topic", "version", "client"):
                    found.setdefault(key, []).append(record)
        return [bundle_of(k, found[k], self.namespace_records) for k in sorted(found)]


def _read_head(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]], int]:
    """The header, the namespace records at the head of the file, and where the head ends."""
    where = str(path)
    header: dict[str, Any] | None = None
    namespaces: dict[str, dict[str, Any]] = {}
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            text = raw.strip()
            if not text:
                offset += len(raw)
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise SourceError(f"{where}, line {number}: not JSON ({exc})") from None
            kind = record.get("kind") if isinstance(record, dict) else None
            if header is None:
                if kind != "snapshot":
                    raise SourceError(
                        f"{where}, line {number}: the first line must be the snapshot header (kind snapshot)"
                    )
                if record.get("format") not in (1, 2):
                    raise SourceError(f"{where}: unsupported snapshot format {record.get('format')!r}; expected 2")
                header = record
            elif kind not in _HEAD_KINDS:
                break
            elif kind == "namespace":
                namespaces[str(record.get("name"))] = record
            offset += len(raw)
    if header is None:
        raise SourceError(f"{where}: empty snapshot (no header line)")
    return header, namespaces, offset


def _read_end(path: Path, size: int, header: dict[str, Any]) -> int | None:
    """The end line's record count (format 2: required; a file cut at a line boundary has none)."""
    with path.open("rb") as handle:
        handle.seek(max(0, size - 65_536))
        lines = [line for line in handle.read().splitlines() if line.strip()]
    last: Any = None
    if lines:
        try:
            last = json.loads(lines[-1])
        except ValueError:
            last = None
    if isinstance(last, dict) and last.get("kind") == "end" and isinstance(last.get("records"), int):
        return int(last["records"])
    if header.get("format") == 1:
        return None
    raise SourceError(f"{path}: truncated: the file does not end with its end line (cut, or still being written)")


def _key(record: dict[str, Any]) -> str:
    kind = record["kind"]
    name = record["name"] if kind == "topic" else record["topic"]
    return TopicName.parse(name).schema_id


def parse_mapper(path: str, size: int, mtime: int, head_end: int, scope: KeyRange) -> Any:
    """The mapInArrow function over byte-range rows (part, low, high): each task reads its lines."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in inputs:
            columns = batch.to_pydict()
            for part, low, high in zip(columns["part"], columns["low"], columns["high"], strict=True):
                read = Read(part=part, low=str(low), high=str(high))

                def rows(read: Read, low: int = low, high: int = high) -> Iterator[pa.RecordBatch]:
                    yield from batches(_parse(path, size, mtime, head_end, low, high, scope, read), PARSED)

                yield from read_part(read, rows, PARSED)

    return run


def _parse(
    path: str, size: int, mtime: int, head_end: int, low: int, high: int, scope: KeyRange, read: Read
) -> Iterator[dict[str, Any]]:
    stat = os.stat(path)
    if (stat.st_size, stat.st_mtime_ns) != (size, mtime):
        raise SourceError(f"{path} changed since the audit was planned (size or time differ): write a new file instead")
    problems: list[str] = []
    with open(path, "rb") as handle:
        if low > 0:
            handle.seek(low - 1)
            handle.readline()  # the line that started before this range belongs to the previous one
        while True:
            at = handle.tell()
            if at >= high:
                break
            raw = handle.readline()
            if not raw:
                break
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                kind = record.get("kind") if isinstance(record, dict) else None
                if kind == "end":
                    continue
                if kind not in _COUNTED:
                    raise ValueError(f"unknown kind {kind!r}")
                read.records += 1
                if kind == "namespace" and at >= head_end:
                    raise ValueError("a namespace line after the topics: a snapshot lists namespaces first")
                if kind not in ("topic", "version", "client"):
                    continue
                key = _key(record)
                text = raw.decode("utf-8").strip()
            except (ValueError, RegistryError, KeyError, TypeError, AttributeError) as exc:
                problems.append(f"byte {at}: {exc}")
                continue
            if key in scope:
                if kind == "topic":
                    read.topics += 1
                yield {"kind": kind, "key": key, "seq": at, "record": text}
    if problems:
        read.error = f"{len(problems)} line(s) not read; first: {problems[0]}"
