"""Three-way merge of Avro schemas (AVRO, JSON and PROTOBUF data): the change from a base to ours replayed on
theirs, record by record and field by field (registry/_three_way.py has the rules).

Each side is parsed (_schema.py) and read into a plain form: the root type, and every named type by its full
name, so a nested record merges as itself wherever each side defines it. Records merge field by field (type,
default, doc, order, aliases, attributes), enums symbol by symbol, unions branch by branch (named branches by
full name, others by kind), arrays and maps by their items; any other type is taken whole. A named type one side
changed that the merge no longer uses (the other side removed the field holding it) is a conflict too, since the
change would be lost. The merged schema is written as canonical JSON (the text the diffs show).
"""

from __future__ import annotations

import json
from typing import Any

from .._three_way import MISSING, Merger
from ._diff import avro_text
from ._nodes import Array, AvroSchema, Enum, Field, Fixed, Map, Named, Node, Primitive, Record, Union, default_json

Form = dict[str, Any]


def merge_avro(base: AvroSchema, ours: AvroSchema, theirs: AvroSchema, merger: Merger) -> str:
    """The merged schema's canonical JSON text; conflicts are added to `merger` (the text is then not meant
    to be used)."""
    (b_root, b_types), (o_root, o_types), (t_root, t_types) = _form(base), _form(ours), _form(theirs)
    root = _expr(merger, "the schema's root type", b_root, o_root, t_root)
    types: dict[str, Form] = {}
    for name in dict.fromkeys([*t_types, *o_types, *b_types]):
        b, o, t = b_types.get(name, MISSING), o_types.get(name, MISSING), t_types.get(name, MISSING)
        # A side without the type no longer uses it: that is no change to the type itself.
        o = b if o is MISSING else o
        t = b if t is MISSING else t
        if b is MISSING or o is MISSING or t is MISSING or o["kind"] != t["kind"] or b["kind"] != t["kind"]:
            merged = merger.value(f"type {name}", b, o, t)
        else:
            merged = _named(merger, name, b, o, t)
        if merged is not MISSING:
            types[name] = merged
    used = _used(root, types)
    for label, side, side_root in (("the proposal", o_types, o_root), ("the latest version", t_types, t_root)):
        reachable = _used(side_root, side)
        for name in sorted(reachable - used):
            if name in b_types and side[name] != b_types[name]:
                merger.conflicts.append(f"type {name} (changed by {label}, no longer used by the other side)")
    return avro_text(json.dumps(_write(root, types, None, set())))


# --- the plain form ---------------------------------------------------------------------------------------------


def _form(schema: AvroSchema) -> tuple[Any, dict[str, Form]]:
    types: dict[str, Form] = {}

    def expr(node: Node) -> Any:
        if isinstance(node, Named):
            if node.fullname not in types:
                types[node.fullname] = {"kind": node.kind}  # a recursive reference finds it while it is made
                types[node.fullname] = definition(node)
            return {"ref": node.fullname}
        if isinstance(node, Union):
            return {"union": {_branch_key(b): expr(b) for b in node.branches}}
        if isinstance(node, Array):
            return {"array": expr(node.items), "props": dict(node.props)}
        if isinstance(node, Map):
            return {"map": expr(node.values), "props": dict(node.props)}
        assert isinstance(node, Primitive)
        return {"primitive": node.kind, "props": dict(node.props)}

    def definition(node: Named) -> Form:
        kind = "error" if isinstance(node, Record) and node.is_error else node.kind
        common = {"kind": kind, "doc": node.doc, "aliases": sorted(node.aliases), "props": dict(node.props)}
        if isinstance(node, Record):
            return {**common, "fields": {f.name: field(f) for f in node.fields}}
        if isinstance(node, Enum):
            return {**common, "symbols": list(node.symbols), "default": node.default}
        assert isinstance(node, Fixed)
        return {**common, "size": node.size}

    def field(f: Field) -> Form:
        return {
            "type": expr(f.type),
            "default": default_json(f) if f.has_default else MISSING,
            "doc": f.doc,
            "order": f.order,
            "aliases": list(f.aliases),
            "props": dict(f.props),
        }

    return expr(schema.root), types


def _branch_key(node: Node) -> str:
    """A union branch as the diff names it: a named type by full name, any other by kind."""
    return node.fullname if isinstance(node, Named) else node.kind


# --- merging ----------------------------------------------------------------------------------------------------


