"""The three audits as functions of (SparkSession, Source, output folder): the CLI, tests and benchmarks call
these. The driver plans from bounds (`Source.judged`: key ranges, namespaces, byte ranges); each task reads its
own part of the registry and calls the core per batch of topic bundles; Spark writes the tables as Parquet under
`out/<table>/`, and the summary comes from aggregates over them, never every row through the driver.

Every function returns a `Report`: the tables written with their row counts, the registry state read and a few
summary lines, among them how the source was read (`source_reads`: one row per part, with failures and the
state each part saw).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import CompatibilityStrategy, InvalidSchemaError, RegistryError, SchemaInfo, SchemaType, TopicName
from registry._pulsar_version import answering_as
from registry._schema_data import to_schema_data
from registry.storage._ranges import KeyRange

from . import compat_matrix, data_audit, policy_impact
from ._archive import Archive, read_archive
from ._arrow import ddl
from ._source import Planned, Source, SourceError, registry_for, with_tenant
from ._tasks import BUNDLES_PER_BATCH, SOURCE_READ_COLUMNS, Job, with_reads

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession


@dataclass(slots=True)
class Report:
    job: str
    out: Path
    location: str = ""  # the source the run record names
    state: int | None = None  # the registry state read (change token), where the source has one
    changed: bool = False  # tasks read a newer state than the plan's (the summary says which parts)
    unread: int = 0  # parts of the source not (wholly) read: the tables miss their topics
    tables: dict[str, int] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __str__(self) -> str:
        written = ", ".join(f"{name} ({rows} rows)" for name, rows in self.tables.items())
        return "\n".join([*self.lines, f"wrote {written} under {self.out}"])


def check_out(out: str | Path) -> Path:
    path = Path(out).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise SourceError(f"--out {str(out)!r} is a file; give a folder for the Parquet tables")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SourceError(f"--out {str(out)!r}: cannot create that folder ({exc.strerror or exc})") from None
    return path


_STAGING = "_staging"  # under --out; Spark's readers skip names starting with "_"


@contextmanager
def _judged(
    spark: SparkSession, source: Source, job: Job, output: pa.Schema, scope: KeyRange, partitions: int | None, out: Path
) -> Iterator[tuple[DataFrame, Planned]]:
    """The job's rows over `scope`, every task reading its own part of the source, and what the driver planned
    on. The block runs inside the source's pinned state (PostgreSQL: the exported snapshot every task opens), so
    the tables are written from it; files the tasks read (OUT/_staging/...) are removed afterwards."""
    import shutil
    import uuid

    work = out / _STAGING / f"job-{uuid.uuid4().hex}"
    batch = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(BUNDLES_PER_BATCH)}
    try:
        with source.pinned() as planned, session_conf(spark, batch):
            frame = source.judged(spark, job, with_reads(output), scope, partitions, planned, work).persist()
            try:
                yield frame, planned
            finally:
                frame.unpersist()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        with contextlib.suppress(OSError):
            (out / _STAGING).rmdir()


def _reads(frame: DataFrame, out: Path, source: Source, planned: Planned, report: Report) -> None:
    """Write `source_reads` (one row per part a task read) and say, from aggregates, how the source was read:
    the state, parts that failed (with the first reasons), parts read from a newer state than the plan's (the
    registry changed during the run: their key ranges name the topics that may show it), and for a snapshot
    file whether every record its end line counts was read."""
    from pyspark.sql import functions as F

    reads = frame.filter(F.col("kind") == "read").select(*(F.col(c).alias(n) for c, n in SOURCE_READ_COLUMNS.items()))
    _write(reads, out, "source_reads", report)
    written = reads.sparkSession.read.parquet(str(out / "source_reads"))
    newer = F.col("state").isNotNull() & (F.col("state") != F.lit(planned.state)) if planned.state is not None else None
    columns = [
        F.count("*").alias("parts"),
        F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("failed"),
        F.sum(F.when(F.col("part") >= 0, F.col("records")).otherwise(0)).alias("records"),
        F.max("state").alias("latest"),
    ]
    if newer is not None:
        columns.append(F.sum(F.when(newer, 1).otherwise(0)).alias("newer"))
    totals = written.agg(*columns).first()
    assert totals is not None
    report.state = planned.state
    state = f"change token {planned.state}" if planned.state is not None else "no change token"
    report.lines.append(f"  read {source.label} at {state}, in {totals['parts']} parts ({source.consistency})")
    report.unread = int(totals["failed"] or 0)
    if totals["failed"]:
        first = written.filter(F.col("error").isNotNull()).orderBy("part").limit(3).collect()
        report.lines.append(
            f"  {totals['failed']} parts were not (wholly) read; their topics are missing (see source_reads.error): "
            + "; ".join(f"part {r['part']} ({r['low']}..{r['high']}): {r['error']}" for r in first)
        )
    if newer is not None and totals["newer"]:
        report.changed = True
        ranges = written.filter(newer).orderBy("part").limit(5).collect()
        shown = ", ".join(f"[{r['low'] or ''}, {r['high'] or ''})" for r in ranges)
        report.lines.append(
            f"  the registry changed during the run (change token {planned.state} when planned, {totals['latest']} "
            f"at the latest read): {totals['newer']} parts read the newer state, so the topics with keys in "
            f"{shown}{' ...' if totals['newer'] > len(ranges) else ''} may reflect it (see source_reads.state)"
        )
    if source.consistency.startswith("none"):
        report.lines.append(
            "  the registry may have changed during the run: an admin API gives no single state, so a change made "
            "meanwhile shows in the namespaces read after it (see source_reads.started_at)"
        )
    if planned.records is not None and totals["records"] != planned.records:
        report.lines.append(
            f"  the snapshot's end line counts {planned.records} records but {totals['records'] or 0} were read: "
            "the file changed or has unreadable lines (see source_reads.error)"
        )


def _write(frame: DataFrame, out: Path, name: str, report: Report) -> None:
    """Write one table (rows unordered) and count its rows from the Parquet footers, not by another job."""
    import pyarrow.parquet as pq

    frame.write.mode("overwrite").parquet(str(out / name))
    files = sorted((out / name).glob("*.parquet"))
    report.tables[name] = sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def run_compat_matrix(
    spark: SparkSession,
    source: Source,
    out: str | Path,
    *,
    tenant: str | None = None,
    namespace: str | None = None,
    max_versions: int = 20,
    partitions: int | None = None,
) -> Report:
    from pyspark.sql import functions as F

    out = check_out(out)
    report = Report("compat-matrix", out, location=source.location)
    job = compat_matrix.make_job(source.header, max_versions)
    scope = KeyRange.of(tenant=tenant, namespace=namespace)
    with _judged(spark, source, job, compat_matrix.OUTPUT, scope, partitions, out) as (result, planned):
        pairs = result.filter(F.col("kind") == "pair").select(*compat_matrix.PAIR_COLUMNS)
        per_topic = result.filter(F.col("kind") == "topic").select(*compat_matrix.TOPIC_COLUMNS)
        _write(pairs, out, "compat_matrix", report)
        _write(per_topic, out, "compat_topics", report)
        per_topic = spark.read.parquet(str(out / "compat_topics"))
        totals = per_topic.agg(
            F.count("*").alias("topics"),
            F.sum(F.when(F.col("incompatible_pairs") > 0, 1).otherwise(0)).alias("with_incompatible"),
            F.sum("pairs").alias("pairs"),
            F.sum("incompatible_pairs").alias("incompatible"),
            F.sum("unreadable_pairs").alias("unreadable"),
            F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("errors"),
        ).first()
        _reads(result, out, source, planned, report)
    assert totals is not None
    report.lines[:0] = [
        f"compat-matrix over {source.label}: {totals['topics']} topics, {totals['pairs'] or 0} version pairs "
        f"(at most {max_versions} versions per topic)",
        f"  {totals['incompatible'] or 0} pairs incompatible under Pulsar's check, {totals['unreadable'] or 0} "
        f"unreadable; {totals['with_incompatible'] or 0} topics have at least one incompatible pair",
        f"  {totals['errors'] or 0} topics could not be checked (see compat_topics.error)",
    ]
    return report


def run_policy_impact(
    spark: SparkSession,
    source: Source,
    out: str | Path,
    *,
    strategy: str,
    namespace: str | None = None,
    partitions: int | None = None,
) -> Report:
    from pyspark.sql import functions as F

    out = check_out(out)
    proposed = CompatibilityStrategy.parse(strategy)
    if proposed is CompatibilityStrategy.UNDEFINED:
        raise SourceError("--strategy: choose one of the 8 strategies; UNDEFINED only clears a namespace value")
    if namespace is not None and namespace not in (known := source.namespaces()):
        shown = ", ".join(known[:10])
        raise SourceError(f"--namespace {namespace!r} is not in {source.label} (namespaces: {shown})")
    report = Report("policy-impact", out, location=source.location)
    job = policy_impact.make_job(source.header, proposed)
    scope = KeyRange.of(namespace=namespace)
    with _judged(spark, source, job, policy_impact.OUTPUT, scope, partitions, out) as (result, planned):
        per_topic = result.filter(F.col("kind") == "topic").select(*policy_impact.TOPIC_COLUMNS)
        clients = result.filter(F.col("kind") == "client").select(*policy_impact.CLIENT_COLUMNS)
        _write(per_topic, out, "policy_impact", report)
        _write(clients, out, "policy_impact_clients", report)
        per_topic = spark.read.parquet(str(out / "policy_impact"))
        totals = per_topic.agg(
            F.count("*").alias("topics"),
            F.sum(F.when(F.size("refused_versions") > 0, 1).otherwise(0)).alias("refused"),
            F.sum(F.when(F.col("overridden"), 1).otherwise(0)).alias("overridden"),
            F.sum("refused_clients").alias("clients"),
            F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("errors"),
        ).first()
        _reads(result, out, source, planned, report)
    assert totals is not None
    where = f"namespace {namespace}" if namespace else "every namespace"
    report.lines[:0] = [
        f"policy-impact of {proposed} on {where} of {source.label}: {totals['topics']} topics",
        f"  {totals['refused'] or 0} topics have versions that {proposed} would have refused; "
        f"{totals['clients'] or 0} recorded consumers would be refused; "
        f"{totals['overridden'] or 0} topics keep their own strategy",
        f"  {totals['errors'] or 0} topics could not be checked (see policy_impact.error)",
    ]
    return report


def candidate_schema(source: Source, topic: str, path: str) -> tuple[str, Any]:
    """(schema id, SchemaData) of a candidate reader file for `topic`, checked by the core before Spark."""
    name = TopicName.parse(topic)
    base = str(name.base)
    try:
        bundle = source.topic_bundle(base)
    except RegistryError as exc:
        raise SourceError(f"--topic {topic!r}: {source.label} cannot be read ({exc})") from None
    if bundle is None or base not in {str(TopicName.parse(t).base) for t in bundle.topics}:
        raise SourceError(f"--topic {topic!r} is not in {source.label}")
    history = registry_for(source.header, [with_tenant(bundle)]).history(base)
    if not history:
        raise SourceError(f"--topic {topic!r} has no live schema to compare a candidate with")
    kind = history[-1].type
    if kind not in (SchemaType.AVRO, SchemaType.JSON):
        raise SourceError(f"--reader: candidate files are Avro schema JSON, for AVRO and JSON topics; {base} is {kind}")
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(f"--reader {path!r}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"--reader {path!r}: cannot read it ({exc})") from None
    try:
        with answering_as(source.header.get("pulsar_version")):
            data = to_schema_data(SchemaInfo(type=kind, schema=text))
    except InvalidSchemaError as exc:
        raise SourceError(f"--reader {path!r}: {exc}") from None
    return name.schema_id, data


def run_data_audit(
    spark: SparkSession,
    source: Source,
    out: str | Path,
    archive: Archive,
    *,
    reader: str | None = None,
    topic: str | None = None,
) -> Report:
    out = check_out(out)
    if (reader is None) != (topic is None):
        raise SourceError("--reader and --topic go together: a candidate reader schema is for one topic")
    candidate = candidate_schema(source, topic, reader) if reader is not None and topic is not None else None
    report = Report("data", out, location=source.location)
    cores = spark_cores(spark)
    # One split per Parquet file or so, at least cores x 4 of them, so both ends of the run keep every core busy.
    with session_conf(spark, {"spark.sql.files.maxPartitionBytes": str(split_bytes(archive, cores))}):
        messages = read_archive(spark, archive)
        # The schemas of the topics the archive names, from the core, shipped once to every executor.
        seen = archive_topics(spark, archive, messages)
        ids = sorted({i for i in (_schema_id(t) for t in seen) if i is not None})
        # Only the bundles of the topics the archive names are read, on the driver: its schema table is small.
        with source.pinned() as planned:
            bundles = source.bundles(ids)
        report.state = planned.state
        by_id = {TopicName.parse(t).schema_id: str(TopicName.parse(t).base) for b in bundles for t in b.topics}
        wanted = sorted(set(by_id.values()))
        registry = registry_for(source.header, [with_tenant(b) for b in bundles])
        table = data_audit.schema_table(registry, wanted, candidate)
        shared = spark.sparkContext.broadcast(table)
        try:
            # One pass over the archive; each partition returns a small summary, reduced here.
            partials = messages.mapInArrow(data_audit.make_mapper(shared), ddl(data_audit.OUTPUT)).toArrow()
        finally:
            shared.unpersist()
    tables = data_audit.reduce_partials(partials)
    for name, rows in tables.items():
        _write_arrow(rows, out, name, report)
    failures = tables["data_failures"].to_pylist()
    versions = tables["data_versions"]
    by_reason: dict[str, int] = {}
    for row in failures:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + row["count"]
    failed = sorted(by_reason.items(), key=lambda item: -item[1])
    bad = by_reason.get("BAD_ROW", 0)
    messages_total = sum(n for n in versions.column("messages").to_pylist() if n)
    readable_total = sum(n for n in versions.column("readable").to_pylist() if n)
    total = messages_total + bad
    reader_text = f"candidate {reader} for {topic}" if reader else "each topic's latest version"
    report.lines = [
        f"data audit of {archive.files} archive file(s) under {archive.root} against {source.label}",
        f"  {total} messages, {readable_total} readable by {reader_text}, {sum(by_reason.values())} failed",
        *(f"  {n:>9} {reason}" for reason, n in failed[:8]),
    ]
    return report


def archive_topics(spark: SparkSession, archive: Archive, messages: DataFrame) -> list[str]:
    """The distinct topic names of the archive: Parquet files through their topic column on the driver
    (dictionary-encoded, no Spark job), JSON lines through Spark."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    seen: set[str] = set()
    try:
        for path in archive.parquet_files:
            column = pq.read_table(path, columns=["topic"], read_dictionary=["topic"]).column("topic")
            seen.update(str(t) for t in pc.unique(column).to_pylist() if t)
    except (pa.ArrowException, AttributeError, TypeError):  # not a string column: Spark casts it
        return sorted({row["topic"] for row in messages.select("topic").distinct().collect() if row["topic"]})
    if archive.json_files:
        seen.update(row["topic"] for row in messages.select("topic").distinct().collect() if row["topic"])
    return sorted(seen)


