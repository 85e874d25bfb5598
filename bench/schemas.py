"""Schema generators shared by the benchmarks (bench/README.md). Deterministic: same arguments, same text.

Each generator returns Avro schema *text* (compact JSON), as a Pulsar admin client would post it.
"""

from __future__ import annotations

import json
from itertools import count
from typing import Any

Json = Any


def to_text(schema: Json) -> str:
    return json.dumps(schema, separators=(",", ":"))


# --------------------------------------------------------------------------------------------------- small pair


def small_pair() -> tuple[str, str]:
    """(reader, writer): a 3-field record each; the reader promotes int→long, drops `age`, adds an optional
    `email` with a default. Compatible."""
    writer = {
        "type": "record",
        "name": "User",
        "namespace": "acme.users",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": "string"},
            {"name": "age", "type": "int"},
        ],
    }
    reader = {
        "type": "record",
        "name": "User",
        "namespace": "acme.users",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": "string"},
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
    return to_text(reader), to_text(writer)


# --------------------------------------------------------------------------------------------------- large record

# Leaf field shapes, cycled through: primitives, unions with null, enums, fixed, maps and arrays.
_LEAF_KINDS = (
    "string",
    "long",
    "nullable_string",
    "enum",
    "double",
    "fixed",
    "map",
    "array",
    "nullable_enum",
    "boolean",
    "int",
    "nullable_long",
    "bytes",
    "float",
    "map_of_arrays",
)


class _Namer:
    def __init__(self) -> None:
        self._ids = count(1)

    def __call__(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"


def _leaf(kind: str, name: _Namer) -> tuple[Json, Json]:
    """(type, default or ...) for one leaf field; `...` means no default."""
    if kind in ("string", "long", "double", "boolean", "int", "bytes", "float"):
        return kind, ...
    if kind == "nullable_string":
        return ["null", "string"], None
    if kind == "nullable_long":
        return ["null", "long"], None
    if kind == "enum":
        return {"type": "enum", "name": name("Status"), "symbols": ["NEW", "ACTIVE", "SUSPENDED", "CLOSED"]}, ...
    if kind == "nullable_enum":
        enum = {"type": "enum", "name": name("Kind"), "symbols": ["A", "B", "C"], "default": "A"}
        return ["null", enum], None
    if kind == "fixed":
        return {"type": "fixed", "name": name("Digest"), "size": 16}, ...
    if kind == "map":
        return {"type": "map", "values": "string"}, {}
    if kind == "array":
        return {"type": "array", "items": "long"}, []
    if kind == "map_of_arrays":
        return {"type": "map", "values": {"type": "array", "items": ["null", "double"]}}, {}
    raise ValueError(kind)


def _field(field_name: str, type_: Json, default: Json) -> dict[str, Any]:
    out: dict[str, Any] = {"name": field_name, "type": type_}
    if default is not ...:
        out["default"] = default
    return out


def large_record(
    top_fields: int = 500, *, nested_every: int = 5, level2_fields: int = 10, level3_fields: int = 2
) -> str:
    """A record nested 3 deep: `top_fields` top-level fields, every `nested_every`-th one a record (alternately
    plain and inside a union with null) of `level2_fields` fields, two of which are records of `level3_fields`
    fields. With the defaults: 500 top-level, 100 level-2 records (1,000 fields), 200 level-3 records (400
    fields): 1,900 fields in all, with unions, enums, fixed, maps and arrays throughout."""
    name = _Namer()
    kinds = iter(_LEAF_KINDS * (10 * top_fields))

    def leaf_field(field_name: str) -> dict[str, Any]:
        return _field(field_name, *_leaf(next(kinds), name))

    def record(prefix: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
        return {"type": "record", "name": name(prefix), "fields": fields}

    top: list[dict[str, Any]] = []
    for i in range(top_fields):
        if i % nested_every == nested_every - 1:
            inner: list[dict[str, Any]] = []
            for j in range(level2_fields):
                if j in (3, 7):
                    leaves = [leaf_field(f"c{k}") for k in range(level3_fields)]
                    inner.append(_field(f"b{j}", record("Detail", leaves), ...))
                else:
                    inner.append(leaf_field(f"b{j}"))
            nested = record("Section", inner)
            top.append(
                _field(f"a{i}", ["null", nested], None) if (i // nested_every) % 2 else _field(f"a{i}", nested, ...)
            )
        else:
            top.append(leaf_field(f"a{i}"))
    return to_text({"type": "record", "name": "Wide", "namespace": "bench.large", "fields": top})


def count_fields(text: str) -> tuple[int, int]:
    """(top-level fields, all record fields) of a schema produced here."""
    total = 0

    def visit(node: Json) -> None:
        nonlocal total
        if isinstance(node, list):
            for branch in node:
                visit(branch)
        elif isinstance(node, dict):
            if node.get("type") == "record":
                total += len(node["fields"])
                for fld in node["fields"]:
                    visit(fld["type"])
            elif node.get("type") == "array":
                visit(node["items"])
            elif node.get("type") == "map":
                visit(node["values"])

    doc = json.loads(text)
    visit(doc)
    return len(doc["fields"]), total


def with_added_field(text: str, field_name: str = "added_later", *, salt: str = "") -> str:
    """The same record plus one optional top-level field with a default (a compatible change both ways).

    `salt` changes the added field's doc, so that each call yields a different text (defeats parse caches)
    without changing the schema's meaning.
    """
    doc = json.loads(text)
    fld: dict[str, Any] = {"name": field_name, "type": ["null", "string"], "default": None}
    if salt:
        fld["doc"] = salt
    doc["fields"].append(fld)
    return to_text(doc)


# --------------------------------------------------------------------------------------------------- histories


def base_record(fields: int = 200) -> Json:
    """A flat-ish record of `fields` top-level fields of mixed shapes (no nesting), as a JSON object."""
    name = _Namer()
    kinds = iter(_LEAF_KINDS * fields)
    return {
        "type": "record",
        "name": "Event",
        "namespace": "bench.history",
        "fields": [_field(f"f{i}", *_leaf(next(kinds), name)) for i in range(fields)],
    }


def evolving_history(versions: int = 100, fields: int = 200) -> tuple[list[str], str]:
    """(existing versions oldest first, candidate): version k is the base record plus k optional fields with a
    default (`opt0` … `opt{k-1}`); the candidate adds one more. Every pair is compatible in both directions."""
    base = base_record(fields)

    def version(k: int) -> str:
        doc = json.loads(json.dumps(base))
        doc["fields"] += [{"name": f"opt{i}", "type": ["null", "string"], "default": None} for i in range(k)]
        return to_text(doc)

    return [version(k) for k in range(versions)], version(versions)


# --------------------------------------------------------------------------------------------------- diff pair


def similar_fields_pair(kib: int) -> tuple[str, str]:
    """(old, new): pretty-printed Avro records of about `kib` KiB each, hundreds of near-identical fields (the
    lines a text diff finds hardest); the new one changes a type every 23rd field, drops every 31st, adds one
    after every 37th, renames every field (a naming convention changed: only the repeated lines match, what
    makes difflib cubic) and moves a block of 5 fields from the front to the end."""
    fields = []
    n = 0
    while len(to_text({"fields": fields})) < kib * 1024 * 0.62:  # pretty-printing adds about 60 %
        kind = ("string", "long", ["null", "string"], "double")[n % 4]
        field: dict[str, Any] = {"name": f"field_{n:05d}", "type": kind, "doc": "a field of the record"}
        if isinstance(kind, list):
            field["default"] = None
        fields.append(field)
        n += 1
    new_fields = []
    for index, field in enumerate(fields):
        if index % 31 == 30:
            continue
        if index % 23 == 22:
            field = {**field, "type": "bytes"}
        field = {**field, "name": f"renamed_{index:05d}"}
        new_fields.append(field)
        if index % 37 == 36:
            new_fields.append({"name": f"added_{index:05d}", "type": ["null", "long"], "default": None})
    new_fields = new_fields[5:] + new_fields[:5]

    def record(fields: list[Json]) -> str:
        return json.dumps({"type": "record", "name": "Wide", "namespace": "acme.bench", "fields": fields}, indent=2)

    return record(fields), record(new_fields)
