"""Avro schema parsing as Pulsar's broker does it with Avro 1.12 Java (pulsar-semantics.md §3.3, §3.7, §4.2).

Why not fastavro's parser: Pulsar's verdicts depend on Java's exact parse rules (the lenient name validator,
default validation switched off for checks and on for dedup, `Schema.equals` ignoring docs and aliases).
We parse JSON with the stdlib and build a small graph; every node remembers its JSON pointer so that
explanations can point into the schema document.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "error", "enum", "fixed"})
# Keys Java keeps out of a schema's / field's custom properties (Schema.SCHEMA_RESERVED, FIELD_RESERVED).
_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_ORDERS = ("ascending", "descending", "ignore")
# Pulsar's lenient validator: letters, digits, `_` and `$`; the first character not a digit (§3.7).
_LENIENT_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$]*")
NO_DEFAULT: Any = object()


class AvroParseError(ValueError):
    """The text is not an Avro schema Pulsar's parser accepts. `pointer` says where."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{message} (at {pointer or '/'})" if pointer else message)
        self.reason = message
        self.pointer = pointer


class Node:
    """A schema node. Named nodes are shared by every reference to them, so graphs may be cyclic."""

    __slots__ = ("kind", "pointer", "props")
    kind: str
    pointer: str
    props: dict[str, Any]

    @property
    def label(self) -> str:
        """How a person names this type in a message: `string`, `record Order`, `array<int>`."""
        return self.kind


class Primitive(Node):
    __slots__ = ()

    def __init__(self, kind: str, pointer: str, props: dict[str, Any]) -> None:
        self.kind, self.pointer, self.props = kind, pointer, props

    @property
    def label(self) -> str:
        logical = self.props.get("logicalType")
        return f"{self.kind} ({logical})" if isinstance(logical, str) else self.kind


class Named(Node):
    __slots__ = ("name", "namespace", "fullname", "aliases", "doc")
    name: str
    namespace: str | None
    fullname: str
    aliases: frozenset[str]
    doc: str | None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.fullname}"


class Record(Named):
    __slots__ = ("fields", "by_name", "is_error")
    is_error: bool

    def __init__(self) -> None:
        self.kind = "record"
        self.fields: list[Field] = []
        self.by_name: dict[str, Field] = {}


class Enum(Named):
    __slots__ = ("symbols", "default")
    symbols: list[str]
    default: str | None


class Fixed(Named):
    __slots__ = ("size",)
    size: int


class Array(Node):
    __slots__ = ("items",)
    items: Node

    @property
    def label(self) -> str:
        return f"array<{_short(self.items)}>"


class Map(Node):
    __slots__ = ("values",)
    values: Node

    @property
    def label(self) -> str:
        return f"map<{_short(self.values)}>"


class _Ref(Node):
    """A name used before its definition; Avro 1.12's ParseContext resolves these once the parse ends."""

    __slots__ = ("name", "space")

    def __init__(self, name: str, space: str | None, pointer: str) -> None:
        self.kind, self.pointer, self.props = "ref", pointer, {}
        self.name, self.space = name, space


class Union(Node):
    __slots__ = ("branches",)
    branches: list[Node]

    @property
    def label(self) -> str:
        return "[" + ", ".join(_short(b) for b in self.branches) + "]"


def _short(node: Node) -> str:
    return node.fullname if isinstance(node, Named) else node.label


@dataclass(slots=True, eq=False)
class Field:
    name: str
    type: Node
    default: Any
    order: str
    aliases: tuple[str, ...]
    props: dict[str, Any]
    doc: str | None
    pointer: str
    position: int

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True, slots=True)
class InvalidDefault:
    """A field default that Avro's default validation refuses (Pulsar's dedup parse turns it into a 500)."""

    pointer: str
    field: str
    message: str


