"""JSON schemas in the old Jackson JSON-Schema form, as Pulsar 3.0 and 4.0 still accept them.

Before PIP-464 (Pulsar 4.2 and master make JSON strictly Avro), a JSON schema that does not parse as Avro is
accepted when Jackson reads it as a `com.fasterxml.jackson.module.jsonSchema.JsonSchema`
(`StructSchemaDataValidator.validate`, 3.0/4.0), and `JsonSchemaCompatibilityCheck.checkCompatible` lets an
Avro schema follow such a document and such a document follow an Avro schema (the new one overwrites), while
two such documents are compatible only when their `id`s are equal. Jackson's reader is polymorphic on `"type"`
(`JsonSchemaIdResolver`: one of the JSON-Schema type names), recursively for `properties`, `items` and
`additionalProperties` (inferred from jackson-module-jsonSchema; Pulsar's mapper ignores unknown keys).
"""

from __future__ import annotations

import json
from typing import Any

JACKSON_TYPES = frozenset({"any", "array", "boolean", "integer", "null", "number", "object", "string"})
_MAX_DEPTH = 64


def _readable(doc: Any, depth: int = 0) -> bool:
    if depth > _MAX_DEPTH or not isinstance(doc, dict) or doc.get("type") not in JACKSON_TYPES:
        return False
    if "id" in doc and doc["id"] is not None and not isinstance(doc["id"], str):
        return False
    properties = doc.get("properties")
    if properties is not None and not (
        isinstance(properties, dict) and all(_readable(p, depth + 1) for p in properties.values())
    ):
        return False
    items = doc.get("items")
    if items is not None:
        parts = items if isinstance(items, list) else [items]
        if not all(_readable(p, depth + 1) for p in parts):
            return False
    extra = doc.get("additionalProperties")
    return extra is None or isinstance(extra, bool) or _readable(extra, depth + 1)


def jackson_schema(data: bytes) -> dict[str, Any] | None:
    """The document when `data` reads as a Jackson JSON-Schema, else None."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return doc if _readable(doc) else None


def jackson_id(doc: dict[str, Any]) -> str | None:
    value = doc.get("id")
    return value if isinstance(value, str) else None
