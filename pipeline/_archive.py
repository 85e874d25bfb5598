"""Message archives (sample_data/messages/README.md): JSON lines or Parquet files under one folder.

JSON lines: one object per line, {"topic": "persistent://t/ns/x", "version": 3, "publish_time": 1735689600000,
"key": "<the message key>", "payload": "<base64 of the message bytes>"} (publish_time and key optional).
Parquet: columns topic (string), version (integer), payload (binary), optional key (string) and
publish_time. Both may sit side by side, in sub-folders too. The key is the message key as Pulsar carries
it: for a SEPARATED KEY_VALUE topic, the base64 of the key schema's bytes (pipeline/_payload.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)
REQUIRED = ("topic", "version", "payload")
JSON_SCHEMA = "topic string, version bigint, key string, payload string, _bad string"


class ArchiveError(ValueError):
    """A message archive that cannot be read at all (reported before Spark starts)."""


@dataclass(frozen=True, slots=True)
class Archive:
    root: Path
    json_files: tuple[Path, ...]
    parquet_files: tuple[Path, ...]

    @property
    def files(self) -> int:
        return len(self.json_files) + len(self.parquet_files)


def find_archive(folder: str) -> Archive:
    """The archive files under `folder`; ArchiveError when there are none or one cannot be opened."""
    root = Path(folder).expanduser()
    if not root.exists():
        raise ArchiveError(f"--messages {folder!r}: no such folder")
    if not root.is_dir():
        raise ArchiveError(f"--messages {folder!r} is a file; give the folder that holds the archive files")
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
    json_files = tuple(p for p in files if p.suffix in JSON_SUFFIXES)
    parquet_files = tuple(p for p in files if p.suffix in PARQUET_SUFFIXES)
    if not json_files and not parquet_files:
        raise ArchiveError(
            f"--messages {folder!r}: no archive files (*.jsonl, *.json, *.ndjson or *.parquet) in that folder"
        )
    for path in json_files:
        try:
            with path.open("rb") as handle:
                handle.read(1)
        except OSError as exc:
            raise ArchiveError(f"cannot read archive file {path}: {exc.strerror or exc}") from None
    if parquet_files:
        import pyarrow.parquet as pq

        for path in parquet_files:
            try:
                names = set(pq.read_schema(path).names)
            except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a non-Parquet file
                raise ArchiveError(f"archive file {path} is not a readable Parquet file: {exc}") from None
            missing = [c for c in REQUIRED if c not in names]
            if missing:
                raise ArchiveError(f"archive file {path} has no column(s) {', '.join(missing)}; needs {REQUIRED}")
    return Archive(root, json_files, parquet_files)


def read_archive(spark: SparkSession, archive: Archive) -> DataFrame:
    """One DataFrame (topic, version, key, payload binary, payload_base64, bad) over every archive file; a
    malformed JSON line keeps its text in `bad` instead of failing the job."""
    from pyspark.sql import functions as F

    frames = []
    if archive.json_files:
        raw = (
            spark.read.schema(JSON_SCHEMA)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", "_bad")
            .json([str(p) for p in archive.json_files])
        )
        frames.append(
            raw.select(
                "topic",
                "version",
                "key",
                F.lit(None).cast("binary").alias("payload"),
                F.col("payload").alias("payload_base64"),
                F.col("_bad").alias("bad"),
            )
        )
    if archive.parquet_files:
        raw = spark.read.parquet(*[str(p) for p in archive.parquet_files])
        frames.append(
            raw.select(
                F.col("topic").cast("string"),
                F.col("version").cast("bigint"),
                (F.col("key").cast("string") if "key" in raw.columns else F.lit(None).cast("string")).alias("key"),
                F.col("payload").cast("binary"),
                F.lit(None).cast("string").alias("payload_base64"),
                F.lit(None).cast("string").alias("bad"),
            )
        )
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame
