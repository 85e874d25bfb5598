"""Differential test: our Avro resolver (Pulsar's view) against the Python `avro` package's SchemaCompatibility.

The two agree except in the documented classes of avro-resolution.md ("Where Pulsar (resolver) and
SchemaCompatibility disagree"). We generate pairs of related schemas (a base record, then one evolution step),
check both directions with both tools, and require every disagreement to be explained by exactly one row of
that table, in the table's direction.

How a disagreement is explained: each row has a *fix*, an edit of the pair that removes only that row's
difference between the tools. A row explains a disagreement when its fix makes the tools agree while leaving
the other tool's verdict unchanged (the fix is neutral for it). For example, "record renamed": add the
writer's record names as aliases of the reader's records; Pulsar ignores record names, so its verdict must
not move, and Python's must move to Pulsar's.

Bounded: 200 generated pairs (both directions each), no deadline; runs in a few seconds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import avro.schema
import pytest
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from registry.avro._resolution import resolve
from registry.avro._schema import parse_avro

Json = Any
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------------------------------------------
# The table (avro-resolution.md), as rows with the direction each disagreement must have.
# --------------------------------------------------------------------------------------------------------------

RECORD_RENAMED = "record renamed, same structure"
ENUM_SYMBOL_MISSING = "writer enum symbol the reader lacks, reader has no enum default"
UNION_RECORD_BY_STRUCTURE = "writer record vs reader union whose record branch differs in name but matches in structure"
UNION_NAMED_BY_FULL_NAME = "writer enum/fixed n1.E vs reader union [null, n2.E]"
UNQUALIFIED_ALIAS = "unqualified record alias inside a namespace"
# Not in the table yet (reported): the mirror of UNQUALIFIED_ALIAS. Python `avro` compares a reader alias as
# written, so an unqualified alias "Old" of a namespaced reader enum/fixed matches a writer named plain "Old";
# Java qualifies the alias with the reader's namespace ("n.Old"), so Java's resolver (and Java's own
# SchemaCompatibility) sees two names that differ.
UNQUALIFIED_ALIAS_VS_NULL_NAMESPACE = (
    "unqualified alias of a namespaced reader enum/fixed vs a writer in the null namespace (not in the table yet)"
)

#: row -> (SchemaCompatibility says compatible, Pulsar says compatible)
DIRECTION: dict[str, tuple[bool, bool]] = {
    RECORD_RENAMED: (False, True),
    ENUM_SYMBOL_MISSING: (False, True),
    UNION_RECORD_BY_STRUCTURE: (False, True),
    UNION_NAMED_BY_FULL_NAME: (True, False),
    UNQUALIFIED_ALIAS: (False, True),
    UNQUALIFIED_ALIAS_VS_NULL_NAMESPACE: (True, False),
}


# --------------------------------------------------------------------------------------------------------------
# The two verdicts
# --------------------------------------------------------------------------------------------------------------


def text(schema: Json) -> str:
    return json.dumps(schema, separators=(",", ":"))


def python_compatible(reader: str, writer: str) -> bool:
    """SchemaCompatibility, as the Python `avro` package implements it (a new checker per call: it memoises)."""
    result = ReaderWriterCompatibilityChecker().get_compatibility(
        reader=avro.schema.parse(reader), writer=avro.schema.parse(writer)
    )
    return result.compatibility is SchemaCompatibilityType.compatible


def pulsar_compatible(reader: str, writer: str) -> bool:
    return not resolve(parse_avro(reader), parse_avro(writer))


# --------------------------------------------------------------------------------------------------------------
# Walking schema JSON with namespaces resolved (each named type is defined once and never referenced by name)
# --------------------------------------------------------------------------------------------------------------


def split_name(node: dict[str, Any], space: str | None) -> tuple[str | None, str]:
    """(namespace, full name) of a named type definition, as Avro resolves them."""
    name = node["name"]
    if "." in name:
        ns = name.rpartition(".")[0]
        return ns, name
    ns = node.get("namespace", space) or None
    return ns, f"{ns}.{name}" if ns else name


def named_definitions(schema: Json, space: str | None = None) -> Iterator[tuple[dict[str, Any], str, str | None]]:
    """Every named type definition as (node, full name, namespace)."""
    if isinstance(schema, list):
        for branch in schema:
            yield from named_definitions(branch, space)
    elif isinstance(schema, dict):
        kind = schema["type"]
        if isinstance(kind, (dict, list)):
            yield from named_definitions(kind, space)
        elif kind in ("record", "enum", "fixed"):
            ns, full = split_name(schema, space)
            yield schema, full, ns
            if kind == "record":
                for fld in schema["fields"]:
                    yield from named_definitions(fld["type"], ns)
        elif kind == "array":
            yield from named_definitions(schema["items"], space)
        elif kind == "map":
            yield from named_definitions(schema["values"], space)


def qualified(alias: str, ns: str | None) -> str:
    return alias if "." in alias or not ns else f"{ns}.{alias}"


# --------------------------------------------------------------------------------------------------------------
# Aligning the reader's types with the writer's, as resolution would pair them (on Python avro's parse)
# --------------------------------------------------------------------------------------------------------------


@dataclass
class Alignment:
    # (reader record full name, writer record full name, reached through a reader union)
    renamed_records: list[tuple[str, str, bool]] = field(default_factory=list)
    # (reader enum/fixed full name, writer full name): same simple name, other namespace, in a reader union
    union_named: list[tuple[str, str]] = field(default_factory=list)
    # the same, but inside a writer union that is union-equivalent to the reader's: no disagreement, both accept
    equivalent_union_named: list[tuple[str, str]] = field(default_factory=list)


def _aliases(schema: avro.schema.NamedSchema) -> set[str]:
    raw = schema.props.get("aliases") or []
    return {qualified(a, schema.namespace) for a in raw}


def is_union_equivalent(w: avro.schema.Schema, r: avro.schema.Schema, seen: dict[tuple[int, int], bool]) -> bool:
    """Avro 1.12 `Resolver.unionEquiv`: same shape, named types compared by *short* name, same fixed sizes, the
    same enum symbols in order, records with the same field names. A writer union equivalent to the reader's
    is resolved with no error at all (`ResolvingGrammarGenerator`: `if (unionEquiv) return simpleGen(...)`)."""
    if w.type != r.type:
        return False
    if w.type in ("record", "enum", "fixed") and w.name != r.name:
        return False
    if w.type == "array":
        return is_union_equivalent(w.items, r.items, seen)
    if w.type == "map":
        return is_union_equivalent(w.values, r.values, seen)
    if w.type == "fixed":
        return bool(w.size == r.size)
    if w.type == "enum":
        return list(w.symbols) == list(r.symbols)
    if w.type == "union":
        return len(w.schemas) == len(r.schemas) and all(
            is_union_equivalent(a, b, seen) for a, b in zip(w.schemas, r.schemas, strict=True)
        )
    if w.type == "record":
        key = (id(w), id(r))
        if key not in seen:
            seen[key] = True
            seen[key] = len(w.fields) == len(r.fields) and all(
                a.name == b.name and is_union_equivalent(a.type, b.type, seen)
                for a, b in zip(w.fields, r.fields, strict=True)
            )
        return seen[key]
    return True


def align(reader: avro.schema.Schema, writer: avro.schema.Schema) -> Alignment:
    out = Alignment()
    seen: set[tuple[int, int]] = set()

    def visit(r: avro.schema.Schema, w: avro.schema.Schema, via_union: bool, equivalent: bool) -> None:
        if w.type == "union":
            equivalent = equivalent or is_union_equivalent(w, r, {})
            for branch in w.schemas:
                visit(r, branch, via_union, equivalent)
            return
        if r.type == "union":
            same_kind = [b for b in r.schemas if b.type == w.type]
            if not same_kind:
                return
            by_name = [b for b in same_kind if getattr(b, "fullname", None) == getattr(w, "fullname", None)]
            visit((by_name or same_kind)[0], w, True, equivalent)
            return
        if r.type != w.type or (id(r), id(w)) in seen:
            return
        seen.add((id(r), id(w)))
        if r.type == "record":
            if r.name != w.name and w.fullname not in _aliases(r):
                out.renamed_records.append((r.fullname, w.fullname, via_union))
            for rf in r.fields:
                wf = w.fields_dict.get(rf.name)
                for alias in rf.props.get("aliases") or []:
                    wf = wf or w.fields_dict.get(alias)
                if wf is not None:
                    visit(rf.type, wf.type, False, equivalent)
        elif r.type == "array":
            visit(r.items, w.items, False, equivalent)
        elif r.type == "map":
            visit(r.values, w.values, False, equivalent)
        elif r.type in ("enum", "fixed"):
            if via_union and r.name == w.name and r.fullname != w.fullname:
                (out.equivalent_union_named if equivalent else out.union_named).append((r.fullname, w.fullname))

    visit(reader, writer, False, False)
    return out


# --------------------------------------------------------------------------------------------------------------
# The fixes, one per row: each removes exactly that row's difference
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fix:
    rows: tuple[str, ...]  # the row(s) it can explain; which one is decided by `pick`
    apply: Callable[[Json, Json], tuple[Json, Json] | None]  # None: nothing to fix in this pair
    neutral_for: str  # "pulsar" or "python": whose verdict the fix must not change
    pick: Callable[[Json, Json, bool], str]  # (reader, writer, python_compatible) -> row


def fix_enum_defaults(reader: Json, writer: Json) -> tuple[Json, Json] | None:
    """Give every reader enum a default: SchemaCompatibility then accepts unknown writer symbols; the
    resolver never looked at symbols."""
    reader = copy.deepcopy(reader)
    changed = False
    for node, _, _ in named_definitions(reader):
        if node["type"] == "enum" and "default" not in node:
            node["default"] = node["symbols"][0]
            changed = True
    return (reader, writer) if changed else None


def fix_qualify_aliases(reader: Json, writer: Json) -> tuple[Json, Json] | None:
    """Write the reader's aliases fully qualified, as Java reads them anyway."""
    reader = copy.deepcopy(reader)
    changed = False
    for node, _, ns in named_definitions(reader):
        aliases = node.get("aliases")
        if aliases and ns and any("." not in a for a in aliases):
            node["aliases"] = [qualified(a, ns) for a in aliases]
            changed = True
    return (reader, writer) if changed else None


