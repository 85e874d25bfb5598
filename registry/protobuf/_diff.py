"""PROTOBUF_NATIVE beyond Pulsar's check: buf's breaking-change rules as advisories, a semantic diff, a text view.

Pulsar's ProtobufNativeSchemaCompatibilityCheck compares only the root message's full name (pulsar-semantics.md
§4.6), so a field number reused or an int64 turned into a string goes unnoticed (apache/pulsar#19385, users.md
#9). This module judges such changes with buf's WIRE and WIRE_JSON rule sets (bufbuild/buf,
`bufcheckserverhandle/breaking.go`; `buf config ls-breaking-rules`), restricted to the message graph reachable
from the root: the root, every message and enum reachable through fields, and their nested types. Types are
paired by full name; when the root (or the root file's package) was renamed, old names are translated to the
new ones first, so the old root is still compared with the new one. Advisories never change Pulsar's verdict.

Where this module deliberately differs from buf (each is tested against the real `buf` CLI):
* buf checks every type in the descriptor set by full name; here only the root's graph counts, and a renamed
  root is still paired with the old one;
* a map field renamed renames its generated entry message; buf then reports a WIRE type change, but the entries
  are identical on the wire, so only WIRE_JSON (the field name) is reported here;
* `json_name` is compared by its effective value (protoc always fills it; buf compares the raw option, so an
  unset json_name vs the same name written out is a buf-only difference).
Every finding keeps its buf rule ID in `Finding.rule`; FIELD_SAME_DEFAULT reports as PROTOBUF_FIELD_DEFAULT_CHANGED,
RESERVED_MESSAGE_NO_DELETE and RESERVED_ENUM_NO_DELETE as PROTOBUF_RESERVED_DELETED, and WIRE_JSON's
MESSAGE_SAME_JSON_FORMAT / ENUM_SAME_JSON_FORMAT as PROTOBUF_JSON_FORMAT_CHANGED.
Rules about files, services, extensions and language options (FILE_SAME_PACKAGE, RPC_*, FIELD_SAME_CPP_*, ...)
are out of scope: a package change already renames the root, which Pulsar itself refuses.

Pointers of semantic changes are `/messages/<full name>`, `/messages/<full name>/fields/<number>`,
`/enums/<full name>` and `/enums/<full name>/values/<number>` (descriptors have no JSON document to point into);
old pointers use old names, new pointers new names, "" when the side lacks the element.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, FileDescriptor

from .._cache_budget import PROTOBUF_MODEL_BYTES, PROTOBUF_MODEL_FACTOR, ByteLRU, cached
from .._model import Direction
from ..explain._changes import Advisory, AdvisoryCode, Change, ChangeKind, Effect, Severity
from ._native import ProtobufNativeSchema, is_synthetic_zero

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
class _Type:
    """A field's type: the scalar kind, and the referenced type's full name for messages, groups and enums."""

    kind: int
    name: str = ""

    def text(self, package: str = "") -> str:
        if not self.name:
            return SCALAR_NAMES[self.kind]
        return self.name[len(package) + 1 :] if package and self.name.startswith(package + ".") else self.name


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    number: int
    json_name: str
    json_name_is_default: bool
    type: _Type
    cardinality: str
    label: str  # as written in a .proto: "", "optional", "required" or "repeated"
    oneof: str  # "" outside a real oneof (proto3 `optional` makes a synthetic one: not counted, like buf)
    default: object  # effective default, None when the type has none (messages, repeated, maps)
    explicit_default: str | None
    map_key: _Type | None = None
    map_value: _Type | None = None

    def type_text(self, package: str = "") -> str:
        if self.map_key is not None and self.map_value is not None:
            return f"map<{self.map_key.text(package)}, {self.map_value.text(package)}>"
        return self.type.text(package)


@dataclass(frozen=True, slots=True)
class _Message:
    full_name: str
    name: str
    file: str
    fields: dict[int, _Field]
    oneofs: tuple[str, ...]
    reserved: tuple[tuple[int, int], ...]  # inclusive ranges
    reserved_names: tuple[str, ...]
    extension_ranges: tuple[tuple[int, int], ...]
    nested: tuple[str, ...]  # nested messages and enums, declaration order, map entries left out
    json_allowed: bool
    is_map_entry: bool


@dataclass(frozen=True, slots=True)
class _Enum:
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
class _File:
    name: str
    package: str
    syntax: str  # "proto2", "proto3" or "editions"
    edition: str
    imports: tuple[str, ...]
    types: tuple[str, ...]  # top-level messages and enums, declaration order


@dataclass(slots=True)
class _Model:
    root: str
    root_file: str
    files: dict[str, _File] = field(default_factory=dict)
    messages: dict[str, _Message] = field(default_factory=dict)
    enums: dict[str, _Enum] = field(default_factory=dict)
    reachable: list[str] = field(default_factory=list)  # root first, then breadth-first through fields
    source_bytes: int = 0  # the serialized descriptors it was read from (its cost in the model cache)

    def package_of(self, full_name: str) -> str:
        item = self.messages.get(full_name) or self.enums.get(full_name)
        return self.files[item.file].package if item else ""


# Models by root descriptor, bounded by bytes (registry/_cache_budget.py): parse_protobuf_native is cached, so
# one build per stored schema.
MODELS: ByteLRU[Descriptor, _Model] = ByteLRU(PROTOBUF_MODEL_BYTES)


def _model_of(root: Descriptor) -> _Model:
    return cached(MODELS, root, lambda: _build_model(root), lambda model: model.source_bytes * PROTOBUF_MODEL_FACTOR)


def _build_model(root: Descriptor) -> _Model:
    model = _Model(root=root.full_name, root_file=root.file.name)
    seen: set[str] = set()
    pending = [root.file]
    while pending:
        file = pending.pop()
        if file.name in seen:
            continue
        seen.add(file.name)
        model.source_bytes += len(file.serialized_pb)
        _read_file(model, file)
        pending.extend(file.dependencies)
    model.reachable = _reachable(model)
    return model


def _read_file(model: _Model, file: FileDescriptor) -> None:
    proto = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
    syntax = proto.syntax or "proto2"
    edition = descriptor_pb2.Edition.Name(proto.edition) if proto.HasField("edition") else ""
    file_json = _json_allowed_default(syntax, proto.options.features)
    prefix = proto.package + "." if proto.package else ""
    types: list[str] = []
    for message in proto.message_type:
        types.append(prefix + message.name)
        _read_message(model, file, message, prefix + message.name, file_json, syntax)
    for enum in proto.enum_type:
        types.append(prefix + enum.name)
        _read_enum(model, file, enum, prefix + enum.name, file_json)
    model.files[file.name] = _File(
        name=file.name,
        package=proto.package,
        syntax=syntax,
        edition=edition,
        imports=tuple(proto.dependency),
        types=tuple(types),
    )


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
    model: _Model,
    file: FileDescriptor,
    proto: descriptor_pb2.DescriptorProto,
    full_name: str,
    json: bool,
    syntax: str,
) -> None:
    descriptor = file.pool.FindMessageTypeByName(full_name)
    json = _json_allowed(json, proto.options.features)
    synthetic = {
        f.oneof_index for f in proto.field if f.proto3_optional and f.HasField("oneof_index")
    }  # proto3 `optional`
    oneofs = tuple(o.name for i, o in enumerate(proto.oneof_decl) if i not in synthetic)
    fields = {}
    for fd, fp in zip(descriptor.fields, proto.field, strict=True):
        fields[fd.number] = _read_field(fd, fp, synthetic, syntax)
    nested: list[str] = []
    for message in proto.nested_type:
        name = f"{full_name}.{message.name}"
        _read_message(model, file, message, name, json, syntax)
        if not message.options.map_entry:
            nested.append(name)
    for enum in proto.enum_type:
        nested.append(f"{full_name}.{enum.name}")
        _read_enum(model, file, enum, f"{full_name}.{enum.name}", json)
    model.messages[full_name] = _Message(
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


def _type_of(fd: FieldDescriptor) -> _Type:
    if fd.message_type is not None:
        return _Type(fd.type, fd.message_type.full_name)
    if fd.enum_type is not None:
        return _Type(fd.type, fd.enum_type.full_name)
    return _Type(fd.type)


def _read_field(
    fd: FieldDescriptor, fp: descriptor_pb2.FieldDescriptorProto, synthetic: set[int], syntax: str
) -> _Field:
    entry = fd.message_type if fd.message_type is not None and fd.message_type.GetOptions().map_entry else None
    if entry is not None and fd.is_repeated:
        cardinality = MAP
    elif fd.is_repeated:
        cardinality = REPEATED
    elif fd.is_required:
        cardinality = REQUIRED
    elif fd.has_presence:
        cardinality = OPTIONAL
    else:
        cardinality = SINGULAR
    oneof = fd.containing_oneof
    in_real_oneof = oneof is not None and fp.HasField("oneof_index") and fp.oneof_index not in synthetic
    # buf `canHaveDefault`: not a list, not a map, not a message.
    has_default = cardinality not in (REPEATED, MAP) and fd.message_type is None
    return _Field(
        name=fd.name,
        number=fd.number,
        json_name=fd.json_name,
        json_name_is_default=fd.json_name == _camel(fd.name),
        type=_type_of(fd),
        cardinality=cardinality,
        label=_label(cardinality, syntax, in_real_oneof, fp.proto3_optional),
        oneof=oneof.name if oneof is not None and in_real_oneof else "",
        default=fd.default_value if has_default else None,
        explicit_default=fp.default_value if fp.HasField("default_value") else None,
        map_key=_type_of(entry.fields_by_number[1]) if entry is not None else None,
        map_value=_type_of(entry.fields_by_number[2]) if entry is not None else None,
    )


def _label(cardinality: str, syntax: str, in_oneof: bool, proto3_optional: bool) -> str:
    if cardinality in (REPEATED, REQUIRED):
        return cardinality
    if cardinality == MAP or in_oneof or syntax == "editions":
        return ""
    return "optional" if syntax == "proto2" or proto3_optional else ""


def _read_enum(
    model: _Model, file: FileDescriptor, proto: descriptor_pb2.EnumDescriptorProto, full_name: str, json: bool
) -> None:
    descriptor: EnumDescriptor = file.pool.FindEnumTypeByName(full_name)
    model.enums[full_name] = _Enum(
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


def _reachable(model: _Model) -> list[str]:
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

    def __init__(self, old: _Model, new: _Model) -> None:
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
class _Context:
    old: _Model
    new: _Model
    names: _Names

    @classmethod
    def of(cls, old: ProtobufNativeSchema, new: ProtobufNativeSchema) -> _Context:
        before, after = _model_of(old.root), _model_of(new.root)
        return cls(before, after, _Names(before, after))


def _paired(ctx: _Context) -> Iterator[tuple[str, str]]:
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


# Advisories: buf's WIRE and WIRE_JSON rules ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # the buf rule ID, for tests and for the reader of the code
    code: AdvisoryCode
    rule_set: str  # WIRE when it breaks the wire (and so JSON too), WIRE_JSON when only JSON
    message: str
    path: str
    hint: str
    direction: Direction = Direction.NONE


def protobuf_advisories(
    old: ProtobufNativeSchema, new: ProtobufNativeSchema, *, version: int | None = None
) -> list[Advisory]:
    """What buf's WIRE / WIRE_JSON rules would flag between two schemas of a topic; Pulsar lets all of it through.

    Severity ERROR breaks the binary encoding Pulsar clients use (buf WIRE); WARNING breaks only the JSON
    mapping (buf WIRE_JSON adds it to WIRE).
    """
    return [
        Advisory(
            code=f.code,
            severity=SEVERITY[f.rule_set],
            message=f.message,
            path=f.path,
            version=version,
            direction=f.direction,
            hint=f.hint,
            source=f.rule_set,
        )
        for f in buf_findings(old, new)
    ]


def buf_findings(old: ProtobufNativeSchema, new: ProtobufNativeSchema) -> list[Finding]:
    """The findings behind `protobuf_advisories`, with the buf rule ID each one stands for."""
    ctx = _Context.of(old, new)
    findings: list[Finding] = []
    for old_name, new_name in _paired(ctx):
        if old_name in ctx.old.messages:
            findings += _message_findings(ctx.old.messages[old_name], ctx.new.messages[new_name], ctx)
        else:
            findings += _enum_findings(ctx.old.enums[old_name], ctx.new.enums[new_name])
    return findings


def _message_findings(old: _Message, new: _Message, ctx: _Context) -> Iterator[Finding]:
    for number, was in old.fields.items():
        now = new.fields.get(number)
        if now is None:
            yield from _deleted_field(old, new, was)
        else:
            yield from _field_findings(new, was, now, ctx)
    yield from _required_findings(old, new)
    yield from _reserved_findings(old, new)
    if old.json_allowed and not new.json_allowed:
        yield Finding(
            "MESSAGE_SAME_JSON_FORMAT",
            AdvisoryCode.PROTOBUF_JSON_FORMAT_CHANGED,
            WIRE_JSON,
            f"message {new.full_name} no longer supports JSON fully (json_format ALLOW → LEGACY_BEST_EFFORT, e.g. "
            "proto3 → proto2)",
            new.full_name,
            "keep the syntax (or the json_format feature) of the message's file",
        )


def _deleted_field(old: _Message, new: _Message, was: _Field) -> Iterator[Finding]:
    path = f"{old.full_name}.{was.name}"
    number_reserved = _in_ranges(was.number, new.reserved)
    name_reserved = was.name in new.reserved_names
    if not number_reserved:
        # FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED (WIRE); under WIRE_JSON the name must be reserved as well.
        also = "" if name_reserved else f' and `reserved "{was.name}";`'
        yield Finding(
            "FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED",
            AdvisoryCode.PROTOBUF_FIELD_DELETED,
            WIRE,
            f"field `{was.name}` (#{was.number}, {was.type_text()}) was deleted from {old.full_name} without "
            f"reserving its number: a later field may reuse #{was.number} and misread data already written",
            path,
            f"add `reserved {was.number};`{also} to {new.name}, or restore the field",
        )
    elif not name_reserved:
        yield Finding(
            "FIELD_NO_DELETE_UNLESS_NAME_RESERVED",
            AdvisoryCode.PROTOBUF_FIELD_DELETED,
            WIRE_JSON,
            f"field `{was.name}` (#{was.number}) was deleted from {old.full_name} with its number reserved but not "
            f"its name: a later field named `{was.name}` would take over its JSON key",
            path,
            f'add `reserved "{was.name}";` to {new.name}',
        )


def _field_findings(message: _Message, was: _Field, now: _Field, ctx: _Context) -> Iterator[Finding]:
    path = f"{message.full_name}.{now.name}"
    label = f"field `{now.name}` (#{now.number})" if was.name == now.name else f"field #{now.number}"
    type_rule = _type_break(was, now, ctx)
    cardinality_wire = CARDINALITY_WIRE_GROUP[was.cardinality] != CARDINALITY_WIRE_GROUP[now.cardinality]
    renamed = was.name != now.name
    if renamed and (type_rule[0] == WIRE or cardinality_wire):
        yield Finding(
            "FIELD_WIRE_COMPATIBLE_TYPE" if type_rule[0] == WIRE else "FIELD_WIRE_COMPATIBLE_CARDINALITY",
            AdvisoryCode.PROTOBUF_FIELD_NUMBER_REUSED,
            WIRE,
            f"field number #{now.number} of {message.full_name} was reused: `{was.name}` "
            f"({_card_text(was)}{was.type_text()}) became `{now.name}` ({_card_text(now)}{now.type_text()}); data "
            f"written for `{was.name}` would be misread as `{now.name}`",
            path,
            f"restore `{was.name}` at #{now.number} (or reserve {now.number}) and give `{now.name}` a new number",
        )
    else:
        if type_rule[0]:
            rule_set, rule = type_rule
            why = "not wire-compatible" if rule_set == WIRE else "wire-compatible, but JSON encodes them differently"
            yield Finding(
                rule,
                AdvisoryCode.PROTOBUF_FIELD_TYPE_CHANGED,
                rule_set,
                f"{label} of {message.full_name} changed from {was.type_text()} to {now.type_text()}: {why}",
                path,
                f"keep {was.type_text()} at #{now.number}; add a field with a new number for the "
                f"{now.type_text()} value and reserve {now.number} when you retire the old one",
            )
        json_cardinality = CARDINALITY_WIRE_JSON_GROUP[was.cardinality] != CARDINALITY_WIRE_JSON_GROUP[now.cardinality]
        if cardinality_wire or json_cardinality:
            yield Finding(
                "FIELD_WIRE_COMPATIBLE_CARDINALITY" if cardinality_wire else "FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY",
                AdvisoryCode.PROTOBUF_FIELD_CARDINALITY_CHANGED,
                WIRE if cardinality_wire else WIRE_JSON,
                f"{label} of {message.full_name} changed from {was.cardinality} to {now.cardinality}"
                + ("" if cardinality_wire else ": same wire encoding, different JSON shape"),
                path,
                f"keep `{was.name}` {was.cardinality}; add a new field for the {now.cardinality} form",
            )
        if renamed or was.json_name != now.json_name:
            what = f"name `{was.name}` → `{now.name}`" if renamed else ""
            if was.json_name != now.json_name:
                what += (", " if what else "") + f'JSON name "{was.json_name}" → "{now.json_name}"'
            yield Finding(
                "FIELD_SAME_NAME" if renamed else "FIELD_SAME_JSON_NAME",
                AdvisoryCode.PROTOBUF_JSON_NAME_CHANGED,
                WIRE_JSON,
                f"field #{now.number} of {message.full_name} changed {what}: the binary encoding is unchanged, but "
                "JSON readers match fields by name",
                path,
                f"restore the name `{was.name}`" + ("" if was.json_name == now.json_name else " and its json_name"),
            )
    if was.oneof != now.oneof:
        yield Finding(
            "FIELD_SAME_ONEOF",
            AdvisoryCode.PROTOBUF_FIELD_ONEOF_CHANGED,
            WIRE,
            f"{label} of {message.full_name} moved {_oneof_text(was.oneof)} → {_oneof_text(now.oneof)}: "
            "readers may drop it or clear the other members of the oneof",
            path,
            f"keep `{now.name}` {_oneof_text(was.oneof)}; add a new field instead",
        )
    if was.default is not None and now.default is not None and not _defaults_equal(was, now):
        yield Finding(
            "FIELD_SAME_DEFAULT",
            AdvisoryCode.PROTOBUF_FIELD_DEFAULT_CHANGED,
            WIRE,
            f"{label} of {message.full_name} changed its default from {_default_text(was)} to "
            f"{_default_text(now)}: readers of data without the field now see different values",
            path,
            f"restore the default {_default_text(was)}" if was.explicit_default is not None else "remove the default",
        )


def _type_break(was: _Field, now: _Field, ctx: _Context) -> tuple[str, str]:
    """(rule set, buf rule) of a field's type change, ("", "") when compatible under WIRE_JSON too."""
    if was.map_key is not None and now.map_key is not None and was.map_value is not None and now.map_value:
        # Map entries are compared structurally: buf also compares the generated entry's name (module docstring).
        key, value = _kind_break(was.map_key, now.map_key, ctx), _kind_break(was.map_value, now.map_value, ctx)
        return max(key, value, key=lambda found: _RANK[found[0]])
    return _kind_break(was.type, now.type, ctx)


