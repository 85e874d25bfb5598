"""The semantic diff of two PROTOBUF_NATIVE schemas: what changed in the root's message graph, each change marked
for BACKWARD and FORWARD reading on the wire (the model and pairing are in _descriptor.py).

Pointers of semantic changes are `/messages/<full name>`, `/messages/<full name>/fields/<number>`,
`/enums/<full name>` and `/enums/<full name>/values/<number>` (descriptors have no JSON document to point into);
old pointers use old names, new pointers new names, "" when the side lacks the element.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._changes import Change, ChangeKind, Effect
from ._descriptor import (
    CARDINALITY_WIRE_GROUP,
    MAX_ENUM_NUMBER,
    OPTIONAL,
    REQUIRED,
    SINGULAR,
    WIDENINGS,
    WIRE,
    DescriptorModel,
    EnumModel,
    F,
    FieldModel,
    FileModel,
    MessageModel,
    Pairing,
    card_text,
    default_text,
    defaults_equal,
    in_ranges,
    oneof_text,
    paired,
    reserved_text,
    type_break,
)
from ._native import ProtobufNativeSchema

# Semantic diff --------------------------------------------------------------------------------------------------


def diff_protobuf(old: ProtobufNativeSchema, new: ProtobufNativeSchema) -> list[Change]:
    """What changed in the root's message graph, each change marked for BACKWARD (new reads old data) and FORWARD
    (old reads new data) reading on the wire. Pointers: see the module docstring."""
    ctx = Pairing.of(old, new)
    changes: list[Change] = []
    if ctx.old.root != ctx.new.root:
        changes.append(
            Change(
                kind=ChangeKind.ROOT_MESSAGE_CHANGED,
                path=ctx.new.root,
                message=f"root message {ctx.old.root} → {ctx.new.root}: Pulsar refuses a root message change under "
                "every strategy except ALWAYS_COMPATIBLE",
                backward=Effect.BREAKS,
                forward=Effect.BREAKS,
                before=ctx.old.root,
                after=ctx.new.root,
                old_pointer=_message_pointer(ctx.old.root),
                new_pointer=_message_pointer(ctx.new.root),
            )
        )
    old_file, new_file = ctx.old.files[ctx.old.root_file], ctx.new.files[ctx.new.root_file]
    if (old_file.syntax, old_file.edition) != (new_file.syntax, new_file.edition):
        changes.append(
            Change(
                kind=ChangeKind.PROPERTY_CHANGED,
                path=new_file.name,
                message=f"syntax of {new_file.name} {_syntax_text(old_file)} → {_syntax_text(new_file)}: field "
                "presence and JSON support may change with it",
                before=_syntax_text(old_file),
                after=_syntax_text(new_file),
            )
        )
    pairs = list(paired(ctx))
    paired_old = {a for a, _ in pairs}
    paired_new = {b for _, b in pairs}
    for name in ctx.old.reachable:
        if name not in paired_old:
            changes.append(_type_removed(ctx.old, name))
    for old_name, new_name in pairs:
        if old_name in ctx.old.messages:
            changes += _message_changes(ctx.old.messages[old_name], ctx.new.messages[new_name], ctx)
        else:
            changes += _enum_changes(ctx.old.enums[old_name], ctx.new.enums[new_name])
    for name in ctx.new.reachable:
        if name not in paired_new:
            changes.append(_type_added(ctx.new, name))
    return changes


def _syntax_text(file: FileModel) -> str:
    return f"edition {file.edition}" if file.syntax == "editions" else file.syntax


def _message_pointer(name: str, number: int | None = None) -> str:
    return f"/messages/{name}" + ("" if number is None else f"/fields/{number}")


def _enum_pointer(name: str, number: int | None = None) -> str:
    return f"/enums/{name}" + ("" if number is None else f"/values/{number}")


def _type_removed(model: DescriptorModel, name: str) -> Change:
    is_message = name in model.messages
    return Change(
        kind=ChangeKind.MESSAGE_REMOVED if is_message else ChangeKind.ENUM_REMOVED,
        path=name,
        message=f"{'message' if is_message else 'enum'} {name} was removed",
        before=name,
        old_pointer=_message_pointer(name) if is_message else _enum_pointer(name),
    )


def _type_added(model: DescriptorModel, name: str) -> Change:
    is_message = name in model.messages
    return Change(
        kind=ChangeKind.MESSAGE_ADDED if is_message else ChangeKind.ENUM_ADDED,
        path=name,
        message=f"{'message' if is_message else 'enum'} {name} was added",
        after=name,
        new_pointer=_message_pointer(name) if is_message else _enum_pointer(name),
    )


def _message_changes(old: MessageModel, new: MessageModel, ctx: Pairing) -> Iterator[Change]:
    old_only = {n: f for n, f in old.fields.items() if n not in new.fields}
    new_only = {n: f for n, f in new.fields.items() if n not in old.fields}
    new_only_by_name = {f.name: f for f in new_only.values()}
    moved: set[str] = set()
    for number, was in old_only.items():
        now = new_only_by_name.get(was.name)
        if now is not None:
            moved.add(was.name)
            yield _field_change(
                ChangeKind.FIELD_NUMBER_CHANGED,
                old,
                new,
                was,
                now,
                f"field `{was.name}` of {new.full_name} moved from #{number} to #{now.number}: on the wire the "
                "number is the field, so each side loses the other's value",
                Effect.BREAKS,
                Effect.BREAKS,
                str(number),
                str(now.number),
            )
    for number, was in old_only.items():
        if was.name in moved:
            continue
        kept = "reserved" if in_ranges(number, new.reserved) else "not reserved: a later field may reuse it"
        required = was.cardinality == REQUIRED
        yield _field_change(
            ChangeKind.FIELD_REMOVED,
            old,
            new,
            was,
            None,
            f"field `{was.name}` (#{number}, {card_text(was)}{was.type_text()}) was removed from {old.full_name} "
            f"(number {kept})" + ("; old readers require it" if required else "; old readers see its default"),
            Effect.OK,
            Effect.BREAKS if required else Effect.OK,
            f"{card_text(was)}{was.type_text()} {was.name} = {number}",
            None,
        )
    for number, now in new_only.items():
        if now.name in moved:
            continue
        required = now.cardinality == REQUIRED
        was_reserved = in_ranges(number, old.reserved)
        yield _field_change(
            ChangeKind.FIELD_ADDED,
            old,
            new,
            None,
            now,
            f"field `{now.name}` (#{number}, {card_text(now)}{now.type_text()}) was added to {new.full_name}"
            + ("; it is required, so old data (without it) fails to parse" if required else "")
            + (
                "; its number was reserved, so data from older versions may carry a deleted field there"
                if was_reserved
                else ""
            ),
            Effect.BREAKS if required else Effect.RISK if was_reserved else Effect.OK,
            Effect.OK,
            None,
            f"{card_text(now)}{now.type_text()} {now.name} = {number}",
        )
    for number, was in old.fields.items():
        now = new.fields.get(number)
        if now is not None:
            yield from _common_field_changes(old, new, was, now, ctx)
    before, after = reserved_text(old.reserved, old.reserved_names), reserved_text(new.reserved, new.reserved_names)
    if before != after:
        yield Change(
            kind=ChangeKind.RESERVED_CHANGED,
            path=new.full_name,
            message=f"reserved numbers/names of {new.full_name} changed: {before or 'none'} → {after or 'none'}",
            before=before,
            after=after,
            old_pointer=_message_pointer(old.full_name),
            new_pointer=_message_pointer(new.full_name),
        )


def _field_change(
    kind: ChangeKind,
    old: MessageModel,
    new: MessageModel,
    was: FieldModel | None,
    now: FieldModel | None,
    message: str,
    backward: Effect,
    forward: Effect,
    before: str | None,
    after: str | None,
) -> Change:
    named = now or was
    assert named is not None
    return Change(
        kind=kind,
        path=f"{(new if now else old).full_name}.{named.name}",
        message=message,
        backward=backward,
        forward=forward,
        before=before,
        after=after,
        old_pointer=_message_pointer(old.full_name, was.number) if was else "",
        new_pointer=_message_pointer(new.full_name, now.number) if now else "",
    )


def _common_field_changes(
    old: MessageModel, new: MessageModel, was: FieldModel, now: FieldModel, ctx: Pairing
) -> Iterator[Change]:
    wire_rule, _ = type_break(was, now, ctx)
    old_type = _type_text_in(was, ctx)
    cardinality_wire = CARDINALITY_WIRE_GROUP[was.cardinality] != CARDINALITY_WIRE_GROUP[now.cardinality]
    reused = was.name != now.name and (wire_rule == WIRE or cardinality_wire)
    label = f"field `{now.name}` (#{now.number})"
    if was.name != now.name:
        yield _field_change(
            ChangeKind.FIELD_RENAMED,
            old,
            new,
            was,
            now,
            (
                f"field #{now.number} of {new.full_name} now belongs to a different field: `{was.name}` "
                f"({was.type_text()}) → `{now.name}` ({now.type_text()}); the number was reused"
                if reused
                else f"field #{now.number} of {new.full_name} was renamed `{was.name}` → `{now.name}`: same on the "
                "wire, but JSON uses the new name"
            ),
            Effect.BREAKS if reused else Effect.OK,
            Effect.BREAKS if reused else Effect.OK,
            was.name,
            now.name,
        )
    if old_type != now.type_text():
        if wire_rule == WIRE:
            kind, backward, forward, why = ChangeKind.TYPE_CHANGED, Effect.BREAKS, Effect.BREAKS, "not wire-compatible"
        elif (was.type.kind, now.type.kind) in WIDENINGS:
            kind, backward, forward = ChangeKind.TYPE_PROMOTED, Effect.OK, Effect.RISK
            why = "the new schema reads every old value; old readers may misread new ones (truncated, or not UTF-8)"
        elif was.type.kind == now.type.kind == F.TYPE_ENUM:
            kind, backward, forward = ChangeKind.TYPE_CHANGED, Effect.OK, Effect.RISK
            why = "the new enum keeps every old value; old readers may meet values they lack"
        else:
            kind, backward, forward = ChangeKind.TYPE_CHANGED, Effect.RISK, Effect.RISK
            why = "same wire encoding, but values may be reinterpreted (sign, width or bytes vs text)"
        yield _field_change(
            kind,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed type {old_type} → {now.type_text()}: {why}",
            backward,
            forward,
            old_type,
            now.type_text(),
        )
    if was.cardinality != now.cardinality:
        backward = forward = Effect.BREAKS if cardinality_wire else Effect.OK
        if {was.cardinality, now.cardinality} <= {SINGULAR, OPTIONAL, REQUIRED}:
            backward = Effect.BREAKS if now.cardinality == REQUIRED else Effect.OK
            forward = Effect.BREAKS if was.cardinality == REQUIRED else Effect.OK
        yield _field_change(
            ChangeKind.FIELD_LABEL_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed from {was.cardinality} to {now.cardinality}"
            + (": a different wire encoding" if cardinality_wire and backward == forward else ""),
            backward,
            forward,
            was.cardinality,
            now.cardinality,
        )
    if was.oneof != now.oneof:
        yield _field_change(
            ChangeKind.FIELD_ONEOF_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} moved {oneof_text(was.oneof)} → {oneof_text(now.oneof)}: a reader "
            "keeps only one member of a oneof, so values may be dropped",
            Effect.RISK,
            Effect.RISK,
            was.oneof or None,
            now.oneof or None,
        )
    if was.default is not None and now.default is not None and not defaults_equal(was, now):
        yield _field_change(
            ChangeKind.DEFAULT_CHANGED,
            old,
            new,
            was,
            now,
            f"{label} of {new.full_name} changed default {default_text(was)} → {default_text(now)}: data "
            "without the field reads differently on each side",
            Effect.RISK,
            Effect.RISK,
            default_text(was),
            default_text(now),
        )
    if was.json_name != now.json_name and was.name == now.name:
        yield _field_change(
            ChangeKind.PROPERTY_CHANGED,
            old,
            new,
            was,
            now,
            f'{label} of {new.full_name} changed json_name "{was.json_name}" → "{now.json_name}": same on the wire, '
            "JSON uses the new key",
            Effect.OK,
            Effect.OK,
            was.json_name,
            now.json_name,
        )


def _type_text_in(was: FieldModel, ctx: Pairing) -> str:
    """The old field's type text with old names translated, so a renamed root is not a type change by itself."""
    translate = ctx.names
    if was.map_key is not None and was.map_value is not None:
        key, value = was.map_key, was.map_value
        return f"map<{key.text() if not key.name else translate(key.name)}, " + (
            f"{value.text() if not value.name else translate(value.name)}>"
        )
    return was.type.text() if not was.type.name else translate(was.type.name)


