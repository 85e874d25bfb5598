"""The registry as Parquet tables (`schema-explorer export --format parquet DIR`), for Spark SQL, DuckDB, pandas,
and as a source of the audits (`--parquet DIR`). Columns are documented in docs/guide/spark.md ("A columnar export").

    DIR/registry/part-00000.parquet          one row: format, pulsar_version, broker (JSON), change_token,
                                             exported_at, source
    DIR/tenants/part-00000.parquet           tenant
    DIR/namespaces/tenant=T/part-*.parquet   namespace, compatibility, auto_update_strategy, allow_auto_update,
                                             allow_auto_update_with_replicator, validation_enforced
    DIR/topics/tenant=T/namespace=N/...      topic, schema_id, compatibility, validation_enforced
    DIR/versions/tenant=T/namespace=N/...    schema_id, version, type, deleted, timestamp, user, properties, schema
    DIR/clients/tenant=T/namespace=N/...     topic, role, name, subscription, schema_type, version, connected_at,
                                             replicator
    DIR/audit/part-00000.parquet             at, user, action, target, detail, outcome

Partition folders are Hive's (`tenant=acme/namespace=orders`): `namespace` there is the namespace's own name
(`orders` of `acme/orders`), as in a Pulsar topic name; characters Spark escapes in folder names (`:`, `=`,
...) are escaped as Spark does, so Spark, pyarrow and DuckDB read the same values back. Proposals are not
exported here (the JSON lines snapshot keeps them: it is the backup; this is for analysis).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from registry.parquet import FORMAT, PARTITIONED, TABLES  # the tables' one definition

ROWS_PER_GROUP = 10_000
# Spark's ExternalCatalogUtils.escapePathName: these characters are written as %XX in partition folder names.
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^") | {chr(c) for c in range(1, 32)}


def escape(value: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


@dataclass(slots=True)
class _Table:
    """Rows of one table being written: one file per partition, row groups of ROWS_PER_GROUP."""

    root: Path
    name: str
    partition: tuple[str, ...] | None = None
    writer: pq.ParquetWriter | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    files: dict[tuple[str, ...], int] = field(default_factory=dict)
    count: int = 0

    def add(self, partition: tuple[str, ...], row: dict[str, Any]) -> None:
        if partition != self.partition:
            self.close()
            self.partition = partition
        self.rows.append(row)
        self.count += 1
        if len(self.rows) >= ROWS_PER_GROUP:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        schema = TABLES[self.name]
        if self.writer is None:
            names = PARTITIONED.get(self.name, ())
            folder = self.root / self.name
            for column, value in zip(names, self.partition or (), strict=True):
                folder = folder / f"{column}={escape(value)}"
            folder.mkdir(parents=True, exist_ok=True)
            key = self.partition or ()
            self.files[key] = self.files.get(key, -1) + 1
            self.writer = pq.ParquetWriter(folder / f"part-{self.files[key]:05d}.parquet", schema)
        self.writer.write_table(pa.Table.from_pylist(self.rows, schema=schema), row_group_size=ROWS_PER_GROUP)
        self.rows = []

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def finish(self) -> None:
        """Close the last file; a table without rows still gets one (empty) file, so its columns are known."""
        self.close()
        if self.count == 0:
            folder = self.root / self.name
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(TABLES[self.name].empty_table(), folder / "part-00000.parquet")


def version_schema_bytes(record: dict[str, Any]) -> bytes:
    import base64

    if "schema_base64" in record:
        return base64.b64decode(record["schema_base64"])
    return str(record.get("schema", "")).encode("utf-8")


def write_export(
    folder: Path,
    header: dict[str, Any],
    namespaces: Iterable[dict[str, Any]],
    bundles: Iterable[Any],
    audit: Iterable[dict[str, Any]],
    *,
    tenants: Iterable[str],
    change_token: int | None,
    source: str,
) -> dict[str, int]:
    """Write every table under `folder` (made here) from snapshot records: `namespaces` (namespace records),
    `bundles` (TopicBundles in key order, so each partition is written once) and `audit` (audit records).
    Returns the rows per table."""
    tables = {name: _Table(folder, name) for name in TABLES}
    tables["registry"].add(
        (),
        {
            "format": FORMAT,
            "pulsar_version": header.get("pulsar_version"),
            "broker": json.dumps(header.get("broker", {})),
            "change_token": change_token,
            "exported_at": int(time.time() * 1000),
            "source": source,
        },  # fmt: skip
    )
    for tenant in tenants:
        tables["tenants"].add((), {"tenant": tenant})
    for record in namespaces:
        tenant, local = str(record["name"]).split("/")
        tables["namespaces"].add((tenant,), {"namespace": local, **record.get("policy", {})})
    for bundle in bundles:
        tenant, local = bundle.namespace.split("/")
        where = (tenant, local)
        for record in bundle.records:
            kind = record["kind"]
            if kind == "topic":
                policy = record.get("policy") or {}
                tables["topics"].add(
                    where,
                    {
                        "topic": record["name"],
                        "schema_id": bundle.key,
                        "compatibility": policy.get("compatibility"),
                        "validation_enforced": policy.get("validation_enforced"),
                    },  # fmt: skip
                )
            elif kind == "version":
                tables["versions"].add(
                    where,
                    {
                        "schema_id": record["topic"],
                        "version": record["version"],
                        "type": record["type"],
                        "deleted": record["deleted"],
                        "timestamp": record["timestamp"],
                        "user": record["user"],
                        "properties": list(record.get("properties", {}).items()),
                        "schema": version_schema_bytes(record),
                    },  # fmt: skip
                )
            elif kind == "client":
                tables["clients"].add(where, {k: record.get(k) for k in TABLES["clients"].names})
    for record in audit:
        tables["audit"].add((), {k: record.get(k) for k in TABLES["audit"].names})
    for table in tables.values():
        table.finish()
    return {name: table.count for name, table in tables.items()}
