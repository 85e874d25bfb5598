"""Three-way merge of PROTOBUF_NATIVE schemas: the change from a base to ours replayed on theirs, over the
descriptor set each side's document holds (registry/_three_way.py has the rules).

The descriptors are read as protobuf's JSON form of `FileDescriptorSet`, and merged by what identifies each
part: files, messages, enums, services, methods and oneofs by name, fields by number (a renamed field is the same
field), enum values by name, reserved names as a set, dependencies in order; any other attribute (a field's
type, label or default, an option) is taken whole. A field's oneof is compared by the oneof's name, not its
index, so oneofs added on both sides do not shift each other's fields. Source locations (comments) are left out
of a merged set: they point into one side's text. Two fields a merge gives one name (added on both sides with
different numbers) are a conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pb2, json_format

from .._three_way import MISSING, Merger
from ._native import ProtobufNativeSchema, to_protobuf_native_data

Doc = dict[str, Any]

# Lists merged item by item, and what identifies an item.
_KEYS: dict[str, Callable[[Doc], Any]] = {
    "file": lambda d: d.get("name"),
    "messageType": lambda d: d.get("name"),
    "nestedType": lambda d: d.get("name"),
    "enumType": lambda d: d.get("name"),
    "service": lambda d: d.get("name"),
    "method": lambda d: d.get("name"),
    "oneofDecl": lambda d: d.get("name"),
    "value": lambda d: d.get("name"),
    "field": lambda d: d.get("number"),
    "extension": lambda d: (d.get("extendee"), d.get("number")),
    "reservedRange": lambda d: (d.get("start"), d.get("end")),
    "extensionRange": lambda d: (d.get("start"), d.get("end")),
}
_SETS = frozenset({"reservedName", "dependency"})


def merge_protobuf_native(
    base: ProtobufNativeSchema, ours: ProtobufNativeSchema, theirs: ProtobufNativeSchema, merger: Merger
) -> str:
    """The merged schema's document (what Pulsar's client sends); conflicts are added to `merger`."""
    b, o, t = (_doc(s.file_set) for s in (base, ours, theirs))
    merged = _merge(merger, "", b, o, t)
    root = merger.value("the root message", base.root_message, ours.root_message, theirs.root_message)
    root_file = merger.value("the root file", base.root_file, ours.root_file, theirs.root_file)
    file_set = descriptor_pb2.FileDescriptorSet()
    try:
        json_format.ParseDict(_with_oneof_indexes(merger, merged), file_set)
    except json_format.ParseError as exc:
        merger.conflicts.append(f"the descriptors as merged ({exc})")
        return to_protobuf_native_data(theirs.file_set, theirs.root_message, theirs.root_file)
    return to_protobuf_native_data(file_set, root, root_file)


def _doc(file_set: descriptor_pb2.FileDescriptorSet) -> Doc:
    doc: Doc = json_format.MessageToDict(file_set)
    for file in doc.get("file", []):
        file.pop("sourceCodeInfo", None)
        for message in _messages(file):
            names = [o.get("name") for o in message.get("oneofDecl", [])]
            for f in message.get("field", []):
                if "oneofIndex" in f:
                    index = f.pop("oneofIndex")
                    f["oneof"] = names[index] if 0 <= index < len(names) else index
    return doc


def _with_oneof_indexes(merger: Merger, doc: Doc) -> Doc:
    """Fields' oneofs back to indexes into their merged message's oneofs; fields one name twice are named."""
    for file in doc.get("file", []):
        for message in _messages(file):
            names = [o.get("name") for o in message.get("oneofDecl", [])]
            seen: dict[str, Any] = {}
            for f in message.get("field", []):
                name = f.get("name")
                if "oneof" in f:
                    oneof = f.pop("oneof")
                    if oneof in names:
                        f["oneofIndex"] = names.index(oneof)
                    else:
                        merger.conflicts.append(f"field {message.get('name')}.{name} (its oneof {oneof} is gone)")
                if name in seen:
                    merger.conflicts.append(
                        f"field {message.get('name')}.{name} (numbers {seen[name]} and {f.get('number')}: "
                        "one name added twice)"
                    )
                seen[name] = f.get("number")
    return doc


def _messages(parent: Doc) -> list[Doc]:
    """Every message of a file, nested ones included."""
    found = []
    stack = list(parent.get("messageType", []))
    while stack:
        message = stack.pop()
        found.append(message)
        stack.extend(message.get("nestedType", []))
    return found


def _merge(merger: Merger, where: str, base: Doc, ours: Doc, theirs: Doc) -> Doc:
    merged: Doc = {}
    for key in dict.fromkeys([*theirs, *ours, *base]):
        b, o, t = base.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING)
        sides = (b, o, t)
        if key in _KEYS and all(isinstance(v, list) for v in sides):
            value: Any = _items(merger, where, key, b, o, t)
        elif key in _SETS and all(isinstance(v, list) for v in sides):
            value = merger.members(b, o, t)
        elif all(isinstance(v, dict) for v in sides):
            value = _merge(merger, where, b, o, t)
        else:
            value = merger.value(f"{where or 'the descriptor set'} ({key})", b, o, t)
        if value is not MISSING and value != []:
            merged[key] = value
    return merged


def _items(merger: Merger, where: str, key: str, base: list[Doc], ours: list[Doc], theirs: list[Doc]) -> list[Doc]:
    ident = _KEYS[key]
    by = [{ident(d): d for d in side} for side in (base, ours, theirs)]

    def label(k: Any) -> str:
        item = next(side[k] for side in reversed(by) if k in side)
        if key == "field":
            return f"field {where}.{item.get('name')} (#{k})"
        name = item.get("name", k)
        if key == "file":
            return str(name)
        return f"{where}.{name}" if where else str(name)

    def item(at: str, b: Doc, o: Doc, t: Doc) -> Doc:
        inner = at.removeprefix("field ").rsplit(" (#", 1)[0] if key == "field" else at
        if key == "file":
            inner = str(t.get("package", "")) or at
        return _merge(merger, inner, b, o, t)

    return list(merger.keyed(label, by[0], by[1], by[2], item).values())
