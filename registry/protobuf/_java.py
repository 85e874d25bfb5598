"""PROTOBUF_NATIVE descriptors as protobuf-java builds them, where protobuf's C runtime (upb) answers otherwise.

Pulsar's `ProtobufNativeSchemaUtils.deserialize` builds each file with protobuf-java's
`Descriptors.FileDescriptor.buildFrom`, so its checks decide what the broker stores. This project builds
descriptors with upb (the `protobuf` package), which refuses much that Java takes (proto3 `required`, explicit
defaults in proto3, field numbers above 2^29-1, empty oneofs, package names Java never checks, features outside
editions, ...) and takes a little that Java refuses (`packed` on a field that cannot be packed, a field named
like a nested type, a default Java cannot parse). Every finding was made by asking the Java library itself
(tests/java/PulsarProbe.java; the vectors are `protobuf_native` in tests/vectors/round3.json).

So the verdict is Java's, in two halves:
- `check_file` (before the build) and `check_built` (after it, when field types are resolved) raise
  `JavaRefusal` with protobuf-java's own message where Java refuses;
- `for_upb` gives upb a copy with what only upb objects to taken out (defaults, oneof names, enum value names,
  numbers above upb's limit, ...); the model of the schema (`_descriptor.py`) reads every declared fact from the
  original descriptor, and only the resolution of type names from upb's copy.

A descriptor upb still refuses after that is one both runtimes refuse (or a difference not found yet): the
caller refuses it, naming upb's reason. Which Java runtime a Pulsar line ships is `PulsarLine.protobuf_java`:
3.25 on 3.0 and 4.0, 4.x on master; they differ on MessageSets and on which editions they know.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool

F = descriptor_pb2.FieldDescriptorProto
UPB_MAX_NUMBER = (1 << 29) - 1  # upb's (and protoc's) largest field number; protobuf-java has no limit
_SYNTHETIC_ZERO = "__schema_explorer_zero"
# Editions protobuf-java 4.x builds (`Descriptors.FileDescriptor` feature resolution); 3.25 takes any edition.
_EDITIONS_4X = (descriptor_pb2.EDITION_PROTO2, descriptor_pb2.EDITION_2024)
_PACKABLE_NOT = frozenset({F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE, F.TYPE_GROUP})  # WireFormat.isPackable
_MAP_KEYS = frozenset(
    {
        F.TYPE_INT32,
        F.TYPE_INT64,
        F.TYPE_UINT32,
        F.TYPE_UINT64,
        F.TYPE_SINT32,
        F.TYPE_SINT64,
        F.TYPE_FIXED32,
        F.TYPE_FIXED64,
        F.TYPE_SFIXED32,
        F.TYPE_SFIXED64,
        F.TYPE_BOOL,
        F.TYPE_STRING,
    }
)


# Types whose default `java_default` reads without the field's resolved type (not enums, messages or groups).
_SCALAR_DEFAULTS = frozenset(set(range(F.TYPE_DOUBLE, F.TYPE_SINT64 + 1)) - {F.TYPE_ENUM, F.TYPE_MESSAGE, F.TYPE_GROUP})


class JavaRefusal(Exception):
    """What protobuf-java's `buildFrom` throws for a descriptor: `<full name>: <reason>`, Java's own words."""


def is_synthetic_zero(name: str) -> bool:
    return name.endswith(_SYNTHETIC_ZERO)


def _refuse(where: str, reason: str) -> JavaRefusal:
    return JavaRefusal(f"{where}: {reason}")


# ------------------------------------------------------------------------------------------ before the build


@dataclass
class Symbols:
    """protobuf-java's `DescriptorPool` name table over the files built so far: full name -> (kind, file).

    Enum values are scoped by their enum in Java (`p.E.A`), not by the enum's parent as in C++ and upb, so two
    enums of one scope may share a value name; a field and a nested type of one message may not share a name."""

    names: dict[str, tuple[str, str]]

    def package(self, name: str, file: str) -> None:
        if not name:
            return
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            full = ".".join(parts[:end])
            old = self.names.get(full)
            if old is None:
                self.names[full] = ("package", file)
            elif old[0] != "package":
                clash = f'"{parts[end - 1]}" is already defined (as something other than a package)'
                raise _refuse(file, f'{clash} in file "{old[1]}".')

    def add(self, full: str, name: str, kind: str, file: str) -> None:
        if not name:
            raise _refuse(full, "Missing name.")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise _refuse(full, f'"{name}" is not a valid identifier.')
        old = self.names.get(full)
        if old is not None:
            scope, _, last = full.rpartition(".")
            if old[1] != file:
                raise _refuse(full, f'"{full}" is already defined in file "{old[1]}".')
            if scope:
                raise _refuse(full, f'"{last}" is already defined in "{scope}".')
            raise _refuse(full, f'"{full}" is already defined.')
        self.names[full] = (kind, file)


def check_file(proto: descriptor_pb2.FileDescriptorProto, runtime: str, symbols: Symbols) -> None:
    """protobuf-java's checks that need no resolved type, in the order it builds: the edition it can build
    (4.x only), the package and every symbol's name, field numbers and extendees, oneof indexes, a message's
    duplicate numbers and synthetic oneofs, repeated fields with a default, MessageSets (3.25 only)."""
    if runtime != "3.25" and proto.syntax == "editions":
        low, high = _EDITIONS_4X
        edition = proto.edition
        if edition < low:
            raise JavaRefusal(
                f"Edition {_edition(edition)} is lower than the minimum supported edition {_edition(low)}!"
            )
        if edition > high:
            raise JavaRefusal(
                f"Edition {_edition(edition)} is greater than the maximum supported edition {_edition(high)}!"
            )
    prefix = proto.package + "." if proto.package else ""
    symbols.package(proto.package, proto.name)
    for message in proto.message_type:
        _check_message(message, prefix + message.name, proto.name, runtime, symbols)
    for enum in proto.enum_type:
        _check_enum(enum, prefix + enum.name, proto.name, symbols)
    for extension in proto.extension:
        _check_field(extension, prefix + extension.name, None, proto.name, symbols)
    for service in proto.service:
        symbols.add(prefix + service.name, service.name, "service", proto.name)
        for method in service.method:
            symbols.add(f"{prefix}{service.name}.{method.name}", method.name, "method", proto.name)


def _edition(number: int) -> str:
    """An edition's name (`EDITION_2023`), or its number when descriptor.proto names none."""
    for name, value in descriptor_pb2.Edition.items():
        if value == number:
            return name
    return str(number)


