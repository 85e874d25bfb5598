"""`schema-explorer audit drift --from A --to B`: `compare` run on Spark, for fleets past one machine. The
decisions are the core's (registry/compare/); this module only distributes them.

The driver reads what is small: each side's header and namespaces (with their policies), and compares the
namespaces itself (`compare_namespaces`). Each side is then read by its own executors, as the other audits
read a source (key ranges of a SQL registry, namespaces of an admin API, byte ranges of a snapshot, the files
of a Parquet export: `Source.judged`), each task emitting its part's topic bundles as rows keyed by schema id.
Spark shuffles both sides' rows by key between the executors; each assembling task walks its keys in order,
holds A's and B's bundle of a key side by side, and every BUNDLES_PER_BATCH keys rebuilds two in-memory
registries (those keys, and every namespace of their side: a plan judges a topic under its namespace's
policies on B) and asks the core for each topic's answers (`compare_topics`). The driver collects only what a
comparison reports (a topic not `same`, a policy difference, a hazard, a plan) and a count of the `same`
topics per task, and assembles the comparison (`assemble`), so its memory grows with the drift, not the
fleet.

Fail closed: a part of either side not wholly read, or a topic whose bundle does not load, stops the run with
an error naming it (SourceError): a topic missing from one side's read would otherwise show as drift, and a
missing pair of them as no drift. Each topic's answers travel from executor to driver pickled (the values are
the core's frozen dataclasses; both ends run the same code in one run, and nothing is stored).
"""

from __future__ import annotations

import json
import pickle
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry import Registry, RegistryError
from registry import open as open_registry
from registry._snapshot import snapshot_head
from registry.compare import Comparison, TopicComparison, TopicState, assemble, compare_namespaces, compare_topics
from registry.storage._ranges import KeyRange, TopicBundle

from ._arrow import batches, ddl, schema
from ._registry_source import RegistrySource
from ._source import Record, Source, SourceError, registry_for
from ._sql_source import SqlSource
from ._tasks import BUNDLES_PER_BATCH, READ_COLUMNS, with_reads

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SIDES = ("A", "B")
# What each side's tasks emit: one row per topic bundle (its records as JSON), plus their read rows.
BUNDLE = schema(("kind", pa.string()), ("key", pa.string()), ("records", pa.string()), ("problem", pa.string()))
# What the assembling tasks emit: a topic's answers (`listed` unless a `same` topic with nothing to report),
# a key that could not be compared (`problem`), a task's count of unlisted `same` topics, and the read rows.
OUTPUT = with_reads(
    schema(
        ("kind", pa.string()),
        ("side", pa.int64()),
        ("key", pa.string()),
        ("payload", pa.binary()),
        ("problem", pa.string()),
        ("same", pa.int64()),
    )
)
PROBLEMS_SHOWN = 3


@dataclass(slots=True)
class Drift:
    """The comparison, and what the run says about how it read the two sides (for stderr)."""

    comparison: Comparison
    notes: list[str] = field(default_factory=list)


def bundle_rows(batch: list[TopicBundle]) -> list[dict[str, Any]]:
    """The job every side's tasks run: their bundles as rows, to be paired with the other side's by key."""
    return [
        {
            "kind": "bundle",
            "key": b.key,
            "records": json.dumps(list(b.records), ensure_ascii=False),
            "problem": b.problem,
        }
        for b in batch
    ]


def namespace_records(source: Source) -> list[Record]:
    """A side's namespace records (with their policies), read on the driver: a few per tenant."""
    known = getattr(source, "namespace_records", None)
    if isinstance(known, dict):
        return list(known.values())
    if not isinstance(source, SqlSource | RegistrySource):
        raise SourceError(f"{source.label}: cannot read its namespaces")
    # an admin API as the side's tasks reach it (its token from the environment, or its client.conf/context)
    reg = source.reach.open() if isinstance(source, RegistrySource) else open_registry(source.target, read_only=True)
    try:
        return snapshot_head(reg)[1]
    finally:
        reg.close()


