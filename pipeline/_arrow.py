"""Output rows as Arrow batches: every job's output schema is declared once, as a pyarrow schema, and the
Spark DDL is derived from it, so Python and Spark agree on each column's type (None stays null)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

_DDL = {
    pa.string(): "string",
    pa.int64(): "bigint",
    pa.bool_(): "boolean",
    pa.float64(): "double",
    pa.binary(): "binary",
}


def schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in fields])


def ddl(arrow_schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema (string, bigint, boolean, double, binary, array<bigint>)."""
    return ", ".join(f"`{f.name}` {_ddl_type(f.type)}" for f in arrow_schema)


def _ddl_type(kind: pa.DataType) -> str:
    if pa.types.is_list(kind):
        return f"array<{_ddl_type(kind.value_type)}>"
    return _DDL[kind]


def to_batch(rows: list[dict[str, Any]], arrow_schema: pa.Schema) -> pa.RecordBatch:
    columns = {f.name: [row.get(f.name) for row in rows] for f in arrow_schema}
    return pa.RecordBatch.from_pydict(columns, schema=arrow_schema)


def batches(rows: Iterable[dict[str, Any]], arrow_schema: pa.Schema, size: int = 10_000) -> Iterator[pa.RecordBatch]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield to_batch(chunk, arrow_schema)
            chunk = []
    if chunk:
        yield to_batch(chunk, arrow_schema)
