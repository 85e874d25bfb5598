"""Schema types and the raw form the registry stores: the values every other core module stands on.

They import nothing else of the core but its errors, so the rules, the limits and the KEY_VALUE layout can all
use them without an import circle. Names are Pulsar's (pulsar-semantics.md §1).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._errors import InvalidSchemaError


class SchemaType(enum.StrEnum):
    """Pulsar's `SchemaType`, including the client-side AUTO* types that the registry must refuse (§1)."""

    NONE = "NONE"
    STRING = "STRING"
    JSON = "JSON"
    PROTOBUF = "PROTOBUF"
    AVRO = "AVRO"
    BOOLEAN = "BOOLEAN"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DATE = "DATE"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    KEY_VALUE = "KEY_VALUE"
    INSTANT = "INSTANT"
    LOCAL_DATE = "LOCAL_DATE"
    LOCAL_TIME = "LOCAL_TIME"
    LOCAL_DATE_TIME = "LOCAL_DATE_TIME"
    PROTOBUF_NATIVE = "PROTOBUF_NATIVE"
    EXTERNAL = "EXTERNAL"
    BYTES = "BYTES"
    AUTO = "AUTO"
    AUTO_CONSUME = "AUTO_CONSUME"
    AUTO_PUBLISH = "AUTO_PUBLISH"

    @property
    def java_value(self) -> int:
        """The int of Pulsar's Java enum (stored value = this + 1, negatives stored as NONE)."""
        return JAVA_VALUES[self]

    @property
    def is_primitive(self) -> bool:
        return self in PRIMITIVE_TYPES

    @property
    def is_client_side(self) -> bool:
        """AUTO, AUTO_CONSUME and AUTO_PUBLISH exist only in clients; the registry refuses them (§3.7)."""
        return self in CLIENT_SIDE_TYPES

    @classmethod
    def parse(cls, value: str | SchemaType) -> SchemaType:
        """Accept a type name in any case; refuse unknown names with the list of valid ones."""
        if isinstance(value, SchemaType):
            return value
        name = str(value).strip().upper()
        if name == "KEYVALUE":
            name = "KEY_VALUE"
        try:
            return cls(name)
        except ValueError:
            valid = ", ".join(t.value for t in cls if not t.is_client_side)
            raise InvalidSchemaError(f"unknown schema type {value!r}; expected one of {valid}") from None


JAVA_VALUES: Mapping[SchemaType, int] = {
    SchemaType.NONE: 0,
    SchemaType.STRING: 1,
    SchemaType.JSON: 2,
    SchemaType.PROTOBUF: 3,
    SchemaType.AVRO: 4,
    SchemaType.BOOLEAN: 5,
    SchemaType.INT8: 6,
    SchemaType.INT16: 7,
    SchemaType.INT32: 8,
    SchemaType.INT64: 9,
    SchemaType.FLOAT: 10,
    SchemaType.DOUBLE: 11,
    SchemaType.DATE: 12,
    SchemaType.TIME: 13,
    SchemaType.TIMESTAMP: 14,
    SchemaType.KEY_VALUE: 15,
    SchemaType.INSTANT: 16,
    SchemaType.LOCAL_DATE: 17,
    SchemaType.LOCAL_TIME: 18,
    SchemaType.LOCAL_DATE_TIME: 19,
    SchemaType.PROTOBUF_NATIVE: 20,
    SchemaType.EXTERNAL: 21,
    SchemaType.BYTES: -1,
    SchemaType.AUTO: -2,
    SchemaType.AUTO_CONSUME: -3,
    SchemaType.AUTO_PUBLISH: -4,
}

PRIMITIVE_TYPES = frozenset(
    {
        SchemaType.NONE,
        SchemaType.STRING,
        SchemaType.BOOLEAN,
        SchemaType.INT8,
        SchemaType.INT16,
        SchemaType.INT32,
        SchemaType.INT64,
        SchemaType.FLOAT,
        SchemaType.DOUBLE,
        SchemaType.DATE,
        SchemaType.TIME,
        SchemaType.TIMESTAMP,
        SchemaType.INSTANT,
        SchemaType.LOCAL_DATE,
        SchemaType.LOCAL_TIME,
        SchemaType.LOCAL_DATE_TIME,
        SchemaType.BYTES,
    }
)
CLIENT_SIDE_TYPES = frozenset({SchemaType.AUTO, SchemaType.AUTO_CONSUME, SchemaType.AUTO_PUBLISH})
# Pulsar §3.3: these types are deduplicated by parsed Avro equality, every other type by sha256 of the bytes.
AVRO_PARSED_TYPES = frozenset({SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF})
# Java clients never send a schema for these, so a client declaring them behaves as "no schema" (§1).
SCHEMALESS_CLIENT_TYPES = frozenset({SchemaType.BYTES, SchemaType.NONE})


@dataclass(frozen=True, slots=True)
class SchemaData:
    """What the registry stores and compares: type, raw bytes, properties (Pulsar's `SchemaData`)."""

    type: SchemaType
    data: bytes
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KeyValueParts:
    """The two parts of KEY_VALUE schema data, each with its own type and properties, and the encoding."""

    key: SchemaData
    value: SchemaData
    encoding: str
