"""A schema proposal's rebase: the change from its base version to its candidate, replayed on the topic's latest
version, so that what others stored meanwhile stays (a rebase that only moved the candidate onto the new latest
version silently reverted their fields).

The merge goes by what the schema is made of: Avro records (AVRO, JSON, PROTOBUF data) field by field
(avro/_merge.py), PROTOBUF_NATIVE messages field by field (protobuf/_merge.py), KEY_VALUE by its key and value
parts, and the schema's properties one by one. Anything else (a primitive's data, a type change, a schema the
parsers cannot read) is taken whole, which works only while one side alone changed it. Where both sides changed
the same thing differently the rebase is refused (RebaseConflictError naming each such part), with nothing
written; where both made the same change it is one change.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import InvalidSchemaError, RebaseConflictError
from .._history import data_of, trim
from .._key_value import decode_key_value
from .._model import SchemaInfo
from .._names import TopicName
from .._schema_data import parse_avro_data, to_schema_data
from .._state import RegistryState
from .._three_way import Merger
from .._types import AVRO_PARSED_TYPES, SchemaData, SchemaType
from ..avro._merge import merge_avro
from ..avro._nodes import AvroSchema
from ..protobuf._merge import merge_protobuf_native
from ..protobuf._native import parse_protobuf_native
from ._model import Proposal


def rebased_schema(state: RegistryState, proposal: Proposal) -> SchemaInfo:
    """The candidate of `proposal`'s next revision against the topic's latest live version: its current
    candidate when the base is still the latest (or the topic has no live version now), else the merge."""
    revision = proposal.revision
    assert revision.schema is not None
    name = TopicName.parse(proposal.target)
    entries = state.history(name)
    live = trim(entries)
    if not live or live[-1].version == revision.base_version:
        return revision.schema
    latest = live[-1]
    base = next((e for e in entries if e.version == revision.base_version and not e.deleted), None)
    if base is None:
        was = "no live schema" if revision.base_version is None else f"version {revision.base_version}, now gone,"
        raise RebaseConflictError(
            f"proposal #{proposal.id} cannot be rebased onto version {latest.version}: it was made against {was} "
            f"so there is no base to replay its change from. Revise it with a schema built on version "
            f"{latest.version}; nothing was written"
        )
    merged = merge_schemas(
        data_of(base), to_schema_data(revision.schema, validate=False), data_of(latest), _label(proposal, latest)
    )
    try:
        to_schema_data(merged)
    except InvalidSchemaError as exc:
        raise RebaseConflictError(
            f"replaying proposal #{proposal.id}'s change on version {latest.version} gives a schema Pulsar would "
            f"refuse ({exc}): the two changes cannot be kept together. Nothing was written; revise the proposal "
            "with a schema built on the latest version"
        ) from None
    return merged


def _label(proposal: Proposal, latest: Any) -> str:
    return f"proposal #{proposal.id} and version {latest.version}"


def merge_schemas(base: SchemaData, ours: SchemaData, theirs: SchemaData, who: str) -> SchemaInfo:
    """The change from `base` to `ours` replayed on `theirs`, as a SchemaInfo (admin form); RebaseConflictError
    naming every part both changed differently (`who`: the two sides, for the message)."""
    merger = Merger()
    properties = merger.keyed(
        lambda k: f"schema property {k!r}",
        base.properties,
        ours.properties,
        theirs.properties,
        merger.value,
    )
    text = _merged_text(merger, "", base, ours, theirs)
    kind = merger.value("the schema type", base.type, ours.type, theirs.type)
    if merger.conflicts:
        both = "; ".join(dict.fromkeys(merger.conflicts))
        raise RebaseConflictError(
            f"{who} both changed {both}: the rebase cannot keep both. Nothing was written; revise the proposal "
            "with a schema built on the latest version"
        )
    return SchemaInfo(type=kind, schema=text, properties=properties)


def _merged_text(merger: Merger, where: str, base: SchemaData, ours: SchemaData, theirs: SchemaData) -> str:
    """The merged schema's text in the admin form (KEY_VALUE as `{"key": ..., "value": ...}`)."""
    if ours.data == base.data or ours.data == theirs.data:
        return _admin_text(theirs)
    if theirs.data == base.data:
        return _admin_text(ours)
    if base.type is ours.type is theirs.type:
        try:
            if base.type in AVRO_PARSED_TYPES:
                b, o, t = (parse_avro_data(s.type, s.data) for s in (base, ours, theirs))
                text = merge_avro(b, o, t, _Prefixed(merger, where))
                _invalid_defaults(merger, where, base.type, text, o, t)
                return text
            if base.type is SchemaType.PROTOBUF_NATIVE:
                nb, no, nt = (parse_protobuf_native(s.data) for s in (base, ours, theirs))
                return merge_protobuf_native(nb, no, nt, _Prefixed(merger, where))
            if base.type is SchemaType.KEY_VALUE:
                return _merged_key_value(merger, base, ours, theirs)
        except InvalidSchemaError:
            pass  # a side the parsers cannot read: taken whole below
    merger.conflicts.append(f"{where}the schema as a whole ({base.type}: it cannot be merged part by part)")
    return _admin_text(theirs)


def _invalid_defaults(merger: Merger, where: str, kind: SchemaType, text: str, *sides: AvroSchema) -> None:
    """A default neither side had wrong that the merge made wrong (one side's default, the other's type) is a
    conflict: Pulsar refuses such a schema when it is registered."""
    had = {d.field for side in sides for d in side.invalid_defaults}
    for found in parse_avro_data(kind, text.encode("utf-8")).invalid_defaults:
        if found.field not in had:
            merger.conflicts.append(f"{where}field {found.field} (its default does not fit its type as merged)")


def _merged_key_value(merger: Merger, base: SchemaData, ours: SchemaData, theirs: SchemaData) -> str:
    parts = [decode_key_value(s) for s in (base, ours, theirs)]
    key = _merged_text(merger, "the key part: ", *(p.key for p in parts))
    value = _merged_text(merger, "the value part: ", *(p.value for p in parts))
    return json.dumps({"key": _part(key), "value": _part(value)}, ensure_ascii=False)


def _part(text: str) -> Any:
    return json.loads(text) if text.strip() else ""


def _admin_text(schema: SchemaData) -> str:
    if schema.type is SchemaType.KEY_VALUE:
        parts = decode_key_value(schema)
        return json.dumps({"key": _part(_admin_text(parts.key)), "value": _part(_admin_text(parts.value))})
    return schema.data.decode("utf-8")


class _Prefixed(Merger):
    """A merger that names its conflicts within a part (the key or value of a KEY_VALUE schema)."""

    def __init__(self, outer: Merger, prefix: str) -> None:
        super().__init__(outer.conflicts)
        self._prefix = prefix

    def value(self, where: str, base: Any, ours: Any, theirs: Any) -> Any:
        return super().value(self._prefix + where, base, ours, theirs)