_RANK = {"": 0, WIRE_JSON: 1, WIRE: 2}


def _kind_break(was: _Type, now: _Type, ctx: _Context) -> tuple[str, str]:
    if WIRE_GROUP[was.kind] != WIRE_GROUP[now.kind] and (was.kind, now.kind) not in WIRE_ALLOWED_CROSS_GROUP:
        return (WIRE, "FIELD_WIRE_COMPATIBLE_TYPE")
    if was.name and ctx.names(was.name) != now.name and not _same_enum(was, now, ctx):
        return (WIRE, "FIELD_WIRE_COMPATIBLE_TYPE")
    if WIRE_JSON_GROUP[was.kind] != WIRE_JSON_GROUP[now.kind]:
        return (WIRE_JSON, "FIELD_WIRE_JSON_COMPATIBLE_TYPE")
    return ("", "")


def _same_enum(was: _Type, now: _Type, ctx: _Context) -> bool:
    """buf `checkEnumWireCompatibleForField`: another enum is fine if its short name is the same and every old
    value (name and number) is still in it."""
    old, new = ctx.old.enums.get(was.name), ctx.new.enums.get(now.name)
    if now.kind != F.TYPE_ENUM or old is None or new is None or old.name != new.name:
        return False
    return set(old.values) <= set(new.values)


