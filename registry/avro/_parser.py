"""Avro schema text to nodes, as Avro 1.12 Java's parser reads it under Pulsar (pulsar-semantics.md §3.7).

JSON is decoded with msgspec (and, for what it refuses, as Jackson would: comments allowed, NaN refused), then
the node graph is built in one pass: each node gets its structure id (identical subtrees resolve with nothing
to report) and where it sits; names are checked with Pulsar's lenient validator and memoised as shared
strings.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any, Final, cast

import msgspec

from ._nodes import (
    ENUM_RESERVED,
    FIELD_RESERVED,
    LENIENT_NAME,
    NO_ALIASES,
    NO_DEFAULT,
    NO_PROPS,
    ORDERS,
    PLAIN,
    PRIMITIVES,
    SCHEMA_RESERVED,
    Array,
    AvroParseError,
    AvroSchema,
    Enum,
    Field,
    Fixed,
    LinkingField,
    Map,
    Named,
    Node,
    Primitive,
    Record,
    Site,
    Union,
    _Ref,
    pointer_of,
)

# msgspec's decoder gives the same values as json.loads on every text both accept, two to three times faster;
# what it refuses (NaN, Infinity, overflowing floats, lone surrogates, broken JSON) goes to json.loads, which
# gives the same result or the same error as before.
_decode_json: Callable[[str], Any] = msgspec.json.Decoder().decode


def parse_text(text: str) -> AvroSchema:
    try:
        try:
            doc = _decode_json(text)
        except msgspec.MsgspecError:
            doc = _decode_like_jackson(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise AvroParseError(f"not valid JSON: {exc}") from None
    try:
        return Parser().parse_document(doc)
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


def intern(key: tuple[Any, ...]) -> int:
    """Exact interning (dict keys compare by value), so equal ids always mean equal structure. Ids are never
    reused; the table is cleared when large, which only loses sharing with schemas parsed before."""
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) > 500_000:
            _INTERNED.clear()
        found = _INTERNED[key] = next(_COUNTER)
    return found


def ref_sid(node: Node) -> int:
    """The id a reference to a record still being parsed contributes to its container's structure."""
    return intern(("ref", node.fullname)) if isinstance(node, Named) else 0


def _assign_structure_ids(node: Node, done: set[int], open_records: set[str]) -> int:
    """Structure ids by a walk, for schemas with forward references (parsing assigns them otherwise): the
    same ids the parse would give had every definition come before its uses."""
    if id(node) in done:
        return node.sid
    if isinstance(node, Record):
        if node.fullname in open_records:
            return ref_sid(node)
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
    node.sid = intern(key) if key else _PRIMITIVE_SIDS[node.kind]
    return node.sid


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
    fld.default = typed(number)
    return number


