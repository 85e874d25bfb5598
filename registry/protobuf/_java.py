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
- `_upb_copy.for_upb` gives upb a copy with what only upb objects to taken out (defaults, oneof names, enum value names,
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

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool

from ._upb_names import to_copy, to_original

F = descriptor_pb2.FieldDescriptorProto
UPB_MAX_NUMBER = (1 << 29) - 1  # upb's (and protoc's) largest field number; protobuf-java has no limit
SYNTHETIC_ZERO = "__schema_explorer_zero"
# Editions protobuf-java 4.x builds (`Descriptors.FileDescriptor` feature resolution); 3.25 takes any edition.
_EDITIONS_4X = (descriptor_pb2.EDITION_PROTO2, descriptor_pb2.EDITION_2024)
_PACKABLE_NOT = frozenset({F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE, F.TYPE_GROUP})  # WireFormat.isPackable
MAP_KEYS = frozenset(
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
    return name.endswith(SYNTHETIC_ZERO)


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