def _required_findings(old: _Message, new: _Message) -> Iterator[Finding]:
    old_required = {n: f for n, f in old.fields.items() if f.cardinality == REQUIRED}
    new_required = {n: f for n, f in new.fields.items() if f.cardinality == REQUIRED}
    for number, was in old_required.items():
        if number not in new_required:
            yield Finding(
                "MESSAGE_SAME_REQUIRED_FIELDS",
                AdvisoryCode.PROTOBUF_REQUIRED_FIELDS_CHANGED,
                WIRE,
                f"required field `{was.name}` (#{number}) of {old.full_name} is no longer required: readers with the "
                "old schema reject messages written without it",
                f"{old.full_name}.{was.name}",
                f"keep `{was.name}` required until every reader has the new schema (required fields can never be "
                "removed safely)",
                Direction.FORWARD,
            )
    for number, now in new_required.items():
        if number not in old_required:
            yield Finding(
                "MESSAGE_SAME_REQUIRED_FIELDS",
                AdvisoryCode.PROTOBUF_REQUIRED_FIELDS_CHANGED,
                WIRE,
                f"field `{now.name}` (#{number}) of {new.full_name} is now required: the new schema rejects data "
                "written without it",
                f"{new.full_name}.{now.name}",
                f"make `{now.name}` optional (proto3 has no required fields for this reason)",
                Direction.BACKWARD,
            )