def _check_message(
    message: descriptor_pb2.DescriptorProto, full: str, file: str, runtime: str, symbols: Symbols
) -> None:
    symbols.add(full, message.name, "message", file)
    for nested in message.nested_type:
        _check_message(nested, f"{full}.{nested.name}", file, runtime, symbols)
    for enum in message.enum_type:
        _check_enum(enum, f"{full}.{enum.name}", file, symbols)
    for field in message.field:
        _check_field(field, f"{full}.{field.name}", message, file, symbols)
    for extension in message.extension:
        _check_field(extension, f"{full}.{extension.name}", None, file, symbols)
    # Descriptor.validateNoDuplicateFieldNumbers, over the fields sorted by number (a stable sort).
    by_number = sorted(message.field, key=lambda f: f.number)
    for old, new in zip(by_number, by_number[1:], strict=False):
        if old.number == new.number:
            raise _refuse(
                f"{full}.{new.name}",
                f'Field number {new.number} has already been used in "{full}" by field "{old.name}".',
            )
    # Descriptor: a synthetic oneof (one proto3 `optional` field) may not precede a real one.
    synthetic_seen = False
    for index in range(len(message.oneof_decl)):
        members = [f for f in message.field if f.HasField("oneof_index") and f.oneof_index == index]
        synthetic = len(members) == 1 and members[0].proto3_optional
        if synthetic:
            synthetic_seen = True
        elif synthetic_seen:
            raise _refuse(full, "Synthetic oneofs must come last.")
    for field in message.field:
        if field.label == F.LABEL_REPEATED and field.HasField("default_value"):
            raise _refuse(f"{full}.{field.name}", "Repeated fields cannot have default values.")
        if field.HasField("default_value") and field.type in _SCALAR_DEFAULTS:
            java_default(f"{full}.{field.name}", field.type, field.default_value, None)
        if runtime == "3.25" and message.options.message_set_wire_format:
            raise _refuse(f"{full}.{field.name}", "MessageSets cannot have fields, only extensions.")


