"""The parsed form of an Avro schema: nodes, fields and `AvroSchema` (pulsar-semantics.md §4.2, §4.8).

What checks, resolution and diffs read. Nodes are built once by the parser (_parser.py) and never changed
afterwards; what only some questions need (invalid defaults, alias indexes, the `Schema.equals` key) is derived
on first use. In the compiled build (mypyc) the nodes that cannot be part of a reference cycle (leaves, sites,
most fields) are invisible to the cyclic collector, which would otherwise walk every node of every cached
schema again and again. This module also holds the check that a compiled build matches its sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from mypy_extensions import mypyc_attr

PRIMITIVES: Final = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
# Keys Java keeps out of a schema's / field's custom properties (Schema.SCHEMA_RESERVED, FIELD_RESERVED).
SCHEMA_RESERVED: Final = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
ENUM_RESERVED: Final = SCHEMA_RESERVED | {"default"}
FIELD_RESERVED: Final = frozenset({"default", "doc", "name", "order", "type", "aliases"})
ORDERS: Final = ("ascending", "descending", "ignore")
# Pulsar's lenient validator: letters, digits, `_` and `$`; the first character not a digit (§3.7).
LENIENT_NAME: Final = re.compile(r"(?:[^\W\d]|\$)[\w$]*")
NO_DEFAULT: Final[Any] = object()
# The custom properties of every node and field that has none: one shared dict, never written to (nothing
# writes to `props`), because most nodes and fields have none: one allocation (and free) less for each.
NO_PROPS: Final[dict[str, Any]] = {}
# `AvroSchema.alias_maps` of every schema without aliases, shared on the same terms.
NO_ALIAS_MAPS: Final[tuple[dict[str, str], dict[str, dict[str, str]]]] = ({}, {})
NO_ALIASES: Final[frozenset[str]] = frozenset()
# JSON values `typed` leaves as they are.
PLAIN: Final = frozenset({str, int, bool, type(None)})

# tools/build_speedups.py compiles a copy of this module (with _parser.py, _schema.py and _resolution.py) with
# mypyc, with this set to "<file>,<file>,...:<SHA-256 of those sources>". A compiled build whose sources have
# changed since refuses to load, so that an edited source is never shadowed by old machine code. Empty here:
# nothing to compare.
_BUILT_FROM = ""


def _check_build(built_from: str) -> None:
    names, _, expected = built_from.rpartition(":")
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in names.split(","):
        try:
            with open(os.path.join(here, name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read())
        except OSError:
            return  # installed without its sources: nothing to compare against
    if digest.hexdigest() != expected:
        raise ImportError(
            f"the compiled Avro core in {here} was built from other sources than {names}: rebuild it with "
            "`python tools/build_speedups.py` (or `make install`), or remove it with `--clean` for pure Python"
        )


if _BUILT_FROM:
    _check_build(_BUILT_FROM)


class AvroParseError(ValueError):
    """The text is not an Avro schema Pulsar's parser accepts. `pointer` says where."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{message} (at {pointer or '/'})" if pointer else message)
        self.reason = message
        self.pointer = pointer


@mypyc_attr(acyclic=True)
class Site:
    """Where a node sits in the document: where its parent sits and one or two steps on (None for the
    document's root). A chain towards the root rather than links to parent objects, so that a parsed graph
    has no cycles and is freed as soon as it is dropped; the JSON pointer is spelled out only when asked for.
    Acyclic by construction, so compiled builds keep these (one per container node, field list and named
    type; inline primitives keep their step themselves) out of the cyclic collector's way.
    """

    __slots__ = ("parent", "step", "then")

    def __init__(self, parent: Site | None, step: str | int, then: str | int | None = None) -> None:
        self.parent = parent
        self.step = step
        self.then = then


def pointer_of(site: Site | None) -> str:
    steps: list[str | int] = []
    while site is not None:
        if site.then is not None:
            steps.append(site.then)
        steps.append(site.step)
        site = site.parent
    return "".join(f"/{step}" for step in reversed(steps))