def typed(value: Any) -> Any:
    """JSON values with int/float kept apart, as Jackson's node equality does (1 ≠ 1.0)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"$float": repr(value)}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
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
    if found is None and ((text.isascii() and text.isidentifier()) or LENIENT_NAME.fullmatch(text) is not None):
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


class Parser:
    """One document's parse: named types defined so far, defaults to validate on demand, forward references."""

    def __init__(self) -> None:
        self.named: dict[str, Named] = {}
        self.repeated: list[str] = []
        self.repeat_of: Named | None = None  # set by define() for an enum or fixed whose name is taken
        self.defaulted: list[tuple[Field, Any]] = []
        self.has_refs = False
        self.recursive = False
        self.has_aliases = False
        self.references = 0  # references by name to named types so far (see LinkingField)

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
            return Primitive(name, _PRIMITIVE_SIDS[name], NO_PROPS, site)
        found = self.find(name, space)
        if found is not None:
            self.recursive |= not found.sid  # a record still being parsed
            self.references += 1
            return found
        self.has_refs = True
        self.references += 1
        ref = _Ref()
        ref.kind, ref.props, ref.sid, ref.name, ref.space, ref._site = "ref", NO_PROPS, 0, name, space, site
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
                f"a schema must be a type name, an object or an array, not {json.dumps(spec)}", pointer_of(site)
            )
        obj: dict[str, Any] = spec  # typed: compiled code uses dict operations, not method calls
        kind = obj.get("type")
        if type(kind) is not str:
            if kind is None:
                raise AvroParseError('no "type" in schema object', pointer_of(site))
            if isinstance(kind, (dict, list)):
                return self.parse(kind, space, Site(site, "type"))
            raise AvroParseError(f'"type" must be text, not {json.dumps(kind)}', pointer_of(site))
        if kind in _PRIMITIVE_SIDS:
            props = _props(obj, SCHEMA_RESERVED) if len(obj) > 1 else NO_PROPS
            return Primitive(kind, _PRIMITIVE_SIDS[kind], props, site)
        if kind == "record" or kind == "error":
            return self.parse_record(obj, kind, space, site)
        if kind == "array":
            if "items" not in obj:
                raise AvroParseError('array has no "items" type', pointer_of(site))
            array = Array()
            array.kind, array._site = kind, site
            array.props = _props(obj, SCHEMA_RESERVED) if len(obj) > 2 else NO_PROPS
            items = array.items = self.parse(obj["items"], space, Site(site, "items"))
            array.sid = intern(("array", items.sid or ref_sid(items)))
            return array
        if kind == "map":
            if "values" not in obj:
                raise AvroParseError('map has no "values" type', pointer_of(site))
            map_ = Map()
            map_.kind, map_._site = kind, site
            map_.props = _props(obj, SCHEMA_RESERVED) if len(obj) > 2 else NO_PROPS
            values = map_.values = self.parse(obj["values"], space, Site(site, "values"))
            map_.sid = intern(("map", values.sid or ref_sid(values)))
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
            named.aliases = NO_ALIASES
        named.props = NO_PROPS if len(spec) == known else _props(spec, reserved)
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
        rec_space = self.define(rec, spec, space, SCHEMA_RESERVED, 1)
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
                    f"field {i} of record {rec.fullname} is not an object", pointer_of(Site(fields_site, i))
                )
            fspec: dict[str, Any] = item
            given = fspec.get("name", NO_DEFAULT)
            fname = _name(given) if type(given) is str else None
            if fname is None:
                if given is NO_DEFAULT:
                    raise AvroParseError(
                        f"field {i} of record {rec.fullname} has no name", pointer_of(Site(fields_site, i))
                    )
                raise _illegal(given, "field name", pointer_of(Site(fields_site, i)))
            tspec: Any = fspec.get("type")
            if tspec is None and "type" not in fspec:
                raise AvroParseError(
                    f"field {fname!r} of record {rec.fullname} has no type", pointer_of(Site(fields_site, i))
                )
            sid = _PRIMITIVE_SIDS.get(tspec) if type(tspec) is str else None
            if sid is None:
                references = self.references
                ftype = self.parse(tspec, rec_space, Site(fields_site, i, "type"))
                sid = ftype.sid or ref_sid(ftype)
                fld = Field() if self.references == references else LinkingField()
                fld.type = ftype
            else:  # the commonest field type, inline
                fld = Field()
                fld.type = Primitive(tspec, sid, NO_PROPS, fields_site, i, "type")
            fld.name, fld.position, fld._site = fname, i, fields_site
            n_keys = len(fspec)
            if n_keys == 2:
                fld.default, fld.order, fld.aliases, fld.props, fld.doc = NO_DEFAULT, "ascending", (), NO_PROPS, None
            elif n_keys == 3 and (default := fspec.get("default", NO_DEFAULT)) is not NO_DEFAULT:
                self.defaulted.append((fld, default))
                fld.default = default if type(default) in PLAIN else typed(default)
                fld.order, fld.aliases, fld.props, fld.doc = "ascending", (), NO_PROPS, None
            else:
                self.field_details(fld, fspec)
            if fname in by_name:
                raise AvroParseError(f"duplicate field {fname!r} in record {rec.fullname}", fld.pointer)
            by_name[fname] = fld
            fields.append(fld)
            names.append(fname)
            sids.append(sid)
        key = ("record", rec.fullname, tuple(names), tuple(sids))
        rec.sid = _INTERNED.get(key) or intern(key)
        return rec

    def field_details(self, fld: Field, spec: dict[str, Any]) -> None:
        """Everything but name and type, for a field that has more."""
        order = spec.get("order", "ascending")
        if order not in ORDERS:
            raise AvroParseError(f"field {fld.name!r} has an invalid order {json.dumps(order)}", fld.pointer)
        aliases = spec.get("aliases", [])
        if type(aliases) is not list or not all(type(a) is str for a in aliases):
            raise AvroParseError(f"aliases of field {fld.name!r} must be an array of names", fld.pointer)
        self.has_aliases |= bool(aliases)
        default = spec.get("default", NO_DEFAULT)
        if default is not NO_DEFAULT:
            self.defaulted.append((fld, default))
            fld.default = default if type(default) in PLAIN else typed(default)
        else:
            fld.default = NO_DEFAULT
        doc = spec.get("doc")
        fld.order, fld.aliases, fld.props, fld.doc = (
            order,
            tuple(aliases),
            _props(spec, FIELD_RESERVED),
            (doc if type(doc) is str else None),
        )

    def parse_enum(self, spec: dict[str, Any], space: str | None, site: Site | None) -> Enum:
        enum = Enum()
        enum.kind, enum._site = "enum", site
        self.define(enum, spec, space, ENUM_RESERVED, 2 if "default" in spec else 1)
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
        enum.sid = intern(("enum", enum.fullname, tuple(known), default))
        if self.repeat_of is not None:
            taken = self.repeat_of
            return cast(Enum, self.repeat(enum, isinstance(taken, Enum) and taken.symbols == known))
        return enum

    def parse_fixed(self, spec: dict[str, Any], space: str | None, site: Site | None) -> Fixed:
        fixed = Fixed()
        fixed.kind, fixed._site = "fixed", site
        self.define(fixed, spec, space, SCHEMA_RESERVED, 1)
        size = spec.get("size")
        if type(size) is not int or not 0 <= size <= 2**31 - 1:
            raise AvroParseError(f"fixed {fixed.fullname} has an invalid or no size: {json.dumps(size)}", fixed.pointer)
        fixed.size = size
        fixed.sid = intern(("fixed", fixed.fullname, size))
        if self.repeat_of is not None:
            taken = self.repeat_of
            return cast(Fixed, self.repeat(fixed, isinstance(taken, Fixed) and taken.size == size))
        return fixed

    def parse_union(self, specs: list[Any], space: str | None, site: Site | None) -> Union:
        union = Union()
        union.kind, union.props, union._site = "union", NO_PROPS, site
        union.branches = branches = []
        seen: set[str] = set()
        structure = []
        for i, spec in enumerate(specs):
            sid = _PRIMITIVE_SIDS.get(spec) if type(spec) is str else None
            if sid is not None:  # the commonest branch, inline
                branch: Node = Primitive(spec, sid, NO_PROPS, site, i)
                key = spec
            else:
                branch = self.parse(spec, space, Site(site, i))
                sid = branch.sid or ref_sid(branch)
                if isinstance(branch, Named):
                    key = branch.fullname
                elif isinstance(branch, _Ref):
                    key = f"{branch.space}.{branch.name}" if branch.space and "." not in branch.name else branch.name
                elif isinstance(branch, Union):
                    raise AvroParseError(
                        "nested union: a union may not directly contain another union", pointer_of(Site(site, i))
                    )
                else:
                    key = branch.kind
            if key in seen:
                raise AvroParseError(f"duplicate in union: {key}", pointer_of(Site(site, i)))
            seen.add(key)
            branches.append(branch)
            structure.append(sid)
        key = ("union", tuple(structure))
        union.sid = _INTERNED.get(key) or intern(key)
        return union


def _props(node: dict[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    if node.keys() <= reserved:
        return NO_PROPS
    return {k: typed(v) for k, v in node.items() if k not in reserved}