def fix_record_aliases(reader: Json, writer: Json) -> tuple[Json, Json] | None:
    """Let each reader record alias the writer record it is paired with: SchemaCompatibility then accepts the
    other name; the resolver never compared record names."""
    renamed = align(avro.schema.parse(text(reader)), avro.schema.parse(text(writer))).renamed_records
    if not renamed:
        return None
    reader = copy.deepcopy(reader)
    wanted: dict[str, list[str]] = {}
    for r_full, w_full, _ in renamed:
        wanted.setdefault(r_full, []).append(w_full)
    for node, full, _ in named_definitions(reader):
        if node["type"] == "record" and full in wanted:
            node["aliases"] = list(dict.fromkeys([*node.get("aliases", []), *wanted[full]]))
    return reader, writer


def pick_renamed_record(reader: Json, writer: Json, _: bool) -> str:
    renamed = align(avro.schema.parse(text(reader)), avro.schema.parse(text(writer))).renamed_records
    rows = {UNION_RECORD_BY_STRUCTURE if via_union else RECORD_RENAMED for _, _, via_union in renamed}
    return rows.pop() if len(rows) == 1 else "ambiguous: " + " + ".join(sorted(rows))


def _same_full_names(reader: Json, writer: Json, pairs: list[tuple[str, str]]) -> tuple[Json, Json] | None:
    """Give each paired enum/fixed the same full name on both sides; SchemaCompatibility compares short names
    only, so its verdict must not move."""
    if not pairs:
        return None
    reader, writer = copy.deepcopy(reader), copy.deepcopy(writer)
    for r_full, w_full in pairs:
        # Rename the side that gains a namespace, so no definition has to be moved to the null namespace.
        side, old, new = (reader, r_full, w_full) if "." in w_full else (writer, w_full, r_full)
        for node, full, _ in named_definitions(side):
            if full == old:
                node["name"] = new
                node.pop("namespace", None)
    return reader, writer