@mypyc_attr(acyclic=True)
class Node:
    """A schema node. Named nodes are shared by every reference to them, so graphs may be cyclic.

    `sid` is the node's structure id: equal ids, in any two schemas, mean the reader reads the writer with
    nothing to report. `_site` says where the node is defined, for its JSON pointer.
    """

    __slots__ = ("kind", "props", "sid", "_site")
    kind: str
    props: dict[str, Any]
    sid: int
    _site: Site | None

    @property
    def pointer(self) -> str:
        return pointer_of(self._site)

    @property
    def label(self) -> str:
        """How a person names this type in a message: `string`, `record Order`, `array<int>`."""
        return self.kind


@mypyc_attr(acyclic=True)
class Primitive(Node):
    """A primitive type. One named inline by a field or a union branch (most of them) keeps the step from its
    parent's site itself, rather than in a site object of its own."""

    __slots__ = ("_step", "_then")

    def __init__(
        self,
        kind: str,
        sid: int,
        props: dict[str, Any],
        site: Site | None,
        step: str | int | None = None,
        then: str | None = None,
    ) -> None:
        self.kind, self.sid, self.props, self._site = kind, sid, props, site
        self._step, self._then = step, then

    @property
    def pointer(self) -> str:
        if self._step is None:
            return pointer_of(self._site)
        return f"{pointer_of(self._site)}/{self._step}" + ("" if self._then is None else f"/{self._then}")

    @property
    def label(self) -> str:
        logical = self.props.get("logicalType")
        return f"{self.kind} ({logical})" if isinstance(logical, str) else self.kind


@mypyc_attr(acyclic=True)
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
    fields: list[Field]
    by_name: dict[str, Field]
    is_error: bool


@mypyc_attr(acyclic=True)
class Enum(Named):
    __slots__ = ("symbols", "default")
    symbols: list[str]
    default: str | None


@mypyc_attr(acyclic=True)
class Fixed(Named):
    __slots__ = ("size",)
    size: int


class Array(Node):
    __slots__ = ("items",)
    items: Node

    @property
    def label(self) -> str:
        return f"array<{short_label(self.items)}>"


class Map(Node):
    __slots__ = ("values",)
    values: Node

    @property
    def label(self) -> str:
        return f"map<{short_label(self.values)}>"


class _Ref(Node):
    """A name used before its definition; Avro 1.12's ParseContext resolves these once the parse ends."""

    __slots__ = ("name", "space")
    name: str
    space: str | None


class Union(Node):
    __slots__ = ("branches",)
    branches: list[Node]

    @property
    def label(self) -> str:
        return "[" + ", ".join(short_label(b) for b in self.branches) + "]"


def short_label(node: Node) -> str:
    return node.fullname if isinstance(node, Named) else node.label


@mypyc_attr(acyclic=True)
class Field:
    """A record field; `_site` is where its record's fields are.

    Acyclic: a field can only be part of a reference cycle (a recursive record) if its type refers to a named
    type by name somewhere; the parser makes those fields `LinkingField`s, which the cyclic collector sees, and
    keeps the (far more numerous) others out of its way.
    """

    __slots__ = ("name", "type", "default", "order", "aliases", "props", "doc", "position", "_site")
    name: str
    type: Node
    default: Any
    order: str
    aliases: tuple[str, ...]
    props: dict[str, Any]
    doc: str | None
    position: int
    _site: Site

    @property
    def pointer(self) -> str:
        return f"{pointer_of(self._site)}/{self.position}"

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type.label}, at {self.pointer})"


