"""PROTOBUF_NATIVE schema data: a JSON document carrying a FileDescriptorSet (pulsar-semantics.md §6)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError

from .._cache_budget import PROTOBUF_PARSED_BYTES, PROTOBUF_PARSED_FACTOR, ByteLRU, cached
from .._errors import InvalidSchemaError
from .._pulsar_version import current_line

_KEYS = ("fileDescriptorSet", "rootMessageTypeName", "rootFileDescriptorName")


@dataclass(frozen=True, slots=True)
class ProtobufNativeSchema:
    """A decoded ProtobufNative schema: the root message descriptor and the document it came from."""

    root: Descriptor
    root_message: str
    root_file: str
    file_set: descriptor_pb2.FileDescriptorSet

    @property
    def root_full_name(self) -> str:
        return self.root.full_name


def _fail(reason: str) -> InvalidSchemaError:
    return InvalidSchemaError(f"Invalid schema definition data for PROTOBUF_NATIVE schema: {reason}")


# Parsed schemas by their data, bounded by bytes (registry/_cache_budget.py): histories parse the same data again.
# The key carries the line's root-lookup rule: the same data may name a root one line finds and another not.
PARSED: ByteLRU[tuple[bytes, bool], ProtobufNativeSchema] = ByteLRU(PROTOBUF_PARSED_BYTES)


def parse_protobuf_native(data: bytes) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize` of the Pulsar line in force, cached."""
    exact = current_line().protobuf_root_exact
    return cached(
        PARSED,
        (data, exact),
        lambda: _parse_protobuf_native(data, exact),
        lambda _: len(data) * PROTOBUF_PARSED_FACTOR,
    )


def _parse_protobuf_native(data: bytes, exact: bool) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize`: build the root file with its dependencies, walk to the root."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(f"not a JSON document ({exc})") from None
    if not isinstance(doc, dict) or any(not isinstance(doc.get(k), str) for k in _KEYS):
        raise _fail(f"expected a JSON object with text fields {', '.join(_KEYS)}")
    raw = _jackson_base64(doc["fileDescriptorSet"])
    file_set = descriptor_pb2.FileDescriptorSet()
    try:
        file_set.ParseFromString(raw)
    except DecodeError as exc:
        raise _fail(f"fileDescriptorSet is not a serialized FileDescriptorSet ({exc})") from None
    files = {f.name: f for f in file_set.file}
    root_file_name = doc["rootFileDescriptorName"]
    if root_file_name not in files:
        raise _fail(f"root file {root_file_name!r} is not in the descriptor set (files: {sorted(files)})")
    pool = descriptor_pool.DescriptorPool()
    try:
        root_file = _build(pool, files, root_file_name, set())
    except Exception as exc:  # protobuf's builders raise TypeError, KeyError or their own errors
        raise _fail(f"descriptors do not build ({exc})") from None
    root_name = doc["rootMessageTypeName"]
    descriptor = _find_root(root_file, root_name, exact)
    if descriptor is None:
        raise _fail(f"root message {root_name!r} is not defined in {root_file_name!r}")
    return ProtobufNativeSchema(descriptor, root_name, root_file_name, file_set)


def _find_root(root_file: FileDescriptor, root_name: str, exact: bool) -> Descriptor | None:
    """The root message as `ProtobufNativeSchemaUtils.deserialize` finds it, by line.

    master (`exact`): the name must start with the file's package and name exactly the message found (a nested
    root in a file without a package is found). 3.0 and 4.0: `StringUtils.removeFirst(name, package)` (the
    package read as a regex), then the first `.` dropped, then the rest walked; so a root named without its
    package is found, and a nested root in a file without a package is not (the first `.` joins its parts).
    """
    package = root_file.package
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
    if descriptor is None or (exact and descriptor.full_name != root_name):
        return None
    return descriptor


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


def _build(
    pool: descriptor_pool.DescriptorPool,
    files: dict[str, descriptor_pb2.FileDescriptorProto],
    name: str,
    building: set[str],
) -> FileDescriptor:
    if name in building:
        raise ValueError(f"circular import of {name!r}")
    try:
        return pool.FindFileByName(name)
    except KeyError:
        pass
    if name not in files:
        raise KeyError(f"dependency {name!r} is missing from the descriptor set")
    building.add(name)
    for dep in files[name].dependency:
        _build(pool, files, dep, building)
    building.discard(name)
    try:
        pool.Add(files[name])
    except TypeError as exc:
        if not any(check in str(exc) for check in _PROTOC_ONLY_CHECKS):
            raise
        pool.Add(_as_java_builds_it(files[name]))  # a failed Add leaves the pool as it was
    return pool.FindFileByName(name)


# Checks protobuf's C runtime (upb) makes, as protoc does, that protobuf-java's `FileDescriptor.buildFrom`
# (what Pulsar's ProtobufNativeSchemaUtils.deserialize calls) does not: Pulsar stores such descriptors.
_PROTOC_ONLY_CHECKS = ("duplicate json_name", "first value must be zero")
# The value put first in a proto3 enum that does not start at 0, so that upb builds it; the model and the
# .proto text leave it out (`is_synthetic_zero`).
_SYNTHETIC_ZERO = "__schema_explorer_zero"


def is_synthetic_zero(name: str) -> bool:
    return name.endswith(_SYNTHETIC_ZERO)


def _as_java_builds_it(proto: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """A copy upb builds where Java does: JSON-name conflicts allowed per message (the legacy option), and a
    proto3 enum whose first value is not 0 given a synthetic first value 0."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(proto)
    proto3 = copy.syntax == "proto3"
    messages = list(copy.message_type)
    enums = list(copy.enum_type)
    while messages:
        message = messages.pop()
        message.options.deprecated_legacy_json_field_conflicts = True
        messages.extend(message.nested_type)
        enums.extend(message.enum_type)
    for enum in enums:
        if proto3 and enum.value and enum.value[0].number != 0:
            values = list(enum.value)
            del enum.value[:]
            enum.value.add(name=enum.name + _SYNTHETIC_ZERO, number=0)
            enum.value.extend(values)
    return copy


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
