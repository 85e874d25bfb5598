"""Avro schema parsing as Pulsar's broker does it with Avro 1.12 Java (pulsar-semantics.md §3.3, §3.7, §4.2).

Why not fastavro's parser: Pulsar's verdicts depend on Java's exact parse rules (the lenient name validator,
default validation switched off for checks and on for dedup, `Schema.equals` ignoring docs and aliases).
We decode JSON with msgspec and build a small graph in one pass. Parsing is on the path of every cold
check, so the pass does only what checks need: each node gets its structure id (identical subtrees resolve
with nothing to report) and where it sits; JSON pointers, alias indexes, default validation and the equality
key are derived on first use. Names are memoised as shared strings. In the compiled build (mypyc) the nodes
that cannot be part of a reference cycle (leaves, sites, most fields) are invisible to the cyclic collector,
which would otherwise walk every node of every cached schema again and again.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, cast

import msgspec
from mypy_extensions import mypyc_attr

from .._cache_budget import AVRO_FACTOR, AVRO_PARSED_BYTES

PRIMITIVES: Final = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
# Keys Java keeps out of a schema's / field's custom properties (Schema.SCHEMA_RESERVED, FIELD_RESERVED).
_SCHEMA_RESERVED: Final = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_ENUM_RESERVED: Final = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED: Final = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_ORDERS: Final = ("ascending", "descending", "ignore")
# Pulsar's lenient validator: letters, digits, `_` and `$`; the first character not a digit (§3.7).
_LENIENT_NAME: Final = re.compile(r"(?:[^\W\d]|\$)[\w$]*")
NO_DEFAULT: Final[Any] = object()
# The custom properties of every node and field that has none: one shared dict, never written to (nothing
# writes to `props`), because most nodes and fields have none: one allocation (and free) less for each.
_NO_PROPS: Final[dict[str, Any]] = {}
# `AvroSchema.alias_maps` of every schema without aliases, shared on the same terms.
_NO_ALIAS_MAPS: Final[tuple[dict[str, str], dict[str, dict[str, str]]]] = ({}, {})
_NO_ALIASES: Final[frozenset[str]] = frozenset()
# JSON values `_typed` leaves as they are.
_PLAIN: Final = frozenset({str, int, bool, type(None)})

# tools/build_speedups.py compiles a copy of this module (and _resolution.py) with mypyc, with this set to
# "<file>,<file>:<SHA-256 of those sources>". A compiled build whose sources have changed since refuses to
# load, so that an edited source is never shadowed by old machine code. Empty here: nothing to compare.
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


def _pointer(site: Site | None) -> str:
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
        return _pointer(self._site)

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
            return _pointer(self._site)
        return f"{_pointer(self._site)}/{self._step}" + ("" if self._then is None else f"/{self._then}")

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
    name: str
    space: str | None


class Union(Node):
    __slots__ = ("branches",)
    branches: list[Node]

    @property
    def label(self) -> str:
        return "[" + ", ".join(_short(b) for b in self.branches) + "]"


def _short(node: Node) -> str:
    return node.fullname if isinstance(node, Named) else node.label


@mypyc_attr(acyclic=True)
class Field:
    """A record field; `_site` is where its record's fields are.

    Acyclic: a field can only be part of a reference cycle (a recursive record) if its type refers to a named
    type by name somewhere; the parser makes those fields `_LinkingField`s, which the cyclic collector sees, and
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
        return f"{_pointer(self._site)}/{self.position}"

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type.label}, at {self.pointer})"


class _LinkingField(Field):
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
        # registry/_pulsar_version.py decides by the profile in force).
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
            return _NO_ALIAS_MAPS
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
            self._equality_key = json.dumps(_equality_form(self.root, set()), sort_keys=True, separators=(",", ":"))
        return self._equality_key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AvroSchema) and self.equality_key == other.equality_key

    def __hash__(self) -> int:
        return hash(self.equality_key)