def _named(merger: Merger, name: str, base: Form, ours: Form, theirs: Form) -> Form:
    merged: Form = {}
    for key in dict.fromkeys([*theirs, *ours]):
        b, o, t = base.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING)
        if key == "fields":
            merged[key] = merger.keyed(lambda f: f"field {name}.{f}", b, o, t, _field(merger))
        elif key == "symbols":
            merged[key] = merger.members(b, o, t)
        else:
            merged[key] = merger.value(f"{name} ({key})", b, o, t)
    return merged


def _field(merger: Merger) -> Any:
    def merge(where: str, base: Form, ours: Form, theirs: Form) -> Form:
        merged: Form = {}
        for key in theirs:
            if key == "type":
                merged[key] = _expr(merger, f"{where} (type)", base[key], ours[key], theirs[key])
            else:
                merged[key] = merger.value(f"{where} ({key})", base[key], ours[key], theirs[key])
        return merged

    return merge


def _expr(merger: Merger, where: str, base: Any, ours: Any, theirs: Any) -> Any:
    """A type where it is used: unions by branch, arrays and maps by their items, anything else whole."""
    shape = next(iter(theirs))
    if not all(next(iter(side)) == shape for side in (base, ours)) or shape in ("ref", "primitive"):
        return merger.value(where, base, ours, theirs)
    if shape == "union":
        branches = merger.keyed(
            lambda k: f"{where}, branch {k}",
            base["union"],
            ours["union"],
            theirs["union"],
            lambda w, b, o, t: _expr(merger, w, b, o, t),
        )
        return {"union": branches}
    return {
        shape: _expr(merger, where, base[shape], ours[shape], theirs[shape]),
        "props": merger.value(f"{where} (attributes)", base["props"], ours["props"], theirs["props"]),
    }


def _used(root: Any, types: dict[str, Form]) -> set[str]:
    """The named types `root` reaches through `types`."""
    found: set[str] = set()
    stack = [root]
    while stack:
        expr = stack.pop()
        if "ref" in expr:
            name = expr["ref"]
            if name in found or name not in types:
                continue
            found.add(name)
            stack.extend(f["type"] for f in types[name].get("fields", {}).values())
        elif "union" in expr:
            stack.extend(expr["union"].values())
        elif "array" in expr:
            stack.append(expr["array"])
        elif "map" in expr:
            stack.append(expr["map"])
    return found


# --- writing ----------------------------------------------------------------------------------------------------


def _write(expr: Any, types: dict[str, Form], space: str | None, written: set[str]) -> Any:
    """The JSON of a type where it is used: a named type defined where it is first used, named after that
    (by full name: no enclosing namespace can then mean another type)."""
    if "ref" in expr:
        name = expr["ref"]
        if name in written:
            return name
        written.add(name)
        return _definition(name, types[name], space, written, types)
    if "union" in expr:
        return [_write(b, types, space, written) for b in expr["union"].values()]
    if "array" in expr:
        return {"type": "array", "items": _write(expr["array"], types, space, written), **expr["props"]}
    if "map" in expr:
        return {"type": "map", "values": _write(expr["map"], types, space, written), **expr["props"]}
    kind = expr["primitive"]
    return {"type": kind, **expr["props"]} if expr["props"] else kind


def _definition(name: str, form: Form, space: str | None, written: set[str], types: dict[str, Form]) -> Any:
    namespace, _, simple = name.rpartition(".")
    doc: dict[str, Any] = {"type": form["kind"], "name": simple}
    if namespace != (space or ""):
        doc["namespace"] = namespace
    if form["doc"] is not None:
        doc["doc"] = form["doc"]
    if form["aliases"]:
        doc["aliases"] = form["aliases"]
    if "fields" in form:
        doc["fields"] = [_field_json(n, f, types, namespace or None, written) for n, f in form["fields"].items()]
    elif "symbols" in form:
        doc["symbols"] = form["symbols"]
        if form["default"] is not None:
            doc["default"] = form["default"]
    else:
        doc["size"] = form["size"]
    return {**doc, **form["props"]}


def _field_json(name: str, f: Form, types: dict[str, Form], space: str | None, written: set[str]) -> Any:
    doc: dict[str, Any] = {"name": name, "type": _write(f["type"], types, space, written)}
    if f["default"] is not MISSING:
        doc["default"] = f["default"]
    if f["doc"] is not None:
        doc["doc"] = f["doc"]
    if f["order"] != "ascending":
        doc["order"] = f["order"]
    if f["aliases"]:
        doc["aliases"] = f["aliases"]
    return {**doc, **f["props"]}
