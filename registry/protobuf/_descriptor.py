"""A PROTOBUF_NATIVE schema's message graph as the diff and buf's rules read it.

Spec facts as data (wire and JSON compatibility groups, cardinalities, number limits), a model of each side
read once from its descriptors (cached by bytes), old and new types paired by full name (a renamed root or
package translated first), whether a field's type change keeps its wire or JSON encoding, and the small text
helpers the advisories, the diff and the `.proto` text share.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, FileDescriptor

from .._cache_budget import PROTOBUF_MODEL_BYTES, PROTOBUF_MODEL_FACTOR, ByteLRU, cached
from .._changes import Severity
from ._java import declared_enums, java_default
from ._native import ProtobufNativeSchema, is_synthetic_zero
from ._upb_copy import has_features, strip_features

F = descriptor_pb2.FieldDescriptorProto

# Spec facts as data -------------------------------------------------------------------------------------------

SCALAR_NAMES: dict[int, str] = {
    F.TYPE_DOUBLE: "double",
    F.TYPE_FLOAT: "float",
    F.TYPE_INT64: "int64",
    F.TYPE_UINT64: "uint64",
    F.TYPE_INT32: "int32",
    F.TYPE_FIXED64: "fixed64",
    F.TYPE_FIXED32: "fixed32",
    F.TYPE_BOOL: "bool",
    F.TYPE_STRING: "string",
    F.TYPE_GROUP: "group",
    F.TYPE_MESSAGE: "message",
    F.TYPE_BYTES: "bytes",
    F.TYPE_UINT32: "uint32",
    F.TYPE_ENUM: "enum",
    F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64",
    F.TYPE_SINT32: "sint32",
    F.TYPE_SINT64: "sint64",
}

# buf `fieldKindToWireCompatibilityGroup` (breaking_util.go), after protobuf.dev "Updating A Message Type":
# same group = same wire encoding. string -> bytes is allowed on top (bytes -> string is not: no UTF-8 guarantee).
# Enum vs the int32 family and message vs bytes are wire-compatible only for some values, so buf keeps them apart.
WIRE_GROUP: dict[int, int] = {
    F.TYPE_INT32: 1,
    F.TYPE_INT64: 1,
    F.TYPE_UINT32: 1,
    F.TYPE_UINT64: 1,
    F.TYPE_BOOL: 1,
    F.TYPE_SINT32: 2,
    F.TYPE_SINT64: 2,
    F.TYPE_STRING: 3,
    F.TYPE_BYTES: 4,
    F.TYPE_FIXED32: 5,
    F.TYPE_SFIXED32: 5,
    F.TYPE_FIXED64: 6,
    F.TYPE_SFIXED64: 6,
    F.TYPE_DOUBLE: 7,
    F.TYPE_FLOAT: 8,
    F.TYPE_GROUP: 9,
    F.TYPE_MESSAGE: 10,
    F.TYPE_ENUM: 11,
}
WIRE_ALLOWED_CROSS_GROUP = frozenset({(F.TYPE_STRING, F.TYPE_BYTES)})

# buf `fieldKindToWireJSONCompatibilityGroup`: the intersection of wire- and JSON-compatible (int64 is a JSON
# string, int32 a JSON number; bytes are base64).
WIRE_JSON_GROUP: dict[int, int] = {
    F.TYPE_INT32: 1,
    F.TYPE_UINT32: 1,
    F.TYPE_INT64: 2,
    F.TYPE_UINT64: 2,
    F.TYPE_FIXED32: 3,
    F.TYPE_SFIXED32: 3,
    F.TYPE_FIXED64: 4,
    F.TYPE_SFIXED64: 4,
    F.TYPE_BOOL: 5,
    F.TYPE_SINT32: 6,
    F.TYPE_SINT64: 7,
    F.TYPE_STRING: 8,
    F.TYPE_BYTES: 9,
    F.TYPE_DOUBLE: 10,
    F.TYPE_FLOAT: 11,
    F.TYPE_GROUP: 12,
    F.TYPE_MESSAGE: 13,
    F.TYPE_ENUM: 14,
}

# Wire-compatible changes that lose nothing when the NEW schema reads OLD data (the reverse may truncate or
# reinterpret): a varint widened, zigzag widened, bool read as an integer, string read as bytes.
WIDENINGS = frozenset(
    {
        (F.TYPE_INT32, F.TYPE_INT64),
        (F.TYPE_UINT32, F.TYPE_UINT64),
        (F.TYPE_UINT32, F.TYPE_INT64),
        (F.TYPE_SINT32, F.TYPE_SINT64),
        (F.TYPE_BOOL, F.TYPE_INT32),
        (F.TYPE_BOOL, F.TYPE_INT64),
        (F.TYPE_BOOL, F.TYPE_UINT32),
        (F.TYPE_BOOL, F.TYPE_UINT64),
        (F.TYPE_STRING, F.TYPE_BYTES),
    }
)

# buf `cardinalityToWireCompatibilityGroup` / `...WireJSON...` (cardinality.go): presence does not matter on the
# wire; repeated and map share an encoding but not a JSON shape.
SINGULAR, OPTIONAL, REQUIRED, REPEATED, MAP = "singular", "optional", "required", "repeated", "map"
CARDINALITY_WIRE_GROUP = {SINGULAR: 1, OPTIONAL: 1, REQUIRED: 2, REPEATED: 3, MAP: 3}
CARDINALITY_WIRE_JSON_GROUP = {SINGULAR: 1, OPTIONAL: 1, REQUIRED: 2, REPEATED: 3, MAP: 4}

WIRE, WIRE_JSON = "buf WIRE", "buf WIRE_JSON"
SEVERITY = {WIRE: Severity.ERROR, WIRE_JSON: Severity.WARNING}
MAX_FIELD_NUMBER = 536_870_911
MAX_ENUM_NUMBER = 2_147_483_647


# A side's model: what the rules need, read once from the descriptors ------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeModel:
    """A field's type: the scalar kind, and the referenced type's full name for messages, groups and enums."""

    kind: int
    name: str = ""

    def text(self, package: str = "") -> str:
        if not self.name:
            return SCALAR_NAMES[self.kind]
        return self.name[len(package) + 1 :] if package and self.name.startswith(package + ".") else self.name


@dataclass(frozen=True, slots=True)
class FieldModel:
    name: str
    number: int
    json_name: str
    json_name_is_default: bool
    type: TypeModel
    cardinality: str
    label: str  # as written in a .proto: "", "optional", "required" or "repeated"
    oneof: str  # "" outside a real oneof (proto3 `optional` makes a synthetic one: not counted, like buf)
    default: object  # effective default, None when the type has none (messages, repeated, maps)
    explicit_default: str | None
    map_key: TypeModel | None = None
    map_value: TypeModel | None = None

    def type_text(self, package: str = "") -> str:
        if self.map_key is not None and self.map_value is not None:
            return f"map<{self.map_key.text(package)}, {self.map_value.text(package)}>"
        return self.type.text(package)


@dataclass(frozen=True, slots=True)
class MessageModel:
    full_name: str
    name: str
    file: str
    fields: dict[int, FieldModel]
    oneofs: tuple[str, ...]
    reserved: tuple[tuple[int, int], ...]  # inclusive ranges
    reserved_names: tuple[str, ...]
    extension_ranges: tuple[tuple[int, int], ...]
    nested: tuple[str, ...]  # nested messages and enums, declaration order, map entries left out
    json_allowed: bool
    is_map_entry: bool


@dataclass(frozen=True, slots=True)
class EnumModel:
    full_name: str
    name: str
    file: str
    values: tuple[tuple[str, int], ...]  # declaration order; aliases share a number
    reserved: tuple[tuple[int, int], ...]
    reserved_names: tuple[str, ...]
    json_allowed: bool
    closed: bool

    def names_by_number(self) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for name, number in self.values:
            out.setdefault(number, []).append(name)
        return out


@dataclass(frozen=True, slots=True)
class FileModel:
    name: str
    package: str
    syntax: str  # "proto2", "proto3" or "editions"
    edition: str
    imports: tuple[str, ...]
    types: tuple[str, ...]  # top-level messages and enums, declaration order


@dataclass(slots=True)
class DescriptorModel:
    root: str
    root_file: str
    files: dict[str, FileModel] = field(default_factory=dict)
    messages: dict[str, MessageModel] = field(default_factory=dict)
    enums: dict[str, EnumModel] = field(default_factory=dict)
    reachable: list[str] = field(default_factory=list)  # root first, then breadth-first through fields
    source_bytes: int = 0  # the serialized descriptors it was read from (its cost in the model cache)

    def package_of(self, full_name: str) -> str:
        item = self.messages.get(full_name) or self.enums.get(full_name)
        return self.files[item.file].package if item else ""


# Models by root descriptor, bounded by bytes (registry/_cache_budget.py): parse_protobuf_native is cached, so
# one build per stored schema.
MODELS: ByteLRU[Descriptor, DescriptorModel] = ByteLRU(PROTOBUF_MODEL_BYTES)


def model_of(schema: ProtobufNativeSchema) -> DescriptorModel:
    return cached(
        MODELS, schema.root, lambda: build_model(schema), lambda model: model.source_bytes * PROTOBUF_MODEL_FACTOR
    )


def build_model(schema: ProtobufNativeSchema) -> DescriptorModel:
    """The model of `schema` from its root's file and the files it imports. Every declared fact (numbers,
    labels, oneofs, defaults, values) is read from the files as declared (`schema.originals`), only the
    resolution of type names from upb's descriptors, which were built from a copy (registry/protobuf/_upb_copy.py)."""
    root = schema.root
    model = DescriptorModel(root=schema.root_full_name, root_file=root.file.name)
    enum_values: dict[str, dict[str, int]] = {}
    for original in schema.originals.values():
        enum_values.update(declared_enums(original))
    seen: set[str] = set()
    pending = [root.file]
    while pending:
        file = pending.pop()
        if file.name in seen:
            continue
        seen.add(file.name)
        model.source_bytes += len(file.serialized_pb)
        _read_file(model, file, _Declared(schema, enum_values))
        pending.extend(file.dependencies)
    model.reachable = _reachable(model)
    return model


