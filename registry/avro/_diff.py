"""Semantic diff of two Avro schemas (AVRO, JSON, PROTOBUF data), each change marked for both readings.

Effects come from local rules (what each kind of change does to a reader), then any change a real
resolution finding points into is marked BREAKS, so the marks never contradict Pulsar's verdict.
"""

from __future__ import annotations

import json
from typing import Any

from .._changes import Change, ChangeKind, Effect
from .._model import Direction
from ._nodes import Array, AvroSchema, Enum, Field, Fixed, Map, Named, Node, Record, Union, default_json
from ._resolution import PROMOTIONS, Resolver, read_outcome

OK, RISK, BREAKS = Effect.OK, Effect.RISK, Effect.BREAKS


def diff_avro(old: AvroSchema, new: AvroSchema) -> list[Change]:
    differ = _Differ(old, new)
    differ.node(old.root, new.root, "")
    changes = differ.changes
    # Reconcile with Avro itself: a change that a resolution finding points into breaks that direction.
    backward = read_outcome(new, old, Direction.BACKWARD, None).problems
    forward = read_outcome(old, new, Direction.FORWARD, None).problems
    return [_reconcile(c, backward, forward) for c in changes]


def _reconcile(change: Change, backward: list[Any], forward: list[Any]) -> Change:
    def hit(problems: list[Any]) -> bool:
        return any(
            _inside(p.reader_path, change.new_pointer if p.direction is Direction.BACKWARD else change.old_pointer)
            or _inside(p.writer_path, change.old_pointer if p.direction is Direction.BACKWARD else change.new_pointer)
            for p in problems
        )

    b = BREAKS if change.backward is not BREAKS and hit(backward) and _specific(change) else change.backward
    f = BREAKS if change.forward is not BREAKS and hit(forward) and _specific(change) else change.forward
    if (b, f) == (change.backward, change.forward):
        return change
    return Change(
        kind=change.kind,
        path=change.path,
        message=change.message,
        backward=b,
        forward=f,
        before=change.before,
        after=change.after,
        old_pointer=change.old_pointer,
        new_pointer=change.new_pointer,
    )


def _specific(change: Change) -> bool:
    # Docs, aliases and properties never break reading; only structural changes take a finding's blame.
    return change.kind not in (
        ChangeKind.DOC_CHANGED,
        ChangeKind.PROPERTY_CHANGED,
        ChangeKind.ORDER_CHANGED,
        ChangeKind.FIELD_MOVED,
    )


def _inside(path: str, pointer: str) -> bool:
    return bool(pointer) and (path == pointer or path.startswith(pointer + "/"))


def _label(node: Node) -> str:
    return node.label


def _key(node: Node) -> str:
    """How a union branch is identified: named types by full name, others by kind."""
    return node.fullname if isinstance(node, Named) else node.kind