def fix_union_named_namespace(reader: Json, writer: Json) -> tuple[Json, Json] | None:
    pairs = align(avro.schema.parse(text(reader)), avro.schema.parse(text(writer))).union_named
    return _same_full_names(reader, writer, pairs)


FIXES = (
    Fix((ENUM_SYMBOL_MISSING,), fix_enum_defaults, "pulsar", lambda r, w, p: ENUM_SYMBOL_MISSING),
    Fix(
        (UNQUALIFIED_ALIAS, UNQUALIFIED_ALIAS_VS_NULL_NAMESPACE),
        fix_qualify_aliases,
        "pulsar",
        lambda r, w, py: UNQUALIFIED_ALIAS_VS_NULL_NAMESPACE if py else UNQUALIFIED_ALIAS,
    ),
    Fix((RECORD_RENAMED, UNION_RECORD_BY_STRUCTURE), fix_record_aliases, "pulsar", pick_renamed_record),
    Fix((UNION_NAMED_BY_FULL_NAME,), fix_union_named_namespace, "python", lambda r, w, p: UNION_NAMED_BY_FULL_NAME),
)


def explaining_rows(reader: Json, writer: Json) -> list[str]:
    """The rows whose fix, alone, removes the disagreement on (reader, writer) without moving the other side."""
    py = python_compatible(text(reader), text(writer))
    ours = pulsar_compatible(text(reader), text(writer))
    assert py != ours, "not a disagreement"
    rows = []
    for fix in FIXES:
        fixed = fix.apply(reader, writer)
        if fixed is None:
            continue
        r2, w2 = text(fixed[0]), text(fixed[1])
        py2, ours2 = python_compatible(r2, w2), pulsar_compatible(r2, w2)
        unmoved = ours2 == ours if fix.neutral_for == "pulsar" else py2 == py
        if unmoved and py2 == ours2:
            rows.append(fix.pick(reader, writer, py))
    return rows


def check_pair(reader: Json, writer: Json) -> str | None:
    """Assert the tools agree, or that exactly one row explains why not (in its direction); the row or None."""
    r, w = text(reader), text(writer)
    py, ours = python_compatible(r, w), pulsar_compatible(r, w)
    if py == ours:
        return None
    rows = explaining_rows(reader, writer)
    assert len(rows) == 1, (
        f"a disagreement that {'no row' if not rows else 'more than one row'} of avro-resolution.md explains "
        f"({rows}): SchemaCompatibility says {'compatible' if py else 'incompatible'}, Pulsar says "
        f"{'compatible' if ours else 'incompatible'}\n reader: {r}\n writer: {w}"
    )
    row = rows[0]
    assert row in DIRECTION, f"{row}\n reader: {r}\n writer: {w}"
    assert DIRECTION[row] == (py, ours), f"{row!r} in the wrong direction\n reader: {r}\n writer: {w}"
    return row


# --------------------------------------------------------------------------------------------------------------
# Generating a base schema
# --------------------------------------------------------------------------------------------------------------

PRIMITIVES = ("boolean", "int", "long", "float", "double", "bytes", "string")
NAMESPACES = ("acme.orders", "acme.common", "org.example")
SYMBOLS = ("RED", "GREEN", "BLUE", "CYAN", "MAGENTA", "YELLOW")
PRIMITIVE_DEFAULTS: dict[str, Json] = {
    "null": None,
    "boolean": False,
    "int": 7,
    "long": 70000000000,
    "float": 1.5,
    "double": -2.25,
    "bytes": "\u00ff",
    "string": "n/a",
}