class AvroSchema:
    """A parsed schema: the root node, its equality key (Java `Schema.equals`) and any invalid defaults."""

    __slots__ = ("root", "_equality_key", "invalid_defaults", "named", "_aliases", "_structure", "_fields")

    def __init__(self, root: Node, named: dict[str, Named], invalid_defaults: tuple[InvalidDefault, ...]) -> None:
        self.root = root
        self.named = named
        self.invalid_defaults = invalid_defaults
        self._equality_key: str | None = None
        self._aliases: tuple[dict[str, str], dict[str, dict[str, str]]] | None = None
        self._structure: dict[int, int] | None = None
        self._fields: dict[int, dict[str, int]] | None = None

    @property
    def alias_maps(self) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """`Schema.applyAliases`' indexes, computed once: named-type aliases → full name, and per record
        (by full name or alias) field alias → field name."""
        if self._aliases is None:
            aliases: dict[str, str] = {}
            field_aliases: dict[str, dict[str, str]] = {}
            for node in walk(self.root):
                if isinstance(node, Named):
                    for alias in node.aliases:
                        aliases[alias] = node.fullname
                if isinstance(node, Record):
                    renames = {alias: f.name for f in node.fields for alias in f.aliases}
                    if renames:
                        field_aliases.setdefault(node.fullname, {}).update(renames)
                        for alias in node.aliases:
                            field_aliases[alias] = field_aliases[node.fullname]
            self._aliases = (aliases, field_aliases)
        return self._aliases

    @property
    def structure_ids(self) -> dict[int, int]:
        """For each node (by id), a number shared by every node, in any schema, of the same resolution-relevant
        structure: equal numbers mean the reader reads the writer with nothing to report."""
        if self._structure is None:
            ids: dict[int, int] = {}
            _structure_id(self.root, ids, set())
            self._structure = ids
        return self._structure

    @property
    def record_fields(self) -> dict[int, dict[str, int]]:
        """For each record (by id), its field names → structure ids: two records' differing fields are a
        set difference away."""
        if self._fields is None:
            ids = self.structure_ids
            self._fields = {
                id(node): {f.name: ids[id(f.type)] if id(f.type) in ids else -id(f.type) for f in node.fields}
                for node in walk(self.root)
                if isinstance(node, Record)
            }
        return self._fields

    @property
    def equality_key(self) -> str:
        """A string equal for two schemas exactly when Avro's `Schema.equals` says they are (§3.3 dedup)."""
        if self._equality_key is None:
            self._equality_key = json.dumps(_equality_form(self.root, set()), sort_keys=True, separators=(",", ":"))
        return self._equality_key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AvroSchema) and self.equality_key == other.equality_key

    def __hash__(self) -> int:
        return hash(self.equality_key)


@lru_cache(maxsize=4096)
def parse_avro(text: str) -> AvroSchema:
    """Parse with Pulsar's lenient names and default validation off. Cached: histories re-parse the same text."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise AvroParseError(f"not valid JSON: {exc}") from None
    try:
        return _Parser().parse_document(doc)
    except RecursionError:
        raise AvroParseError("schema nesting is too deep") from None


_INTERNED: dict[tuple[Any, ...], int] = {}


def _intern(key: tuple[Any, ...]) -> int:
    """Exact interning (dict keys compare by value), so equal ids always mean equal structure. Ids are never
    reused; the table is cleared when large, which only loses sharing with schemas parsed before."""
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) > 500_000:
            _INTERNED.clear()
        found = _INTERNED[key] = next(_COUNTER)
    return found


_COUNTER = itertools.count(1)


def _structure_id(node: Node, ids: dict[int, int], open_records: set[str]) -> int:
    known = ids.get(id(node))
    if known is not None:
        return known
    if isinstance(node, Record):
        if node.fullname in open_records:
            return _intern(("ref", node.fullname))
        open_records.add(node.fullname)
        key: tuple[Any, ...] = (
            "record",
            node.fullname,
            tuple((f.name, _structure_id(f.type, ids, open_records)) for f in node.fields),
        )
        open_records.discard(node.fullname)
    elif isinstance(node, Enum):
        key = ("enum", node.fullname, tuple(node.symbols), node.default)
    elif isinstance(node, Fixed):
        key = ("fixed", node.fullname, node.size)
    elif isinstance(node, Array):
        key = ("array", _structure_id(node.items, ids, open_records))
    elif isinstance(node, Map):
        key = ("map", _structure_id(node.values, ids, open_records))
    elif isinstance(node, Union):
        key = ("union", tuple(_structure_id(b, ids, open_records) for b in node.branches))
    else:
        key = (node.kind,)
    ids[id(node)] = result = _intern(key)
    return result


def _equality_form(node: Node, seen: set[str]) -> Any:
    """What `Schema.equals` compares: names, field order, defaults, `order`, custom props; not docs or aliases."""
    props = node.props
    if isinstance(node, Named):
        if node.fullname in seen:
            return node.fullname
        seen.add(node.fullname)
        if isinstance(node, Record):
            fields = [
                [
                    f.name,
                    _equality_form(f.type, seen),
                    None if not f.has_default else ["d", f.default],
                    f.order,
                    f.props,
                ]
                for f in node.fields
            ]
            return ["record", node.fullname, fields, props]
        if isinstance(node, Enum):
            return ["enum", node.fullname, node.symbols, node.default, props]
        assert isinstance(node, Fixed)
        return ["fixed", node.fullname, node.size, props]
    if isinstance(node, Array):
        return ["array", _equality_form(node.items, seen), props]
    if isinstance(node, Map):
        return ["map", _equality_form(node.values, seen), props]
    if isinstance(node, Union):
        return ["union", [_equality_form(b, seen) for b in node.branches], props]
    return [node.kind, props] if props else node.kind


def _typed(value: Any) -> Any:
    """JSON values with int/float kept apart, as Jackson's node equality does (1 ≠ 1.0)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"$float": repr(value)}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    return value