# msgspec's decoder gives the same values as json.loads on every text both accept, two to three times faster;
# what it refuses (NaN, Infinity, overflowing floats, lone surrogates, broken JSON) goes to json.loads, which
# gives the same result or the same error as before.
_decode_json: Callable[[str], Any] = msgspec.json.Decoder().decode


# Below this many characters (some 300 fields) a parse allocates too few tracked objects for the collector to
# start more than once (its first threshold is 700).
_SMALL_TEXT: Final = 8192


# Parsed schemas by text, least recently used first (dicts keep insertion order). A plain dict rather than
# functools.lru_cache: compiled, a lookup stays native instead of going through a Python call and the cache's
# linked list, which measurably slowed small cold checks. Bounded by bytes (registry/_cache_budget.py): an entry
# costs `parse_cost`; one larger than the whole share is parsed but not kept.
# No lock: a lock on every miss cost a tenth of a small cold check (bench/bench_compat.py, 3-field pair: 8.0x
# the avro package with it, 8.8x without, 9.4x before the byte bound). Every step is one atomic dict operation
# and compiled code switches threads only inside them, so races are rare and bounded: two misses of one text
# both add it (counted twice: fewer bytes kept), an eviction and a hit never both take one entry (pop returns
# it once), and only a hit holding its entry while eviction empties the cache (the count then restarts at
# zero) can leave one entry uncounted. The bound holds within a few entries.
_PARSED: Final[dict[str, AvroSchema]] = {}
_PARSED_MAX_BYTES: Final = AVRO_PARSED_BYTES
_PARSED_BYTES: Final[list[int]] = [0]  # the accounted bytes of _PARSED (a list: module globals here are Final)


def clear_parse_cache() -> None:
    """Forget every parsed schema (benchmarks time cold parses with it)."""
    _PARSED.clear()
    _PARSED_BYTES[0] = 0


def parse_cache_bytes() -> int:
    """The bytes the parse cache accounts for now (never more than its share of the budget)."""
    return _PARSED_BYTES[0]


def parse_cost(text: str) -> int:
    """What keeping the parse of `text` costs the cache, in bytes: AVRO_FACTOR per character (measured by
    bench/bench_cache_factors.py, the key text included), 3 more where the key takes 4 bytes a character."""
    return len(text) * (AVRO_FACTOR if text.isascii() else AVRO_FACTOR + 3) + 64


def parse_avro(text: str) -> AvroSchema:
    """Parse with Pulsar's lenient names and default validation off. Cached: histories re-parse the same text."""
    schema = _PARSED.pop(text, None)
    if schema is not None:
        _PARSED[text] = schema  # now the most recently used
        return schema
    schema = _parse_pausing_collector(text)
    cost = parse_cost(text)
    if cost <= _PARSED_MAX_BYTES:
        _keep(text, schema, cost)
    return schema


def _keep(text: str, schema: AvroSchema, cost: int) -> None:
    """Add a parse to the cache, the least recently used going first to make room."""
    if text in _PARSED:
        return  # another thread parsed and kept it meanwhile
    while _PARSED and _PARSED_BYTES[0] + cost > _PARSED_MAX_BYTES:
        try:
            oldest = next(iter(_PARSED))
        except (RuntimeError, StopIteration):  # a hit moved an entry meanwhile
            break
        if _PARSED.pop(oldest, None) is not None:  # else a hit has it in hand, and puts it back
            _PARSED_BYTES[0] -= parse_cost(oldest)
    if not _PARSED:
        _PARSED_BYTES[0] = 0
    elif _PARSED_BYTES[0] + cost > _PARSED_MAX_BYTES:
        return  # no room made: not kept
    _PARSED[text] = schema
    _PARSED_BYTES[0] += cost


def _parse_pausing_collector(text: str) -> AvroSchema:
    """Decoding and building a large schema allocate thousands of objects and free none: collecting while they
    grow is wasted work (a fifth of a large parse), so the cyclic collector waits until the parse is done. A
    small text allocates too little to start a collection, and pausing the collector would cost more.
    """
    if len(text) < _SMALL_TEXT:
        return _parse(text)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse(text)
    finally:
        if collecting:
            gc.enable()