class _Differ:
    def __init__(self, old: AvroSchema, new: AvroSchema) -> None:
        self.changes: list[Change] = []
        self.seen: set[tuple[int, int]] = set()
        self.new_reader = Resolver(new, old)  # BACKWARD: the new schema reads old data
        self.old_reader = Resolver(old, new)  # FORWARD: the old schema reads new data

    def effects(self, old: Node, new: Node) -> tuple[Effect, Effect]:
        """Ask Avro resolution itself whether each side reads the other's values of these nodes."""
        backward = OK if self.new_reader.can_read(old, new) else BREAKS
        forward = OK if self.old_reader.can_read(new, old) else BREAKS
        return backward, forward

    def add(
        self,
        kind: ChangeKind,
        path: str,
        message: str,
        backward: Effect = OK,
        forward: Effect = OK,
        *,
        before: Any = None,
        after: Any = None,
        old: str = "",
        new: str = "",
    ) -> None:
        self.changes.append(
            Change(
                kind=kind,
                path=path or "(root)",
                message=message,
                backward=backward,
                forward=forward,
                before=_text(before),
                after=_text(after),
                old_pointer=old,
                new_pointer=new,
            )
        )

    def node(self, old: Node, new: Node, path: str) -> None:
        if isinstance(old, Union) or isinstance(new, Union):
            self.union(old, new, path)
            return
        if old.kind != new.kind:
            self.retyped(old, new, path)
            return
        if isinstance(old, Named) and isinstance(new, Named):
            self.named(old, new, path)
        if isinstance(old, Record) and isinstance(new, Record):
            if (id(old), id(new)) in self.seen:
                return
            self.seen.add((id(old), id(new)))
            self.record(old, new, path)
        elif isinstance(old, Enum) and isinstance(new, Enum):
            self.enum(old, new, path)
        elif isinstance(old, Fixed) and isinstance(new, Fixed) and old.size != new.size:
            self.add(
                ChangeKind.FIXED_SIZE_CHANGED,
                path,
                f"fixed {new.fullname} changed size {old.size} → {new.size}",
                BREAKS,
                BREAKS,
                before=old.size,
                after=new.size,
                old=old.pointer,
                new=new.pointer,
            )
        elif isinstance(old, Array) and isinstance(new, Array):
            self.node(old.items, new.items, f"{path}[]")
        elif isinstance(old, Map) and isinstance(new, Map):
            self.node(old.values, new.values, f"{path}{{}}")
        self.props(old, new, path)

    def retyped(self, old: Node, new: Node, path: str) -> None:
        backward, forward = self.effects(old, new)
        if new.kind in PROMOTIONS.get(old.kind, ()):
            both = old.kind in PROMOTIONS.get(new.kind, ())
            self.add(
                ChangeKind.TYPE_PROMOTED,
                path,
                f"{_where(path)}type {old.kind} → {new.kind}: Avro promotes {old.kind} to {new.kind}"
                + ("" if both else ", but not back, so readers on the old schema cannot read new data"),
                backward,
                forward,
                before=_label(old),
                after=_label(new),
                old=old.pointer,
                new=new.pointer,
            )
            return
        self.add(
            ChangeKind.TYPE_CHANGED,
            path,
            f"{_where(path)}type {_label(old)} → {_label(new)}",
            backward,
            forward,
            before=_label(old),
            after=_label(new),
            old=old.pointer,
            new=new.pointer,
        )

    def union(self, old: Node, new: Node, path: str) -> None:
        """Branches pair up by kind or full name; a branch on one side only is marked by whether the other
        side can still read its values (Avro picks union branches by name, structure, then promotion)."""
        old_branches = old.branches if isinstance(old, Union) else [old]
        new_branches = new.branches if isinstance(new, Union) else [new]
        new_by_key = {_key(b): b for b in new_branches}
        old_by_key = {_key(b): b for b in old_branches}
        for key, branch in old_by_key.items():
            if key in new_by_key:
                self.node(branch, new_by_key[key], path)
                continue
            readable = self.new_reader.can_read(branch, new)
            self.add(
                ChangeKind.UNION_BRANCH_REMOVED,
                path,
                f"{_where(path)}no longer declares {key}"
                + ("" if readable else ": data written with it cannot be read by the new schema"),
                OK if readable else BREAKS,
                OK,
                before=key,
                old=branch.pointer,
            )
        for key, branch in new_by_key.items():
            if key in old_by_key:
                continue
            readable = self.old_reader.can_read(branch, old)
            what = "became nullable" if key == "null" else f"now also accepts {key}"
            self.add(
                ChangeKind.UNION_BRANCH_ADDED,
                path,
                f"{_where(path)}{what}"
                + ("" if readable else ": readers on the old schema cannot read values of that branch"),
                OK,
                OK if readable else BREAKS,
                after=key,
                new=branch.pointer,
            )

    def named(self, old: Named, new: Named, path: str) -> None:
        if old.fullname != new.fullname:
            aliased = old.fullname in new.aliases
            if isinstance(new, Record):
                effect_b = effect_f = OK  # Pulsar ignores record names (advisory RECORD_RENAMED covers other tools)
            else:
                same_simple = old.name == new.name
                effect_b = OK if same_simple or aliased else BREAKS
                effect_f = OK if same_simple or new.fullname in old.aliases else BREAKS
            self.add(
                ChangeKind.NAME_CHANGED,
                path,
                f"{new.kind} {old.fullname} renamed to {new.fullname}"
                + (" (with an alias to the old name)" if aliased else ""),
                effect_b,
                effect_f,
                before=old.fullname,
                after=new.fullname,
                old=old.pointer,
                new=new.pointer,
            )
        self.metadata(
            ChangeKind.DOC_CHANGED,
            path,
            f"documentation of {new.fullname}",
            old.doc or "",
            new.doc or "",
            old.pointer,
            new.pointer,
        )
        self.metadata(
            ChangeKind.ALIASES_CHANGED,
            path,
            f"aliases of {new.fullname}",
            sorted(old.aliases),
            sorted(new.aliases),
            old.pointer,
            new.pointer,
        )

    def metadata(self, kind: ChangeKind, path: str, what: str, before: Any, after: Any, old: str, new: str) -> None:
        """Docs, aliases, sort order, attributes: worth showing, never in the way of a reader."""
        if before != after:
            self.add(kind, path, f"{what} changed", before=before, after=after, old=old, new=new)

    def record(self, old: Record, new: Record, path: str) -> None:
        matched: dict[str, Field] = {}
        for nf in new.fields:
            of = old.by_name.get(nf.name) or next((old.by_name[a] for a in nf.aliases if a in old.by_name), None)
            if of is not None and of.name not in matched:
                matched[of.name] = nf
        for of in old.fields:
            counterpart = matched.get(of.name)
            fpath = _join(path, of.name)
            if counterpart is None:
                self.add(
                    ChangeKind.FIELD_REMOVED,
                    fpath,
                    f"field {fpath!r} ({_label(of.type)}) removed"
                    + (
                        ""
                        if of.has_default
                        else "; it had no default, so readers on the old schema cannot read new data"
                    ),
                    OK,
                    OK if of.has_default else BREAKS,
                    before=_label(of.type),
                    old=of.pointer,
                )
                continue
            nf = counterpart
            if nf.name != of.name:
                self.add(
                    ChangeKind.FIELD_RENAMED,
                    fpath,
                    f"field {fpath!r} renamed to {nf.name!r} (alias {of.name!r})"
                    + (
                        ""
                        if of.has_default
                        else f"; readers on the old schema find no field {of.name!r} in new data and it has no default"
                    ),
                    OK,
                    OK if of.has_default else BREAKS,
                    before=of.name,
                    after=nf.name,
                    old=of.pointer,
                    new=nf.pointer,
                )
            self.field(of, nf, _join(path, nf.name))
        for nf in new.fields:
            if nf not in matched.values():
                fpath = _join(path, nf.name)
                self.add(
                    ChangeKind.FIELD_ADDED,
                    fpath,
                    f"field {fpath!r} ({_label(nf.type)}) added"
                    + (
                        f" with default {json.dumps(default_json(nf))}"
                        if nf.has_default
                        else " without a default, so the new schema cannot read old data"
                    ),
                    OK if nf.has_default else BREAKS,
                    OK,
                    after=_label(nf.type),
                    new=nf.pointer,
                )
        old_order = [f.name for f in old.fields if f.name in matched]
        new_order = [matched[n].name for n in old_order]
        if new_order != [f.name for f in new.fields if f in matched.values()]:
            self.add(
                ChangeKind.FIELD_MOVED,
                path or "(root)",
                f"fields of {new.fullname} were reordered "
                "(harmless for readers, but a different schema for Pulsar's dedup)",
                old=old.pointer,
                new=new.pointer,
            )

    def field(self, old: Field, new: Field, path: str) -> None:
        if old.has_default != new.has_default:
            kind = ChangeKind.DEFAULT_ADDED if new.has_default else ChangeKind.DEFAULT_REMOVED
            self.add(
                kind,
                path,
                f"field {path!r} "
                + (f"gained the default {json.dumps(default_json(new))}" if new.has_default else "lost its default"),
                before=default_json(old) if old.has_default else None,
                after=default_json(new) if new.has_default else None,
                old=old.pointer,
                new=new.pointer,
            )
        elif old.has_default and old.default != new.default:
            self.add(
                ChangeKind.DEFAULT_CHANGED,
                path,
                f"default of {path!r} changed {json.dumps(default_json(old))} → {json.dumps(default_json(new))}",
                before=default_json(old),
                after=default_json(new),
                old=old.pointer,
                new=new.pointer,
            )
        for kind, what, before, after in (
            (ChangeKind.DOC_CHANGED, "documentation", old.doc or "", new.doc or ""),
            (ChangeKind.ORDER_CHANGED, "sort order", old.order, new.order),
            (ChangeKind.ALIASES_CHANGED, "aliases", sorted(old.aliases), sorted(new.aliases)),
            (ChangeKind.PROPERTY_CHANGED, "custom attributes", old.props, new.props),
        ):
            self.metadata(kind, path, f"{what} of field {path!r}", before, after, old.pointer, new.pointer)
        self.node(old.type, new.type, path)

    def enum(self, old: Enum, new: Enum, path: str) -> None:
        for sym in old.symbols:
            if sym not in new.symbols:
                risk = OK if new.default is not None else RISK
                self.add(
                    ChangeKind.ENUM_SYMBOL_REMOVED,
                    path,
                    f"enum {new.fullname} lost symbol {sym}"
                    + (
                        ""
                        if risk is OK
                        else f": old data holding {sym} fails to read with the new schema (Pulsar does not check this)"
                    ),
                    risk,
                    OK,
                    before=sym,
                    old=old.pointer,
                    new=new.pointer,
                )
        for sym in new.symbols:
            if sym not in old.symbols:
                risk = OK if old.default is not None else RISK
                self.add(
                    ChangeKind.ENUM_SYMBOL_ADDED,
                    path,
                    f"enum {new.fullname} gained symbol {sym}"
                    + ("" if risk is OK else f": readers on the old schema fail on data holding {sym}"),
                    OK,
                    risk,
                    after=sym,
                    old=old.pointer,
                    new=new.pointer,
                )
        if old.default != new.default:
            self.add(
                ChangeKind.ENUM_DEFAULT_CHANGED,
                path,
                f"default symbol of enum {new.fullname}: {old.default} → {new.default}",
                before=old.default,
                after=new.default,
                old=old.pointer,
                new=new.pointer,
            )

    def props(self, old: Node, new: Node, path: str) -> None:
        old_logical, new_logical = old.props.get("logicalType"), new.props.get("logicalType")
        if old_logical != new_logical:
            self.add(
                ChangeKind.LOGICAL_TYPE_CHANGED,
                path,
                f"{_where(path)}logical type {old_logical or 'none'} → {new_logical or 'none'}: Avro ignores "
                "logical types when resolving, so values are reinterpreted silently",
                RISK,
                RISK,
                before=old_logical,
                after=new_logical,
                old=old.pointer,
                new=new.pointer,
            )
        rest_old = {k: v for k, v in old.props.items() if k != "logicalType"}
        rest_new = {k: v for k, v in new.props.items() if k != "logicalType"}
        if rest_old != rest_new:
            self.add(
                ChangeKind.PROPERTY_CHANGED,
                path,
                f"{_where(path)}schema attributes changed",
                before=rest_old,
                after=rest_new,
                old=old.pointer,
                new=new.pointer,
            )


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _where(path: str) -> str:
    return f"{path}: " if path else ""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# --- normalised text ------------------------------------------------------------------------------------------

_KEY_ORDER = (
    "type",
    "name",
    "namespace",
    "doc",
    "aliases",
    "size",
    "symbols",
    "default",
    "order",
    "items",
    "values",
    "fields",
    "logicalType",
    "precision",
    "scale",
)


def avro_text(text: str) -> str:
    """Canonical pretty-printed JSON: keys in a fixed, readable order (custom attributes last, sorted),
    bare primitive types without attributes written as names."""
    try:
        return json.dumps(_canonical(json.loads(text)), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, RecursionError):
        return text


def _canonical(node: Any) -> Any:
    if isinstance(node, list):
        return [_canonical(n) for n in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"type"} and isinstance(node["type"], str):
        return node["type"]
    ordered: dict[str, Any] = {}
    for key in _KEY_ORDER:
        if key in node:
            value = node[key]
            if key in ("type", "items", "values"):
                value = _canonical(value)
            elif key == "fields" and isinstance(value, list):
                value = [_canonical(f) for f in value]
            ordered[key] = value
    for key in sorted(k for k in node if k not in ordered):
        ordered[key] = node[key]
    return ordered
