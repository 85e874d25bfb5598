"""The Parquet export (`schema-explorer export --format parquet DIR`) as the core knows it: its tables' columns
(the one definition its writer, pipeline/_parquet_format.py, and its readers use), the check that a folder is
one, its rows as the snapshot records they were written from, and the whole export read back as a registry
(`import_parquet_export`: a side of `compare`, docs/guide/compare.md).

A module of its own, imported by name (`registry.parquet`), so that `import registry` does not load pyarrow.
The layout and columns are documented in pipeline/_parquet_format.py and docs/guide/spark.md.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from ._errors import InvalidArgumentError
from ._names import TopicName
from ._registry import Registry
from ._snapshot import registry_from_records

Record = dict[str, Any]

FORMAT = 1
PARTITIONED = {"namespaces": ("tenant",), "topics": ("tenant", "namespace"), "versions": ("tenant", "namespace"),
               "clients": ("tenant", "namespace")}  # fmt: skip
TABLES: dict[str, pa.Schema] = {
    "registry": pa.schema(
        [
            ("format", pa.int64()),
            ("pulsar_version", pa.string()),
            ("broker", pa.string()),
            ("change_token", pa.int64()),
            ("exported_at", pa.int64()),
            ("source", pa.string()),
        ]  # fmt: skip
    ),
    "tenants": pa.schema([("tenant", pa.string())]),
    "namespaces": pa.schema(
        [
            ("namespace", pa.string()),
            ("compatibility", pa.string()),
            ("auto_update_strategy", pa.string()),
            ("allow_auto_update", pa.bool_()),
            ("allow_auto_update_with_replicator", pa.bool_()),
            ("validation_enforced", pa.bool_()),
        ]  # fmt: skip
    ),
    "topics": pa.schema(
        [
            ("topic", pa.string()),
            ("schema_id", pa.string()),
            ("compatibility", pa.string()),
            ("validation_enforced", pa.bool_()),
        ]  # fmt: skip
    ),
    "versions": pa.schema(
        [
            ("schema_id", pa.string()),
            ("version", pa.int64()),
            ("type", pa.string()),
            ("deleted", pa.bool_()),
            ("timestamp", pa.int64()),
            ("user", pa.string()),
            ("properties", pa.map_(pa.string(), pa.string())),
            ("schema", pa.binary()),
        ]  # fmt: skip
    ),
    "clients": pa.schema(
        [
            ("topic", pa.string()),
            ("role", pa.string()),
            ("name", pa.string()),
            ("subscription", pa.string()),
            ("schema_type", pa.string()),
            ("version", pa.int64()),
            ("connected_at", pa.int64()),
            ("replicator", pa.bool_()),
        ]  # fmt: skip
    ),
    "audit": pa.schema(
        [
            ("at", pa.int64()),
            ("user", pa.string()),
            ("action", pa.string()),
            ("target", pa.string()),
            ("detail", pa.string()),
            ("outcome", pa.string()),
        ]  # fmt: skip
    ),
}
# The tables a registry is read back from (the audit trail is for analysis only).
READ_TABLES = ("registry", "namespaces", "topics", "versions", "clients")


def table_files(folder: Path, name: str) -> Iterator[Path]:
    """The Parquet files of one table, in name order."""
    yield from sorted((folder / name).rglob("*.parquet"))


def check_parquet_export(folder: Path) -> Record:
    """The one row of the export's `registry` table, once every table the readers read is there with this
    tool's columns (from one file's footer each: nothing else is read). InvalidArgumentError naming what is
    wrong: no such folder, a file, a missing table, a foreign column, another format."""
    if not folder.exists():
        raise InvalidArgumentError("no such folder")
    if not folder.is_dir():
        raise InvalidArgumentError("is a file; give the folder `schema-explorer export --format parquet` wrote")
    for name in READ_TABLES:
        files = list(table_files(folder, name))
        if not files:
            raise InvalidArgumentError(
                f"not a Parquet export: no {name} table (no Parquet file under {folder / name}); write one with "
                "`schema-explorer export --format parquet DIR`"
            )
        try:
            found = pq.read_schema(files[0])
        except (OSError, pa.ArrowException) as exc:
            raise InvalidArgumentError(f"{files[0]} is not a Parquet file ({exc})") from None
        for field in TABLES[name]:
            index = found.get_field_index(field.name)
            if index < 0 or not found.field(index).type.equals(field.type):
                got = "missing" if index < 0 else str(found.field(index).type)
                raise InvalidArgumentError(
                    f"the {name} table is not an export of this tool: column {field.name!r} is {got}, expected "
                    f"{field.type}"
                )
    rows = pq.read_table(next(table_files(folder, "registry"))).to_pylist()
    if len(rows) != 1 or rows[0]["format"] != FORMAT:
        raise InvalidArgumentError(f"the registry table must hold one row of format {FORMAT}")
    row: Record = rows[0]
    return row


def export_header(row: Record) -> Record:
    """The snapshot header an export's `registry` row stands for (broker settings, Pulsar line)."""
    header: Record = {"kind": "snapshot", "format": 2, "broker": json.loads(row["broker"] or "{}")}
    if row["pulsar_version"]:
        header["pulsar_version"] = row["pulsar_version"]
    return header