def _parse(text: str) -> AvroSchema:
    try:
        try:
            doc = _decode_json(text)
        except msgspec.MsgspecError:
            doc = _decode_like_jackson(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise AvroParseError(f"not valid JSON: {exc}") from None
    try:
        return _Parser().parse_document(doc)
    except RecursionError:
        raise AvroParseError("schema nesting is too deep") from None


def _no_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not a JSON value (Jackson refuses non-numeric numbers)", name, 0)


def _decode_like_jackson(text: str) -> Any:
    """What msgspec refused, read as Avro's Jackson parser reads schema text: `//` and `/* */` comments are
    allowed (`Schema.FACTORY` enables `JsonParser.Feature.ALLOW_COMMENTS`, Avro 1.11 and 1.12), bare `NaN` and
    `Infinity` are not (Python's json module would take them)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError:
        if "/" not in text:
            raise
    return json.loads(_without_comments(text), parse_constant=_no_constant)


def _without_comments(text: str) -> str:
    """`text` with its JSON comments blanked out (strings left alone); an unterminated block comment is an
    error, as in Jackson."""
    out: list[str] = []
    i, n, start = 0, len(text), 0
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "/" and text.startswith("//", i):
            out.append(text[start:i])
            end = text.find("\n", i)
            i = n if end < 0 else end
            start = i
        elif c == "/" and text.startswith("/*", i):
            out.append(text[start:i])
            end = text.find("*/", i + 2)
            if end < 0:
                raise json.JSONDecodeError("unterminated /* comment", text, i)
            i = end + 2
            out.append(" ")
            start = i
        else:
            i += 1
    out.append(text[start:])
    return "".join(out)


_INTERNED: Final[dict[tuple[Any, ...], int]] = {}
_COUNTER: Final = itertools.count(len(PRIMITIVES) + 1)
# Primitive kinds have fixed ids (logical types and other props do not change how a primitive resolves).
_PRIMITIVE_SIDS: Final = {kind: i for i, kind in enumerate(sorted(PRIMITIVES), start=1)}


def _intern(key: tuple[Any, ...]) -> int:
    """Exact interning (dict keys compare by value), so equal ids always mean equal structure. Ids are never
    reused; the table is cleared when large, which only loses sharing with schemas parsed before."""
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) > 500_000:
            _INTERNED.clear()
        found = _INTERNED[key] = next(_COUNTER)
    return found


def _ref_sid(node: Node) -> int:
    """The id a reference to a record still being parsed contributes to its container's structure."""
    return _intern(("ref", node.fullname)) if isinstance(node, Named) else 0


def _assign_structure_ids(node: Node, done: set[int], open_records: set[str]) -> int:
    """Structure ids by a walk, for schemas with forward references (parsing assigns them otherwise): the
    same ids the parse would give had every definition come before its uses."""
    if id(node) in done:
        return node.sid
    if isinstance(node, Record):
        if node.fullname in open_records:
            return _ref_sid(node)
        open_records.add(node.fullname)
        key: tuple[Any, ...] = (
            "record",
            node.fullname,
            tuple(node.by_name),
            tuple(_assign_structure_ids(f.type, done, open_records) for f in node.fields),
        )
        open_records.discard(node.fullname)
    elif isinstance(node, Enum):
        key = ("enum", node.fullname, tuple(node.symbols), node.default)
    elif isinstance(node, Fixed):
        key = ("fixed", node.fullname, node.size)
    elif isinstance(node, Array):
        key = ("array", _assign_structure_ids(node.items, done, open_records))
    elif isinstance(node, Map):
        key = ("map", _assign_structure_ids(node.values, done, open_records))
    elif isinstance(node, Union):
        key = ("union", tuple(_assign_structure_ids(b, done, open_records) for b in node.branches))
    else:
        key = ()
    done.add(id(node))
    node.sid = _intern(key) if key else _PRIMITIVE_SIDS[node.kind]
    return node.sid


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
        if isinstance(node, Enum):  # EnumSchema.equals: names, symbols, props; not the enum's default
            return ["enum", node.fullname, node.symbols, props]
        assert isinstance(node, Fixed)
        return ["fixed", node.fullname, node.size, props]
    if isinstance(node, Array):
        return ["array", _equality_form(node.items, seen), props]
    if isinstance(node, Map):
        return ["map", _equality_form(node.values, seen), props]
    if isinstance(node, Union):
        return ["union", [_equality_form(b, seen) for b in node.branches], props]
    return [node.kind, props] if props else node.kind


# Java's Double.valueOf on decimal text (hex floats left out): surrounding whitespace, a sign, NaN, Infinity,
# digits with an optional point and exponent, and an optional f/d suffix.
_JAVA_HEX_DOUBLE = re.compile(
    r"[\x00-\x20]*([+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+)[fFdD]?[\x00-\x20]*", re.ASCII
)
_JAVA_DOUBLE = re.compile(
    r"[\x00-\x20]*([+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))[fFdD]?[\x00-\x20]*", re.ASCII
)


def _number_text_default(fld: Field, default: str) -> Any:
    """Schema.parse turns a text default of a float or double field into a DoubleNode
    (`new DoubleNode(Double.valueOf(defaultValue.textValue()))`, Avro 1.11 and 1.12 Schema.java) before it
    validates or compares it: `"1.5"` (or `"0x1p3"`, `"2f"`) is the number there, and text that Java cannot
    read as a number fails the parse."""
    if fld.type.kind not in ("float", "double"):
        return default
    match = _JAVA_DOUBLE.fullmatch(default)
    if match is not None:
        number = float(match[1].replace("Infinity", "inf"))
    else:
        hexa = _JAVA_HEX_DOUBLE.fullmatch(default)
        if hexa is None:
            # Double.valueOf throws NumberFormatException, which Pulsar's validator turns into an invalid schema.
            raise AvroParseError(
                f"the default {json.dumps(default)} of {fld.type.kind} field {fld.name!r} is text that is not a "
                "number (Avro reads a text default of a float or double field with Java's Double.valueOf)",
                fld.pointer,
            )
        number = float.fromhex(hexa[1])
    fld.default = _typed(number)
    return number


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


_NAMES: Final[dict[str, str]] = {}
# The name tables are bounded by count and by the length of what they keep (a hostile stream of schemas with
# long, ever new names would otherwise grow them without end): at most some 15 MiB and 20 MiB, outside the
# cache budget. Longer names are not shared, which costs a little speed and nothing else.
_NAMES_MAX: Final = 65_536
_SHARED_NAME_CHARS: Final = 64


def _name(text: str) -> str | None:
    """`text` if it is a name by Pulsar's lenient rule (§3.7), else None; as one shared object per name.

    Memoised because schemas reuse the same names over and over: a dict lookup costs a fraction of the string
    methods (or the regex) that decide the rule, and one object per name compares by identity in the
    structure-id table and the field maps, and is kept once however many cached schemas use it.
    """
    found = _NAMES.get(text)
    # `isascii() and isidentifier()` accepts only lenient names and decides most of them quickly.
    if found is None and ((text.isascii() and text.isidentifier()) or _LENIENT_NAME.fullmatch(text) is not None):
        found = text
        if len(text) <= _SHARED_NAME_CHARS:
            if len(_NAMES) >= _NAMES_MAX:
                _NAMES.clear()
            _NAMES[text] = text
    return found


def is_name(text: str) -> bool:
    """Whether `text` is a name by Pulsar's lenient rule (letters, digits, `_`, `$`; not starting with a digit)."""
    return _name(text) is not None


_FULL_NAMES: Final[dict[str, dict[str, str]]] = {}
_FULL_NAMES_COUNT: Final[list[int]] = [0]  # full names kept across all spaces


def _full_name(space: str, simple: str) -> str:
    """`space.simple`, as one shared object per full name, for the reasons `_name` gives."""
    names = _FULL_NAMES.get(space)
    if names is None:
        if len(_FULL_NAMES) >= 4096:
            _FULL_NAMES.clear()
            _FULL_NAMES_COUNT[0] = 0
        names = _FULL_NAMES[space] = {}
    full = names.get(simple)
    if full is None:
        full = f"{space}.{simple}"
        if len(full) <= 2 * _SHARED_NAME_CHARS:
            if _FULL_NAMES_COUNT[0] >= _NAMES_MAX:
                _FULL_NAMES.clear()
                _FULL_NAMES_COUNT[0] = 0
                names = _FULL_NAMES[space] = {}
            names[simple] = full
            _FULL_NAMES_COUNT[0] += 1
    return full


def _illegal(text: Any, what: str, pointer: str) -> AvroParseError:
    return AvroParseError(
        f"illegal {what} {json.dumps(text)}: use letters, digits, '_' or '$', not starting with a digit", pointer
    )


class _Parser:
    """One document's parse: named types defined so far, defaults to validate on demand, forward references."""

    def __init__(self) -> None:
        self.named: dict[str, Named] = {}
        self.repeated: list[str] = []
        self.repeat_of: Named | None = None  # set by define() for an enum or fixed whose name is taken
        self.defaulted: list[tuple[Field, Any]] = []
        self.has_refs = False
        self.recursive = False
        self.has_aliases = False
        self.references = 0  # references by name to named types so far (see _LinkingField)

    def parse_document(self, doc: Any) -> AvroSchema:
        root = self.parse(doc, None, None)
        if self.has_refs:
            root = self.resolve_refs(root)
            _assign_structure_ids(root, set(), set())
        self.defaulted = [
            (fld, _number_text_default(fld, default)) if type(default) is str else (fld, default)
            for fld, default in self.defaulted
        ]
        schema = AvroSchema(root, self.named, self.defaulted, self.has_aliases)
        if self.repeated:
            schema.repeated = tuple(self.repeated)
        if self.has_refs or self.recursive:
            # A recursive record's default can send Avro's default validation round the cycle for ever;
            # such schemas were refused as too deep when defaults were validated while parsing.
            schema.invalid_defaults  # noqa: B018
        return schema

    def find(self, name: str, space: str | None) -> Named | None:
        if space and "." not in name:
            found = self.named.get(f"{space}.{name}")
            if found is not None:
                return found
        return self.named.get(name)

    def lookup(self, name: str, space: str | None, site: Site | None) -> Node:
        if name in _PRIMITIVE_SIDS:
            return Primitive(name, _PRIMITIVE_SIDS[name], _NO_PROPS, site)
        found = self.find(name, space)
        if found is not None:
            self.recursive |= not found.sid  # a record still being parsed
            self.references += 1
            return found
        self.has_refs = True
        self.references += 1
        ref = _Ref()
        ref.kind, ref.props, ref.sid, ref.name, ref.space, ref._site = "ref", _NO_PROPS, 0, name, space, site
        return ref

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

    def parse(self, spec: Any, space: str | None, site: Site | None) -> Node:
        """The node for `spec`, found at `site`; its structure id is set unless it is a record still being
        parsed (a recursive reference)."""
        spec_type = type(spec)
        if spec_type is str:
            return self.lookup(spec, space, site)
        if spec_type is list:
            return self.parse_union(spec, space, site)
        if spec_type is not dict:
            raise AvroParseError(
                f"a schema must be a type name, an object or an array, not {json.dumps(spec)}", _pointer(site)
            )
        obj: dict[str, Any] = spec  # typed: compiled code uses dict operations, not method calls
        kind = obj.get("type")
        if type(kind) is not str:
            if kind is None:
                raise AvroParseError('no "type" in schema object', _pointer(site))
            if isinstance(kind, (dict, list)):
                return self.parse(kind, space, Site(site, "type"))
            raise AvroParseError(f'"type" must be text, not {json.dumps(kind)}', _pointer(site))
        if kind in _PRIMITIVE_SIDS:
            props = _props(obj, _SCHEMA_RESERVED) if len(obj) > 1 else _NO_PROPS
            return Primitive(kind, _PRIMITIVE_SIDS[kind], props, site)
        if kind == "record" or kind == "error":
            return self.parse_record(obj, kind, space, site)
        if kind == "array":
            if "items" not in obj:
                raise AvroParseError('array has no "items" type', _pointer(site))
            array = Array()
            array.kind, array._site = kind, site
            array.props = _props(obj, _SCHEMA_RESERVED) if len(obj) > 2 else _NO_PROPS
            items = array.items = self.parse(obj["items"], space, Site(site, "items"))
            array.sid = _intern(("array", items.sid or _ref_sid(items)))
            return array
        if kind == "map":
            if "values" not in obj:
                raise AvroParseError('map has no "values" type', _pointer(site))
            map_ = Map()
            map_.kind, map_._site = kind, site
            map_.props = _props(obj, _SCHEMA_RESERVED) if len(obj) > 2 else _NO_PROPS
            values = map_.values = self.parse(obj["values"], space, Site(site, "values"))
            map_.sid = _intern(("map", values.sid or _ref_sid(values)))
            return map_
        if kind == "enum":
            return self.parse_enum(obj, space, site)
        if kind == "fixed":
            return self.parse_fixed(obj, space, site)
        # Java: `{"type": "SomeName"}` refers to a named type.
        return self.lookup(kind, space, site)

    def define(
        self, named: Named, spec: dict[str, Any], space: str | None, reserved: frozenset[str], own_keys: int
    ) -> str | None:
        """Register a named type and set its custom properties (the keys of `spec` not in `reserved`); returns
        its namespace, which nested definitions inherit. `own_keys` counts the keys of the kind's own that
        `spec` has ("fields", "symbols"…): with "type", "name" and the optional common keys counted here, a
        spec with no more keys than that has no custom properties, and no key needs looking at."""
        name = spec.get("name", NO_DEFAULT)
        if name is NO_DEFAULT:
            raise AvroParseError(f"no name in {named.kind} schema", named.pointer)
        known = 2 + own_keys
        given_space = spec.get("namespace", NO_DEFAULT)
        if given_space is not NO_DEFAULT:
            known += 1
            space = given_space
            if space is not None and type(space) is not str:
                raise AvroParseError(f"namespace must be text, not {json.dumps(space)}", named.pointer)
        if type(name) is not str or not name:
            raise AvroParseError(f"illegal name {json.dumps(name)}", named.pointer)
        if "." in name:
            space, _, given = name.rpartition(".")
        else:
            given = name
        simple = _name(given)
        if simple is None:
            raise _illegal(given, "name", named.pointer)
        space = space or None
        full = _full_name(space, simple) if space else simple
        if full in PRIMITIVES:
            raise AvroParseError(f"schemas may not be named after primitives: {full}", named.pointer)
        named.name, named.namespace, named.fullname = simple, space, full
        if full in self.named:
            taken = self.named[full]
            if taken.kind != named.kind or named.kind not in ("enum", "fixed"):
                raise AvroParseError(f"can't redefine: {full}", named.pointer)
            self.repeat_of = taken  # parse_enum/parse_fixed compare once the definition is read
        doc = spec.get("doc", NO_DEFAULT)
        if doc is NO_DEFAULT:
            named.doc = None
        else:
            known += 1
            named.doc = doc if type(doc) is str else None
        if "aliases" in spec:
            known += 1
            aliases = spec["aliases"]
            if type(aliases) is not list or not all(type(a) is str for a in aliases):
                raise AvroParseError(f"aliases must be an array of names, not {json.dumps(aliases)}", named.pointer)
            named.aliases = frozenset(a if "." in a or not space else f"{space}.{a}" for a in aliases)
            self.has_aliases |= bool(aliases)
        else:
            named.aliases = _NO_ALIASES
        named.props = _NO_PROPS if len(spec) == known else _props(spec, reserved)
        if self.repeat_of is None:
            self.named[full] = named
        return space

    def repeat(self, named: Named, same: bool) -> Named:
        """After an enum or fixed is read: a definition under a name already taken is the earlier node when
        the two are equal as Java's `Schema.equals` has them (names, symbols or size, properties; not docs,
        aliases or an enum default), else "can't redefine"."""
        taken = self.repeat_of
        if taken is None:
            return named
        self.repeat_of = None
        if not same or json.dumps(taken.props, sort_keys=True) != json.dumps(named.props, sort_keys=True):
            raise AvroParseError(f"can't redefine: {named.fullname}", named.pointer)
        self.repeated.append(named.fullname)
        return taken

    def parse_record(self, spec: dict[str, Any], kind: str, space: str | None, site: Site | None) -> Record:
        rec = Record()
        rec.kind, rec.is_error, rec.sid, rec._site = "record", kind == "error", 0, site
        rec_space = self.define(rec, spec, space, _SCHEMA_RESERVED, 1)
        specs = spec.get("fields")
        if type(specs) is not list:
            raise AvroParseError(f"record {rec.fullname} has no fields array", rec.pointer)
        fields_site = Site(site, "fields")
        rec.by_name = by_name = {}
        rec.fields = fields = []
        names = []
        sids = []
        for i, item in enumerate(specs):
            if type(item) is not dict:
                raise AvroParseError(
                    f"field {i} of record {rec.fullname} is not an object", _pointer(Site(fields_site, i))
                )
            fspec: dict[str, Any] = item
            given = fspec.get("name", NO_DEFAULT)
            fname = _name(given) if type(given) is str else None
            if fname is None:
                if given is NO_DEFAULT:
                    raise AvroParseError(
                        f"field {i} of record {rec.fullname} has no name", _pointer(Site(fields_site, i))
                    )
                raise _illegal(given, "field name", _pointer(Site(fields_site, i)))
            tspec: Any = fspec.get("type")
            if tspec is None and "type" not in fspec:
                raise AvroParseError(
                    f"field {fname!r} of record {rec.fullname} has no type", _pointer(Site(fields_site, i))
                )
            sid = _PRIMITIVE_SIDS.get(tspec) if type(tspec) is str else None
            if sid is None:
                references = self.references
                ftype = self.parse(tspec, rec_space, Site(fields_site, i, "type"))
                sid = ftype.sid or _ref_sid(ftype)
                fld = Field() if self.references == references else _LinkingField()
                fld.type = ftype
            else:  # the commonest field type, inline
                fld = Field()
                fld.type = Primitive(tspec, sid, _NO_PROPS, fields_site, i, "type")
            fld.name, fld.position, fld._site = fname, i, fields_site
            n_keys = len(fspec)
            if n_keys == 2:
                fld.default, fld.order, fld.aliases, fld.props, fld.doc = NO_DEFAULT, "ascending", (), _NO_PROPS, None
            elif n_keys == 3 and (default := fspec.get("default", NO_DEFAULT)) is not NO_DEFAULT:
                self.defaulted.append((fld, default))
                fld.default = default if type(default) in _PLAIN else _typed(default)
                fld.order, fld.aliases, fld.props, fld.doc = "ascending", (), _NO_PROPS, None
            else:
                self.field_details(fld, fspec)
            if fname in by_name:
                raise AvroParseError(f"duplicate field {fname!r} in record {rec.fullname}", fld.pointer)
            by_name[fname] = fld
            fields.append(fld)
            names.append(fname)
            sids.append(sid)
        key = ("record", rec.fullname, tuple(names), tuple(sids))
        rec.sid = _INTERNED.get(key) or _intern(key)
        return rec

    def field_details(self, fld: Field, spec: dict[str, Any]) -> None:
        """Everything but name and type, for a field that has more."""
        order = spec.get("order", "ascending")
        if order not in _ORDERS:
            raise AvroParseError(f"field {fld.name!r} has an invalid order {json.dumps(order)}", fld.pointer)
        aliases = spec.get("aliases", [])
        if type(aliases) is not list or not all(type(a) is str for a in aliases):
            raise AvroParseError(f"aliases of field {fld.name!r} must be an array of names", fld.pointer)
        self.has_aliases |= bool(aliases)
        default = spec.get("default", NO_DEFAULT)
        if default is not NO_DEFAULT:
            self.defaulted.append((fld, default))
            fld.default = default if type(default) in _PLAIN else _typed(default)
        else:
            fld.default = NO_DEFAULT
        doc = spec.get("doc")
        fld.order, fld.aliases, fld.props, fld.doc = (
            order,
            tuple(aliases),
            _props(spec, _FIELD_RESERVED),
            (doc if type(doc) is str else None),
        )

    def parse_enum(self, spec: dict[str, Any], space: str | None, site: Site | None) -> Enum:
        enum = Enum()
        enum.kind, enum._site = "enum", site
        self.define(enum, spec, space, _ENUM_RESERVED, 2 if "default" in spec else 1)
        symbols = spec.get("symbols")
        if type(symbols) is not list:
            raise AvroParseError(f"enum {enum.fullname} has no symbols array", enum.pointer)
        seen: set[str] = set()
        enum.symbols = known = []
        for i, given in enumerate(symbols):
            sym = _name(given) if type(given) is str else None
            if sym is None:
                raise _illegal(given, "enum symbol", f"{enum.pointer}/symbols/{i}")
            if sym in seen:
                raise AvroParseError(f"duplicate enum symbol {sym!r} in {enum.fullname}", f"{enum.pointer}/symbols/{i}")
            seen.add(sym)
            known.append(sym)
        default = spec.get("default")
        if default is not None and default not in seen:
            raise AvroParseError(
                f"the enum default {json.dumps(default)} is not in the symbols of {enum.fullname}", enum.pointer
            )
        enum.default = default
        enum.sid = _intern(("enum", enum.fullname, tuple(known), default))
        if self.repeat_of is not None:
            taken = self.repeat_of
            return cast(Enum, self.repeat(enum, isinstance(taken, Enum) and taken.symbols == known))
        return enum

    def parse_fixed(self, spec: dict[str, Any], space: str | None, site: Site | None) -> Fixed:
        fixed = Fixed()
        fixed.kind, fixed._site = "fixed", site
        self.define(fixed, spec, space, _SCHEMA_RESERVED, 1)
        size = spec.get("size")
        if type(size) is not int or not 0 <= size <= 2**31 - 1:
            raise AvroParseError(f"fixed {fixed.fullname} has an invalid or no size: {json.dumps(size)}", fixed.pointer)
        fixed.size = size
        fixed.sid = _intern(("fixed", fixed.fullname, size))
        if self.repeat_of is not None:
            taken = self.repeat_of
            return cast(Fixed, self.repeat(fixed, isinstance(taken, Fixed) and taken.size == size))
        return fixed

    def parse_union(self, specs: list[Any], space: str | None, site: Site | None) -> Union:
        union = Union()
        union.kind, union.props, union._site = "union", _NO_PROPS, site
        union.branches = branches = []
        seen: set[str] = set()
        structure = []
        for i, spec in enumerate(specs):
            sid = _PRIMITIVE_SIDS.get(spec) if type(spec) is str else None
            if sid is not None:  # the commonest branch, inline
                branch: Node = Primitive(spec, sid, _NO_PROPS, site, i)
                key = spec
            else:
                branch = self.parse(spec, space, Site(site, i))
                sid = branch.sid or _ref_sid(branch)
                if isinstance(branch, Named):
                    key = branch.fullname
                elif isinstance(branch, _Ref):
                    key = f"{branch.space}.{branch.name}" if branch.space and "." not in branch.name else branch.name
                elif isinstance(branch, Union):
                    raise AvroParseError(
                        "nested union: a union may not directly contain another union", _pointer(Site(site, i))
                    )
                else:
                    key = branch.kind
            if key in seen:
                raise AvroParseError(f"duplicate in union: {key}", _pointer(Site(site, i)))
            seen.add(key)
            branches.append(branch)
            structure.append(sid)
        key = ("union", tuple(structure))
        union.sid = _INTERNED.get(key) or _intern(key)
        return union


def _props(node: dict[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    if node.keys() <= reserved:
        return _NO_PROPS
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
