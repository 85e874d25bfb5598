"""The JSON form of the core's values: one serialiser, used by the REST API's explorer routes, the CLI's
`--json` and the app's tables, so the same question gets the same JSON everywhere.

A value's JSON is its dataclass fields, by name, plus the derived facts a reader should not have to
recompute (`Change.is_breaking`, `CompatibilityResult.message`, ...: `DERIVED` below). Enums become their
names, tuples lists, mappings objects; nested values the same way. The REST API's pydantic models describe
exactly this form for OpenAPI, and validate it (a key either side lacks fails there, so the two cannot drift).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from ._catalog import TopicPage
from ._model import CompatibilityResult, NamespacePolicy, Problem, SchemaVersion
from .explain._changes import Change, SchemaDiff
from .explain._whatif import TopicImpact, WhatIf
from .policy._preview import TopicPreview

# Properties that are part of a value's JSON, beside its fields.
DERIVED: Mapping[type, tuple[str, ...]] = {
    Change: ("is_breaking",),
    CompatibilityResult: ("message",),
    Problem: ("path", "direction_text"),
    SchemaDiff: ("backward", "forward"),
    TopicImpact: ("affected",),
    TopicPage: ("has_more",),
    TopicPreview: ("changed", "affected"),
    WhatIf: ("would_register",),
}


def to_json(value: Any) -> Any:
    """`value` as JSON-ready data (dicts, lists, strings, numbers, booleans, None)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        doc = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in DERIVED.get(type(value), ()):
            doc[name] = to_json(getattr(value, name))
        return doc
    if isinstance(value, Mapping):
        return {to_json(key) if isinstance(key, enum.Enum) else str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        return [to_json(item) for item in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")


def schema_response(entry: SchemaVersion) -> dict[str, Any]:
    """Pulsar's GetSchemaResponse for a stored version (§7.1): the schema as its REST API renders it."""
    return {
        "version": entry.version,
        "type": entry.type.value,
        "timestamp": entry.timestamp,
        "data": entry.schema,
        "properties": dict(entry.properties),
    }


def policies_json(policy: NamespacePolicy) -> dict[str, Any]:
    """The schema fields of Pulsar's namespace `Policies`, with Pulsar's JSON names (null: unset)."""
    auto = policy.auto_update_strategy
    return {
        "schema_compatibility_strategy": policy.compatibility.value,
        "schema_auto_update_compatibility_strategy": None if auto is None else auto.value,
        "is_allow_auto_update_schema": policy.allow_auto_update,
        "is_allow_auto_update_schema_with_replicator": policy.allow_auto_update_with_replicator,
        "schema_validation_enforced": policy.validation_enforced,
    }