def partitioned_rows(folder: Path, name: str) -> list[Record]:
    """Every row of a partitioned table, its partition values (tenant, namespace) as strings, unescaped."""
    keys = pa.schema([(column, pa.string()) for column in PARTITIONED[name]])
    dataset = ds.dataset(folder / name, format="parquet", partitioning=ds.partitioning(keys, flavor="hive"))
    rows: list[Record] = dataset.to_table().to_pylist()
    return rows


def namespace_record(row: Record) -> Record:
    """A row of the namespaces table (with its tenant) as a namespace record."""
    policy = {k: v for k, v in row.items() if k not in ("tenant", "namespace")}
    return {"kind": "namespace", "name": f"{row['tenant']}/{row['namespace']}", "policy": policy}


def parquet_record(table: str, tenant: str, namespace: str, row: Record) -> Record:
    """A row of the topics, versions or clients table as the snapshot record it came from."""
    if table == "topics":
        policy = None
        if row["compatibility"] is not None or row["validation_enforced"] is not None:
            policy = {"compatibility": row["compatibility"], "validation_enforced": row["validation_enforced"]}
        return {"kind": "topic", "name": row["topic"], "namespace": f"{tenant}/{namespace}", "policy": policy}
    if table == "versions":
        properties = row["properties"] or []
        return {
            "kind": "version",
            "topic": row["schema_id"],
            "version": row["version"],
            "type": row["type"],
            "deleted": row["deleted"],
            "timestamp": row["timestamp"],
            "user": row["user"],
            "properties": dict(properties.items() if isinstance(properties, dict) else properties),
            **_text_or_base64(bytes(row["schema"] or b"")),
        }
    return {"kind": "client", **{k: row[k] for k in TABLES["clients"].names}}


def _text_or_base64(data: bytes) -> dict[str, str]:
    """The stored bytes as a snapshot writes them: text when they are UTF-8, else base64."""
    try:
        return {"schema": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"schema_base64": base64.b64encode(data).decode("ascii")}


def import_parquet_export(folder: str | Path) -> Registry:
    """The export under `folder` read whole into a new in-memory registry (as `import_snapshot` reads a
    snapshot; proposals and the audit trail are not in an export). InvalidArgumentError when the folder is not
    an export (`check_parquet_export`), SnapshotError when its rows do not make a registry."""
    folder = Path(folder).expanduser().resolve()
    header = export_header(check_parquet_export(folder))
    namespaces = [namespace_record(row) for row in partitioned_rows(folder, "namespaces")]
    tenants = {str(t) for t in pq.read_table(folder / "tenants").column("tenant").to_pylist()}
    tenants |= {n["name"].split("/")[0] for n in namespaces}
    records: dict[str, list[Record]] = {}
    for name in ("topics", "versions", "clients"):
        found = [parquet_record(name, r["tenant"], r["namespace"], r) for r in partitioned_rows(folder, name)]
        records[name] = found
    records["versions"].sort(key=lambda r: (TopicName.parse(r["topic"]).schema_id, r["version"]))
    return registry_from_records(
        [
            header,
            *({"kind": "tenant", "name": t} for t in sorted(tenants)),
            *namespaces,
            *records["topics"],
            *records["versions"],
            *records["clients"],
        ]
    )