class LinkingField(Field):
    """A field whose type names a named type defined elsewhere (or refers to one being defined): only such fields
    can close a cycle of references, since definitions nest as a tree and only a reference by name leaves it."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class InvalidDefault:
    """A field default that Avro's default validation refuses (Pulsar's dedup parse turns it into a 500)."""

    pointer: str
    field: str
    message: str


class AvroSchema:
    """A parsed schema: the root node, its equality key (Java `Schema.equals`) and any invalid defaults."""

    __slots__ = (
        "root",
        "named",
        "repeated",
        "_defaulted",
        "_has_aliases",
        "_invalid_defaults",
        "_aliases",
        "_equality_key",
    )

    def __init__(
        self, root: Node, named: dict[str, Named], defaulted: list[tuple[Field, Any]], has_aliases: bool
    ) -> None:
        self.root = root
        self.named = named
        # Full names of enums and fixeds defined twice, identically (Avro 1.12 accepts that, 1.11 does not:
        # registry/_pulsar_version.py decides by the line in force).
        self.repeated: tuple[str, ...] = ()
        self._defaulted = defaulted
        self._has_aliases = has_aliases
        self._invalid_defaults: tuple[InvalidDefault, ...] | None = None
        self._aliases: tuple[dict[str, str], dict[str, dict[str, str]]] | None = None
        self._equality_key: str | None = None

    @property
    def invalid_defaults(self) -> tuple[InvalidDefault, ...]:
        """Defaults Avro's validating parse refuses (Pulsar's dedup parse); checks never ask (§4.2)."""
        if self._invalid_defaults is None:
            found = []
            for fld, default in self._defaulted:
                problem = default_problem(fld.type, default)
                if problem is not None:
                    found.append(
                        InvalidDefault(
                            fld.pointer,
                            fld.name,
                            f"invalid default for field {fld.name!r}: {json.dumps(default)} is not a valid "
                            f"{fld.type.label}{problem}",
                        )
                    )
            self._invalid_defaults = tuple(found)
        return self._invalid_defaults

    @property
    def alias_maps(self) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """`Schema.applyAliases`' indexes, computed once: named-type aliases → full name, and per record
        (by full name or alias) field alias → field name."""
        if not self._has_aliases:
            return NO_ALIAS_MAPS
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
    def equality_key(self) -> str:
        """A string equal for two schemas exactly when Avro's `Schema.equals` says they are (§3.3 dedup)."""
        if self._equality_key is None:
            self._equality_key = json.dumps(equality_form(self.root, set()), sort_keys=True, separators=(",", ":"))
        return self._equality_key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AvroSchema) and self.equality_key == other.equality_key

    def __hash__(self) -> int:
        return hash(self.equality_key)


def equality_form(node: Node, seen: set[str]) -> Any:
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
                    equality_form(f.type, seen),
                    None if not f.has_default else ["d", f.default],
                    f.order,
                    f.props,
                ]
                for f in node.fields
            ]
            return ["record", node.fullname, fields, props]
        if isinstance(node, Enum):  # EnumSchema.equals: names, symbols, props; not the enum's default
            return ["enum", node.fullname, node.symbols, props]
        assert isinstance(node, Fixed)
        return ["fixed", node.fullname, node.size, props]
    if isinstance(node, Array):
        return ["array", equality_form(node.items, seen), props]
    if isinstance(node, Map):
        return ["map", equality_form(node.values, seen), props]
    if isinstance(node, Union):
        return ["union", [equality_form(b, seen) for b in node.branches], props]
    return [node.kind, props] if props else node.kind


# Java's Double.valueOf on decimal text (hex floats left out): surrounding whitespace, a sign, NaN, Infinity,
# digits with an optional point and exponent, and an optional f/d suffix.
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
            if sub is NO_DEFAULT or default_problem(fld.type, untyped(sub)) is not None:
                return f" (field {fld.name!r})"
        return None
    return ""


def untyped(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return float(value["$float"])
        return {k: untyped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untyped(v) for v in value]
    return value


def default_json(fld: Field) -> Any:
    """The field's default as plain JSON (floats restored)."""
    return untyped(fld.default)


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
