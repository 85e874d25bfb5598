"""Diff any two schemas of any type: semantic changes plus each side's normalised text (users.md #2, #3)."""

from __future__ import annotations

from .._changes import Change, ChangeKind, Effect, SchemaDiff
from .._errors import InvalidSchemaError
from .._key_value import decode_key_value, render_schema_text
from .._model import SchemaVersion
from .._schema_data import parse_avro_data
from .._types import AVRO_PARSED_TYPES, SchemaData, SchemaType
from ..avro._diff import avro_text, diff_avro
from ..protobuf._diff import diff_protobuf
from ..protobuf._native import parse_protobuf_native
from ..protobuf._proto_text import proto_text


def diff_schemas(
    topic: str, old_side: tuple[int | str, SchemaData], new_side: tuple[int | str, SchemaData]
) -> SchemaDiff:
    """What changed from the old side to the new (each a version number or CANDIDATE, with its schema) on
    `topic`, each change marked for BACKWARD and FORWARD reading."""
    (old_version, old), (new_version, new) = old_side, new_side
    return SchemaDiff(
        topic=topic,
        old_version=old_version,
        new_version=new_version,
        old_type=old.type,
        new_type=new.type,
        changes=tuple(_changes(old, new)),
        old_text=normalised_text(old),
        new_text=normalised_text(new),
    )


def _changes(old: SchemaData, new: SchemaData) -> list[Change]:
    if old.type is not new.type:
        return [
            Change(
                kind=ChangeKind.SCHEMA_TYPE_CHANGED,
                path="(root)",
                message=f"schema type {old.type} → {new.type}: Pulsar refuses a type change under every "
                "strategy except ALWAYS_COMPATIBLE",
                backward=Effect.BREAKS,
                forward=Effect.BREAKS,
                before=str(old.type),
                after=str(new.type),
            )
        ]
    if old.type in AVRO_PARSED_TYPES:
        return diff_avro(parse_avro_data(old.type, old.data), parse_avro_data(new.type, new.data))
    if old.type is SchemaType.PROTOBUF_NATIVE:
        return diff_protobuf(parse_protobuf_native(old.data), parse_protobuf_native(new.data))
    if old.type is SchemaType.KEY_VALUE:
        return _diff_key_value(old, new)
    return []  # primitives carry no schema data: same type, same schema


def _encoding_effect(encoding: str) -> str:
    # The broker stores any kv.encoding.type; clients read it with KeyValueEncodingType.valueOf.
    if encoding == "SEPARATED":
        return "the key moves into the message key"
    if encoding == "INLINE":
        return "the key moves into the payload"
    return "Pulsar's clients know only INLINE and SEPARATED and cannot read this schema"


def _diff_key_value(old: SchemaData, new: SchemaData) -> list[Change]:
    before, after = decode_key_value(old), decode_key_value(new)
    changes = []
    if before.encoding != after.encoding:
        changes.append(
            Change(
                kind=ChangeKind.KEY_VALUE_ENCODING_CHANGED,
                path="(root)",
                message=f"KEY_VALUE encoding {before.encoding} → {after.encoding}: {_encoding_effect(after.encoding)}",
                backward=Effect.BREAKS,
                forward=Effect.BREAKS,
                before=before.encoding,
                after=after.encoding,
            )
        )
    for part, old_part, new_part in (("key", before.key, after.key), ("value", before.value, after.value)):
        for change in _changes(old_part, new_part):
            changes.append(
                Change(
                    kind=change.kind,
                    path=f"{part}." + change.path if change.path != "(root)" else part,
                    message=f"{part}: {change.message}",
                    backward=change.backward,
                    forward=change.forward,
                    before=change.before,
                    after=change.after,
                    old_pointer=f"/{part}{change.old_pointer}",
                    new_pointer=f"/{part}{change.new_pointer}",
                )
            )
    return changes


def normalised_text(schema: SchemaData) -> str:
    """Canonical pretty JSON for Avro-based types, `.proto`-like text for descriptors, parts for KEY_VALUE."""
    try:
        if schema.type in AVRO_PARSED_TYPES:
            return avro_text(schema.data.decode("utf-8"))
        if schema.type is SchemaType.PROTOBUF_NATIVE:
            return proto_text(parse_protobuf_native(schema.data))
        if schema.type is SchemaType.KEY_VALUE:
            parts = decode_key_value(schema)
            return "\n".join(
                [
                    f"KEY_VALUE<{parts.key.type}, {parts.value.type}> ({parts.encoding})",
                    f"--- key ({parts.key.type}) ---",
                    normalised_text(parts.key),
                    f"--- value ({parts.value.type}) ---",
                    normalised_text(parts.value),
                ]
            )
    except (InvalidSchemaError, UnicodeDecodeError):
        return render_schema_text(schema.type, schema.data, schema.properties)
    if schema.data in (b"", b"null"):
        return f"{schema.type} (no schema data)"
    return render_schema_text(schema.type, schema.data, schema.properties)


def schema_text(version: SchemaVersion) -> str:
    """A version's schema as people read it: pretty JSON for Avro and JSON, `.proto` source rebuilt from the
    descriptor for PROTOBUF_NATIVE (never its base64 form), the parts of a KEY_VALUE; the same text the diffs
    show, so a schema reads alike on every page."""
    return normalised_text(SchemaData(version.type, version.data, version.properties))