def head_records(header: Mapping[str, Any], namespaces: list[Record]) -> list[Record]:
    """The header's broker settings and Pulsar line aside, what every registry rebuilt for a side holds: its
    tenants and namespaces."""
    tenants = sorted({str(n["name"]).split("/")[0] for n in namespaces})
    return [*({"kind": "tenant", "name": t} for t in tenants), *namespaces]


def run_drift(
    spark: SparkSession,
    source: Source,
    target: Source,
    *,
    include_same: bool = False,
    partitions: int | None = None,
) -> Drift:
    """Compare `source` (A) with `target` (B) on Spark: `compare_registries`'s answer (the `same` topics
    counted, and listed only with `include_same`). SourceError when a part of either side was not wholly read
    or a topic could not be compared."""
    from pyspark.sql import functions as F

    heads = [head_records(s.header, namespace_records(s)) for s in (source, target)]
    namespaces = compare_namespaces(
        *(registry_for(s.header, [h]) for s, h in zip((source, target), heads, strict=True))
    )
    shared = spark.sparkContext.broadcast((source.header, heads[0], target.header, heads[1]))
    shuffle = partitions or spark.sparkContext.defaultParallelism * 2
    with ExitStack() as stack:
        stack.callback(shared.unpersist)
        planned = [stack.enter_context(s.pinned()) for s in (source, target)]
        # Only a registry held by the driver (RecordsSource: tests, notebooks) stages files here: no --out.
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="drift-")))
        frames: list[DataFrame] = []
        for side, (s, plan) in enumerate(zip((source, target), planned, strict=True)):
            frame = s.judged(spark, bundle_rows, with_reads(BUNDLE), KeyRange(), None, plan, work / SIDES[side])
            frames.append(frame.withColumn("side", F.lit(side).cast("bigint")))
        both = frames[0].unionByName(frames[1])
        paired = both.repartition(shuffle, "key").sortWithinPartitions(F.col("key"), F.col("side"))
        rows = paired.mapInArrow(pair_mapper(shared, include_same), ddl(OUTPUT)).collect()
    notes = check_reads([r for r in rows if r["kind"] == "read"], (source, target), planned)
    problems = [r for r in rows if r["kind"] == "problem"]
    if problems:
        shown = "; ".join(
            f"{r['key']}: {r['problem']}" for r in sorted(problems, key=lambda r: r["key"])[:PROBLEMS_SHOWN]
        )
        raise SourceError(f"{len(problems)} topic(s) could not be compared: {shown}")
    topics: list[TopicComparison] = [pickle.loads(r["payload"]) for r in rows if r["kind"] == "topic"]
    same = sum(r["same"] or 0 for r in rows if r["kind"] == "same")
    found = assemble(source.location, target.location, namespaces, topics, unlisted_same=same)
    return Drift(found, notes)


def check_reads(reads: list[Any], sources: tuple[Source, Source], planned: list[Any]) -> list[str]:
    """Fail on a part of either side not wholly read (or a snapshot whose end line counts other records than
    were read); notes on the state each side was read at."""
    failed = [r for r in reads if r["read_error"] is not None]
    if failed:
        shown = "; ".join(
            f"{SIDES[r['side']]} part {r['read_part']} ({r['read_low'] or ''}..{r['read_high'] or ''}): "
            f"{r['read_error']}"
            for r in sorted(failed, key=lambda r: (r["side"], r["read_part"]))[:PROBLEMS_SHOWN]
        )
        raise SourceError(f"{len(failed)} part(s) were not wholly read, so the comparison would be wrong: {shown}")
    notes = []
    for side, (source, plan) in enumerate(zip(sources, planned, strict=True)):
        mine = [r for r in reads if r["side"] == side]
        records = sum(r["read_records"] or 0 for r in mine if r["read_part"] >= 0)
        if plan.records is not None and records != plan.records:
            raise SourceError(
                f"{source.label}: its end line counts {plan.records} records but {records} were read (the file "
                "changed or has unreadable lines)"
            )
        newer = [r for r in mine if plan.state is not None and r["read_state"] not in (None, plan.state)]
        state = f"change token {plan.state}" if plan.state is not None else "no change token"
        notes.append(f"{SIDES[side]}: read {source.label} at {state}, in {len(mine)} parts ({source.consistency})")
        if newer:
            notes.append(f"{SIDES[side]}: the registry changed during the run: {len(newer)} parts read a newer state")
    return notes


