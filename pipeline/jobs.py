"""The three audits as functions of (SparkSession, Source, output folder): the CLI, tests and benchmarks call
these. Each reads the source once on the driver (already done: a `Source`), ships topics as rows, calls the
core per Arrow batch on the executors, and writes Parquet tables under `out/<table>/`.

Every function returns a `Report`: the tables written with their row counts and a few summary lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import CompatibilityStrategy, InvalidSchemaError, SchemaInfo, SchemaType, TopicName

from . import compat_matrix, data_audit, policy_impact
from ._archive import Archive, read_archive
from ._arrow import ddl
from ._source import Source, SourceError, registry_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(slots=True)
class Report:
    job: str
    out: Path
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


def _topics_frame(spark: SparkSession, source: Source, topics: list[str], partitions: int | None) -> DataFrame:
    rows = source.rows(topics)
    frame = spark.createDataFrame(rows, "tenant string, namespace string, topic string, bundle string")
    wanted = partitions or max(spark.sparkContext.defaultParallelism * 2, 1)
    return frame.repartition(min(wanted, max(len(rows), 1)))


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
    topics = source.topic_names(tenant=tenant, namespace=namespace)
    report = Report("compat-matrix", out)
    frame = _topics_frame(spark, source, topics, partitions)
    result = frame.mapInArrow(compat_matrix.make_mapper(source.header, max_versions), ddl(compat_matrix.OUTPUT))
    result = result.persist()
    pairs = result.filter(F.col("kind") == "pair").select(*compat_matrix.PAIR_COLUMNS)
    per_topic = result.filter(F.col("kind") == "topic").select(*compat_matrix.TOPIC_COLUMNS)
    _write(pairs, out, "compat_matrix", report)
    _write(per_topic, out, "compat_topics", report)
    totals = per_topic.agg(
        F.count("*").alias("topics"),
        F.sum(F.when(F.col("incompatible_pairs") > 0, 1).otherwise(0)).alias("with_incompatible"),
        F.sum("pairs").alias("pairs"),
        F.sum("incompatible_pairs").alias("incompatible"),
        F.sum("unreadable_pairs").alias("unreadable"),
        F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("errors"),
    ).first()
    result.unpersist()
    assert totals is not None
    report.lines = [
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
    if namespace is not None and namespace not in source.namespaces:
        known = ", ".join(sorted(source.namespaces)[:10])
        raise SourceError(f"--namespace {namespace!r} is not in {source.label} (namespaces: {known})")
    topics = source.topic_names(namespace=namespace)
    report = Report("policy-impact", out)
    frame = _topics_frame(spark, source, topics, partitions)
    result = frame.mapInArrow(policy_impact.make_mapper(source.header, proposed), ddl(policy_impact.OUTPUT))
    result = result.persist()
    per_topic = result.filter(F.col("kind") == "topic").select(*policy_impact.TOPIC_COLUMNS)
    clients = result.filter(F.col("kind") == "client").select(*policy_impact.CLIENT_COLUMNS)
    _write(per_topic, out, "policy_impact", report)
    _write(clients, out, "policy_impact_clients", report)
    totals = per_topic.agg(
        F.count("*").alias("topics"),
        F.sum(F.when(F.size("refused_versions") > 0, 1).otherwise(0)).alias("refused"),
        F.sum(F.when(F.col("overridden"), 1).otherwise(0)).alias("overridden"),
        F.sum("refused_clients").alias("clients"),
        F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("errors"),
    ).first()
    result.unpersist()
    assert totals is not None
    scope = f"namespace {namespace}" if namespace else "every namespace"
    report.lines = [
        f"policy-impact of {proposed} on {scope} of {source.label}: {totals['topics']} topics",
        f"  {totals['refused'] or 0} topics have versions that {proposed} would have refused; "
        f"{totals['clients'] or 0} recorded consumers would be refused; "
        f"{totals['overridden'] or 0} topics keep their own strategy",
        f"  {totals['errors'] or 0} topics could not be checked (see policy_impact.error)",
    ]
    return report


def candidate_schema(source: Source, topic: str, path: str) -> tuple[str, Any]:
    """(schema id, SchemaData) of a candidate reader file for `topic`, checked by the core before Spark."""
    from registry._schema_data import to_schema_data

    name = TopicName.parse(topic)
    base = str(name.base)
    if base not in source.topics:
        raise SourceError(f"--topic {topic!r} is not in {source.label}")
    history = registry_for(source.header, [source.bundle(base)]).history(base)
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
    from pyspark.sql import functions as F

    out = check_out(out)
    if (reader is None) != (topic is None):
        raise SourceError("--reader and --topic go together: a candidate reader schema is for one topic")
    candidate = candidate_schema(source, topic, reader) if reader is not None and topic is not None else None
    report = Report("data", out)
    messages = read_archive(spark, archive)
    # The schemas of the topics the archive names, from the core, shipped once to every executor.
    seen = [row["topic"] for row in messages.select("topic").distinct().collect() if row["topic"]]
    by_id = {TopicName.parse(t).schema_id: t for t in source.topics}
    wanted = sorted({by_id[i] for i in (_schema_id(t) for t in seen) if i in by_id})
    registry = registry_for(source.header, [source.bundle(t) for t in wanted])
    table = data_audit.schema_table(registry, wanted, candidate)
    shared = spark.sparkContext.broadcast(table)
    result = messages.mapInArrow(data_audit.make_mapper(shared), ddl(data_audit.OUTPUT)).persist()
    versions = (
        result.filter(F.col("kind") == "version")
        .groupBy("topic", "writer_version")
        .agg(
            F.first("reader_version", ignorenulls=True).alias("reader_version"),
            F.first("reader", ignorenulls=True).alias("reader"),
            F.first("schema_type", ignorenulls=True).alias("schema_type"),
            F.first("compatible", ignorenulls=True).alias("compatible"),
            F.first("rule_code", ignorenulls=True).alias("rule_code"),
            F.min("decoded_with").alias("decoded_with"),
            F.sum("count").alias("messages"),
            F.sum("readable").alias("readable"),
            F.sum("failed").alias("failed"),
        )
    )
    failures = (
        result.filter(F.col("kind") == "failure")
        .groupBy("topic", "writer_version", "field", "reason")
        .agg(F.sum("count").alias("count"), F.min("example").alias("example"))
    )
    stats = (
        result.filter(F.col("kind") == "stat")
        .groupBy("topic", "field", "type")
        .agg(
            F.sum("count").alias("values"),
            F.sum("nulls").alias("nulls"),
            F.min("min").alias("min"),
            F.max("max").alias("max"),
            F.min("min_time").alias("min_time"),
            F.max("max_time").alias("max_time"),
        )
        .withColumn("null_rate", F.col("nulls") / F.col("values"))
        .select("topic", "field", "type", "values", "nulls", "null_rate", "min", "max", "min_time", "max_time")
    )
    symbols = (
        result.filter(F.col("kind") == "symbol").groupBy("topic", "field", "symbol").agg(F.sum("count").alias("count"))
    )
    _write(versions, out, "data_versions", report)
    _write(failures, out, "data_failures", report)
    _write(stats, out, "data_field_stats", report)
    _write(symbols, out, "data_enum_counts", report)
    failed = failures.groupBy("reason").agg(F.sum("count").alias("n")).orderBy(F.desc("n")).collect()
    totals = versions.agg(F.sum("messages").alias("m"), F.sum("readable").alias("r")).first()
    bad = sum(row["n"] for row in failed if row["reason"] == "BAD_ROW")
    result.unpersist()
    shared.unpersist()
    total = (totals["m"] or 0) + bad if totals else bad
    reader_text = f"candidate {reader} for {topic}" if reader else "each topic's latest version"
    report.lines = [
        f"data audit of {archive.files} archive file(s) under {archive.root} against {source.label}",
        f"  {total} messages, {(totals['r'] or 0) if totals else 0} readable by {reader_text}, "
        f"{sum(row['n'] for row in failed)} failed",
        *(f"  {row['n']:>9} {row['reason']}" for row in failed[:8]),
    ]
    return report


def _schema_id(topic: str) -> str | None:
    try:
        return TopicName.parse(topic).schema_id
    except Exception:  # noqa: BLE001 - bad names are counted as BAD_ROW by the executors
        return None


def spark_cores(spark: SparkSession) -> int:
    """How many cores Spark runs tasks on (local[N] → N)."""
    return int(spark.sparkContext.defaultParallelism)
