"""upb's copy of a PROTOBUF_NATIVE file: the descriptor the `protobuf` package can build, with what only upb
objects to taken out (defaults it cannot read, oneof and enum value names C++ would clash on, numbers above
upb's limit, features outside editions, ...), so that the schema Java takes gets a built descriptor.

The model (`_descriptor.py`) reads every declared fact from the original and only the resolution of type names
from this copy; what protobuf-java itself refuses is decided before, in `_java.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2

from ._java import MAP_KEYS, SYNTHETIC_ZERO, UPB_MAX_NUMBER, F, java_default
from ._upb_names import to_copy, to_original


@dataclass(frozen=True, slots=True)
class UpbCopy:
    """The copy upb builds, and what the model must read from the original instead: fields whose presence the
    copy changed (full name -> the original's presence)."""

    proto: descriptor_pb2.FileDescriptorProto
    presence: Mapping[str, bool]


def _references_for_upb(copy: descriptor_pb2.FileDescriptorProto, renames: Mapping[str, str]) -> None:
    """Type names, extendees and method types in a renamed package, spelled as upb's copy spells them."""

    def spelled(name: str) -> str:
        return "." + to_copy(renames, name[1:]) if name.startswith(".") else to_copy(renames, name)

    fields = list(copy.extension)
    pending: list[descriptor_pb2.DescriptorProto] = list(copy.message_type)
    while pending:
        message = pending.pop()
        fields += [*message.field, *message.extension]
        pending.extend(message.nested_type)
    for field in fields:
        if field.type_name:
            field.type_name = spelled(field.type_name)
        if field.extendee:
            field.extendee = spelled(field.extendee)
    for service in copy.service:
        for method in service.method:
            method.input_type = spelled(method.input_type)
            method.output_type = spelled(method.output_type)


@dataclass(frozen=True, slots=True)
class Adjustments:
    """What upb refused in an earlier attempt at a copy, by field (full names as declared): defaults it cannot
    read (Java's reading is `java_default`'s), and implicit-presence fields of an enum that does not start at 0
    (upb wants such a field's default to be 0; the copy gives the field presence, the model keeps its own)."""

    no_default: frozenset[str] = frozenset()
    explicit: frozenset[str] = frozenset()

    def after(self, error: str, renames: Mapping[str, str]) -> Adjustments | None:
        """The adjustments that answer upb's `error`, or None when it is not one of those (a refusal)."""
        for pattern, kind in _RETRIED:
            match = pattern.search(error)
            if match:
                field = to_original(renames, match[1])
                if kind == "default" and field not in self.no_default:
                    return Adjustments(self.no_default | {field}, self.explicit)
                if kind == "presence" and field not in self.explicit:
                    return Adjustments(self.no_default, self.explicit | {field})
        return None


_RETRIED = (
    (re.compile(r"Invalid default '.*' for field (\S+) of type", re.DOTALL), "default"),
    (re.compile(r"fields with implicit presence cannot have explicit defaults \((\S+)\)"), "default"),
    (re.compile(r"Implicit presence field \((\S+)\) cannot use an enum type"), "presence"),
)


def for_upb(
    proto: descriptor_pb2.FileDescriptorProto,
    renames: Mapping[str, str],
    clashes: frozenset[str] = frozenset(),
    adjust: Adjustments = Adjustments(),
) -> UpbCopy:
    """A copy of `proto` that upb builds wherever protobuf-java builds the original, changed only where upb
    alone objects, so that a schema protoc wrote is given to upb as it is (and messages decoded with upb's
    classes, as the data audit does, read as they should). Changed, each only where it applies: proto3
    `required` made optional; a proto3 default, or one upb cannot read (`adjust`), dropped (Java's reading is
    `java_default`'s); numbers above 2^29-1 moved below it; oneofs emptied of repeated and required members,
    dropped when empty, renamed where the name is taken; proto3 `optional` outside a oneof cleared; an enum
    value renamed where C++ scoping makes its name clash (`clashes`: Java scopes values by their enum); an open
    enum not starting at 0 given a hidden first value 0; map entries upb refuses made plain messages; a
    repeated extension number dropped; reserved ranges, invalid extension ranges, weak imports, features
    outside editions and an edition outside editions dropped; an unknown syntax read as proto2 (as Java reads
    it); JSON name clashes allowed (the legacy option); a MessageSet with fields made plain (4.x builds it);
    a package upb refuses renamed (`package_renames`). The model reads every declared fact from the original."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(proto)
    if copy.syntax not in ("", "proto2", "proto3", "editions"):
        copy.syntax = "proto2"
    editions = copy.syntax == "editions"
    if editions and not descriptor_pb2.EDITION_PROTO2 <= copy.edition <= descriptor_pb2.EDITION_2024:
        copy.edition = descriptor_pb2.EDITION_2023  # 3.25 builds an edition it does not know (4.x refused it)
    if not editions:
        copy.ClearField("edition")
        strip_features(copy)
    del copy.weak_dependency[:]
    scope = proto.package  # names as declared: presence, clashes and adjustments are keyed by them
    context = _CopyContext(copy.syntax or "proto2", copy.options.features, clashes, adjust, {})
    if renames:
        copy.package = to_copy(renames, copy.package)
        _references_for_upb(copy, renames)
    for message in copy.message_type:
        context.message(message, _join(scope, message.name), copy.options.features)
    for enum in copy.enum_type:
        context.enum(enum, scope, copy.options.features)
    _extensions_for_upb(copy.extension)
    for field in copy.extension:
        if _join(scope, field.name) in adjust.no_default:
            field.ClearField("default_value")
    return UpbCopy(copy, context.presence)


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def cpp_clashes(files: Iterator[descriptor_pb2.FileDescriptorProto]) -> frozenset[str]:
    """Names that clash when scoped as C++ and upb scope them, though not as protobuf-java scopes them: enum
    values (full name: the enum's parent + the value) and oneofs (the message + the oneof) that share a full
    name with another symbol. `for_upb` renames those in its copy."""
    counts: dict[str, int] = {}

    def count(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    def enums(scope: str, found: Any) -> None:
        for enum in found:
            count(_join(scope, enum.name))
            for value in enum.value:
                count(_join(scope, value.name))

    for proto in files:
        scope = proto.package
        pending = [(scope, m) for m in proto.message_type]
        enums(scope, proto.enum_type)
        for extension in proto.extension:
            count(_join(scope, extension.name))
        for service in proto.service:
            count(_join(scope, service.name))
        while pending:
            parent, message = pending.pop()
            full = _join(parent, message.name)
            count(full)
            for field in (*message.field, *message.extension):
                count(f"{full}.{field.name}")
            for oneof in message.oneof_decl:
                count(f"{full}.{oneof.name}")
            enums(full, message.enum_type)
            pending.extend((full, n) for n in message.nested_type)
    return frozenset(name for name, seen in counts.items() if seen > 1)


@dataclass
class _CopyContext:
    syntax: str
    file_features: descriptor_pb2.FeatureSet
    clashes: frozenset[str]
    adjust: Adjustments
    presence: dict[str, bool]

    def message(self, message: descriptor_pb2.DescriptorProto, full: str, inherited: descriptor_pb2.FeatureSet) -> None:
        features = _merged(inherited, message.options.features)
        message.options.deprecated_legacy_json_field_conflicts = True  # JSON name clashes: Java builds them
        if message.field and message.options.message_set_wire_format:
            message.options.ClearField("message_set_wire_format")  # 4.x builds it (3.25 refused it before)
        del message.reserved_range[:]
        del message.reserved_name[:]
        if any(not 0 < r.start < r.end <= UPB_MAX_NUMBER + 1 for r in message.extension_range):
            ranges = [(r.start, min(r.end, UPB_MAX_NUMBER + 1)) for r in message.extension_range if r.start > 0]
            del message.extension_range[:]
            for start, end in ranges:
                if start < end:
                    message.extension_range.add(start=start, end=end)
        used = {f.number for f in message.field if 0 < f.number <= UPB_MAX_NUMBER}
        spare = UPB_MAX_NUMBER
        synthetic: list[descriptor_pb2.FieldDescriptorProto] = []
        for field in message.field:
            name = f"{full}.{field.name}"
            if field.number > UPB_MAX_NUMBER:  # Java sets no upper limit; the model keeps the original number
                while spare in used or 19000 <= spare <= 19999:
                    spare -= 1
                field.number = spare
                used.add(spare)
            if self.syntax == "proto3" and field.label == F.LABEL_REQUIRED:
                field.label = F.LABEL_OPTIONAL  # the model reads `required` from the original
            if field.proto3_optional and not field.HasField("oneof_index"):
                field.proto3_optional = False
                self.presence[name] = True  # Java: a proto3 `optional` field has presence
            if field.HasField("default_value") and (name in self.adjust.no_default or self._implicit(field, features)):
                field.ClearField("default_value")
            elif field.HasField("default_value") and field.type == F.TYPE_BYTES:
                field.default_value = _c_escaped(java_default(name, F.TYPE_BYTES, field.default_value, None))
            if name in self.adjust.explicit:
                synthetic.append(field)
        self._oneofs(message, full)
        for field in synthetic:  # presence for upb only: a synthetic oneof, last as upb wants it
            field.proto3_optional = True
            field.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name=f"_{field.name}__schema_explorer")
            self.presence[f"{full}.{field.name}"] = False
        for nested in message.nested_type:
            self.message(nested, f"{full}.{nested.name}", features)
            if nested.options.map_entry and not _upb_map_entry(nested):
                nested.options.ClearField("map_entry")
        for enum in message.enum_type:
            self.enum(enum, full, features)
        _extensions_for_upb(message.extension)
        for field in message.extension:
            if f"{full}.{field.name}" in self.adjust.no_default:
                field.ClearField("default_value")

    def _implicit(self, field: descriptor_pb2.FieldDescriptorProto, features: descriptor_pb2.FeatureSet) -> bool:
        """A singular field without presence (proto3 without `optional`; editions IMPLICIT): upb refuses its
        explicit default, Java keeps it."""
        if field.label != F.LABEL_OPTIONAL or field.HasField("oneof_index") or field.proto3_optional:
            return False
        if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            return False
        if self.syntax == "proto3":
            return True
        if self.syntax == "editions":
            own = _merged(features, field.options.features)
            return own.field_presence == descriptor_pb2.FeatureSet.IMPLICIT
        return False

    def _oneofs(self, message: descriptor_pb2.DescriptorProto, full: str) -> None:
        """Repeated and required members out of their oneof (upb: "fields in oneof must have OPTIONAL label"),
        empty oneofs dropped and the indexes renumbered, a oneof whose name clashes renamed."""
        members: dict[int, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for field in message.field:
            if field.HasField("oneof_index"):
                if field.label != F.LABEL_OPTIONAL:
                    field.ClearField("oneof_index")
                    continue
                members.setdefault(field.oneof_index, []).append(field)
        kept = [i for i in range(len(message.oneof_decl)) if members.get(i)]
        renamed = [i for i in kept if f"{full}.{message.oneof_decl[i].name}" in self.clashes]
        if len(kept) == len(message.oneof_decl) and not renamed:
            return
        copies = []
        for index in kept:
            saved = descriptor_pb2.OneofDescriptorProto()
            saved.CopyFrom(message.oneof_decl[index])
            if index in renamed:
                saved.name = f"{saved.name}__oneof{index}"
            copies.append(saved)
        del message.oneof_decl[:]
        for new_index, (old_index, decl) in enumerate(zip(kept, copies, strict=True)):
            message.oneof_decl.add().CopyFrom(decl)
            for field in members[old_index]:
                field.oneof_index = new_index

    def enum(self, enum: descriptor_pb2.EnumDescriptorProto, scope: str, inherited: descriptor_pb2.FeatureSet) -> None:
        """A value renamed where its C++-scoped name clashes; a hidden first value 0 for an open enum that does
        not start at 0 (proto3; editions unless CLOSED); reserved ranges dropped."""
        del enum.reserved_range[:]
        del enum.reserved_name[:]
        for value in enum.value:
            if _join(scope, value.name) in self.clashes:
                value.name = f"{enum.name}__{value.name}"
        features = _merged(inherited, enum.options.features)
        closed = features.enum_type == descriptor_pb2.FeatureSet.CLOSED
        is_open = self.syntax == "proto3" or (self.syntax == "editions" and not closed)
        if is_open and enum.value and enum.value[0].number != 0:
            values = list(enum.value)
            del enum.value[:]
            enum.value.add(name=enum.name + SYNTHETIC_ZERO, number=0)
            enum.value.extend(values)


def _c_escaped(value: object) -> str:
    """Bytes as a default text every runtime reads alike: printable ASCII as it is, the rest octal escapes."""
    assert isinstance(value, bytes)
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 39, 92) else f"\\{b:03o}" for b in value)


def _merged(outer: descriptor_pb2.FeatureSet, inner: descriptor_pb2.FeatureSet) -> descriptor_pb2.FeatureSet:
    merged = descriptor_pb2.FeatureSet()
    merged.CopyFrom(outer)
    merged.MergeFrom(inner)
    return merged


def has_features(proto: descriptor_pb2.FileDescriptorProto) -> bool:
    """Whether any option of `proto` sets editions features (what `strip_features` would clear)."""
    if proto.options.HasField("features"):
        return True
    pending: list[descriptor_pb2.DescriptorProto] = list(proto.message_type)
    options: list[Any] = [f.options for f in proto.extension] + [e.options for e in proto.enum_type]
    options += [v.options for e in proto.enum_type for v in e.value]
    options += [s.options for s in proto.service] + [m.options for s in proto.service for m in s.method]
    while pending:
        message = pending.pop()
        pending.extend(message.nested_type)
        options += [message.options, *(f.options for f in (*message.field, *message.extension))]
        options += [o.options for o in message.oneof_decl] + [e.options for e in message.enum_type]
        options += [v.options for e in message.enum_type for v in e.value]
    return any(o.HasField("features") for o in options)


def strip_features(proto: descriptor_pb2.FileDescriptorProto) -> None:
    """Features outside an editions file: Java builds them, upb refuses ("Features can only be specified for
    editions"); the model ignores them there."""
    proto.options.ClearField("features")
    pending: list[descriptor_pb2.DescriptorProto] = list(proto.message_type)
    fields = list(proto.extension)
    enums = list(proto.enum_type)
    while pending:
        message = pending.pop()
        message.options.ClearField("features")
        pending.extend(message.nested_type)
        fields += [*message.field, *message.extension]
        enums += message.enum_type
        for oneof in message.oneof_decl:
            oneof.options.ClearField("features")
    for field in fields:
        field.options.ClearField("features")
    for enum in enums:
        enum.options.ClearField("features")
        for value in enum.value:
            value.options.ClearField("features")
    for service in proto.service:
        service.options.ClearField("features")
        for method in service.method:
            method.options.ClearField("features")


def _extensions_for_upb(extensions: Any) -> None:
    """A repeated (extendee, number) pair: Java builds both, upb refuses the second; the model reads none."""
    seen: set[tuple[str, int]] = set()
    keep = []
    for extension in extensions:
        key = (extension.extendee, extension.number)
        if key not in seen:
            seen.add(key)
            keep.append(extension)
    if len(keep) < len(extensions):
        copies = []
        for extension in keep:
            saved = descriptor_pb2.FieldDescriptorProto()
            saved.CopyFrom(extension)
            copies.append(saved)
        del extensions[:]
        for extension in copies:
            extensions.add().CopyFrom(extension)


def _upb_map_entry(entry: descriptor_pb2.DescriptorProto) -> bool:
    """A map entry upb builds: fields `key` = 1 and `value` = 2, both optional, a key type maps allow."""
    if len(entry.field) != 2 or entry.nested_type or entry.enum_type or entry.oneof_decl or entry.extension_range:
        return False
    key, value = sorted(entry.field, key=lambda f: f.number)
    return (
        (key.name, key.number, value.name, value.number) == ("key", 1, "value", 2)
        and key.label == F.LABEL_OPTIONAL
        and value.label == F.LABEL_OPTIONAL
        and key.type in MAP_KEYS
    )