def pair_mapper(shared: Any, include_same: bool) -> Any:
    """The mapInArrow function over the shuffled rows (sorted by key, then side): read rows pass through;
    each key's two bundles are compared BUNDLES_PER_BATCH keys at a time."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        a_header, a_head, b_header, b_head = shared.value
        sides = ((a_header, a_head), (b_header, b_head))
        passed: list[dict[str, Any]] = []
        batch: dict[str, Pair] = {}
        same = 0
        for rows in inputs:
            columns = rows.to_pydict()
            for i, kind in enumerate(columns["kind"]):
                side = columns["side"][i]
                if kind == "read":
                    passed.append({n: columns[n][i] for n, _ in READ_COLUMNS} | {"kind": "read", "side": side})
                    continue
                key = columns["key"][i]
                if key not in batch and len(batch) >= BUNDLES_PER_BATCH:  # a key's two rows stay in one batch
                    out, counted = compared(batch, sides, include_same)
                    same += counted
                    yield from batches(out, OUTPUT)
                    batch = {}
                pair = batch.setdefault(key, Pair())
                pair.records[side] = json.loads(columns["records"][i])
                if columns["problem"][i] is not None:
                    pair.problem = f"{SIDES[side]}: {columns['problem'][i]}"
        out, counted = compared(batch, sides, include_same)
        yield from batches([*out, {"kind": "same", "same": same + counted}, *passed], OUTPUT)

    return run


@dataclass(slots=True)
class Pair:
    """A key's bundle records on each side (None: that side has none), and why one could not be read."""

    records: list[list[Record] | None] = field(default_factory=lambda: [None, None])
    problem: str | None = None


Head = tuple[Mapping[str, Any], list[Record]]


def compared(batch: dict[str, Pair], sides: tuple[Head, Head], include_same: bool) -> tuple[list[dict[str, Any]], int]:
    """The rows of one batch of keys, and how many `same` topics it leaves unlisted. A key with a bundle that
    could not be read or does not load is a problem row; when the batch does not load, it is retried key by
    key, so one bad topic does not hide the others."""
    out: list[dict[str, Any]] = [
        {"kind": "problem", "key": k, "problem": p.problem} for k, p in batch.items() if p.problem is not None
    ]
    good = {k: p for k, p in batch.items() if p.problem is None}
    try:
        regs = [_registry(sides[s], [p.records[s] for p in good.values()]) for s in (0, 1)]
    except _LOAD_ERRORS:
        if len(good) == 1:
            key, problem = next(iter(good)), "the bundles do not load"
            try:
                [_registry(sides[s], [good[key].records[s]]) for s in (0, 1)]
            except _LOAD_ERRORS as exc:
                problem = f"{type(exc).__name__}: {exc}"
            return [*out, {"kind": "problem", "key": key, "problem": problem}], 0
        same = 0
        for key, pair in good.items():
            rows, counted = compared({key: pair}, sides, include_same)
            out += rows
            same += counted
        return out, same
    same = 0
    for topic in compare_topics(regs[0], regs[1]):
        drift = topic.drift
        quiet = drift is not None and drift.state is TopicState.SAME and not topic.policies and topic.hazard is None
        if quiet and not include_same:
            same += 1
        else:
            out.append({"kind": "topic", "key": topic.schema_id, "payload": pickle.dumps(topic)})
    return out, same


_LOAD_ERRORS = (RegistryError, KeyError, TypeError, ValueError)


def _registry(side: Head, bundles: list[list[Record] | None]) -> Registry:
    """One side's registry for a batch: its tenants and namespaces, then the batch's bundles of that side."""
    header, head = side
    return registry_for(header, [head, *(b for b in bundles if b is not None)])