def split_bytes(archive: Archive, cores: int) -> int:
    """spark.sql.files.maxPartitionBytes for the archive: its size over (cores x 4), between 1 MiB and 128 MiB."""
    size = sum(p.stat().st_size for p in (*archive.parquet_files, *archive.json_files))
    return max(1 << 20, min(128 << 20, size // max(cores * 4, 1)))


@contextmanager
def session_conf(spark: SparkSession, values: dict[str, str]) -> Iterator[None]:
    """Set SQL confs for one job and put the previous values back (the session may be shared, as in tests)."""
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in values}
    for key, value in values.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, earlier in previous.items():
            if earlier is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, earlier)


def _write_arrow(rows: Any, out: Path, name: str, report: Report) -> None:
    """Write one small table reduced on the driver as `OUT/<name>/part-00000.parquet` (replacing the folder)."""
    import shutil

    import pyarrow.parquet as pq

    folder = out / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pq.write_table(rows, folder / "part-00000.parquet")
    report.tables[name] = rows.num_rows


def _schema_id(topic: str) -> str | None:
    try:
        return TopicName.parse(topic).schema_id
    except Exception:  # noqa: BLE001 - bad names are counted as BAD_ROW by the executors
        return None


def spark_cores(spark: SparkSession) -> int:
    """How many cores Spark runs tasks on (local[N] → N)."""
    return int(spark.sparkContext.defaultParallelism)