def _reserved_findings(old: _Message, new: _Message) -> Iterator[Finding]:
    # RESERVED_MESSAGE_NO_DELETE is in WIRE: a dropped reservation lets a deleted field's number come back.
    for start, end in _missing(old.reserved, new.reserved):
        users = [f for n, f in new.fields.items() if start <= n <= end]
        span = _span_text(start, end, MAX_FIELD_NUMBER)
        if users:
            used = ", ".join(f"`{f.name}` (#{f.number})" for f in users)
            message = f"reserved number {span} of {old.full_name} was un-reserved and reused by {used}"
        else:
            message = f"reserved number {span} of {old.full_name} is no longer reserved"
        yield Finding(
            "RESERVED_MESSAGE_NO_DELETE",
            AdvisoryCode.PROTOBUF_RESERVED_DELETED,
            WIRE,
            message + ": data written by a deleted field may be read as a new one",
            old.full_name,
            f"keep `reserved {span};` in {new.name}" + (" and give the new fields fresh numbers" if users else ""),
        )
    for name in old.reserved_names:
        if name not in new.reserved_names:
            yield Finding(
                "RESERVED_MESSAGE_NO_DELETE",
                AdvisoryCode.PROTOBUF_RESERVED_DELETED,
                WIRE,
                f'reserved name "{name}" of {old.full_name} is no longer reserved: a new field may take a deleted '
                "field's name (and JSON key)",
                old.full_name,
                f'keep `reserved "{name}";` in {new.name}',
            )