def _check_enum(enum: descriptor_pb2.EnumDescriptorProto, full: str, file: str, symbols: Symbols) -> None:
    symbols.add(full, enum.name, "enum", file)
    if not enum.value:
        raise _refuse(full, "Enums must contain at least one value.")
    for value in enum.value:
        symbols.add(f"{full}.{value.name}", value.name, "enum value", file)


def _check_field(
    field: descriptor_pb2.FieldDescriptorProto,
    full: str,
    parent: descriptor_pb2.DescriptorProto | None,
    file: str,
    symbols: Symbols,
) -> None:
    """FieldDescriptor's constructor: number, extendee and oneof index, then the name."""
    if field.number <= 0:
        raise _refuse(full, "Field numbers must be positive integers.")
    if parent is None:
        if not field.HasField("extendee"):
            raise _refuse(full, "FieldDescriptorProto.extendee not set for extension field.")
        if field.HasField("oneof_index"):
            raise _refuse(full, "FieldDescriptorProto.oneof_index set for extension field.")
    else:
        if field.HasField("extendee"):
            raise _refuse(full, "FieldDescriptorProto.extendee set for non-extension field.")
        if field.HasField("oneof_index") and not 0 <= field.oneof_index < len(parent.oneof_decl):
            raise _refuse(full, f"FieldDescriptorProto.oneof_index is out of range for type {parent.name}")
    symbols.add(full, field.name, "field", file)


# ------------------------------------------------------------------------------------------- after the build


def check_built(
    proto: descriptor_pb2.FileDescriptorProto,
    pool: DescriptorPool,
    enums: Mapping[str, Mapping[str, int]],
    renames: Mapping[str, str],
) -> None:
    """protobuf-java's `FieldDescriptor.crossLink` checks that need the field's resolved type (taken from upb's
    copy, which resolves type names as Java does): a message-typed default, `packed` where Java cannot pack,
    and the default parsed as Java parses it. `enums` holds the declared values of every enum built so far
    (`declared_enums`), since upb's copy renames them."""
    for full, field in _fields(proto):
        built = _built_field(pool, to_copy(renames, full))
        if built is None:  # an extension upb's copy left out (a repeated extension number)
            continue
        kind = built.type
        if field.HasField("default_value") and kind in (F.TYPE_MESSAGE, F.TYPE_GROUP) and field.HasField("type_name"):
            raise _refuse(full, "Messages can't have default values.")
        if field.options.packed and (field.label != F.LABEL_REPEATED or kind in _PACKABLE_NOT):
            raise _refuse(full, "[packed = true] can only be specified for repeated primitive fields.")
        if field.HasField("default_value"):
            values = enums.get(to_original(renames, built.enum_type.full_name)) if built.enum_type else None
            java_default(full, kind, field.default_value, values)


def _built_field(pool: DescriptorPool, full: str) -> FieldDescriptor | None:
    try:
        return pool.FindFieldByName(full)
    except KeyError:
        try:
            return pool.FindExtensionByName(full)
        except KeyError:
            return None


def _fields(proto: descriptor_pb2.FileDescriptorProto) -> Iterator[tuple[str, descriptor_pb2.FieldDescriptorProto]]:
    prefix = proto.package + "." if proto.package else ""
    pending = [(prefix + m.name, m) for m in proto.message_type]
    for extension in proto.extension:
        yield prefix + extension.name, extension
    while pending:
        full, message = pending.pop(0)
        for field in (*message.field, *message.extension):
            yield f"{full}.{field.name}", field
        pending.extend((f"{full}.{n.name}", n) for n in message.nested_type)