def _is_lenient_name(name: str) -> bool:
    return _LENIENT_NAME.fullmatch(name) is not None


class _Parser:
    def __init__(self) -> None:
        self.named: dict[str, Named] = {}
        self.invalid_defaults: list[InvalidDefault] = []
        self.pending: list[tuple[Field, Any]] = []
        self.has_refs = False

    def parse_document(self, doc: Any) -> AvroSchema:
        root = self.parse(doc, None, "")
        if self.has_refs:
            root = self.resolve_refs(root)
        for fld, default in self.pending:
            problem = default_problem(fld.type, default)
            if problem is not None:
                self.invalid_defaults.append(
                    InvalidDefault(
                        fld.pointer,
                        fld.name,
                        f"invalid default for field {fld.name!r}: {json.dumps(default)} is not a valid "
                        f"{fld.type.label}{problem}",
                    )
                )
        return AvroSchema(root, self.named, tuple(self.invalid_defaults))

    def name(self, text: Any, what: str, pointer: str) -> str:
        if not isinstance(text, str) or not _is_lenient_name(text):
            raise AvroParseError(
                f"illegal {what} {json.dumps(text)}: use letters, digits, '_' or '$', not starting with a digit",
                pointer,
            )
        return text

    def full_name(self, name: Any, space: str | None, pointer: str) -> tuple[str, str | None, str]:
        if not isinstance(name, str) or not name:
            raise AvroParseError(f"illegal name {json.dumps(name)}", pointer)
        if "." in name:
            space, _, simple = name.rpartition(".")
        else:
            simple = name
        self.name(simple, "name", pointer)
        space = space or None
        return simple, space, f"{space}.{simple}" if space else simple

    def lookup(self, name: str, space: str | None, pointer: str) -> Node:
        if name in PRIMITIVES:
            prim = Primitive.__new__(Primitive)
            prim.kind, prim.pointer, prim.props = name, pointer, {}
            return prim
        found = self.find(name, space)
        if found is not None:
            return found
        self.has_refs = True
        return _Ref(name, space, pointer)

    def find(self, name: str, space: str | None) -> Named | None:
        if space and "." not in name and f"{space}.{name}" in self.named:
            return self.named[f"{space}.{name}"]
        return self.named.get(name)

    def resolve_refs(self, root: Node) -> Node:
        """Replace forward references by their definitions; a name never defined is an error."""

        def target(node: Node) -> Node:
            if isinstance(node, _Ref):
                found = self.find(node.name, node.space)
                if found is None:
                    raise AvroParseError(f"undefined name {json.dumps(node.name)}", node.pointer)
                return found
            return node

        root = target(root)
        seen: set[int] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, Record):
                for fld in node.fields:
                    fld.type = target(fld.type)
                    stack.append(fld.type)
            elif isinstance(node, Array):
                node.items = target(node.items)
                stack.append(node.items)
            elif isinstance(node, Map):
                node.values = target(node.values)
                stack.append(node.values)
            elif isinstance(node, Union):
                node.branches = [target(b) for b in node.branches]
                stack.extend(node.branches)
        return root

    def parse(self, node: Any, space: str | None, pointer: str) -> Node:
        if isinstance(node, str):
            return self.lookup(node, space, pointer)
        if isinstance(node, list):
            return self.parse_union(node, space, pointer)
        if not isinstance(node, dict):
            raise AvroParseError(
                f"a schema must be a type name, an object or an array, not {json.dumps(node)}", pointer
            )
        kind = node.get("type")
        if kind is None:
            raise AvroParseError('no "type" in schema object', pointer)
        if isinstance(kind, (dict, list)):
            return self.parse(kind, space, f"{pointer}/type")
        if not isinstance(kind, str):
            raise AvroParseError(f'"type" must be text, not {json.dumps(kind)}', pointer)
        if kind in PRIMITIVES:
            return Primitive(kind, pointer, _props(node, _SCHEMA_RESERVED))
        if kind in ("record", "error"):
            return self.parse_record(node, space, pointer)
        if kind == "enum":
            return self.parse_enum(node, space, pointer)
        if kind == "fixed":
            return self.parse_fixed(node, space, pointer)
        if kind == "array":
            if "items" not in node:
                raise AvroParseError('array has no "items" type', pointer)
            arr = Array.__new__(Array)
            arr.kind, arr.pointer, arr.props = "array", pointer, _props(node, _SCHEMA_RESERVED)
            arr.items = self.parse(node["items"], space, f"{pointer}/items")
            return arr
        if kind == "map":
            if "values" not in node:
                raise AvroParseError('map has no "values" type', pointer)
            mp = Map.__new__(Map)
            mp.kind, mp.pointer, mp.props = "map", pointer, _props(node, _SCHEMA_RESERVED)
            mp.values = self.parse(node["values"], space, f"{pointer}/values")
            return mp
        # Java: `{"type": "SomeName"}` refers to a named type.
        return self.lookup(kind, space, pointer)

    def define(self, named: Named, node: dict[str, Any], space: str | None, pointer: str) -> str | None:
        """Register a named type; returns its namespace, which nested definitions inherit."""
        if "namespace" in node:
            space = node["namespace"]
            if space is not None and not isinstance(space, str):
                raise AvroParseError(f"namespace must be text, not {json.dumps(space)}", pointer)
        simple, own_space, full = self.full_name(node.get("name"), space, pointer)
        if full in PRIMITIVES:
            raise AvroParseError(f"schemas may not be named after primitives: {full}", pointer)
        if full in self.named:
            raise AvroParseError(f"can't redefine: {full}", pointer)
        named.name, named.namespace, named.fullname = simple, own_space, full
        named.pointer = pointer
        named.doc = node.get("doc") if isinstance(node.get("doc"), str) else None
        aliases = node.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise AvroParseError(f"aliases must be an array of names, not {json.dumps(aliases)}", pointer)
        named.aliases = frozenset(a if "." in a or not own_space else f"{own_space}.{a}" for a in aliases)
        self.named[full] = named
        return own_space

    def parse_record(self, node: dict[str, Any], space: str | None, pointer: str) -> Record:
        rec = Record()
        rec.is_error = node.get("type") == "error"
        if "name" not in node:
            raise AvroParseError("no name in record schema", pointer)
        rec_space = self.define(rec, node, space, pointer)
        rec.props = _props(node, _SCHEMA_RESERVED)
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise AvroParseError(f"record {rec.fullname} has no fields array", pointer)
        for i, spec in enumerate(fields):
            fpointer = f"{pointer}/fields/{i}"
            if not isinstance(spec, dict):
                raise AvroParseError(f"field {i} of record {rec.fullname} is not an object", fpointer)
            if "name" not in spec:
                raise AvroParseError(f"field {i} of record {rec.fullname} has no name", fpointer)
            fname = self.name(spec["name"], "field name", fpointer)
            if "type" not in spec:
                raise AvroParseError(f"field {fname!r} of record {rec.fullname} has no type", fpointer)
            ftype = self.parse(spec["type"], rec_space, f"{fpointer}/type")
            order = spec.get("order", "ascending")
            if order not in _ORDERS:
                raise AvroParseError(f"field {fname!r} has an invalid order {json.dumps(order)}", fpointer)
            aliases = spec.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise AvroParseError(f"aliases of field {fname!r} must be an array of names", fpointer)
            default = spec.get("default", NO_DEFAULT)
            fld = Field(
                fname,
                ftype,
                _typed(default) if default is not NO_DEFAULT else NO_DEFAULT,
                order,
                tuple(aliases),
                _props(spec, _FIELD_RESERVED),
                spec.get("doc") if isinstance(spec.get("doc"), str) else None,
                fpointer,
                i,
            )
            if fname in rec.by_name:
                raise AvroParseError(f"duplicate field {fname!r} in record {rec.fullname}", fpointer)
            rec.fields.append(fld)
            rec.by_name[fname] = fld
            if default is not NO_DEFAULT:
                self.pending.append((fld, default))
        return rec

    def parse_enum(self, node: dict[str, Any], space: str | None, pointer: str) -> Enum:
        enum = Enum.__new__(Enum)
        enum.kind = "enum"
        if "name" not in node:
            raise AvroParseError("no name in enum schema", pointer)
        self.define(enum, node, space, pointer)
        enum.props = _props(node, _ENUM_RESERVED)
        symbols = node.get("symbols")
        if not isinstance(symbols, list):
            raise AvroParseError(f"enum {enum.fullname} has no symbols array", pointer)
        seen: set[str] = set()
        for i, sym in enumerate(symbols):
            self.name(sym, "enum symbol", f"{pointer}/symbols/{i}")
            if sym in seen:
                raise AvroParseError(f"duplicate enum symbol {sym!r} in {enum.fullname}", f"{pointer}/symbols/{i}")
            seen.add(sym)
        enum.symbols = list(symbols)
        default = node.get("default")
        if default is not None and default not in seen:
            raise AvroParseError(
                f"the enum default {json.dumps(default)} is not in the symbols of {enum.fullname}", pointer
            )
        enum.default = default
        return enum

    def parse_fixed(self, node: dict[str, Any], space: str | None, pointer: str) -> Fixed:
        fixed = Fixed.__new__(Fixed)
        fixed.kind = "fixed"
        if "name" not in node:
            raise AvroParseError("no name in fixed schema", pointer)
        self.define(fixed, node, space, pointer)
        fixed.props = _props(node, _SCHEMA_RESERVED)
        size = node.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 2**31 - 1:
            raise AvroParseError(f"fixed {fixed.fullname} has an invalid or no size: {json.dumps(size)}", pointer)
        fixed.size = size
        return fixed

    def parse_union(self, branches: list[Any], space: str | None, pointer: str) -> Union:
        union = Union.__new__(Union)
        union.kind, union.pointer, union.props = "union", pointer, {}
        union.branches = []
        seen: set[str] = set()
        for i, spec in enumerate(branches):
            branch = self.parse(spec, space, f"{pointer}/{i}")
            if isinstance(branch, Union):
                raise AvroParseError("nested union: a union may not directly contain another union", f"{pointer}/{i}")
            key = (
                branch.fullname
                if isinstance(branch, Named)
                else (
                    f"{branch.space}.{branch.name}"
                    if isinstance(branch, _Ref) and branch.space and "." not in branch.name
                    else branch.name
                    if isinstance(branch, _Ref)
                    else branch.kind
                )
            )
            if key in seen:
                raise AvroParseError(f"duplicate in union: {key}", f"{pointer}/{i}")
            seen.add(key)
            union.branches.append(branch)
        return union