def _enum_findings(old: _Enum, new: _Enum) -> Iterator[Finding]:
    old_values, new_values = old.names_by_number(), new.names_by_number()
    for number, was in old_values.items():
        now = new_values.get(number)
        path = f"{old.full_name}.{was[0]}"
        if now is None:
            if not _in_ranges(number, new.reserved):
                yield Finding(
                    "ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED",
                    AdvisoryCode.PROTOBUF_ENUM_VALUE_DELETED,
                    WIRE,
                    f"enum value {'/'.join(was)} = {number} was deleted from {old.full_name} without reserving its "
                    "number: readers with the new schema see an unknown value in old data, and the number may be "
                    "reused",
                    path,
                    f"add `reserved {number};` to enum {new.name}, or restore the value",
                    Direction.BACKWARD,
                )
            elif not all(n in new.reserved_names for n in was):
                yield Finding(
                    "ENUM_VALUE_NO_DELETE_UNLESS_NAME_RESERVED",
                    AdvisoryCode.PROTOBUF_ENUM_VALUE_DELETED,
                    WIRE_JSON,
                    f"enum value {'/'.join(was)} = {number} was deleted from {old.full_name} with its number reserved "
                    "but not its name: JSON uses value names",
                    path,
                    f"add `reserved {_quoted(was)};` to enum {new.name}",
                    Direction.BACKWARD,
                )
        elif not set(now) <= set(was):
            yield Finding(
                "ENUM_VALUE_SAME_NAME",
                AdvisoryCode.PROTOBUF_ENUM_VALUE_NAME_CHANGED,
                WIRE_JSON,
                f"enum value {number} of {old.full_name} changed name {'/'.join(was)} → {'/'.join(now)}: the binary "
                "encoding is unchanged, but JSON encodes enum values by name",
                f"{old.full_name}.{now[0]}",
                f"restore the name {was[0]} (use `option allow_alias = true;` to keep both names)",
            )
    for start, end in _missing(old.reserved, new.reserved):
        span = _span_text(start, end, MAX_ENUM_NUMBER)
        yield Finding(
            "RESERVED_ENUM_NO_DELETE",
            AdvisoryCode.PROTOBUF_RESERVED_DELETED,
            WIRE,
            f"reserved number {span} of enum {old.full_name} is no longer reserved: a deleted value's number may be "
            "reused",
            old.full_name,
            f"keep `reserved {span};` in enum {new.name}",
        )
    for name in old.reserved_names:
        if name not in new.reserved_names:
            yield Finding(
                "RESERVED_ENUM_NO_DELETE",
                AdvisoryCode.PROTOBUF_RESERVED_DELETED,
                WIRE,
                f'reserved name "{name}" of enum {old.full_name} is no longer reserved: a deleted value\'s name may be '
                "reused",
                old.full_name,
                f'keep `reserved "{name}";` in enum {new.name}',
            )
    if old.json_allowed and not new.json_allowed:
        yield Finding(
            "ENUM_SAME_JSON_FORMAT",
            AdvisoryCode.PROTOBUF_JSON_FORMAT_CHANGED,
            WIRE_JSON,
            f"enum {new.full_name} no longer supports JSON fully (json_format ALLOW → LEGACY_BEST_EFFORT)",
            new.full_name,
            "keep the syntax (or the json_format feature) of the enum's file",
        )


# Semantic diff --------------------------------------------------------------------------------------------------


def diff_protobuf(old: ProtobufNativeSchema, new: ProtobufNativeSchema) -> list[Change]:
    """What changed in the root's message graph, each change marked for BACKWARD (new reads old data) and FORWARD
    (old reads new data) reading on the wire. Pointers: see the module docstring."""
    ctx = _Context.of(old, new)
    changes: list[Change] = []
    if ctx.old.root != ctx.new.root:
        changes.append(
            Change(
                kind=ChangeKind.ROOT_MESSAGE_CHANGED,
                path=ctx.new.root,
                message=f"root message {ctx.old.root} → {ctx.new.root}: Pulsar refuses a root message change under "
                "every strategy except ALWAYS_COMPATIBLE",
                backward=Effect.BREAKS,
                forward=Effect.BREAKS,
                before=ctx.old.root,
                after=ctx.new.root,
                old_pointer=_message_pointer(ctx.old.root),
                new_pointer=_message_pointer(ctx.new.root),
            )
        )
    old_file, new_file = ctx.old.files[ctx.old.root_file], ctx.new.files[ctx.new.root_file]
    if (old_file.syntax, old_file.edition) != (new_file.syntax, new_file.edition):
        changes.append(
            Change(
                kind=ChangeKind.PROPERTY_CHANGED,
                path=new_file.name,
                message=f"syntax of {new_file.name} {_syntax_text(old_file)} → {_syntax_text(new_file)}: field "
                "presence and JSON support may change with it",
                before=_syntax_text(old_file),
                after=_syntax_text(new_file),
            )
        )
    pairs = list(_paired(ctx))
    paired_old = {a for a, _ in pairs}
    paired_new = {b for _, b in pairs}
    for name in ctx.old.reachable:
        if name not in paired_old:
            changes.append(_type_removed(ctx.old, name))
    for old_name, new_name in pairs:
        if old_name in ctx.old.messages:
            changes += _message_changes(ctx.old.messages[old_name], ctx.new.messages[new_name], ctx)
        else:
            changes += _enum_changes(ctx.old.enums[old_name], ctx.new.enums[new_name])
    for name in ctx.new.reachable:
        if name not in paired_new:
            changes.append(_type_added(ctx.new, name))
    return changes


def _syntax_text(file: _File) -> str:
    return f"edition {file.edition}" if file.syntax == "editions" else file.syntax


def _message_pointer(name: str, number: int | None = None) -> str:
    return f"/messages/{name}" + ("" if number is None else f"/fields/{number}")


def _enum_pointer(name: str, number: int | None = None) -> str:
    return f"/enums/{name}" + ("" if number is None else f"/values/{number}")