class Names:
    """Fresh simple names: every named type and every field name in a document is unique."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def fresh(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]}"

    def absorb(self, schema: Json) -> None:
        """Reserve every name already used in `schema` (so mutations pick names that are new)."""
        for node, _, _ in named_definitions(schema):
            self._reserve(node["name"].rpartition(".")[2])
            for fld in node.get("fields", []):
                self._reserve(fld["name"])
                for alias in fld.get("aliases", []):
                    self._reserve(alias)

    def _reserve(self, name: str) -> None:
        prefix = name.rstrip("0123456789")
        digits = name[len(prefix) :]
        if digits:
            self.counts[prefix] = max(self.counts.get(prefix, 0), int(digits))


def default_for(schema: Json) -> Json:
    """A valid default for `schema` (a union's default matches its first branch)."""
    if isinstance(schema, str):
        return PRIMITIVE_DEFAULTS[schema]
    if isinstance(schema, list):
        return default_for(schema[0])
    kind = schema["type"]
    if kind == "enum":
        return schema["symbols"][0]
    if kind == "fixed":
        return "\u0000" * schema["size"]
    if kind == "array":
        return []
    if kind == "map":
        return {}
    if kind == "record":
        return {f["name"]: default_for(f["type"]) for f in schema["fields"]}
    return PRIMITIVE_DEFAULTS[kind]


@st.composite
def named_type(draw: st.DrawFn, names: Names, kind: str, depth: int) -> dict[str, Any]:
    if kind == "enum":
        node: dict[str, Any] = {"type": "enum", "name": names.fresh("Color")}
        node["symbols"] = list(SYMBOLS[: draw(st.integers(1, 4))])
    elif kind == "fixed":
        node = {"type": "fixed", "name": names.fresh("Hash"), "size": draw(st.sampled_from([4, 8, 16]))}
    else:
        node = {"type": "record", "name": names.fresh("Rec")}
    if draw(st.integers(0, 3)) == 0:
        node["namespace"] = draw(st.sampled_from(NAMESPACES))
    if draw(st.integers(0, 5)) == 0:
        node["aliases"] = [names.fresh("Legacy")]
    if kind == "record":
        node["fields"] = draw(fields(names, depth + 1, 1, 3))
    return node


@st.composite
def avro_type(draw: st.DrawFn, names: Names, depth: int, in_union: bool = False) -> Json:
    kinds = ["primitive"] * 5 + ["enum", "fixed", "array", "map"]
    if depth < 3:
        kinds += ["record", "record"]
    if not in_union:
        kinds += ["union", "union", "union"]
    kind = draw(st.sampled_from(kinds))
    if kind == "primitive":
        return draw(st.sampled_from(PRIMITIVES))
    if kind in ("enum", "fixed", "record"):
        return draw(named_type(names, kind, depth))
    if kind == "array":
        return {"type": "array", "items": draw(avro_type(names, depth + 1, in_union=False))}
    if kind == "map":
        return {"type": "map", "values": draw(avro_type(names, depth + 1, in_union=False))}
    inner = draw(avro_type(names, depth, in_union=True))
    branches: list[Json] = [inner]
    extra = draw(st.sampled_from([[], ["string"], ["int", "string"]]))
    branches += [b for b in extra if b != inner]
    position = draw(st.integers(0, len(branches)))
    return branches[:position] + ["null"] + branches[position:]


@st.composite
def fields(draw: st.DrawFn, names: Names, depth: int, low: int, high: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(low, high))):
        fld: dict[str, Any] = {"name": names.fresh("f"), "type": draw(avro_type(names, depth))}
        if draw(st.booleans()):
            fld["default"] = default_for(fld["type"])
        if draw(st.integers(0, 6)) == 0:
            fld["aliases"] = [names.fresh("was")]
        out.append(fld)
    return out


@st.composite
def base_schema(draw: st.DrawFn) -> tuple[dict[str, Any], Names]:
    names = Names()
    root: dict[str, Any] = {"type": "record", "name": names.fresh("Root")}
    ns = draw(st.sampled_from((None, *NAMESPACES)))
    if ns:
        root["namespace"] = ns
    featured = [fld for make in FEATURES if draw(st.integers(0, 4)) < 3 for fld in [make(draw, names)]]
    root["fields"] = draw(st.permutations(draw(fields(names, 1, 1, 4)) + featured))
    return root, names


def _featured(type_: Json, names: Names) -> dict[str, Any]:
    fld: dict[str, Any] = {"name": names.fresh("f"), "type": type_}
    if isinstance(type_, list) and type_[0] == "null":
        fld["default"] = None
    return fld


# Shapes every base schema likely has, so that mutations find named types in and out of unions.
FEATURES: tuple[Callable[[st.DrawFn, Names], dict[str, Any]], ...] = (
    lambda draw, names: _featured(["null", draw(named_type(names, "record", 1))], names),
    lambda draw, names: _featured(draw(named_type(names, "enum", 1)), names),
    lambda draw, names: _featured(["null", draw(named_type(names, "enum", 1))], names),
    lambda draw, names: _featured(draw(named_type(names, "fixed", 1)), names),
    lambda draw, names: _featured(["null", draw(named_type(names, "fixed", 1))], names),
    lambda draw, names: _featured({"type": "array", "items": draw(named_type(names, "record", 1))}, names),
    lambda draw, names: _featured({"type": "map", "values": draw(avro_type(names, 2))}, names),
)


# --------------------------------------------------------------------------------------------------------------
# Mutations: one evolution step of the base
# --------------------------------------------------------------------------------------------------------------


