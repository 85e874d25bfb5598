"""PROTOBUF_NATIVE schema data: a JSON document carrying a FileDescriptorSet (pulsar-semantics.md §6)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError

from ._cache_budget import PROTOBUF_PARSED_BYTES, PROTOBUF_PARSED_FACTOR, ByteLRU, cached
from ._errors import InvalidSchemaError

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
PARSED: ByteLRU[bytes, ProtobufNativeSchema] = ByteLRU(PROTOBUF_PARSED_BYTES)


def parse_protobuf_native(data: bytes) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize`, cached."""
    return cached(PARSED, data, lambda: _parse_protobuf_native(data), lambda _: len(data) * PROTOBUF_PARSED_FACTOR)


def _parse_protobuf_native(data: bytes) -> ProtobufNativeSchema:
    """`ProtobufNativeSchemaUtils.deserialize`: build the root file with its dependencies, walk to the root."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(f"not a JSON document ({exc})") from None
    if not isinstance(doc, dict) or any(not isinstance(doc.get(k), str) for k in _KEYS):
        raise _fail(f"expected a JSON object with text fields {', '.join(_KEYS)}")
    try:
        raw = base64.b64decode(doc["fileDescriptorSet"], validate=True)
    except (binascii.Error, ValueError):
        raise _fail("fileDescriptorSet is not valid base64") from None
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
    package = root_file.package
    local = root_name[len(package) + 1 :] if package and root_name.startswith(package + ".") else root_name
    parts = local.split(".")
    descriptor = root_file.message_types_by_name.get(parts[0])
    for part in parts[1:]:
        descriptor = descriptor.nested_types_by_name.get(part) if descriptor else None
    if descriptor is None:
        raise _fail(f"root message {root_name!r} is not defined in {root_file_name!r}")
    return ProtobufNativeSchema(descriptor, root_name, root_file_name, file_set)


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
    pool.Add(files[name])
    return pool.FindFileByName(name)


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