def _type_removed(model: _Model, name: str) -> Change:
    is_message = name in model.messages
    return Change(
        kind=ChangeKind.MESSAGE_REMOVED if is_message else ChangeKind.ENUM_REMOVED,
        path=name,
        message=f"{'message' if is_message else 'enum'} {name} was removed",
        before=name,
        old_pointer=_message_pointer(name) if is_message else _enum_pointer(name),
    )


def _type_added(model: _Model, name: str) -> Change:
    is_message = name in model.messages
    return Change(
        kind=ChangeKind.MESSAGE_ADDED if is_message else ChangeKind.ENUM_ADDED,
        path=name,
        message=f"{'message' if is_message else 'enum'} {name} was added",
        after=name,
        new_pointer=_message_pointer(name) if is_message else _enum_pointer(name),
    )


def _message_changes(old: _Message, new: _Message, ctx: _Context) -> Iterator[Change]:
    old_only = {n: f for n, f in old.fields.items() if n not in new.fields}
    new_only = {n: f for n, f in new.fields.items() if n not in old.fields}
    new_only_by_name = {f.name: f for f in new_only.values()}
    moved: set[str] = set()
    for number, was in old_only.items():
        now = new_only_by_name.get(was.name)
        if now is not None:
            moved.add(was.name)
            yield _field_change(
                ChangeKind.FIELD_NUMBER_CHANGED,
                old,
                new,
                was,
                now,
                f"field `{was.name}` of {new.full_name} moved from #{number} to #{now.number}: on the wire the "
                "number is the field, so each side loses the other's value",
                Effect.BREAKS,
                Effect.BREAKS,
                str(number),
                str(now.number),
            )
    for number, was in old_only.items():
        if was.name in moved:
            continue
        kept = "reserved" if _in_ranges(number, new.reserved) else "not reserved: a later field may reuse it"
        required = was.cardinality == REQUIRED
        yield _field_change(
            ChangeKind.FIELD_REMOVED,
            old,
            new,
            was,
            None,
            f"field `{was.name}` (#{number}, {_card_text(was)}{was.type_text()}) was removed from {old.full_name} "
            f"(number {kept})" + ("; old readers require it" if required else "; old readers see its default"),
            Effect.OK,
            Effect.BREAKS if required else Effect.OK,
            f"{_card_text(was)}{was.type_text()} {was.name} = {number}",
            None,
        )
    for number, now in new_only.items():
        if now.name in moved:
            continue
        required = now.cardinality == REQUIRED
        was_reserved = _in_ranges(number, old.reserved)
        yield _field_change(
            ChangeKind.FIELD_ADDED,
            old,
            new,
            None,
            now,
            f"field `{now.name}` (#{number}, {_card_text(now)}{now.type_text()}) was added to {new.full_name}"
            + ("; it is required, so old data (without it) fails to parse" if required else "")
            + (
                "; its number was reserved, so data from older versions may carry a deleted field there"
                if was_reserved
                else ""
            ),
            Effect.BREAKS if required else Effect.RISK if was_reserved else Effect.OK,
            Effect.OK,
            None,
            f"{_card_text(now)}{now.type_text()} {now.name} = {number}",
        )
    for number, was in old.fields.items():
        now = new.fields.get(number)
        if now is not None:
            yield from _common_field_changes(old, new, was, now, ctx)
    before, after = _reserved_text(old.reserved, old.reserved_names), _reserved_text(new.reserved, new.reserved_names)
    if before != after:
        yield Change(
            kind=ChangeKind.RESERVED_CHANGED,
            path=new.full_name,
            message=f"reserved numbers/names of {new.full_name} changed: {before or 'none'} → {after or 'none'}",
            before=before,
            after=after,
            old_pointer=_message_pointer(old.full_name),
            new_pointer=_message_pointer(new.full_name),
        )


def _field_change(
    kind: ChangeKind,
    old: _Message,
    new: _Message,
    was: _Field | None,
    now: _Field | None,
    message: str,
    backward: Effect,
    forward: Effect,
    before: str | None,
    after: str | None,
) -> Change:
    named = now or was
    assert named is not None
    return Change(
        kind=kind,
        path=f"{(new if now else old).full_name}.{named.name}",
        message=message,
        backward=backward,
        forward=forward,
        before=before,
        after=after,
        old_pointer=_message_pointer(old.full_name, was.number) if was else "",
        new_pointer=_message_pointer(new.full_name, now.number) if now else "",
    )


