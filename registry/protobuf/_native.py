"""PROTOBUF_NATIVE schema data: a JSON document carrying a FileDescriptorSet (pulsar-semantics.md §6)."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError

from .._cache_budget import PROTOBUF_PARSED_BYTES, PROTOBUF_PARSED_FACTOR, ByteLRU, cached
from .._errors import InvalidSchemaError
from .._pulsar_version import current_line
from . import _java, _upb_copy, _upb_names

_KEYS = ("fileDescriptorSet", "rootMessageTypeName", "rootFileDescriptorName")


@dataclass(frozen=True, slots=True)
class ProtobufNativeSchema:
    """A decoded ProtobufNative schema: the root message descriptor (built by upb from a copy, `_upb_copy.py`), the
    document it came from, each file as declared (`originals`, what the model reads) and the fields whose
    presence upb's copy changed (full name -> the declared presence)."""

    root: Descriptor
    root_message: str
    root_file: str
    file_set: descriptor_pb2.FileDescriptorSet
    originals: Mapping[str, descriptor_pb2.FileDescriptorProto] = field(default_factory=dict)
    presence: Mapping[str, bool] = field(default_factory=dict)
    packages: Mapping[str, str] = field(default_factory=dict)  # packages upb's copy renamed: declared -> copy

    @property
    def root_full_name(self) -> str:
        return self.declared(self.root.full_name)

    def declared(self, full_name: str) -> str:
        """A full name of upb's descriptors as the schema declares it (its package may differ, `_upb_names.py`)."""
        return _upb_names.to_original(self.packages, full_name)

    def built(self, full_name: str) -> str:
        """A declared full name as upb's descriptors spell it."""
        return _upb_names.to_copy(self.packages, full_name)


# What Pulsar's REST API answers for any failure of `ProtobufNativeSchemaUtils.deserialize`
# (`ProtobufNativeSchemaDataValidator`, HTTP 422); the reason after it is what the broker logs as the cause.
BROKER_REASON = "deserialize ProtobufNative Schema failed"
# ... and when 3.0/4.0 find no root message by a one-part name (`deserialize` returns null there).
NO_ROOT_REASON = (
    "protobuf root message descriptor is null, please recheck rootMessageTypeName or rootFileDescriptorName conf."
)


def _fail(reason: str, broker: str = BROKER_REASON) -> InvalidSchemaError:
    """The broker's reason (its REST answer), then ours: what exactly was wrong."""
    return InvalidSchemaError(f"Invalid schema definition data for PROTOBUF_NATIVE schema: {broker}; {reason}")


# Parsed schemas by their data, bounded by bytes (registry/_cache_budget.py): histories parse the same data again.
# The key carries the line's rules (root lookup, protobuf-java runtime): the same data may build on one line only.
PARSED: ByteLRU[tuple[bytes, bool, str], ProtobufNativeSchema] = ByteLRU(PROTOBUF_PARSED_BYTES)


