"""Pulsar's duplicate check (pulsar-semantics.md §3.3, `getSchemaVersionBySchemaData`): before a schema is
checked or stored, a live version equal to it is looked for, and its number returned instead of a new one.

AVRO, JSON and PROTOBUF versions are compared as parsed Avro schemas, every other type by its bytes. Parsing
is where Pulsar fails with an internal error (a default that does not match its field's type, §4.8): those
cases are refused here with a clear error instead, naming the version or the candidate at fault.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ._errors import InvalidSchemaError, PoisonedHistoryError
from ._model import SchemaVersion
from ._names import TopicName
from ._pulsar_version import PulsarLine
from ._schema_data import parse_avro_data
from ._types import AVRO_PARSED_TYPES, SchemaData, SchemaType
from .avro._json_legacy import jackson_schema
from .avro._nodes import AvroSchema


def find_duplicate(name: TopicName, live: Sequence[SchemaVersion], data: SchemaData, rules: PulsarLine) -> int | None:
    """The first live version equal to the candidate, or None.

    AVRO/JSON/PROTOBUF compare parsed Avro schemas, parsed with default validation on; Pulsar then fails
    with an internal error on an invalid default (§4.8): we refuse with a clear error instead.
    """
    if not live:
        return None
    if data.type not in AVRO_PARSED_TYPES:
        return next((e.version for e in live if e.type is data.type and e.data == data.data), None)
    try:
        new = parse_avro_data(data.type, data.data)
    except InvalidSchemaError as exc:
        raise legacy_json_refusal(data, exc, rules) from None
    if new.invalid_defaults:
        raise invalid_default_error(data.type, new)
    for entry in live:
        if entry.type in AVRO_PARSED_TYPES:
            old = parse_stored(name, entry.version, entry.type, entry.data)
            if old.invalid_defaults:
                raise poisoned_error(name, entry.version, old)
            if entry.type is data.type and old == new:
                return entry.version
        elif entry.type is data.type and entry.data == data.data:
            return entry.version
    return None


def parse_stored(name: TopicName, version: int, kind: SchemaType, data: bytes) -> AvroSchema:
    """A stored AVRO/JSON/PROTOBUF version as the duplicate check parses it.

    One that is no Avro schema poisons the topic as an invalid default does (§4.8): Pulsar's
    `getSchemaVersionBySchemaData` parses every live AVRO/JSON/PROTOBUF version with Avro's `Schema.Parser`,
    oldest first, until one equals the candidate, and the parse of this one throws (a runtime exception no layer
    converts: HTTP 500), on 3.0, 4.0 and master alike (read in each branch's source; Avro 1.12.1 throws a
    NullPointerException for the Jackson form's `"type": "object"`, 1.11 a SchemaParseException). The JSON
    schemas in the legacy Jackson JSON-Schema form that 3.0 and 4.0 store on a topic without a schema are such
    versions. Refused here with PoisonedHistoryError naming the version."""
    try:
        return parse_avro_data(kind, data)
    except InvalidSchemaError as exc:
        raise unparsable_error(name, version, kind, data, exc) from None


def unparsable_error(
    name: TopicName, version: int, kind: SchemaType, data: bytes, exc: InvalidSchemaError
) -> PoisonedHistoryError:
    """A live version the duplicate check cannot parse: every registration of an AVRO, JSON or PROTOBUF schema
    that reaches it fails in Pulsar."""
    what = (
        "a Jackson JSON-Schema document, not an Avro schema"
        if kind is SchemaType.JSON and jackson_schema(data) is not None
        else f"not an Avro schema this Pulsar line parses ({exc})"
    )
    return PoisonedHistoryError(
        f"version {version} of {name} is {what}. Pulsar's duplicate check parses every live AVRO, JSON and "
        "PROTOBUF version as Avro before it stores an AVRO, JSON or PROTOBUF schema (unless an earlier version "
        "equals it), and fails on this one with an internal error (HTTP 500). Delete the schema to start a new "
        "history."
    )


def equality_digest(schema: AvroSchema) -> bytes:
    """What dedup compares of a parsed schema: equal schemas have equal equality keys (`AvroSchema.__eq__`)."""
    return hashlib.sha256(schema.equality_key.encode("utf-8")).digest()


def legacy_json_refusal(data: SchemaData, exc: InvalidSchemaError, rules: PulsarLine) -> InvalidSchemaError:
    """The duplicate check's refusal of a candidate that does not parse as Avro; for the legacy Jackson
    JSON-Schema form (3.0/4.0), said plainly: `getSchemaVersionBySchemaData` parses the candidate with Avro's
    `Schema.Parser` whenever the topic has a live version, and what that parse throws for this form is no
    layer's to convert (HTTP 500; read in branch-3.0 and branch-4.0). So the form is only ever stored by a
    topic without a schema."""
    if data.type is not SchemaType.JSON or not rules.legacy_json or jackson_schema(data.data) is None:
        return exc
    return InvalidSchemaError(
        f"{exc}. A Jackson JSON-Schema document is taken by {rules.title} on a topic without a "
        "schema, but once the topic has one the broker's duplicate check parses every new JSON schema as "
        "Avro and fails (an internal error, HTTP 500, there): register the Avro form instead"
    )


def invalid_default_error(kind: SchemaType, schema: AvroSchema) -> InvalidSchemaError:
    """A candidate with a default its field's type refuses (Pulsar: HTTP 500 in the duplicate check)."""
    bad = schema.invalid_defaults[0]
    return InvalidSchemaError(
        f"Invalid schema definition data for {kind} schema: {bad.message} (at {bad.pointer}); Pulsar "
        "would fail this registration with an internal error (HTTP 500)"
    )


def poisoned_error(name: TopicName, version: int, schema: AvroSchema) -> PoisonedHistoryError:
    """A stored version with such a default: every later registration on the topic fails in Pulsar."""
    bad = schema.invalid_defaults[0]
    return PoisonedHistoryError(
        f"version {version} of {name} has an {bad.message} (at {bad.pointer}); Pulsar fails "
        "every later registration on this topic with an internal error (HTTP 500). Delete the "
        "schema to start a new history."
    )