def _common_field_changes(old: _Message, new: _Message, was: _Field, now: _Field, ctx: _Context) -> Iterator[Change]:
    wire_rule, _ = _type_break(was, now, ctx)
    old_type = _type_text_in(was, ctx)
    cardinality_wire = CARDINALITY_WIRE_GROUP[was.cardinality] != CARDINALITY_WIRE_GROUP[now.cardinality]
    reused = was.name != now.name and (wire_rule == WIRE or cardinality_wire)
    label = f"field `{now.name}` (#{now.number})"
    if was.name != now.name:
        yield _field_change(
            ChangeKind.FIELD_RENAMED,
            old,
            new,
            was,
            now,
            (
                f"field #{now.number} of {new.full_name} now belongs to a different field: `{was.name}` "
                f"({was.type_text()}) → `{now.name}` ({now.type_text()}); the number was reused"
                if reused
                else f"field #{now.number} of {new.full_name} was renamed `{was.name}` → `{now.name}`: same on the "
                "wire, but JSON uses the new name"
            ),
            Effect.BREAKS if reused else Effect.OK,
            Effect.BREAKS if reused else Effect.OK,
            was.name,
            now.name,
        )
    if old_type != now.type_text():
        if wire_rule == WIRE:
            kind, backward, forward, why = ChangeKind.TYPE_CHANGED, Effect.BREAKS, Effect.BREAKS, "not wire-compatible"
        elif (was.type.kind, now.type.kind) in WIDENINGS:
            kind, backward, forward = ChangeKind.TYPE_PROMOTED, Effect.OK, Effect.RISK
            why = "the new schema reads every old value; old readers may misread new ones (truncated, or not UTF-8)"
        elif was.type.kind == now.type.kind == F.TYPE_ENUM:
            kind, backward, forward = ChangeKind.TYPE_CHANGED, Effect.OK, Effect.RISK
            why = "the new enum keeps every old value; old readers may meet values they lack"
        else:
            kind, backward, forward = ChangeKind.TYPE_CHANGED, Effect.RISK, Effect.RISK
            why = "same wire encoding, but values may be reinterpreted (sign, width or bytes vs text)"
        yield _field_change(
            kind,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed type {old_type} → {now.type_text()}: {why}",
            backward,
            forward,
            old_type,
            now.type_text(),
        )
    if was.cardinality != now.cardinality:
        backward = forward = Effect.BREAKS if cardinality_wire else Effect.OK
        if {was.cardinality, now.cardinality} <= {SINGULAR, OPTIONAL, REQUIRED}:
            backward = Effect.BREAKS if now.cardinality == REQUIRED else Effect.OK
            forward = Effect.BREAKS if was.cardinality == REQUIRED else Effect.OK
        yield _field_change(
            ChangeKind.FIELD_LABEL_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed from {was.cardinality} to {now.cardinality}"
            + (": a different wire encoding" if cardinality_wire and backward == forward else ""),
            backward,
            forward,
            was.cardinality,
            now.cardinality,
        )
    if was.oneof != now.oneof:
        yield _field_change(
            ChangeKind.FIELD_ONEOF_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} moved {_oneof_text(was.oneof)} → {_oneof_text(now.oneof)}: a reader "
            "keeps only one member of a oneof, so values may be dropped",
            Effect.RISK,
            Effect.RISK,
            was.oneof or None,
            now.oneof or None,
        )
    if was.default is not None and now.default is not None and not _defaults_equal(was, now):
        yield _field_change(
            ChangeKind.DEFAULT_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed default {_default_text(was)} → {_default_text(now)}: data "
            "without the field reads differently on each side",
            Effect.RISK,
            Effect.RISK,
            _default_text(was),
            _default_text(now),
        )
    if was.json_name != now.json_name and was.name == now.name:
        yield _field_change(
            ChangeKind.PROPERTY_CHANGED,
            old,
            new,
            was,
            now,
            f'{label} of {new.full_name} changed json_name "{was.json_name}" → "{now.json_name}": same on the wire, '
            "JSON uses the new key",
            Effect.OK,
            Effect.OK,
            was.json_name,
            now.json_name,
        )


def _type_text_in(was: _Field, ctx: _Context) -> str:
    """The old field's type text with old names translated, so a renamed root is not a type change by itself."""
    translate = ctx.names
    if was.map_key is not None and was.map_value is not None:
        key, value = was.map_key, was.map_value
        return f"map<{key.text() if not key.name else translate(key.name)}, " + (
            f"{value.text() if not value.name else translate(value.name)}>"
        )
    return was.type.text() if not was.type.name else translate(was.type.name)


def _enum_changes(old: _Enum, new: _Enum) -> Iterator[Change]:
    old_numbers, new_numbers = old.names_by_number(), new.names_by_number()
    old_number_of, new_number_of = dict(old.values), dict(new.values)
    moved = {n for n, number in old_number_of.items() if n in new_number_of and new_number_of[n] != number}

    def change(
        kind: ChangeKind,
        name: str,
        message: str,
        backward: Effect,
        forward: Effect,
        before: str | None = None,
        after: str | None = None,
    ) -> Change:
        was_number, now_number = old_number_of.get(name), new_number_of.get(name)
        return Change(
            kind=kind,
            path=f"{new.full_name}.{name}",
            message=message,
            backward=backward,
            forward=forward,
            before=before,
            after=after,
            old_pointer=_enum_pointer(old.full_name, was_number) if was_number is not None else "",
            new_pointer=_enum_pointer(new.full_name, now_number) if now_number is not None else "",
        )

    for name in sorted(moved, key=old_number_of.__getitem__):
        yield change(
            ChangeKind.ENUM_VALUE_NUMBER_CHANGED,
            name,
            f"enum value {name} of {new.full_name} changed number {old_number_of[name]} → {new_number_of[name]}: "
            "each side decodes the other's number as a different (or unknown) value",
            Effect.BREAKS,
            Effect.BREAKS,
            before=str(old_number_of[name]),
            after=str(new_number_of[name]),
        )
    for number, names in old_numbers.items():
        kept = [n for n in names if n not in moved]
        if number not in new_numbers:
            for name in kept:
                yield change(
                    ChangeKind.ENUM_VALUE_REMOVED,
                    name,
                    f"enum value {name} = {number} was removed from {old.full_name}: the new schema reads it in old "
                    "data as an unknown value",
                    Effect.RISK,
                    Effect.OK,
                    before=f"{name} = {number}",
                )
            continue
        now = [n for n in new_numbers[number] if n not in moved]
        if kept and now and set(kept) != set(now):
            yield change(
                ChangeKind.ENUM_VALUE_RENAMED,
                now[0],
                f"enum value {number} of {new.full_name} was renamed {'/'.join(kept)} → {'/'.join(now)}: same on "
                "the wire, but JSON uses names",
                Effect.OK,
                Effect.OK,
                before="/".join(kept),
                after="/".join(now),
            )
    for number, names in new_numbers.items():
        if number in old_numbers:
            continue
        for name in names:
            if name not in moved:
                yield change(
                    ChangeKind.ENUM_VALUE_ADDED,
                    name,
                    f"enum value {name} = {number} was added to {new.full_name}: old readers see an unknown value",
                    Effect.OK,
                    Effect.RISK,
                    after=f"{name} = {number}",
                )
    before = _reserved_text(old.reserved, old.reserved_names, MAX_ENUM_NUMBER)
    after = _reserved_text(new.reserved, new.reserved_names, MAX_ENUM_NUMBER)
    if before != after:
        yield Change(
            kind=ChangeKind.RESERVED_CHANGED,
            path=new.full_name,
            message=f"reserved numbers/names of enum {new.full_name} changed: {before or 'none'} → {after or 'none'}",
            before=before,
            after=after,
            old_pointer=_enum_pointer(old.full_name),
            new_pointer=_enum_pointer(new.full_name),
        )