def _props(node: dict[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    if node.keys() <= reserved:
        return {}
    return {k: _typed(v) for k, v in node.items() if k not in reserved}


def default_problem(node: Node, value: Any) -> str | None:
    """Why `value` is not a valid default for `node` per Avro's `isValidDefault`, or None when it is.

    Unions take the first branch (the Avro specification's rule, as Java's `isValidDefault` applies it).
    """
    kind = node.kind
    if kind in ("string", "bytes", "enum", "fixed"):
        return None if isinstance(value, str) else ""
    if kind in ("int", "long"):
        bound = 2**31 if kind == "int" else 2**63
        ok = isinstance(value, int) and not isinstance(value, bool) and -bound <= value < bound
        return None if ok else ""
    if kind in ("float", "double"):
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
    if kind == "boolean":
        return None if isinstance(value, bool) else ""
    if kind == "null":
        return None if value is None else ""
    if isinstance(node, Array):
        if not isinstance(value, list):
            return ""
        return next((f" (item {i})" for i, v in enumerate(value) if default_problem(node.items, v) is not None), None)
    if isinstance(node, Map):
        if not isinstance(value, dict):
            return ""
        return next((f" (key {k!r})" for k, v in value.items() if default_problem(node.values, v) is not None), None)
    if isinstance(node, Union):
        if not node.branches:
            return ""
        problem = default_problem(node.branches[0], value)
        return (
            None if problem is None else f" (a union's default must match its first branch, {node.branches[0].label})"
        )
    if isinstance(node, Record):
        if not isinstance(value, dict):
            return ""
        for fld in node.fields:
            sub = value.get(fld.name, fld.default if fld.has_default else NO_DEFAULT)
            if sub is NO_DEFAULT or default_problem(fld.type, _untyped(sub)) is not None:
                return f" (field {fld.name!r})"
        return None
    return ""


def _untyped(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return float(value["$float"])
        return {k: _untyped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untyped(v) for v in value]
    return value


def default_json(fld: Field) -> Any:
    """The field's default as plain JSON (floats restored)."""
    return _untyped(fld.default)


def walk(node: Node) -> Iterator[Node]:
    """Every node reachable from `node`, each named type once."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, Record):
            stack.extend(f.type for f in reversed(current.fields))
        elif isinstance(current, Array):
            stack.append(current.items)
        elif isinstance(current, Map):
            stack.append(current.values)
        elif isinstance(current, Union):
            stack.extend(reversed(current.branches))