def _enum_changes(old: EnumModel, new: EnumModel) -> Iterator[Change]:
    old_numbers, new_numbers = old.names_by_number(), new.names_by_number()
    old_number_of, new_number_of = dict(old.values), dict(new.values)
    moved = {n for n, number in old_number_of.items() if n in new_number_of and new_number_of[n] != number}

    def change(
        kind: ChangeKind,
        name: str,
        message: str,
        backward: Effect,
        forward: Effect,
        before: str | None = None,
        after: str | None = None,
    ) -> Change:
        was_number, now_number = old_number_of.get(name), new_number_of.get(name)
        return Change(
            kind=kind,
            path=f"{new.full_name}.{name}",
            message=message,
            backward=backward,
            forward=forward,
            before=before,
            after=after,
            old_pointer=_enum_pointer(old.full_name, was_number) if was_number is not None else "",
            new_pointer=_enum_pointer(new.full_name, now_number) if now_number is not None else "",
        )

    for name in sorted(moved, key=old_number_of.__getitem__):
        yield change(
            ChangeKind.ENUM_VALUE_NUMBER_CHANGED,
            name,
            f"enum value {name} of {new.full_name} changed number {old_number_of[name]} → {new_number_of[name]}: "
            "each side decodes the other's number as a different (or unknown) value",
            Effect.BREAKS,
            Effect.BREAKS,
            before=str(old_number_of[name]),
            after=str(new_number_of[name]),
        )
    for number, names in old_numbers.items():
        kept = [n for n in names if n not in moved]
        if number not in new_numbers:
            for name in kept:
                yield change(
                    ChangeKind.ENUM_VALUE_REMOVED,
                    name,
                    f"enum value {name} = {number} was removed from {old.full_name}: the new schema reads it in old "
                    "data as an unknown value",
                    Effect.RISK,
                    Effect.OK,
                    before=f"{name} = {number}",
                )
            continue
        now = [n for n in new_numbers[number] if n not in moved]
        if kept and now and set(kept) != set(now):
            yield change(
                ChangeKind.ENUM_VALUE_RENAMED,
                now[0],
                f"enum value {number} of {new.full_name} was renamed {'/'.join(kept)} → {'/'.join(now)}: same on "
                "the wire, but JSON uses names",
                Effect.OK,
                Effect.OK,
                before="/".join(kept),
                after="/".join(now),
            )
    for number, names in new_numbers.items():
        if number in old_numbers:
            continue
        for name in names:
            if name not in moved:
                yield change(
                    ChangeKind.ENUM_VALUE_ADDED,
                    name,
                    f"enum value {name} = {number} was added to {new.full_name}: old readers see an unknown value",
                    Effect.OK,
                    Effect.RISK,
                    after=f"{name} = {number}",
                )
    before = reserved_text(old.reserved, old.reserved_names, MAX_ENUM_NUMBER)
    after = reserved_text(new.reserved, new.reserved_names, MAX_ENUM_NUMBER)
    if before != after:
        yield Change(
            kind=ChangeKind.RESERVED_CHANGED,
            path=new.full_name,
            message=f"reserved numbers/names of enum {new.full_name} changed: {before or 'none'} → {after or 'none'}",
            before=before,
            after=after,
            old_pointer=_enum_pointer(old.full_name),
            new_pointer=_enum_pointer(new.full_name),
        )