def declared_enums(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, dict[str, int]]:
    """Each enum of `proto` by full name, with its values as declared."""
    prefix = proto.package + "." if proto.package else ""
    found = {prefix + e.name: {v.name: v.number for v in e.value} for e in proto.enum_type}
    pending: list[tuple[str, descriptor_pb2.DescriptorProto]] = [(prefix + m.name, m) for m in proto.message_type]
    while pending:
        full, message = pending.pop()
        found.update({f"{full}.{e.name}": {v.name: v.number for v in e.value} for e in message.enum_type})
        pending.extend((f"{full}.{n.name}", n) for n in message.nested_type)
    return found


_JAVA_FLOAT = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?\d+)[fFdD]?"
)
_RANGES: dict[int, tuple[int, int]] = {
    F.TYPE_INT32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_SINT32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_SFIXED32: (-(1 << 31), (1 << 31) - 1),
    F.TYPE_UINT32: (0, (1 << 32) - 1),
    F.TYPE_FIXED32: (0, (1 << 32) - 1),
    F.TYPE_INT64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_SINT64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_SFIXED64: (-(1 << 63), (1 << 63) - 1),
    F.TYPE_UINT64: (0, (1 << 64) - 1),
    F.TYPE_FIXED64: (0, (1 << 64) - 1),
}
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def java_default(
    full: str, kind: int, text: str, enum_values: Mapping[str, int] | None
) -> int | float | bool | str | bytes:
    """A default as `FieldDescriptor.crossLink` reads it: integers by `TextFormat.parseInt32` and friends (a
    sign, `0x` hex, a leading `0` for octal, nothing else: no spaces), floats by `Float.valueOf` (which trims,
    and takes `1.5f`, `0x1p3`, `Infinity`) or the words `inf`, `-inf`, `nan`, booleans by `Boolean.valueOf` (any
    text; `true` in any case is true), bytes by `TextFormat.unescapeBytes`, an enum by its value's name. An
    enum default is given as the value's number."""
    if kind in _RANGES:
        value = _java_integer(text)
        low, high = _RANGES[kind]
        unsigned_negative = low == 0 and text.startswith("-")  # "Number must be positive", even for -0
        if value is None or unsigned_negative or not low <= value <= high:
            raise _refuse(full, f'Could not parse default value: "{text}"')
        return value
    if kind in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return _java_float(full, kind, text)
    if kind == F.TYPE_BOOL:
        return text.lower() == "true"
    if kind == F.TYPE_STRING:
        return text
    if kind == F.TYPE_BYTES:
        return _unescape_bytes(full, text)
    if kind == F.TYPE_ENUM:
        if enum_values is None or text not in enum_values:
            raise _refuse(full, f'Unknown enum default value: "{text}"')
        return enum_values[text]
    raise _refuse(full, "Message type had default value.")


def _java_integer(text: str) -> int | None:
    rest, negative = (text[1:], True) if text.startswith("-") else (text, False)
    if rest.startswith("0x"):
        digits, radix, pattern = rest[2:], 16, r"[+-]?[0-9a-fA-F]+"
    elif rest.startswith("0"):
        digits, radix, pattern = rest, 8, r"[+-]?[0-7]+"
    else:
        digits, radix, pattern = rest, 10, r"[+-]?[0-9]+"
    if not re.fullmatch(pattern, digits):
        return None
    value = int(digits, radix)
    return -value if negative else value


def _java_float(full: str, kind: int, text: str) -> float:
    words = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
    if text in words:
        return words[text]
    trimmed = text.strip("".join(chr(c) for c in range(33)))  # Float.valueOf trims characters up to U+0020
    if not _JAVA_FLOAT.fullmatch(trimmed):
        raise _refuse(full, f'Could not parse default value: "{text}"')
    number = trimmed[:-1] if trimmed[-1] in "fFdD" else trimmed  # a type suffix; hex ends in exponent digits
    magnitude = number.lstrip("+-")
    sign = -1.0 if number.startswith("-") else 1.0
    if magnitude == "NaN":
        value = math.nan
    elif magnitude == "Infinity":
        value = sign * math.inf
    elif magnitude[:2] in ("0x", "0X"):
        value = sign * float.fromhex(magnitude)
    else:
        value = float(number)
    if kind == F.TYPE_FLOAT and math.isfinite(value):
        try:
            value = float(struct.unpack("<f", struct.pack("<f", value))[0])
        except OverflowError:
            value = math.copysign(math.inf, value)
    return value


