"""PROTOBUF_NATIVE advisories (buf WIRE / WIRE_JSON), semantic diff and text rendering (registry/protobuf/).

Why: Pulsar only compares the root message name (pulsar-semantics.md §4.6; apache/pulsar#19385, users.md #9), so
these advisories are the only place a user learns that a field number was reused or int64 became string. Each case
is a pair of descriptors built in Python; the same pairs are then given to the real `buf breaking` (buf-bin wheel)
so our rule sets flag a break exactly when buf does, except for the documented divergences.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.message import Message

from registry._changes import AdvisoryCode, ChangeKind, Effect, Severity
from registry._model import Direction
from registry.protobuf._advisories import Finding, buf_findings, protobuf_advisories
from registry.protobuf._diff import diff_protobuf
from registry.protobuf._native import ProtobufNativeSchema, parse_protobuf_native, to_protobuf_native_data
from registry.protobuf._proto_text import proto_text

F = descriptor_pb2.FieldDescriptorProto
A = AdvisoryCode
K = ChangeKind
OK, RISK, BREAKS = Effect.OK, Effect.RISK, Effect.BREAKS
WIRE, WIRE_JSON = "buf WIRE", "buf WIRE_JSON"
PACKAGE = "acme.payments"

# Descriptor builders ---------------------------------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def add_field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    kind: int,
    *,
    label: int = F.LABEL_OPTIONAL,
    type_name: str = "",
    oneof: int | None = None,
    proto3_optional: bool = False,
    default: str | None = None,
) -> F:
    field = message.field.add(name=name, number=number, type=kind, label=label, json_name=_camel(name))
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof
    if proto3_optional:
        field.proto3_optional = True
    if default is not None:
        field.default_value = default
    return field


def add_map(message: descriptor_pb2.DescriptorProto, name: str, number: int, key: int, value: int) -> None:
    entry_name = "".join(p.title() for p in name.split("_")) + "Entry"
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    add_field(entry, "key", 1, key)
    add_field(entry, "value", 2, value)
    add_field(
        message, name, number, F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=f".{PACKAGE}.LedgerEntry.{entry_name}"
    )


def base(syntax: str = "proto3") -> descriptor_pb2.FileDescriptorProto:
    """`acme/payments/ledger_entry.proto`, the root LedgerEntry with a field of each interesting shape."""
    file = descriptor_pb2.FileDescriptorProto(name="acme/payments/ledger_entry.proto", package=PACKAGE, syntax=syntax)
    entry = file.message_type.add(name="LedgerEntry")
    add_field(entry, "entry_id", 1, F.TYPE_STRING)
    add_field(entry, "payload", 2, F.TYPE_BYTES)
    add_field(entry, "amount", 3, F.TYPE_INT64)
    add_field(entry, "status", 4, F.TYPE_ENUM, type_name=f".{PACKAGE}.Status")
    add_field(entry, "tags", 5, F.TYPE_STRING, label=F.LABEL_REPEATED)
    entry.oneof_decl.add(name="counterparty")
    add_field(entry, "iban", 6, F.TYPE_STRING, oneof=0)
    add_field(entry, "card_token", 7, F.TYPE_STRING, oneof=0)
    add_map(entry, "limits", 8, F.TYPE_STRING, F.TYPE_INT32)
    add_field(entry, "posting", 9, F.TYPE_MESSAGE, type_name=f".{PACKAGE}.Posting")
    add_field(entry, "checksum", 10, F.TYPE_FIXED64)
    add_field(entry, "note", 11, F.TYPE_STRING)
    posting = file.message_type.add(name="Posting")
    add_field(posting, "cost_centre", 1, F.TYPE_STRING)
    add_field(posting, "units", 2, F.TYPE_INT32)
    transfer = file.message_type.add(name="Transfer")  # same shape as Posting, to swap a message type
    add_field(transfer, "cost_centre", 1, F.TYPE_STRING)
    add_field(transfer, "units", 2, F.TYPE_INT32)
    status = file.enum_type.add(name="Status")
    for name, number in (("STATUS_UNSPECIFIED", 0), ("BOOKED", 1), ("VOID", 2)):
        status.value.add(name=name, number=number)
    if syntax == "proto2":
        for message in file.message_type:
            for field in message.field:
                field.ClearField("proto3_optional")
    return file


def message(file: descriptor_pb2.FileDescriptorProto, name: str = "LedgerEntry") -> descriptor_pb2.DescriptorProto:
    return next(m for m in file.message_type if m.name == name)


def field(file: descriptor_pb2.FileDescriptorProto, name: str, in_message: str = "LedgerEntry") -> F:
    return next(f for f in message(file, in_message).field if f.name == name)


def delete(file: descriptor_pb2.FileDescriptorProto, name: str, in_message: str = "LedgerEntry") -> int:
    owner = message(file, in_message)
    index = next(i for i, f in enumerate(owner.field) if f.name == name)
    number = owner.field[index].number
    del owner.field[index]
    return number


def reserve(
    file: descriptor_pb2.FileDescriptorProto, *, numbers: tuple[int, ...] = (), names: tuple[str, ...] = ()
) -> None:
    owner = message(file)
    for number in numbers:
        owner.reserved_range.add(start=number, end=number + 1)
    owner.reserved_name.extend(names)


def status(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.EnumDescriptorProto:
    return file.enum_type[0]


def to_schema(file: descriptor_pb2.FileDescriptorProto, root: str = "LedgerEntry") -> ProtobufNativeSchema:
    file_set = descriptor_pb2.FileDescriptorSet(file=[file])
    return parse_protobuf_native(to_protobuf_native_data(file_set, f"{PACKAGE}.{root}", file.name).encode())


# The case table --------------------------------------------------------------------------------------------------

Mutation = Callable[[descriptor_pb2.FileDescriptorProto], object]


@dataclass(frozen=True)
class Case:
    id: str
    change: Mutation
    expected: frozenset[tuple[AdvisoryCode, str]]  # (code, rule set) of every advisory
    syntax: str = "proto3"
    root: str = "LedgerEntry"
    # None: buf agrees; else why it differs (the cross-check then asserts that buf does differ)
    buf_differs: str | None = None


def _set(f: Message, **values: object) -> None:
    """Set descriptor fields; None clears one (an empty string would still count as set)."""
    for key, value in values.items():
        if value is None:
            f.ClearField(key)
        else:
            setattr(f, key, value)


def _renamed(file: descriptor_pb2.FileDescriptorProto, old: str, new: str, in_message: str = "LedgerEntry") -> F:
    f = field(file, old, in_message)
    _set(f, name=new, json_name=_camel(new))
    return f


def _reuse(file: descriptor_pb2.FileDescriptorProto) -> None:
    _set(_renamed(file, "amount", "memo"), type=F.TYPE_STRING)


def _unreserve_and_reuse(file: descriptor_pb2.FileDescriptorProto) -> None:
    message(file).ClearField("reserved_range")
    add_field(message(file), "comment", 11, F.TYPE_STRING)


def _into_oneof(file: descriptor_pb2.FileDescriptorProto) -> None:
    message(file).oneof_decl.add(name="contact")  # a oneof's fields must be declared together, so a new one
    field(file, "note").oneof_index = 1


def _second_oneof(file: descriptor_pb2.FileDescriptorProto) -> None:
    message(file).oneof_decl.add(name="routing")
    field(file, "card_token").oneof_index = 1


def _proto3_optional(file: descriptor_pb2.FileDescriptorProto) -> None:
    message(file).oneof_decl.add(name="_note")
    _set(field(file, "note"), oneof_index=1, proto3_optional=True)


def _rename_map(file: descriptor_pb2.FileDescriptorProto) -> None:
    entry = next(m for m in message(file).nested_type if m.name == "LimitsEntry")
    entry.name = "CapsEntry"
    _set(_renamed(file, "limits", "caps"), type_name=f".{PACKAGE}.LedgerEntry.CapsEntry")


def _map_value(file: descriptor_pb2.FileDescriptorProto) -> None:
    entry = next(m for m in message(file).nested_type if m.name == "LimitsEntry")
    entry.field[1].type = F.TYPE_STRING


def _unreachable_change(file: descriptor_pb2.FileDescriptorProto) -> None:
    field(file, "units", "Transfer").type = F.TYPE_STRING


def _root_renamed(file: descriptor_pb2.FileDescriptorProto) -> None:
    message(file).name = "Ledger"
    for f in message(file, "Ledger").field:
        if f.type_name:
            f.type_name = f.type_name.replace(".LedgerEntry.", ".Ledger.")
    field(file, "amount", "Ledger").type = F.TYPE_STRING


def _required_added(file: descriptor_pb2.FileDescriptorProto) -> None:
    add_field(message(file), "booked_by", 12, F.TYPE_STRING, label=F.LABEL_REQUIRED)


def _enum_value_deleted(file: descriptor_pb2.FileDescriptorProto) -> None:
    del status(file).value[2]


def _enum_value_deleted_reserved(file: descriptor_pb2.FileDescriptorProto) -> None:
    del status(file).value[2]
    status(file).reserved_range.add(start=2, end=2)


def _enum_value_deleted_fully_reserved(file: descriptor_pb2.FileDescriptorProto) -> None:
    _enum_value_deleted_reserved(file)
    status(file).reserved_name.append("VOID")


def _enum_value_renamed(file: descriptor_pb2.FileDescriptorProto) -> None:
    status(file).value[2].name = "CANCELLED"


def _enum_value_added(file: descriptor_pb2.FileDescriptorProto) -> None:
    status(file).value.add(name="REVERSED", number=3)


def _nested_change(file: descriptor_pb2.FileDescriptorProto) -> None:
    field(file, "units", "Posting").type = F.TYPE_DOUBLE


def _default_changed(file: descriptor_pb2.FileDescriptorProto) -> None:
    field(file, "note").default_value = "n/a"


def _delete_reserved_number(file: descriptor_pb2.FileDescriptorProto) -> None:
    reserve(file, numbers=(delete(file, "note"),))


def _delete_reserved_both(file: descriptor_pb2.FileDescriptorProto) -> None:
    reserve(file, numbers=(delete(file, "note"),), names=("note",))


def _with_old_reservation(file: descriptor_pb2.FileDescriptorProto) -> None:
    """Old side of the un-reserve cases: `note` long gone, 11 and "note" reserved."""
    _delete_reserved_both(file)


def _exp(*pairs: tuple[AdvisoryCode, str]) -> frozenset[tuple[AdvisoryCode, str]]:
    return frozenset(pairs)


CASES = [
    Case("an unchanged schema has no advisories", lambda f: None, _exp()),
    Case("adding an optional field is safe", lambda f: add_field(message(f), "memo", 12, F.TYPE_STRING), _exp()),
    Case(
        "deleting a field without reserving its number breaks the wire",
        lambda f: delete(f, "note"),
        _exp((A.PROTOBUF_FIELD_DELETED, WIRE)),
    ),
    Case(
        "deleting a field with only its number reserved breaks JSON",
        _delete_reserved_number,
        _exp((A.PROTOBUF_FIELD_DELETED, WIRE_JSON)),
    ),
    Case("deleting a field with number and name reserved is safe", _delete_reserved_both, _exp()),
    Case(
        "int64 to string is not wire-compatible",
        lambda f: _set(field(f, "amount"), type=F.TYPE_STRING),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case(
        "int64 to int32 is a compatible varint but changes JSON",
        lambda f: _set(field(f, "amount"), type=F.TYPE_INT32),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE_JSON)),
    ),
    Case("int64 to uint64 keeps wire and JSON", lambda f: _set(field(f, "amount"), type=F.TYPE_UINT64), _exp()),
    Case(
        "int64 to bool is a compatible varint but changes JSON",
        lambda f: _set(field(f, "amount"), type=F.TYPE_BOOL),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE_JSON)),
    ),
    Case(
        "int64 to sint64 zigzag is not wire-compatible",
        lambda f: _set(field(f, "amount"), type=F.TYPE_SINT64),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case("fixed64 to sfixed64 keeps wire and JSON", lambda f: _set(field(f, "checksum"), type=F.TYPE_SFIXED64), _exp()),
    Case(
        "fixed64 to double is not wire-compatible",
        lambda f: _set(field(f, "checksum"), type=F.TYPE_DOUBLE),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case(
        "string to bytes is wire-compatible but changes JSON",
        lambda f: _set(field(f, "note"), type=F.TYPE_BYTES),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE_JSON)),
    ),
    Case(
        "bytes to string is not wire-compatible (no UTF-8 guarantee)",
        lambda f: _set(field(f, "payload"), type=F.TYPE_STRING),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case(
        "enum to int32 is not wire-compatible for buf",
        lambda f: _set(field(f, "status"), type=F.TYPE_INT32, type_name=None),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case(
        "message field to a same-shaped message of another name breaks",
        lambda f: _set(field(f, "posting"), type_name=f".{PACKAGE}.Transfer"),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case(
        "message to bytes is not wire-compatible for buf",
        lambda f: _set(field(f, "posting"), type=F.TYPE_BYTES, type_name=None),
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case("reusing a field number for another field and type", _reuse, _exp((A.PROTOBUF_FIELD_NUMBER_REUSED, WIRE))),
    Case(
        "renaming a field keeps the wire but breaks JSON",
        lambda f: _renamed(f, "note", "remark"),
        _exp((A.PROTOBUF_JSON_NAME_CHANGED, WIRE_JSON)),
    ),
    Case(
        "changing json_name breaks JSON",
        lambda f: _set(field(f, "note"), json_name="remark"),
        _exp((A.PROTOBUF_JSON_NAME_CHANGED, WIRE_JSON)),
    ),
    Case(
        "singular to repeated changes the wire cardinality",
        lambda f: _set(field(f, "note"), label=F.LABEL_REPEATED),
        _exp((A.PROTOBUF_FIELD_CARDINALITY_CHANGED, WIRE)),
    ),
    Case("adding proto3 optional presence is safe", _proto3_optional, _exp()),
    Case("moving a field into a oneof", _into_oneof, _exp((A.PROTOBUF_FIELD_ONEOF_CHANGED, WIRE))),
    Case("moving a field to another oneof", _second_oneof, _exp((A.PROTOBUF_FIELD_ONEOF_CHANGED, WIRE))),
    Case(
        "adding a proto2 required field",
        _required_added,
        _exp((A.PROTOBUF_REQUIRED_FIELDS_CHANGED, WIRE)),
        syntax="proto2",
    ),
    Case(
        "making a proto2 field required",
        lambda f: _set(field(f, "note"), label=F.LABEL_REQUIRED),
        _exp((A.PROTOBUF_REQUIRED_FIELDS_CHANGED, WIRE), (A.PROTOBUF_FIELD_CARDINALITY_CHANGED, WIRE)),
        syntax="proto2",
    ),
    Case(
        "changing a proto2 default", _default_changed, _exp((A.PROTOBUF_FIELD_DEFAULT_CHANGED, WIRE)), syntax="proto2"
    ),
    Case(
        "deleting an enum value without reserving its number",
        _enum_value_deleted,
        _exp((A.PROTOBUF_ENUM_VALUE_DELETED, WIRE)),
    ),
    Case(
        "deleting an enum value with only its number reserved",
        _enum_value_deleted_reserved,
        _exp((A.PROTOBUF_ENUM_VALUE_DELETED, WIRE_JSON)),
    ),
    Case("deleting an enum value with number and name reserved is safe", _enum_value_deleted_fully_reserved, _exp()),
    Case(
        "renaming an enum value breaks JSON", _enum_value_renamed, _exp((A.PROTOBUF_ENUM_VALUE_NAME_CHANGED, WIRE_JSON))
    ),
    Case("adding an enum value is safe", _enum_value_added, _exp()),
    Case(
        "a break in a message reachable from the root is seen",
        _nested_change,
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
    ),
    Case("a map's value type change breaks the wire", _map_value, _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE))),
    Case(
        "proto3 to proto2 loses full JSON support",
        lambda f: _set(f, syntax="proto2"),
        _exp((A.PROTOBUF_JSON_FORMAT_CHANGED, WIRE_JSON)),
    ),
    Case(
        "renaming a map field only breaks JSON",
        _rename_map,
        _exp((A.PROTOBUF_JSON_NAME_CHANGED, WIRE_JSON)),
        buf_differs="buf compares the generated entry's name, so it also reports FIELD_WIRE_COMPATIBLE_TYPE",
    ),
    Case(
        "a message unreachable from the root is ignored",
        _unreachable_change,
        _exp(),
        buf_differs="buf checks every message in the descriptor set",
    ),
    Case(
        "a renamed root is still compared with the old root",
        _root_renamed,
        _exp((A.PROTOBUF_FIELD_TYPE_CHANGED, WIRE)),
        root="Ledger",
        buf_differs="buf pairs messages by full name only, so a renamed root is a new message",
    ),
]

# Cases whose OLD side is not the plain base: (case, change applied to both sides first).
CASES_ON_CHANGED_BASE: list[tuple[Case, Mutation]] = [
    (
        Case(
            "un-reserving a field number and reusing it",
            _unreserve_and_reuse,
            _exp((A.PROTOBUF_RESERVED_DELETED, WIRE)),
        ),
        _with_old_reservation,
    ),
    (
        Case(
            "removing a reserved name",
            lambda f: message(f).ClearField("reserved_name"),
            _exp((A.PROTOBUF_RESERVED_DELETED, WIRE)),
        ),
        _with_old_reservation,
    ),
    (
        Case(
            "writing out protoc's default json_name changes nothing",
            lambda f: _set(field(f, "note"), json_name="note"),
            _exp(),
            buf_differs="buf compares the raw json_name option, unset vs written out",
        ),
        lambda f: field(f, "note").ClearField("json_name"),
    ),
]


def _pair(case: Case, old_change: Mutation | None = None) -> tuple[descriptor_pb2.FileDescriptorProto, ...]:
    old, new = base(case.syntax), base(case.syntax)
    if old_change is not None:
        old_change(old)
        old_change(new)
    case.change(new)
    return old, new


ALL: list[tuple[Case, Mutation | None]] = [(c, None) for c in CASES] + list(CASES_ON_CHANGED_BASE)
PARAMS = [pytest.param(c, o, id=c.id) for c, o in ALL]


@pytest.mark.parametrize(("case", "old_change"), PARAMS)
def test_advisories_follow_buf_rules(case: Case, old_change: Mutation | None) -> None:
    old, new = _pair(case, old_change)
    advisories = protobuf_advisories(to_schema(old), to_schema(new, case.root), version=4)
    assert {(a.code, a.source) for a in advisories} == case.expected
    for advisory in advisories:
        assert advisory.version == 4
        assert advisory.severity is (Severity.ERROR if advisory.source == WIRE else Severity.WARNING)
        assert advisory.message and advisory.hint and advisory.path.startswith(PACKAGE + ".")


def test_type_change_advisory_names_message_field_number_and_types() -> None:
    new = base()
    field(new, "amount").type = F.TYPE_STRING
    [advisory] = protobuf_advisories(to_schema(base()), to_schema(new))
    assert advisory.path == "acme.payments.LedgerEntry.amount"
    assert "`amount` (#3)" in advisory.message and "int64 to string" in advisory.message
    assert "not wire-compatible" in advisory.message
    assert "3" in advisory.hint


@pytest.mark.parametrize(
    ("change", "direction"),
    [
        pytest.param(_required_added, Direction.BACKWARD, id="a new required field fails new readers of old data"),
        pytest.param(
            lambda f: _set(field(f, "note"), label=F.LABEL_REQUIRED),
            Direction.BACKWARD,
            id="a field made required fails new readers of old data",
        ),
        pytest.param(
            lambda f: _set(field(f, "note"), label=F.LABEL_OPTIONAL),
            Direction.FORWARD,
            id="a required field made optional fails old readers of new data",
        ),
    ],
)
def test_required_field_advisories_carry_the_failing_direction(change: Mutation, direction: Direction) -> None:
    old, new = base("proto2"), base("proto2")
    if direction is Direction.FORWARD:
        field(old, "note").label = F.LABEL_REQUIRED
    change(new)
    required = [
        a for a in protobuf_advisories(to_schema(old), to_schema(new)) if a.code is A.PROTOBUF_REQUIRED_FIELDS_CHANGED
    ]
    assert [a.direction for a in required] == [direction]


# Semantic diff ----------------------------------------------------------------------------------------------------

DIFF_CASES = [
    pytest.param(
        lambda f: add_field(message(f), "memo", 12, F.TYPE_STRING),
        [(K.FIELD_ADDED, OK, OK)],
        id="an added optional field is fine both ways",
    ),
    pytest.param(
        lambda f: delete(f, "note"), [(K.FIELD_REMOVED, OK, OK)], id="a removed optional field is fine both ways"
    ),
    pytest.param(
        _reuse,
        [(K.FIELD_RENAMED, BREAKS, BREAKS), (K.TYPE_CHANGED, BREAKS, BREAKS)],
        id="a reused number breaks both ways",
    ),
    pytest.param(
        lambda f: _renamed(f, "note", "remark"), [(K.FIELD_RENAMED, OK, OK)], id="a renamed field is fine on the wire"
    ),
    pytest.param(
        lambda f: _set(field(f, "amount"), type=F.TYPE_STRING),
        [(K.TYPE_CHANGED, BREAKS, BREAKS)],
        id="a wire-incompatible type breaks both ways",
    ),
    pytest.param(
        lambda f: _set(field(f, "units", "Posting"), type=F.TYPE_INT64),
        [(K.TYPE_PROMOTED, OK, RISK)],
        id="int32 widened to int64 risks truncation in old readers",
    ),
    pytest.param(
        lambda f: _set(field(f, "amount"), type=F.TYPE_UINT64),
        [(K.TYPE_CHANGED, RISK, RISK)],
        id="int64 to uint64 risks reinterpretation both ways",
    ),
    pytest.param(
        lambda f: _set(field(f, "note"), label=F.LABEL_REPEATED),
        [(K.FIELD_LABEL_CHANGED, BREAKS, BREAKS)],
        id="singular to repeated breaks both ways",
    ),
    pytest.param(
        _into_oneof,
        [(K.FIELD_ONEOF_CHANGED, RISK, RISK), (K.FIELD_LABEL_CHANGED, OK, OK)],
        id="moving into a oneof risks dropped values and gains presence",
    ),
    pytest.param(
        lambda f: (delete(f, "note"), add_field(message(f), "note", 12, F.TYPE_STRING)),
        [(K.FIELD_NUMBER_CHANGED, BREAKS, BREAKS)],
        id="a field moved to another number breaks both ways",
    ),
    pytest.param(
        _enum_value_deleted, [(K.ENUM_VALUE_REMOVED, RISK, OK)], id="a removed enum value is a risk for the new reader"
    ),
    pytest.param(
        _enum_value_added, [(K.ENUM_VALUE_ADDED, OK, RISK)], id="an added enum value is a risk for old readers"
    ),
    pytest.param(_enum_value_renamed, [(K.ENUM_VALUE_RENAMED, OK, OK)], id="a renamed enum value is fine on the wire"),
    pytest.param(
        lambda f: _set(status(f).value[1], number=5),
        [(K.ENUM_VALUE_NUMBER_CHANGED, BREAKS, BREAKS)],
        id="a renumbered enum value breaks both ways",
    ),
    pytest.param(
        _delete_reserved_both,
        [(K.FIELD_REMOVED, OK, OK), (K.RESERVED_CHANGED, OK, OK)],
        id="reserving a deleted field is a reserved change",
    ),
    pytest.param(
        lambda f: _set(field(f, "posting"), type_name=f".{PACKAGE}.Transfer"),
        [(K.TYPE_CHANGED, BREAKS, BREAKS)],
        id="swapping a message type breaks both ways",
    ),
    pytest.param(
        lambda f: (
            f.message_type.add(name="Audit"),
            add_field(message(f), "audit", 12, F.TYPE_MESSAGE, type_name=f".{PACKAGE}.Audit"),
        ),
        [(K.FIELD_ADDED, OK, OK), (K.MESSAGE_ADDED, OK, OK)],
        id="a new message reached from the root is added",
    ),
    pytest.param(
        lambda f: (delete(f, "posting"), f.message_type.remove(message(f, "Posting"))),
        [(K.MESSAGE_REMOVED, OK, OK), (K.FIELD_REMOVED, OK, OK)],
        id="a deleted message is removed",
    ),
    pytest.param(
        lambda f: (
            f.enum_type.add(name="Channel").value.add(name="CHANNEL_UNSPECIFIED", number=0)
            and add_field(message(f), "channel", 12, F.TYPE_ENUM, type_name=f".{PACKAGE}.Channel")
        ),
        [(K.FIELD_ADDED, OK, OK), (K.ENUM_ADDED, OK, OK)],
        id="a new enum reached from the root is added",
    ),
]


@pytest.mark.parametrize(("change", "expected"), DIFF_CASES)
def test_diff_marks_each_change_for_both_readings(
    change: Mutation, expected: list[tuple[ChangeKind, Effect, Effect]]
) -> None:
    new = base()
    change(new)
    changes = diff_protobuf(to_schema(base()), to_schema(new))
    assert sorted((c.kind, c.backward, c.forward) for c in changes) == sorted(expected)
    for c in changes:
        assert c.path.startswith(PACKAGE + ".") and c.message
        assert c.old_pointer.startswith(("/messages/", "/enums/")) or c.old_pointer == ""
        assert c.new_pointer.startswith(("/messages/", "/enums/")) or c.new_pointer == ""


@pytest.mark.parametrize(
    ("old_label", "new_label", "backward", "forward"),
    [
        pytest.param(F.LABEL_OPTIONAL, F.LABEL_REQUIRED, BREAKS, OK, id="optional to required breaks BACKWARD"),
        pytest.param(F.LABEL_REQUIRED, F.LABEL_OPTIONAL, OK, BREAKS, id="required to optional breaks FORWARD"),
    ],
)
def test_diff_required_changes_break_one_direction(
    old_label: F.Label.ValueType, new_label: F.Label.ValueType, backward: Effect, forward: Effect
) -> None:
    old, new = base("proto2"), base("proto2")
    field(old, "note").label = old_label
    field(new, "note").label = new_label
    [change] = diff_protobuf(to_schema(old), to_schema(new))
    assert (change.kind, change.backward, change.forward) == (K.FIELD_LABEL_CHANGED, backward, forward)


@pytest.mark.parametrize(
    ("change", "backward", "forward"),
    [
        pytest.param(_required_added, BREAKS, OK, id="a new required field breaks BACKWARD"),
        pytest.param(lambda f: delete(f, "note"), OK, BREAKS, id="a removed required field breaks FORWARD"),
    ],
)
def test_diff_required_field_added_or_removed(change: Mutation, backward: Effect, forward: Effect) -> None:
    old, new = base("proto2"), base("proto2")
    field(old, "note").label = F.LABEL_REQUIRED
    field(new, "note").label = F.LABEL_REQUIRED
    change(new)
    [found] = [c for c in diff_protobuf(to_schema(old), to_schema(new)) if c.kind in (K.FIELD_ADDED, K.FIELD_REMOVED)]
    assert (found.backward, found.forward) == (backward, forward)


def test_diff_of_a_renamed_root_reports_the_root_and_compares_fields() -> None:
    new = base()
    _root_renamed(new)
    changes = diff_protobuf(to_schema(base()), to_schema(new, "Ledger"))
    kinds = {(c.kind, c.path) for c in changes}
    assert (K.ROOT_MESSAGE_CHANGED, "acme.payments.Ledger") in kinds
    assert (K.TYPE_CHANGED, "acme.payments.Ledger.amount") in kinds
    root = next(c for c in changes if c.kind is K.ROOT_MESSAGE_CHANGED)
    assert (root.backward, root.forward, root.before, root.after) == (
        BREAKS,
        BREAKS,
        "acme.payments.LedgerEntry",
        "acme.payments.Ledger",
    )
    # the map entry and oneof of the renamed root are paired with the old ones, not reported as new
    assert not any(c.kind in (K.MESSAGE_ADDED, K.MESSAGE_REMOVED) for c in changes)


def test_diff_marks_a_reused_reserved_number_as_a_risk_for_new_readers() -> None:
    old, new = base(), base()
    _with_old_reservation(old)
    _with_old_reservation(new)
    _unreserve_and_reuse(new)
    added = next(c for c in diff_protobuf(to_schema(old), to_schema(new)) if c.kind is K.FIELD_ADDED)
    assert (added.backward, added.forward) == (RISK, OK)
    assert "reserved" in added.message


def test_diff_pointers_name_message_and_number() -> None:
    new = base()
    field(new, "amount").type = F.TYPE_STRING
    [change] = diff_protobuf(to_schema(base()), to_schema(new))
    assert change.old_pointer == change.new_pointer == "/messages/acme.payments.LedgerEntry/fields/3"
    assert (change.before, change.after) == ("int64", "string")


# Text rendering ---------------------------------------------------------------------------------------------------


def test_proto_text_renders_the_root_graph() -> None:
    file = base()
    field(file, "note").json_name = "remark"
    file.dependency.append("google/protobuf/timestamp.proto")
    timestamp = descriptor_pb2.FileDescriptorProto(
        name="google/protobuf/timestamp.proto", package="google.protobuf", syntax="proto3"
    )
    ts = timestamp.message_type.add(name="Timestamp")
    add_field(ts, "seconds", 1, F.TYPE_INT64)
    add_field(message(file), "booked_at", 12, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    reserve(file, numbers=(20,), names=("legacy",))
    file_set = descriptor_pb2.FileDescriptorSet(file=[timestamp, file])
    schema = parse_protobuf_native(to_protobuf_native_data(file_set, f"{PACKAGE}.LedgerEntry", file.name).encode())
    text = proto_text(schema)
    expected_lines = [
        'syntax = "proto3";',
        "package acme.payments;",
        'import "google/protobuf/timestamp.proto";',
        "message LedgerEntry {",
        "  int64 amount = 3;",
        "  Status status = 4;",
        "  repeated string tags = 5;",
        "  oneof counterparty {",
        "    string iban = 6;",
        "  map<string, int32> limits = 8;",
        '  string note = 11 [json_name = "remark"];',
        "  google.protobuf.Timestamp booked_at = 12;",
        "  reserved 20;",
        '  reserved "legacy";',
        "message Posting {",
        "enum Status {",
        "  VOID = 2;",
        "// ---- google/protobuf/timestamp.proto (package google.protobuf) ----",
        "message Timestamp {",
    ]
    lines = text.splitlines()
    positions = [lines.index(line) for line in expected_lines]
    assert positions == sorted(positions), text
    assert "Transfer" not in text  # not reachable from the root
    assert "LimitsEntry" not in text  # rendered as map<...>


def test_proto_text_keeps_the_field_order_of_the_schema_and_normalises_type_order() -> None:
    """Fields read in the order they are declared (issue 19: the Diff text keeps each schema's own order);
    only the order of top-level types, which protoc does not make meaningful, is normalised."""
    shuffled = base()
    entry = message(shuffled)
    fields = list(entry.field)[::-1]
    del entry.field[:]
    entry.field.extend(fields)
    types = list(shuffled.message_type)[::-1]
    del shuffled.message_type[:]
    shuffled.message_type.extend(types)
    text, plain = proto_text(to_schema(shuffled)), proto_text(to_schema(base()))
    names = [f.name for f in fields]
    positions = [text.index(f" {name} = ") for name in names]
    assert positions == sorted(positions), text
    plain_positions = [plain.index(f" {name} = ") for name in names]
    assert plain_positions == sorted(plain_positions, reverse=True), plain
    assert [line for line in text.splitlines() if line.startswith("message ")] == [
        line for line in plain.splitlines() if line.startswith("message ")
    ]


def test_proto_text_of_proto2_shows_labels_and_defaults() -> None:
    file = base("proto2")
    field(file, "note").default_value = "n/a"
    field(file, "entry_id").label = F.LABEL_REQUIRED
    text = proto_text(to_schema(file))
    assert 'syntax = "proto2";' in text
    assert "  required string entry_id = 1;" in text
    assert '  optional string note = 11 [default = "n/a"];' in text
    assert "    string iban = 6;" in text  # oneof members carry no label


# Cross-check against the real buf CLI -----------------------------------------------------------------------------

# Which of our codes stand for each buf rule (several buf rules can describe one reused number).
BUF_RULE_CODES: dict[str, set[AdvisoryCode]] = {
    "FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED": {A.PROTOBUF_FIELD_DELETED},
    "FIELD_NO_DELETE_UNLESS_NAME_RESERVED": {A.PROTOBUF_FIELD_DELETED},
    "FIELD_WIRE_COMPATIBLE_TYPE": {A.PROTOBUF_FIELD_TYPE_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_WIRE_JSON_COMPATIBLE_TYPE": {A.PROTOBUF_FIELD_TYPE_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_WIRE_COMPATIBLE_CARDINALITY": {A.PROTOBUF_FIELD_CARDINALITY_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY": {A.PROTOBUF_FIELD_CARDINALITY_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_SAME_ONEOF": {A.PROTOBUF_FIELD_ONEOF_CHANGED},
    "FIELD_SAME_NAME": {A.PROTOBUF_JSON_NAME_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_SAME_JSON_NAME": {A.PROTOBUF_JSON_NAME_CHANGED, A.PROTOBUF_FIELD_NUMBER_REUSED},
    "FIELD_SAME_DEFAULT": {A.PROTOBUF_FIELD_DEFAULT_CHANGED},
    "MESSAGE_SAME_REQUIRED_FIELDS": {A.PROTOBUF_REQUIRED_FIELDS_CHANGED},
    "MESSAGE_SAME_JSON_FORMAT": {A.PROTOBUF_JSON_FORMAT_CHANGED},
    "RESERVED_MESSAGE_NO_DELETE": {A.PROTOBUF_RESERVED_DELETED},
    "ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED": {A.PROTOBUF_ENUM_VALUE_DELETED},
    "ENUM_VALUE_NO_DELETE_UNLESS_NAME_RESERVED": {A.PROTOBUF_ENUM_VALUE_DELETED},
    "ENUM_VALUE_SAME_NAME": {A.PROTOBUF_ENUM_VALUE_NAME_CHANGED},
    "ENUM_SAME_JSON_FORMAT": {A.PROTOBUF_JSON_FORMAT_CHANGED},
    "RESERVED_ENUM_NO_DELETE": {A.PROTOBUF_RESERVED_DELETED},
}
# Under WIRE_JSON, buf checks types and cardinalities with its stricter JSON-aware twins of the WIRE rules.
JSON_TWIN = {
    "FIELD_WIRE_COMPATIBLE_TYPE": "FIELD_WIRE_JSON_COMPATIBLE_TYPE",
    "FIELD_WIRE_COMPATIBLE_CARDINALITY": "FIELD_WIRE_JSON_COMPATIBLE_CARDINALITY",
}


def _buf_binary() -> str | None:
    candidate = Path(sys.executable).with_name("buf")
    return str(candidate) if candidate.exists() else shutil.which("buf")


@pytest.fixture(scope="module")
def buf() -> str:
    binary = _buf_binary()
    if binary is None:
        pytest.skip("the buf CLI is not installed (pip install buf-bin)")
    return binary


def _run_buf(buf: str, tmp: Path, old: bytes, new: bytes, rule_sets: tuple[str, ...]) -> dict[str, set[str]]:
    """The rules buf reports under each rule set. The runs go side by side: each mostly waits (about a third of
    its time on a CPU)."""
    (tmp / "old.binpb").write_bytes(old)
    (tmp / "new.binpb").write_bytes(new)

    def command(rule_set: str) -> list[str]:
        config = json.dumps({"version": "v2", "breaking": {"use": [rule_set]}})
        return [buf, "breaking", "new.binpb", "--against", "old.binpb", "--config", config, "--error-format=json"]

    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    runs = {rule_set: subprocess.Popen(command(rule_set), cwd=tmp, **pipes) for rule_set in rule_sets}
    found = {}
    for rule_set, run in runs.items():
        out, err = run.communicate(timeout=30)
        assert run.returncode in (0, 100), err  # 100: breaking changes found
        found[rule_set] = {json.loads(line)["type"] for line in out.splitlines() if line.strip()}
    return found


def _disagreements(reported: set[str], findings: list[Finding], rule_set: str) -> list[str]:
    """Empty when our findings under `rule_set` flag a break iff buf does, name only rules buf reported, and some
    advisory stands for every rule buf reported."""
    ours = [f for f in findings if rule_set == "WIRE_JSON" or f.rule_set == WIRE]
    our_rules = {JSON_TWIN.get(f.rule, f.rule) if rule_set == "WIRE_JSON" else f.rule for f in ours}
    codes = {f.code for f in ours}
    problems = []
    if bool(ours) != bool(reported):
        problems.append(f"{rule_set}: buf reported {sorted(reported)}, we found {sorted(our_rules)}")
    problems += [f"{rule_set}: we report {rule}, buf does not" for rule in sorted(our_rules - reported)]
    problems += [
        f"{rule_set}: no advisory stands for buf's {rule}"
        for rule in sorted(reported)
        if not BUF_RULE_CODES[rule] & codes
    ]
    return problems


@pytest.mark.parametrize(("case", "old_change"), PARAMS)
def test_cross_check_with_buf_cli(buf: str, tmp_path: Path, case: Case, old_change: Mutation | None) -> None:
    old, new = _pair(case, old_change)
    findings = buf_findings(to_schema(old), to_schema(new, case.root))
    old_bytes = descriptor_pb2.FileDescriptorSet(file=[old]).SerializeToString()
    new_bytes = descriptor_pb2.FileDescriptorSet(file=[new]).SerializeToString()
    reported = _run_buf(buf, tmp_path, old_bytes, new_bytes, ("WIRE", "WIRE_JSON"))
    problems = [found for rule_set, rules in reported.items() for found in _disagreements(rules, findings, rule_set)]
    if case.buf_differs:
        assert problems, f"buf now agrees; drop the documented divergence: {case.buf_differs}"
    else:
        assert problems == []


def test_buf_cross_check_covers_every_advisory_code() -> None:
    covered = {code for case, _ in ALL if not case.buf_differs for code, _ in case.expected}
    protobuf_codes = {c for c in AdvisoryCode if c.name.startswith("PROTOBUF_") and c is not A.PROTOBUF_NO_CHECKER}
    assert covered == protobuf_codes
    assert sum(1 for case, _ in ALL if not case.buf_differs) >= 12
