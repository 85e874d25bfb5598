"""PROTOBUF_NATIVE beyond Pulsar's check: buf's breaking-change rules as advisories.

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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .._changes import Advisory, AdvisoryCode
from .._model import Direction
from ._descriptor import (
    CARDINALITY_WIRE_GROUP,
    CARDINALITY_WIRE_JSON_GROUP,
    MAX_ENUM_NUMBER,
    MAX_FIELD_NUMBER,
    REQUIRED,
    SEVERITY,
    WIRE,
    WIRE_JSON,
    EnumModel,
    FieldModel,
    MessageModel,
    Pairing,
    card_text,
    default_text,
    defaults_equal,
    in_ranges,
    missing_ranges,
    oneof_text,
    paired,
    quoted,
    span_text,
    type_break,
)
from ._native import ProtobufNativeSchema

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
    ctx = Pairing.of(old, new)
    findings: list[Finding] = []
    for old_name, new_name in paired(ctx):
        if old_name in ctx.old.messages:
            findings += _message_findings(ctx.old.messages[old_name], ctx.new.messages[new_name], ctx)
        else:
            findings += _enum_findings(ctx.old.enums[old_name], ctx.new.enums[new_name])
    return findings


def _message_findings(old: MessageModel, new: MessageModel, ctx: Pairing) -> Iterator[Finding]:
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


def _deleted_field(old: MessageModel, new: MessageModel, was: FieldModel) -> Iterator[Finding]:
    path = f"{old.full_name}.{was.name}"
    number_reserved = in_ranges(was.number, new.reserved)
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


def _field_findings(message: MessageModel, was: FieldModel, now: FieldModel, ctx: Pairing) -> Iterator[Finding]:
    path = f"{message.full_name}.{now.name}"
    label = f"field `{now.name}` (#{now.number})" if was.name == now.name else f"field #{now.number}"
    type_rule = type_break(was, now, ctx)
    cardinality_wire = CARDINALITY_WIRE_GROUP[was.cardinality] != CARDINALITY_WIRE_GROUP[now.cardinality]
    renamed = was.name != now.name
    if renamed and (type_rule[0] == WIRE or cardinality_wire):
        yield Finding(
            "FIELD_WIRE_COMPATIBLE_TYPE" if type_rule[0] == WIRE else "FIELD_WIRE_COMPATIBLE_CARDINALITY",
            AdvisoryCode.PROTOBUF_FIELD_NUMBER_REUSED,
            WIRE,
            f"field number #{now.number} of {message.full_name} was reused: `{was.name}` "
            f"({card_text(was)}{was.type_text()}) became `{now.name}` ({card_text(now)}{now.type_text()}); data "
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
            f"{label} of {message.full_name} moved {oneof_text(was.oneof)} → {oneof_text(now.oneof)}: "
            "readers may drop it or clear the other members of the oneof",
            path,
            f"keep `{now.name}` {oneof_text(was.oneof)}; add a new field instead",
        )
    if was.default is not None and now.default is not None and not defaults_equal(was, now):
        yield Finding(
            "FIELD_SAME_DEFAULT",
            AdvisoryCode.PROTOBUF_FIELD_DEFAULT_CHANGED,
            WIRE,
            f"{label} of {message.full_name} changed its default from {default_text(was)} to "
            f"{default_text(now)}: readers of data without the field now see different values",
            path,
            f"restore the default {default_text(was)}" if was.explicit_default is not None else "remove the default",
        )


def _required_findings(old: MessageModel, new: MessageModel) -> Iterator[Finding]:
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


def _reserved_findings(old: MessageModel, new: MessageModel) -> Iterator[Finding]:
    # RESERVED_MESSAGE_NO_DELETE is in WIRE: a dropped reservation lets a deleted field's number come back.
    for start, end in missing_ranges(old.reserved, new.reserved):
        users = [f for n, f in new.fields.items() if start <= n <= end]
        span = span_text(start, end, MAX_FIELD_NUMBER)
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


def _enum_findings(old: EnumModel, new: EnumModel) -> Iterator[Finding]:
    old_values, new_values = old.names_by_number(), new.names_by_number()
    for number, was in old_values.items():
        now = new_values.get(number)
        path = f"{old.full_name}.{was[0]}"
        if now is None:
            if not in_ranges(number, new.reserved):
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
                    f"add `reserved {quoted(was)};` to enum {new.name}",
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
    for start, end in missing_ranges(old.reserved, new.reserved):
        span = span_text(start, end, MAX_ENUM_NUMBER)
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