def _unescape_bytes(full: str, text: str) -> bytes:
    """`TextFormat.unescapeBytes`: C escapes, octal (up to 3 digits, kept to a byte), `\\x` with 1 or 2 hex
    digits, `\\u` with 4 and `\\U` with 8 (as UTF-8; a surrogate refused)."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        if i + 1 >= len(text):
            raise _refuse(full, "Couldn't parse default value: Invalid escape sequence: '\\' at end of string.")
        nxt = text[i + 1]
        if nxt in "01234567":
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1 : j], 8) & 0xFF)
            i = j
        elif nxt == "x":
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i + 2:
                raise _refuse(full, "Couldn't parse default value: Invalid escape sequence: '\\x' with no digits")
            out.append(int(text[i + 2 : j], 16))
            i = j
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) < 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _refuse(
                    full, "Couldn't parse default value: Invalid escape sequence: '\\u' with too few hex chars"
                )
            code = int(digits, 16)
            if 0xD800 <= code <= 0xDFFF:
                raise _refuse(
                    full, "Couldn't parse default value: Invalid escape sequence: '\\u' refers to a surrogate"
                )
            out += chr(code).encode("utf-8")
            i += 6
        elif nxt == "U":
            digits = text[i + 2 : i + 10]
            if len(digits) < 8 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise _refuse(
                    full, "Couldn't parse default value: Invalid escape sequence: '\\U' with too few hex chars"
                )
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise _refuse(
                    full,
                    f"Couldn't parse default value: Invalid escape sequence: '\\U{digits}'"
                    " is not a valid code point value",
                )
            if 0xD800 <= code <= 0xDFFF:
                raise _refuse(
                    full,
                    f"Couldn't parse default value: Invalid escape sequence: '\\U{digits}'"
                    " refers to a surrogate code unit",
                )
            out += chr(code).encode("utf-8")
            i += 10
        else:
            raise _refuse(full, f"Couldn't parse default value: Invalid escape sequence: '\\{nxt}'")
    return bytes(out)


# ----------------------------------------------------------------------------------------------- upb's copy


@dataclass(frozen=True, slots=True)
class UpbCopy:
    """The copy upb builds, and what the model must read from the original instead: fields whose presence the
    copy changed (full name -> the original's presence)."""

    proto: descriptor_pb2.FileDescriptorProto
    presence: Mapping[str, bool]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def package_renames(files: Iterator[descriptor_pb2.FileDescriptorProto]) -> dict[str, str]:
    """Packages upb refuses and protobuf-java never checks (`p-q`, `a..b`, `1p`), each mapped to a name upb
    takes, part by part so that nested packages stay nested: original -> copy."""
    renames: dict[str, str] = {}
    for proto in files:
        parts = proto.package.split(".") if proto.package else []
        if any(not _IDENTIFIER.fullmatch(part) for part in parts):
            renames[proto.package] = ".".join(
                part if _IDENTIFIER.fullmatch(part) else f"pkg_{part.encode('utf-8').hex()}_schema_explorer"
                for part in parts
            )
    return renames


def to_copy(renames: Mapping[str, str], name: str) -> str:
    """A full name as upb's copy spells it (its package renamed, `package_renames`)."""
    return _rename(renames, name)


def to_original(renames: Mapping[str, str], name: str) -> str:
    """A full name of upb's copy as the schema declares it."""
    return _rename({new: old for old, new in renames.items()}, name) if renames else name


def _rename(renames: Mapping[str, str], name: str) -> str:
    for old in sorted(renames, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return renames[old] + name[len(old) :]
    return name


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
            enum.value.add(name=enum.name + _SYNTHETIC_ZERO, number=0)
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
        and key.type in _MAP_KEYS
    )