def _reserved_text(ranges: Sequence[tuple[int, int]], names: Sequence[str], maximum: int = MAX_FIELD_NUMBER) -> str:
    return " ".join(_reserved_lines(ranges, names, maximum))


def _reserved_lines(ranges: Sequence[tuple[int, int]], names: Sequence[str], maximum: int) -> list[str]:
    lines = []
    if ranges:
        lines.append("reserved " + ", ".join(_span_text(a, b, maximum) for a, b in sorted(ranges)) + ";")
    if names:
        lines.append("reserved " + ", ".join(f'"{n}"' for n in sorted(names)) + ";")
    return lines


# Normalised text ------------------------------------------------------------------------------------------------


def proto_text(schema: ProtobufNativeSchema) -> str:
    """A `.proto`-like rendering of the root file and the types reachable from the root, for a side-by-side diff.

    Normalised so that only meaningful edits show: the root's top-level message first, then the other top-level
    types by name, then other files by name; fields in declaration order, as the schema reads (oneof members
    grouped at their first member); enum values in declaration order (the first is the proto2 default);
    json_name only where it is not protoc's.
    """
    model = _model_of(schema.root)
    shown = {_top_level(model, name) for name in model.reachable}
    root_top = _top_level(model, model.root)
    lines: list[str] = []
    files = [model.root_file, *sorted(f for f in model.files if f != model.root_file)]
    for file_name in files:
        file = model.files[file_name]
        types = [t for t in file.types if t in shown]
        if file_name == model.root_file:
            types.sort(key=lambda t: (t != root_top, t))
            lines.append(f'edition = "{file.edition}";' if file.syntax == "editions" else f'syntax = "{file.syntax}";')
            if file.package:
                lines.append(f"package {file.package};")
            if file.imports:
                lines.append("")
                lines += [f'import "{name}";' for name in file.imports]
            lines += ["", f"// root message: {model.root}"]
        elif types:
            types.sort()
            lines += ["", f"// ---- {file.name}" + (f" (package {file.package})" if file.package else "") + " ----"]
        else:
            continue
        for name in types:
            lines.append("")
            lines += _render_type(model, name, file, "")
    return "\n".join(lines) + "\n"


def _top_level(model: _Model, name: str) -> str:
    item = model.messages.get(name) or model.enums.get(name)
    assert item is not None
    package = model.files[item.file].package
    local = name[len(package) + 1 :] if package else name
    return (package + "." if package else "") + local.split(".")[0]


def _render_type(model: _Model, name: str, file: _File, indent: str) -> list[str]:
    if name in model.enums:
        return _render_enum(model.enums[name], indent)
    message = model.messages[name]
    inner = indent + "  "
    body: list[str] = []
    done_oneofs: set[str] = set()
    for f in message.fields.values():
        if not f.oneof:
            body.append(inner + _render_field(f, file, model))
        elif f.oneof not in done_oneofs:
            done_oneofs.add(f.oneof)
            body.append(f"{inner}oneof {f.oneof} {{")
            body += [
                inner + "  " + _render_field(m, file, model) for m in message.fields.values() if m.oneof == f.oneof
            ]
            body.append(inner + "}")
    body += [inner + line for line in _reserved_lines(message.reserved, message.reserved_names, MAX_FIELD_NUMBER)]
    if message.extension_ranges:
        spans = ", ".join(_span_text(a, b, MAX_FIELD_NUMBER) for a, b in message.extension_ranges)
        body.append(f"{inner}extensions {spans};")
    for nested in sorted(message.nested):
        body.append("")
        body += _render_type(model, nested, file, inner)
    return [f"{indent}message {message.name} {{", *body, f"{indent}}}"]


def _render_field(f: _Field, file: _File, model: _Model) -> str:
    in_features = file.syntax == "editions" and f.label == REQUIRED  # editions spell `required` as a feature
    label = f.label + " " if f.label and not in_features else ""
    options: list[str] = []
    if file.syntax == "editions" and f.cardinality in (SINGULAR, REQUIRED):
        presence = "IMPLICIT" if f.cardinality == SINGULAR else "LEGACY_REQUIRED"
        options.append(f"features.field_presence = {presence}")
    if f.explicit_default is not None:
        shown = f'"{f.explicit_default}"' if f.type.kind in (F.TYPE_STRING, F.TYPE_BYTES) else f.explicit_default
        options.append(f"default = {shown}")
    if not f.json_name_is_default:
        options.append(f'json_name = "{f.json_name}"')
    suffix = f" [{', '.join(options)}]" if options else ""
    return f"{label}{f.type_text(file.package)} {f.name} = {f.number}{suffix};"


def _render_enum(enum: _Enum, indent: str) -> list[str]:
    inner = indent + "  "
    body: list[str] = []
    if len({number for _, number in enum.values}) < len(enum.values):
        body.append(f"{inner}option allow_alias = true;")
    body += [f"{inner}{name} = {number};" for name, number in enum.values]
    body += [inner + line for line in _reserved_lines(enum.reserved, enum.reserved_names, MAX_ENUM_NUMBER)]
    return [f"{indent}enum {enum.name} {{", *body, f"{indent}}}"]


# Small helpers ------------------------------------------------------------------------------------------------


def _in_ranges(number: int, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(start <= number <= end for start, end in ranges)


def _missing(old: Sequence[tuple[int, int]], new: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
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


def _span_text(start: int, end: int, maximum: int) -> str:
    if start == end:
        return str(start)
    return f"{start} to {'max' if end >= maximum else end}"


def _card_text(f: _Field) -> str:
    return f.label + " " if f.label else ""


def _oneof_text(name: str) -> str:
    return f"in oneof `{name}`" if name else "outside any oneof"


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _default_text(f: _Field) -> str:
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


def _defaults_equal(was: _Field, now: _Field) -> bool:
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