def parse_protobuf_native(data: bytes) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize` of the Pulsar line in force, cached."""
    rules = current_line()
    exact, runtime = rules.protobuf_root_exact, rules.protobuf_java
    return cached(
        PARSED,
        (data, exact, runtime),
        lambda: _parse_protobuf_native(data, exact, runtime),
        lambda _: len(data) * PROTOBUF_PARSED_FACTOR,
    )


def _parse_protobuf_native(data: bytes, exact: bool, runtime: str) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize`: read the document as Jackson does, build the root file with its
    dependencies as protobuf-java does, walk to the root."""
    raw, root_name, root_file_name = read_document(data)
    if raw is None:
        raise _fail("fileDescriptorSet is missing or null")
    file_set = descriptor_pb2.FileDescriptorSet()
    try:
        file_set.ParseFromString(raw)
    except DecodeError as exc:
        raise _fail(f"fileDescriptorSet is not a serialized FileDescriptorSet ({exc})") from None
    files = {f.name: f for f in file_set.file}
    if root_file_name is None:
        raise _fail("rootFileDescriptorName is missing or null")
    if root_file_name not in files:
        raise _fail(f"root file {root_file_name!r} is not in the descriptor set (files: {sorted(files)})")
    build = _Build(files, runtime)
    try:
        root_file = build.file(root_file_name, set())
    except _java.JavaRefusal as exc:
        raise _fail(f"protobuf-java: {exc}") from None
    except Exception as exc:  # protobuf's builders raise TypeError, KeyError or their own errors
        raise _fail(f"descriptors do not build ({exc})") from None
    if root_name is None:
        raise _fail("rootMessageTypeName is missing or null")
    package = files[root_file_name].package
    descriptor = _find_root(root_file, package, root_name, exact)
    if descriptor is None:
        lenient_null = not exact and "." not in _local_name(package, root_name)
        broker = NO_ROOT_REASON if lenient_null else BROKER_REASON
        raise _fail(f"root message {root_name!r} is not defined in {root_file_name!r}", broker)
    return ProtobufNativeSchema(
        descriptor, root_name, root_file_name, file_set, build.originals, build.presence, build.renames
    )


def _local_name(package: str, root_name: str) -> str:
    """3.0/4.0's root path after `StringUtils.removeFirst(name, package)` and the first `.` dropped: a path of
    one part not found makes `deserialize` return null, a longer one fails inside it."""
    try:
        local = re.sub(package, "", root_name, count=1) if package else root_name
    except re.error:
        return root_name
    return local.replace(".", "", 1)


def _find_root(root_file: FileDescriptor, package: str, root_name: str, exact: bool) -> Descriptor | None:
    """The root message as `ProtobufNativeSchemaUtils.deserialize` finds it, by line.

    master (`exact`): the name must start with the file's package and name exactly the message found (a nested
    root in a file without a package is found). 3.0 and 4.0: `StringUtils.removeFirst(name, package)` (the
    package read as a regex), then the first `.` dropped, then the rest walked; so a root named without its
    package is found, and a nested root in a file without a package is not (the first `.` joins its parts).
    `package` is the file's package as declared (upb's copy may spell it otherwise).
    """
    if exact:
        prefix = package + "." if package else ""
        if not root_name.startswith(prefix) or len(root_name) == len(prefix):
            return None
        local = root_name[len(prefix) :]
    else:
        try:
            local = re.sub(package, "", root_name, count=1) if package else root_name
        except re.error:
            return None
        local = local.replace(".", "", 1)
    parts = local.split(".")
    descriptor = root_file.message_types_by_name.get(parts[0])
    for part in parts[1:]:
        descriptor = descriptor.nested_types_by_name.get(part) if descriptor else None
    # master also compares the found message's full name with the root's: equal whenever every part was
    # found, since the parts were the root's own (a trailing or doubled `.` leaves an empty part, found nowhere).
    return descriptor


# --- the document, as Jackson reads it ---------------------------------------------------------------------


class _Number(str):
    """A JSON number kept as written: Jackson reads a number into a String property as its text (`1e2` stays
    `1e2`)."""


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON (Jackson refuses non-numeric numbers)")


_DECODER = json.JSONDecoder(parse_int=_Number, parse_float=_Number, parse_constant=_no_constant)
_JSON_SPACE = " \t\n\r"


def read_document(data: bytes) -> tuple[bytes | None, str | None, str | None]:
    """The three properties of Pulsar's ProtobufNativeSchemaData as `ObjectMapperFactory`'s mapper reads them
    (every line alike): a UTF-8 byte order mark is skipped, the first JSON value is read and anything after it
    ignored (even what is not JSON), `NaN` is refused wherever it is, unknown keys are ignored (the mapper turns
    FAIL_ON_UNKNOWN_PROPERTIES off), a number or boolean given for a name is its text, `null` or a missing key
    is null, and `fileDescriptorSet` is base64 text or an array of byte values. Verified against Jackson by the
    Java probe (tests/java/PulsarProbe.java)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"not UTF-8 JSON ({exc})") from None
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        doc, _ = _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, ValueError) as exc:
        raise _fail(f"not a JSON document ({exc})") from None
    if not isinstance(doc, dict):
        raise _fail(f"expected a JSON object with {', '.join(_KEYS)}, got {_json_kind(doc)}")
    return _bytes(doc.get(_KEYS[0])), _text(_KEYS[1], doc.get(_KEYS[1])), _text(_KEYS[2], doc.get(_KEYS[2]))


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, _Number):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__


def _text(key: str, value: object) -> str | None:
    """A String property: text as it is, a number as written, a boolean as `true`/`false`, null as null."""
    if value is None or isinstance(value, str):
        return None if value is None else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    raise _fail(f"{key} must be text, not {_json_kind(value)}")