def records(schema: Json) -> list[dict[str, Any]]:
    return [node for node, _, _ in named_definitions(schema) if node["type"] == "record"]


def type_slots(schema: Json) -> list[tuple[Any, Any]]:
    """(container, key) for every place that holds a type: field "type", array "items", map "values", union
    branches."""
    slots: list[tuple[Any, Any]] = []

    def visit(container: Any, key: Any) -> None:
        slots.append((container, key))
        node = container[key]
        if isinstance(node, list):
            for i in range(len(node)):
                visit(node, i)
        elif isinstance(node, dict):
            if node["type"] == "record":
                for fld in node["fields"]:
                    visit(fld, "type")
            elif node["type"] == "array":
                visit(node, "items")
            elif node["type"] == "map":
                visit(node, "values")

    for fld in schema["fields"]:
        visit(fld, "type")
    return slots


def normalize_defaults(schema: Json) -> None:
    """Recompute every field default from its type (deterministic), so a mutation never leaves one invalid."""
    for record in records(schema):
        for fld in record["fields"]:
            if "default" in fld:
                fld["default"] = default_for(fld["type"])


# A mutation edits the schema in place and says what it did, or returns None (and edits nothing) when the
# schema has nothing it applies to.
Mutation = Callable[[st.DrawFn, dict[str, Any], Names], str | None]