@dataclass(frozen=True, slots=True)
class _Declared:
    """What the model reads from the schema as declared, beside upb's descriptors."""

    schema: ProtobufNativeSchema
    enum_values: dict[str, dict[str, int]]

    def proto(self, file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
        original = self.schema.originals.get(file.name)
        if original is None:
            return descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
        syntax = original.syntax if original.syntax in ("", "proto2", "proto3", "editions") else "proto2"
        if syntax == original.syntax and (syntax == "editions" or not has_features(original)):
            return original
        plain = descriptor_pb2.FileDescriptorProto()  # protobuf-java reads an unknown syntax as proto2, and
        plain.CopyFrom(original)  # features outside editions are not read here
        plain.syntax = syntax
        strip_features(plain)
        return plain


def _read_file(model: DescriptorModel, file: FileDescriptor, declared: _Declared) -> None:
    proto = declared.proto(file)
    syntax = proto.syntax or "proto2"
    edition = _edition_name(proto.edition) if syntax == "editions" and proto.HasField("edition") else ""
    file_json = _json_allowed_default(syntax, proto.options.features)
    prefix = proto.package + "." if proto.package else ""
    types: list[str] = []
    for message in proto.message_type:
        types.append(prefix + message.name)
        _read_message(model, file, message, prefix + message.name, file_json, syntax, declared)
    for enum in proto.enum_type:
        types.append(prefix + enum.name)
        _read_enum(model, file, enum, prefix + enum.name, file_json, declared)
    model.files[file.name] = FileModel(
        name=file.name,
        package=proto.package,
        syntax=syntax,
        edition=edition,
        imports=tuple(proto.dependency),
        types=tuple(types),
    )


def _edition_name(number: int) -> str:
    for name, value in descriptor_pb2.Edition.items():
        if value == number:
            return name
    return str(number)


def _json_allowed_default(syntax: str, features: descriptor_pb2.FeatureSet) -> bool:
    """The resolved `json_format` feature: proto2 is LEGACY_BEST_EFFORT, proto3 and editions ALLOW."""
    if features.HasField("json_format"):
        return features.json_format == descriptor_pb2.FeatureSet.ALLOW
    return syntax != "proto2"


def _json_allowed(inherited: bool, features: descriptor_pb2.FeatureSet) -> bool:
    if features.HasField("json_format"):
        return features.json_format == descriptor_pb2.FeatureSet.ALLOW
    return inherited


def _read_message(
    model: DescriptorModel,
    file: FileDescriptor,
    proto: descriptor_pb2.DescriptorProto,
    full_name: str,
    json: bool,
    syntax: str,
    declared: _Declared,
) -> None:
    descriptor = file.pool.FindMessageTypeByName(declared.schema.built(full_name))
    json = _json_allowed(json, proto.options.features)
    synthetic = {
        f.oneof_index for f in proto.field if f.proto3_optional and f.HasField("oneof_index")
    }  # proto3 `optional`
    oneofs = tuple(o.name for i, o in enumerate(proto.oneof_decl) if i not in synthetic)
    fields = {}
    for fd, fp in zip(descriptor.fields, proto.field, strict=True):
        oneof = proto.oneof_decl[fp.oneof_index].name if fp.HasField("oneof_index") else ""
        presence = declared.schema.presence.get(f"{full_name}.{fp.name}")
        fields[fp.number] = _read_field(fd, fp, synthetic, syntax, oneof, presence, declared)
    nested: list[str] = []
    for message in proto.nested_type:
        name = f"{full_name}.{message.name}"
        _read_message(model, file, message, name, json, syntax, declared)
        if not message.options.map_entry:
            nested.append(name)
    for enum in proto.enum_type:
        nested.append(f"{full_name}.{enum.name}")
        _read_enum(model, file, enum, f"{full_name}.{enum.name}", json, declared)
    model.messages[full_name] = MessageModel(
        full_name=full_name,
        name=proto.name,
        file=file.name,
        fields=fields,  # declaration order: texts and reports follow the schema as written
        oneofs=oneofs,
        reserved=tuple((r.start, r.end - 1) for r in proto.reserved_range),  # DescriptorProto ends are exclusive
        reserved_names=tuple(proto.reserved_name),
        extension_ranges=tuple((r.start, r.end - 1) for r in proto.extension_range),
        nested=tuple(nested),
        json_allowed=json,
        is_map_entry=proto.options.map_entry,
    )


def _type_of(fd: FieldDescriptor, declared: _Declared) -> TypeModel:
    if fd.message_type is not None:
        return TypeModel(fd.type, declared.schema.declared(fd.message_type.full_name))
    if fd.enum_type is not None:
        return TypeModel(fd.type, declared.schema.declared(fd.enum_type.full_name))
    return TypeModel(fd.type)


def _read_field(
    fd: FieldDescriptor,
    fp: descriptor_pb2.FieldDescriptorProto,
    synthetic: set[int],
    syntax: str,
    oneof: str,
    presence: bool | None,
    declared: _Declared,
) -> FieldModel:
    """A field as declared (`fp`: number, label, oneof, default), its type as upb resolved it (`fd`)."""
    entry = fd.message_type if fd.message_type is not None and fd.message_type.GetOptions().map_entry else None
    if entry is not None and fp.label == F.LABEL_REPEATED:
        cardinality = MAP
    elif fp.label == F.LABEL_REPEATED:
        cardinality = REPEATED
    elif fp.label == F.LABEL_REQUIRED or fd.is_required:
        cardinality = REQUIRED
    elif presence if presence is not None else fd.has_presence:
        cardinality = OPTIONAL
    else:
        cardinality = SINGULAR
    in_real_oneof = fp.HasField("oneof_index") and fp.oneof_index not in synthetic
    # buf `canHaveDefault`: not a list, not a map, not a message.
    has_default = cardinality not in (REPEATED, MAP) and fd.message_type is None
    return FieldModel(
        name=fp.name,
        number=fp.number,
        json_name=fd.json_name,
        json_name_is_default=fd.json_name == _camel(fd.name),
        type=_type_of(fd, declared),
        cardinality=cardinality,
        label=_label(cardinality, syntax, in_real_oneof, fp.proto3_optional),
        oneof=oneof if in_real_oneof else "",
        default=_default(fd, fp, declared) if has_default else None,
        explicit_default=fp.default_value if fp.HasField("default_value") else None,
        map_key=_type_of(entry.fields_by_number[1], declared) if entry is not None else None,
        map_value=_type_of(entry.fields_by_number[2], declared) if entry is not None else None,
    )


def _default(fd: FieldDescriptor, fp: descriptor_pb2.FieldDescriptorProto, declared: _Declared) -> object:
    """The field's default as protobuf-java has it: the declared one read as Java reads it (upb's copy has
    none), else the type's own (an enum's first declared value)."""
    enum = declared.schema.declared(fd.enum_type.full_name) if fd.enum_type is not None else None
    values = declared.enum_values.get(enum, {}) if enum is not None else None
    if fp.HasField("default_value"):
        return java_default(fd.full_name, fd.type, fp.default_value, values)
    if values:
        return next(iter(values.values()))
    return fd.default_value


def _label(cardinality: str, syntax: str, in_oneof: bool, proto3_optional: bool) -> str:
    if cardinality in (REPEATED, REQUIRED):
        return cardinality
    if cardinality == MAP or in_oneof or syntax == "editions":
        return ""
    return "optional" if syntax == "proto2" or proto3_optional else ""


def _read_enum(
    model: DescriptorModel,
    file: FileDescriptor,
    proto: descriptor_pb2.EnumDescriptorProto,
    full_name: str,
    json: bool,
    declared: _Declared,
) -> None:
    descriptor: EnumDescriptor = file.pool.FindEnumTypeByName(declared.schema.built(full_name))
    model.enums[full_name] = EnumModel(
        full_name=full_name,
        name=proto.name,
        file=file.name,
        values=tuple((v.name, v.number) for v in proto.value if not is_synthetic_zero(v.name)),
        reserved=tuple((r.start, r.end) for r in proto.reserved_range),  # EnumReservedRange ends are inclusive
        reserved_names=tuple(proto.reserved_name),
        json_allowed=_json_allowed(json, proto.options.features),
        closed=descriptor.is_closed,
    )


def _camel(name: str) -> str:
    """protoc's default json_name: drop underscores, capitalise the letter after each."""
    out: list[str] = []
    upper = False
    for ch in name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


def _reachable(model: DescriptorModel) -> list[str]:
    """The root, then every type reachable through fields or nesting, breadth-first in declaration order."""
    order: list[str] = []
    seen: set[str] = set()
    queue = [model.root]
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        message = model.messages.get(name)
        if message is None:
            if name in model.enums:
                order.append(name)
            continue
        if not message.is_map_entry:
            order.append(name)
        for f in message.fields.values():
            for t in (f.type, f.map_key, f.map_value):
                if t is not None and t.name:
                    queue.append(t.name)
        queue.extend(message.nested)
    return order


# Pairing old and new types --------------------------------------------------------------------------------------


class _Names:
    """Old full name -> new full name: the old root maps to the new root (and the root file's package to the new
    one), so a renamed root is still compared field by field."""

    def __init__(self, old: DescriptorModel, new: DescriptorModel) -> None:
        self._prefixes: list[tuple[str, str]] = []
        if old.root != new.root:
            self._prefixes.append((old.root, new.root))
        old_pkg, new_pkg = old.files[old.root_file].package, new.files[new.root_file].package
        if old_pkg != new_pkg and old_pkg and new_pkg:
            self._prefixes.append((old_pkg, new_pkg))

    def __call__(self, name: str) -> str:
        for before, after in self._prefixes:
            if name == before or name.startswith(before + "."):
                return after + name[len(before) :]
        return name


@dataclass(frozen=True, slots=True)
class Pairing:
    old: DescriptorModel
    new: DescriptorModel
    names: _Names

    @classmethod
    def of(cls, old: ProtobufNativeSchema, new: ProtobufNativeSchema) -> Pairing:
        before, after = model_of(old), model_of(new)
        return cls(before, after, _Names(before, after))


def paired(ctx: Pairing) -> Iterator[tuple[str, str]]:
    """(old name, new name) of the types reachable on either side that exist on both, old order first."""
    old, new, names = ctx.old, ctx.new, ctx.names
    new_to_old = {names(n): n for n in (*old.messages, *old.enums)}
    seen: set[str] = set()
    for name in [*old.reachable, *(new_to_old.get(n, "") for n in new.reachable)]:
        if not name or name in seen:
            continue
        seen.add(name)
        target = names(name)
        if (name in old.messages and target in new.messages) or (name in old.enums and target in new.enums):
            yield name, target


def type_break(was: FieldModel, now: FieldModel, ctx: Pairing) -> tuple[str, str]:
    """(rule set, buf rule) of a field's type change, ("", "") when compatible under WIRE_JSON too."""
    if was.map_key is not None and now.map_key is not None and was.map_value is not None and now.map_value:
        # Map entries are compared structurally: buf also compares the generated entry's name (module docstring).
        key, value = _kind_break(was.map_key, now.map_key, ctx), _kind_break(was.map_value, now.map_value, ctx)
        return max(key, value, key=lambda found: _RANK[found[0]])
    return _kind_break(was.type, now.type, ctx)


_RANK = {"": 0, WIRE_JSON: 1, WIRE: 2}


def _kind_break(was: TypeModel, now: TypeModel, ctx: Pairing) -> tuple[str, str]:
    if WIRE_GROUP[was.kind] != WIRE_GROUP[now.kind] and (was.kind, now.kind) not in WIRE_ALLOWED_CROSS_GROUP:
        return (WIRE, "FIELD_WIRE_COMPATIBLE_TYPE")
    if was.name and ctx.names(was.name) != now.name and not _same_enum(was, now, ctx):
        return (WIRE, "FIELD_WIRE_COMPATIBLE_TYPE")
    if WIRE_JSON_GROUP[was.kind] != WIRE_JSON_GROUP[now.kind]:
        return (WIRE_JSON, "FIELD_WIRE_JSON_COMPATIBLE_TYPE")
    return ("", "")


def _same_enum(was: TypeModel, now: TypeModel, ctx: Pairing) -> bool:
    """buf `checkEnumWireCompatibleForField`: another enum is fine if its short name is the same and every old
    value (name and number) is still in it."""
    old, new = ctx.old.enums.get(was.name), ctx.new.enums.get(now.name)
    if now.kind != F.TYPE_ENUM or old is None or new is None or old.name != new.name:
        return False
    return set(old.values) <= set(new.values)


def reserved_text(ranges: Sequence[tuple[int, int]], names: Sequence[str], maximum: int = MAX_FIELD_NUMBER) -> str:
    return " ".join(reserved_lines(ranges, names, maximum))


def reserved_lines(ranges: Sequence[tuple[int, int]], names: Sequence[str], maximum: int) -> list[str]:
    lines = []
    if ranges:
        lines.append("reserved " + ", ".join(span_text(a, b, maximum) for a, b in sorted(ranges)) + ";")
    if names:
        lines.append("reserved " + ", ".join(f'"{n}"' for n in sorted(names)) + ";")
    return lines


# Small helpers ------------------------------------------------------------------------------------------------


def in_ranges(number: int, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(start <= number <= end for start, end in ranges)


def missing_ranges(old: Sequence[tuple[int, int]], new: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the old (inclusive) ranges no new range covers: buf `checkTagRanges`."""
    missing: list[tuple[int, int]] = []
    for start, end in old:
        pieces = [(start, end)]
        for lo, hi in new:
            pieces = [
                part for a, b in pieces for part in ((a, min(b, lo - 1)), (max(a, hi + 1), b)) if part[0] <= part[1]
            ]
        missing += pieces
    return sorted(set(missing))


def span_text(start: int, end: int, maximum: int) -> str:
    if start == end:
        return str(start)
    return f"{start} to {'max' if end >= maximum else end}"


def card_text(f: FieldModel) -> str:
    return f.label + " " if f.label else ""


def oneof_text(name: str) -> str:
    return f"in oneof `{name}`" if name else "outside any oneof"


def quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def default_text(f: FieldModel) -> str:
    """The default as a .proto would spell it (descriptor default_value text), "(implicit)" when not written."""
    quoted = f.type.kind in (F.TYPE_STRING, F.TYPE_BYTES)
    if f.explicit_default is not None:
        return f'"{f.explicit_default}"' if quoted else f.explicit_default
    value = f.default
    if isinstance(value, bytes):
        value = value.decode("utf-8", "backslashreplace")
    if isinstance(value, bool):
        value = str(value).lower()
    return (f'"{value}"' if quoted else str(value)) + " (implicit)"


def defaults_equal(was: FieldModel, now: FieldModel) -> bool:
    """buf `defaultsEqual`: text and bytes compare as bytes, numbers (bool, enum) numerically, float vs double at
    float precision; two zero defaults are never a change."""
    a, b = was.default, now.default
    if _is_zero(a) and _is_zero(b):
        return True
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return _as_bytes(a) == _as_bytes(b)
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    if {was.type.kind, now.type.kind} == {F.TYPE_FLOAT, F.TYPE_DOUBLE}:
        return bool(_float32(float(a)) == _float32(float(b)))
    return a == b


def _is_zero(value: object) -> bool:
    if isinstance(value, float):
        return value == 0 and not math.copysign(1.0, value) < 0
    return value in (0, "", b"", False)


def _as_bytes(value: object) -> bytes | None:
    if isinstance(value, str):
        return value.encode("utf-8")
    return value if isinstance(value, bytes) else None


def _float32(value: float) -> float:
    try:
        result: float = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return result