def _bytes(value: object) -> bytes | None:
    """A `byte[]` property: base64 text (`_jackson_base64`), or an array whose items are whole numbers from -128
    to 255 (a fraction is cut off, numeric text is read as a number, null is 0)."""
    if value is None:
        return None
    if isinstance(value, _Number) or isinstance(value, bool) or isinstance(value, dict):
        raise _fail(f"fileDescriptorSet must be base64 text or an array of bytes, not {_json_kind(value)}")
    if isinstance(value, str):
        return _jackson_base64(value)
    assert isinstance(value, list)
    out = bytearray()
    for i, item in enumerate(value):
        if item is None:
            number = 0
        elif isinstance(item, str):
            try:
                number = math.trunc(float(item)) if isinstance(item, _Number) else int(item.strip())
            except ValueError:
                raise _fail(f"fileDescriptorSet[{i}] is {item!r}, not a byte value") from None
        else:
            raise _fail(f"fileDescriptorSet[{i}] is {_json_kind(item)}, not a byte value")
        if not -128 <= number <= 255:
            raise _fail(f"fileDescriptorSet[{i}]: numeric value ({number}) out of range of Java byte")
        out.append(number & 0xFF)
    return bytes(out)


def _jackson_base64(text: str) -> bytes:
    """`fileDescriptorSet` as Jackson decodes a `byte[]` (Base64Variants.MIME_NO_LINEFEEDS): white space
    (any character up to U+0020, line breaks included) is skipped before each 4-character group, and is an
    error anywhere else; padding is required."""
    kept: list[str] = []
    count = 0
    for ch in text:
        if ch <= " ":
            if count % 4:
                raise _fail(f"fileDescriptorSet is not valid base64 (white space inside a group at character {count})")
            continue
        kept.append(ch)
        count += 1
    try:
        return base64.b64decode("".join(kept), validate=True)
    except (binascii.Error, ValueError):
        raise _fail("fileDescriptorSet is not valid base64") from None


# --- the descriptors, as protobuf-java builds them ----------------------------------------------------------


class _Build:
    """Each file built after its dependencies, as `deserializeFileDescriptor` builds it with
    `FileDescriptor.buildFrom`: protobuf-java's checks decide (`_java.check_file`, `check_built`), upb builds a
    copy without what only upb refuses (`_upb_copy.for_upb`)."""

    def __init__(self, files: Mapping[str, descriptor_pb2.FileDescriptorProto], runtime: str) -> None:
        self.files = files
        self.runtime = runtime
        self.pool = descriptor_pool.DescriptorPool()
        self.symbols = _java.Symbols({})
        self.enums: dict[str, dict[str, int]] = {}
        self.originals: dict[str, descriptor_pb2.FileDescriptorProto] = {}
        self.presence: dict[str, bool] = {}
        self.renames = _upb_names.package_renames(iter(files.values()))
        self.clashes = _upb_copy.cpp_clashes(iter(files.values()))

    def file(self, name: str, building: set[str]) -> FileDescriptor:
        if name in self.originals:
            return self.pool.FindFileByName(name)
        if name in building:
            raise ValueError(f"circular import of {name!r}")
        if name not in self.files:
            raise KeyError(f"dependency {name!r} is missing from the descriptor set")
        building.add(name)
        proto = self.files[name]
        for dep in proto.dependency:
            self.file(dep, building)
        building.discard(name)
        _java.check_file(proto, self.runtime, self.symbols)
        copy = self._add(proto)
        self.enums.update(_java.declared_enums(proto))
        _java.check_built(proto, self.pool, self.enums, self.renames)
        self.originals[name] = proto
        self.presence.update(copy.presence)
        return self.pool.FindFileByName(name)

    def _add(self, proto: descriptor_pb2.FileDescriptorProto) -> _upb_copy.UpbCopy:
        """upb's copy of `proto`, added to the pool; when upb refuses a default or an enum's default that Java
        takes, again with that adjusted (a failed Add leaves the pool as it was)."""
        adjust = _upb_copy.Adjustments()
        while True:
            copy = _upb_copy.for_upb(proto, self.renames, self.clashes, adjust)
            try:
                self.pool.Add(copy.proto)
            except TypeError as exc:
                again = adjust.after(str(exc), self.renames)
                if again is None:
                    raise
                adjust = again
                continue
            return copy


is_synthetic_zero = _java.is_synthetic_zero


def to_protobuf_native_data(file_set: descriptor_pb2.FileDescriptorSet, root_message: str, root_file: str) -> str:
    """The schema text Pulsar's client sends for a ProtobufNative schema (keys in Pulsar's order)."""
    return json.dumps(
        {
            "fileDescriptorSet": base64.b64encode(file_set.SerializeToString()).decode("ascii"),
            "rootMessageTypeName": root_message,
            "rootFileDescriptorName": root_file,
        },
        separators=(",", ":"),
    )