def add_field(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    rec = draw(st.sampled_from(records(schema)))
    fld: dict[str, Any] = {"name": names.fresh("f"), "type": draw(avro_type(names, 2))}
    with_default = draw(st.booleans())
    if with_default:
        fld["default"] = default_for(fld["type"])
    rec["fields"].insert(draw(st.integers(0, len(rec["fields"]))), fld)
    return f"add field {'with' if with_default else 'without'} default"


def remove_field(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    candidates = [r for r in records(schema) if r["fields"]]
    if not candidates:
        return None
    rec = draw(st.sampled_from(candidates))
    fld = rec["fields"].pop(draw(st.integers(0, len(rec["fields"]) - 1)))
    return f"remove field {'with' if 'default' in fld else 'without'} default"


def rename_record(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    defs = [(n, full, ns) for n, full, ns in named_definitions(schema) if n["type"] == "record"]
    node, full, ns = draw(st.sampled_from(defs))
    return _rename(draw, node, full, ns, names, "Rec")


def rename_enum_or_fixed(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    defs = [(n, full, ns) for n, full, ns in named_definitions(schema) if n["type"] in ("enum", "fixed")]
    if not defs:
        return None
    node, full, ns = draw(st.sampled_from(defs))
    label = _rename(draw, node, full, ns, names, "Color" if node["type"] == "enum" else "Hash")
    if draw(st.integers(0, 3)) == 0:  # and move it to another namespace
        node["namespace"] = draw(st.sampled_from([s for s in NAMESPACES if s != ns]))
        label += ", moved to another namespace"
    return label


def _rename(draw: st.DrawFn, node: dict[str, Any], full: str, ns: str | None, names: Names, prefix: str) -> str:
    """A new simple name (the namespace stays); optionally an alias to the old name, as written or qualified."""
    node["name"] = names.fresh(prefix)
    alias = draw(st.sampled_from(["none", "simple", "full"]))
    if alias != "none":
        node["aliases"] = [*node.get("aliases", []), full.rpartition(".")[2] if alias == "simple" else full]
    return f"rename {node['type']}" + ("" if alias == "none" else f" with {alias} alias")


def change_namespace(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    node, _, ns = draw(st.sampled_from(list(named_definitions(schema))))
    node["namespace"] = draw(st.sampled_from([s for s in NAMESPACES if s != ns]))
    return f"change namespace of {node['type']}"


def union_branches_named(schema: Json) -> list[tuple[dict[str, Any], str, str | None]]:
    """Named type definitions that are direct branches of a union."""
    branches = {
        id(b) for container, key in type_slots(schema) if isinstance(container[key], list) for b in container[key]
    }
    return [d for d in named_definitions(schema) if id(d[0]) in branches]


def change_namespace_of_union_branch(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    defs = union_branches_named(schema)
    if not defs:
        return None
    node, _, ns = draw(st.sampled_from(defs))
    node["namespace"] = draw(st.sampled_from([s for s in NAMESPACES if s != ns]))
    return f"change namespace of a {node['type']} union branch"


def change_namespace_of_union_branch_and_widen(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    """Move an enum/fixed union branch to another namespace and add a branch in the same version: the unions are
    then not `unionEquiv`, so the reader union must find the writer's branch by full name (row 4)."""
    unions = [
        container[key]
        for container, key in type_slots(schema)
        if isinstance(container[key], list)
        and any(isinstance(b, dict) and b["type"] in ("enum", "fixed") for b in container[key])
    ]
    if not unions:
        return None
    union = draw(st.sampled_from(unions))
    spare = [p for p in PRIMITIVES if p not in union]
    branches = {id(b) for b in union}
    defs = [d for d in named_definitions(schema) if id(d[0]) in branches and d[0]["type"] in ("enum", "fixed")]
    node, _, ns = draw(st.sampled_from(defs))
    node["namespace"] = draw(st.sampled_from([s for s in NAMESPACES if s != ns]))
    union.append(draw(st.sampled_from(spare)))
    return f"change namespace of a {node['type']} union branch and add a branch"


def rename_union_branch(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    defs = union_branches_named(schema)
    if not defs:
        return None
    node, full, ns = draw(st.sampled_from(defs))
    prefix = {"record": "Rec", "enum": "Color", "fixed": "Hash"}[node["type"]]
    return _rename(draw, node, full, ns, names, prefix) + " (a union branch)"


def rename_field_with_alias(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    rec = draw(st.sampled_from(records(schema)))
    fld = draw(st.sampled_from(rec["fields"])) if rec["fields"] else None
    if fld is None:
        return None
    old = fld["name"]
    fld["name"] = names.fresh("f")
    fld["aliases"] = [*fld.get("aliases", []), old]
    return "rename field with alias"


def change_type(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    slots = type_slots(schema)
    container, key = draw(st.sampled_from(slots))
    old = container[key]
    if isinstance(old, str) and old != "null":
        taken = {b for b in container if isinstance(b, str)} if isinstance(container, list) else set()
        choices = [p for p in PRIMITIVES if p != old and p not in taken]
        if not choices:
            return None
        container[key] = new = draw(st.sampled_from(choices))
        label = f"change type {old} -> {new}"
    else:
        container[key] = draw(avro_type(names, 3, in_union=isinstance(container, list)))
        if isinstance(container, list) and _duplicate_branches(container):
            container[key] = old
            return None
        label = f"replace {_kind(old)} by {_kind(container[key])}"
    return label


def _kind(schema: Json) -> str:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, list):
        return "union"
    return str(schema["type"])


def _duplicate_branches(union: list[Any]) -> bool:
    keys = [b if isinstance(b, str) else b["type"] if b["type"] in ("array", "map") else b["name"] for b in union]
    return len(keys) != len(set(keys))


def enum_symbols(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    enums = [n for n, _, _ in named_definitions(schema) if n["type"] == "enum"]
    if not enums:
        return None
    enum = draw(st.sampled_from(enums))
    if len(enum["symbols"]) > 1 and draw(st.booleans()):
        removed = enum["symbols"].pop(draw(st.integers(1, len(enum["symbols"]) - 1)))
        if enum.get("default") == removed:
            enum["default"] = enum["symbols"][0]
        return "remove enum symbol"
    spare = [s for s in SYMBOLS if s not in enum["symbols"]]
    enum["symbols"].append(draw(st.sampled_from(spare)))
    return "add enum symbol"


def enum_default(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    enums = [n for n, _, _ in named_definitions(schema) if n["type"] == "enum"]
    if not enums:
        return None
    enum = draw(st.sampled_from(enums))
    if "default" in enum:
        del enum["default"]
        return "remove enum default"
    enum["default"] = draw(st.sampled_from(enum["symbols"]))
    return "add enum default"


def fixed_size(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    fixeds = [n for n, _, _ in named_definitions(schema) if n["type"] == "fixed"]
    if not fixeds:
        return None
    fixed = draw(st.sampled_from(fixeds))
    fixed["size"] = draw(st.sampled_from([s for s in (2, 4, 8, 16, 32) if s != fixed["size"]]))
    return "change fixed size"


def wrap_or_unwrap_union(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    candidates = [f for r in records(schema) for f in r["fields"]]
    if not candidates:
        return None
    fld = draw(st.sampled_from(candidates))
    if isinstance(fld["type"], list):
        others = [b for b in fld["type"] if b != "null"]
        fld["type"] = draw(st.sampled_from(others)) if others else "string"
        if "default" in fld:
            fld["default"] = default_for(fld["type"])
        return "unwrap union"
    null_first = "default" not in fld or fld["default"] is None
    fld["type"] = ["null", fld["type"]] if null_first else [fld["type"], "null"]
    return "wrap in union"


def union_branches(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    unions = [f for r in records(schema) for f in r["fields"] if isinstance(f["type"], list)]
    if not unions:
        return None
    fld = draw(st.sampled_from(unions))
    union = fld["type"]
    if len(union) > 1 and draw(st.booleans()):
        union.pop(draw(st.integers(1, len(union) - 1)))  # the first branch carries the default
        return "remove union branch"
    spare = [p for p in ("null", *PRIMITIVES) if p not in union]
    union.insert(draw(st.integers(1, len(union))), draw(st.sampled_from(spare)))
    return "add union branch"


def field_default(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    candidates = [f for r in records(schema) for f in r["fields"]]
    if not candidates:
        return None
    fld = draw(st.sampled_from(candidates))
    if "default" in fld:
        del fld["default"]
        return "remove field default"
    fld["default"] = default_for(fld["type"])
    return "add field default"


def reorder_fields(draw: st.DrawFn, schema: dict[str, Any], names: Names) -> str | None:
    rec = draw(st.sampled_from(records(schema)))
    rec["fields"] = draw(st.permutations(rec["fields"]))
    return "reorder fields"


MUTATIONS: tuple[Mutation, ...] = (
    add_field,
    remove_field,
    rename_record,
    rename_enum_or_fixed,
    change_namespace,
    change_namespace_of_union_branch,
    change_namespace_of_union_branch_and_widen,
    rename_union_branch,
    rename_field_with_alias,
    change_type,
    change_type,
    enum_symbols,
    enum_default,
    fixed_size,
    wrap_or_unwrap_union,
    union_branches,
    field_default,
    reorder_fields,
)


@st.composite
def schema_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """(old, new): a generated base schema and the same schema after one evolution step."""
    old, names = draw(base_schema())
    new = copy.deepcopy(old)
    names.absorb(new)
    label = None
    while label is None:
        label = draw(st.sampled_from(MUTATIONS))(draw, new, names)
    normalize_defaults(new)
    event(f"mutation: {label}")
    return old, new


# --------------------------------------------------------------------------------------------------------------
# One example per row of the table (and the extra row), as (old, new) with the direction that shows it
# --------------------------------------------------------------------------------------------------------------


def rec(name: str, fields_: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, **extra, "fields": fields_}


def fld_(name: str, type_: Json, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **extra}


def enum_(name: str, symbols: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": name, "symbols": symbols, **extra}


ADDRESS = [fld_("street", "string"), fld_("zip", ["null", "string"], default=None)]
ROW_EXAMPLES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # (row, reader, writer)
    (
        RECORD_RENAMED,
        rec("Order", [fld_("id", "long"), fld_("ship_to", rec("PostalAddress", ADDRESS))], namespace="acme"),
        rec("Order", [fld_("id", "long"), fld_("ship_to", rec("Address", ADDRESS))], namespace="acme"),
    ),
    (
        RECORD_RENAMED,  # the top-level record itself (Pulsar's auto-update test: V1Data -> V4Data)
        rec("V4Data", [fld_("foo", ["null", "string"], default=None)]),
        rec("V1Data", [fld_("foo", ["null", "string"], default=None)]),
    ),
    (
        ENUM_SYMBOL_MISSING,
        rec("Order", [fld_("status", enum_("Status", ["NEW", "PAID"]))], namespace="acme"),
        rec("Order", [fld_("status", enum_("Status", ["NEW", "PAID", "SHIPPED"]))], namespace="acme"),
    ),
    (
        UNION_RECORD_BY_STRUCTURE,
        rec("Order", [fld_("ship_to", ["null", rec("PostalAddress", ADDRESS)], default=None)], namespace="acme"),
        rec("Order", [fld_("ship_to", rec("Address", ADDRESS))], namespace="acme"),
    ),
    (
        UNION_RECORD_BY_STRUCTURE,  # writer union branch against a reader union
        rec("Order", [fld_("ship_to", ["null", rec("PostalAddress", ADDRESS)], default=None)], namespace="acme"),
        rec("Order", [fld_("ship_to", ["null", rec("Address", ADDRESS)], default=None)], namespace="acme"),
    ),
    (
        UNION_NAMED_BY_FULL_NAME,
        rec("Order", [fld_("status", ["null", enum_("Status", ["NEW"], namespace="acme.v2")], default=None)]),
        rec("Order", [fld_("status", enum_("Status", ["NEW"], namespace="acme.v1"))]),
    ),
    (
        UNION_NAMED_BY_FULL_NAME,  # fixed, namespace inherited from the enclosing record
        rec(
            "Order", [fld_("hash", ["null", {"type": "fixed", "name": "Md5", "size": 16}], default=None)], namespace="b"
        ),
        rec("Order", [fld_("hash", {"type": "fixed", "name": "Md5", "size": 16})], namespace="a"),
    ),
    (
        UNQUALIFIED_ALIAS,
        rec(
            "Purchase", [fld_("id", "long"), fld_("total", "double", default=0.0)], namespace="acme", aliases=["Order"]
        ),
        rec("Order", [fld_("id", "long")], namespace="acme"),
    ),
    (
        UNQUALIFIED_ALIAS,  # the same for an enum, whose name the resolver does compare
        rec("Order", [fld_("state", enum_("State", ["NEW"], aliases=["Status"]))], namespace="acme"),
        rec("Order", [fld_("state", enum_("Status", ["NEW"]))], namespace="acme"),
    ),
    (
        UNQUALIFIED_ALIAS_VS_NULL_NAMESPACE,
        rec("Order", [fld_("state", enum_("State", ["NEW"], namespace="acme", aliases=["Status"]))]),
        rec("Order", [fld_("state", enum_("Status", ["NEW"]))]),
    ),
]


# --------------------------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
@SETTINGS
@given(pair=schema_pairs())
@example(pair=(ROW_EXAMPLES[0][2], ROW_EXAMPLES[0][1]))
@example(pair=(ROW_EXAMPLES[2][2], ROW_EXAMPLES[2][1]))
@example(pair=(ROW_EXAMPLES[3][2], ROW_EXAMPLES[3][1]))
@example(pair=(ROW_EXAMPLES[5][2], ROW_EXAMPLES[5][1]))
@example(pair=(ROW_EXAMPLES[7][2], ROW_EXAMPLES[7][1]))
def test_every_disagreement_is_a_documented_class(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    old, new = pair
    for reader, writer, direction in ((new, old, "backward"), (old, new, "forward")):
        row = check_pair(reader, writer)
        event(f"{direction}: {row or 'agree'}")


@pytest.mark.parametrize(
    ("row", "reader", "writer"), ROW_EXAMPLES, ids=[f"{i}: {row}" for i, (row, _, _) in enumerate(ROW_EXAMPLES)]
)
def test_each_row_of_the_table_is_recognised(row: str, reader: Json, writer: Json) -> None:
    r, w = text(reader), text(writer)
    assert (python_compatible(r, w), pulsar_compatible(r, w)) == DIRECTION[row]
    assert explaining_rows(reader, writer) == [row]


S1 = rec("DefaultTest", [fld_("field1", "string")], namespace="org.apache.pulsar")
S2 = rec(
    "DefaultTest", [fld_("field1", "string"), fld_("field2", "string", default="foo")], namespace="org.apache.pulsar"
)
S3 = rec("DefaultTest", [fld_("field1", "string"), fld_("field2", "string")], namespace="org.apache.pulsar")
S4 = rec("DefaultTest", [fld_("field1_v2", "string", aliases=["field1"])], namespace="org.apache.pulsar")


def one(type_: Json, **extra: Any) -> dict[str, Any]:
    return rec("R", [fld_("v", type_, **extra)], namespace="acme")


CANONICAL: list[tuple[str, Json, Json, bool]] = [
    # (id, reader, writer, both say compatible) — pulsar-semantics.md §9.1 schemas and single rules
    ("reader adds a field with a default (s1 -> s2)", S2, S1, True),
    ("reader adds a field without a default (s1 -> s3)", S3, S1, False),
    ("reader renames a field with an alias (s1 -> s4)", S4, S1, True),
    ("writer-only field is skipped", S1, S3, True),
    ("int is promoted to long", one("long"), one("int"), True),
    ("long is not demoted to int", one("int"), one("long"), False),
    ("int is promoted to double", one("double"), one("int"), True),
    ("float is promoted to double", one("double"), one("float"), True),
    ("double is not demoted to float", one("float"), one("double"), False),
    ("string reads bytes", one("string"), one("bytes"), True),
    ("bytes reads string", one("bytes"), one("string"), True),
    ("string cannot read int", one("string"), one("int"), False),
    ("boolean cannot read int", one("boolean"), one("int"), False),
    (
        "fixed size changed",
        one({"type": "fixed", "name": "H", "size": 16}),
        one({"type": "fixed", "name": "H", "size": 8}),
        False,
    ),
    (
        "fixed renamed",
        one({"type": "fixed", "name": "H", "size": 16}),
        one({"type": "fixed", "name": "G", "size": 16}),
        False,
    ),
    ("enum renamed", one(enum_("Color", ["RED"])), one(enum_("Colour", ["RED"])), False),
    ("enum symbol added by the reader", one(enum_("Color", ["RED", "BLUE"])), one(enum_("Color", ["RED"])), True),
    ("array items promoted", one({"type": "array", "items": "long"}), one({"type": "array", "items": "int"}), True),
    ("map values mismatched", one({"type": "map", "values": "int"}), one({"type": "map", "values": "string"}), False),
    ("writer union branch the reader lacks", one("string"), one(["null", "string"]), False),
    ("reader union gains null", one(["null", "string"], default=None), one("string"), True),
    ("reader union reads int through promotion", one(["null", "double"]), one("int"), True),
    ("default null counts as a default", rec("R", [fld_("a", ["null", "int"], default=None)]), rec("R", []), True),
    ("record kind vs map kind", one({"type": "map", "values": "int"}), one(rec("M", [fld_("x", "int")])), False),
]


@pytest.mark.parametrize(("reader", "writer", "expected"), [c[1:] for c in CANONICAL], ids=[c[0] for c in CANONICAL])
def test_agrees_on_canonical_cases(reader: Json, writer: Json, expected: bool) -> None:
    r, w = text(reader), text(writer)
    assert python_compatible(r, w) is expected
    assert pulsar_compatible(r, w) is expected


def _status(namespace: str, symbols: list[str]) -> dict[str, Any]:
    return enum_("Status", symbols, namespace=namespace)


UNION_EQUIVALENT = [
    # (id, reader, writer): a writer union that Avro's Resolver.unionEquiv finds equivalent to the reader's
    (
        "enum branch in another namespace",
        rec("Order", [fld_("status", ["null", _status("acme.v2", ["NEW", "PAID"])], default=None)]),
        rec("Order", [fld_("status", ["null", _status("acme.v1", ["NEW", "PAID"])], default=None)]),
    ),
    (
        "fixed branch in another namespace",
        rec("Order", [fld_("md5", ["null", {"type": "fixed", "name": "Md5", "namespace": "b", "size": 16}])]),
        rec("Order", [fld_("md5", ["null", {"type": "fixed", "name": "Md5", "namespace": "a", "size": 16}])]),
    ),
]


@pytest.mark.parametrize(("reader", "writer"), [c[1:] for c in UNION_EQUIVALENT], ids=[c[0] for c in UNION_EQUIVALENT])
def test_union_equivalent_writer_union_has_no_error(reader: Json, writer: Json) -> None:
    r, w = text(reader), text(writer)
    assert is_union_equivalent(avro.schema.parse(w).fields[0].type, avro.schema.parse(r).fields[0].type, {}), (
        "the example must be union-equivalent"
    )
    assert python_compatible(r, w)
    assert pulsar_compatible(r, w)


def test_a_non_equivalent_union_still_matches_enum_branches_by_full_name() -> None:
    """The reader adds a symbol, so the unions are not equivalent: ReaderUnion's full-name match applies (row 4)."""
    reader = rec("Order", [fld_("status", ["null", _status("acme.v2", ["NEW", "PAID", "SHIPPED"])], default=None)])
    writer = rec("Order", [fld_("status", ["null", _status("acme.v1", ["NEW", "PAID"])], default=None)])
    assert not pulsar_compatible(text(reader), text(writer))
    assert explaining_rows(reader, writer) == [UNION_NAMED_BY_FULL_NAME]
