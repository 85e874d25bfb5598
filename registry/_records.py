"""Schemas where Python users write them: pulsar-client `Record` classes (and generated protobuf classes).

The schema is the one the installed pulsar-client sends when a producer connects: it is built by
pulsar-client itself (`AvroSchema(cls)`, `JsonSchema(cls)`, `ProtobufNativeSchema(cls)`), never rebuilt
here, so a check answers for exactly what will reach the broker. pulsar-client is an optional extra
(`pip install 'pulsar-schema-explorer[pulsar]'`), imported only when a class is read.

The pitfalls of the generated schema that users meet as a refused producer (each verified against the
installed client in tests/unit/test_records.py) are advisories with the fix in the client's own terms:
- an optional field (`note = String()`) becomes `["null", "string"]` with no default, so adding one to a
  record in use is refused under BACKWARD and FULL: `String(required_default=True)` gives it a null default;
- a declared default (`Integer(default=5)`) only reaches the schema with `required_default=True`;
- a default on an optional field (`Integer(default=5, required_default=True)`) must match the union's first
  branch, null: the schema is invalid Avro and Pulsar fails its registration with an internal error (500);
- a nested record's `_avro_namespace` that does not reach the generated schema.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from ._errors import InvalidArgumentError
from ._types import SchemaType

_RECORD_TYPES = (SchemaType.AVRO, SchemaType.JSON)
_INSTALL = "pip install 'pulsar-schema-explorer[pulsar]'"


class RecordError(InvalidArgumentError):
    """A `--record` that names no Record class this process can load, or pulsar-client missing."""


def client_version() -> str:
    """The installed pulsar-client's version ("" when it is not installed)."""
    try:
        return metadata.version("pulsar-client")
    except metadata.PackageNotFoundError:
        return ""


def load_record(spec: str | type) -> type:
    """A class from "package.module:ClassName" (or the class itself), checked to be a pulsar-client Record
    or a generated protobuf message class."""
    if isinstance(spec, type):
        record = spec
        where = f"{spec.__module__}:{spec.__qualname__}"
    else:
        where = str(spec).strip()
        module_name, sep, attribute = where.partition(":")
        if not sep or not module_name or not attribute:
            raise RecordError(f"--record {where!r}: expected package.module:ClassName")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the user's module: any error while importing it is theirs to see
            raise RecordError(f"--record {where!r}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
        found: Any = module
        for part in attribute.split("."):
            try:
                found = getattr(found, part)
            except AttributeError:
                raise RecordError(f"--record {where!r}: {module_name} has no {attribute}") from None
        record = found
    _pulsar_schema()
    if not isinstance(record, type) or not (_is_record(record) or _is_protobuf(record)):
        kind = type(record).__name__ if not isinstance(record, type) else f"the class {record.__qualname__}"
        raise RecordError(
            f"--record {where!r} is {kind}, not a pulsar-client Record class or a generated protobuf message class"
        )
    return record


def record_schema(record: type, schema_type: SchemaType | str | None = None) -> tuple[SchemaType, str]:
    """(type, schema text) exactly as pulsar-client sends them for `record`: AVRO (default) or JSON for a
    Record class, PROTOBUF_NATIVE for a generated protobuf class."""
    schema = _pulsar_schema()
    if _is_protobuf(record):
        wanted = SchemaType.PROTOBUF_NATIVE if schema_type is None else SchemaType.parse(schema_type)
        if wanted is not SchemaType.PROTOBUF_NATIVE:
            raise RecordError(f"{record.__qualname__} is a protobuf message class: its schema type is PROTOBUF_NATIVE")
        info = schema.ProtobufNativeSchema(record).schema_info()
        return SchemaType.PROTOBUF_NATIVE, str(info.schema())
    kind = SchemaType.AVRO if schema_type is None else SchemaType.parse(schema_type)
    if kind not in _RECORD_TYPES:
        raise RecordError(
            f"a Record class has an AVRO or JSON schema (pulsar-client's AvroSchema or JsonSchema), not {kind}"
        )
    build = schema.AvroSchema if kind is SchemaType.AVRO else schema.JsonSchema
    try:
        info = build(record).schema_info()
    except Exception as exc:  # pulsar-client refusing the class (e.g. an unsupported field type)
        raise RecordError(f"pulsar-client cannot build a schema for {record.__qualname__}: {exc}") from None
    # The client sends its pretty-printed text; the broker compares parsed schemas, so keep it as sent.
    return kind, str(info.schema())


def record_fields(record: type) -> dict[str, Any]:
    """The Record class's declared fields (pulsar-client's `_fields`), by name."""
    return dict(getattr(record, "_fields", {}) or {})


def declared(field: Any) -> tuple[Any, bool, bool]:
    """(default, required, required_default) as the Record class declares the field."""
    return (
        getattr(field, "_default", None),
        bool(getattr(field, "_required", False)),
        bool(getattr(field, "_required_default", False)),
    )


def nested_record(field: Any) -> type | None:
    """The Record class of a field that holds a nested record (pulsar-client declares it as an instance)."""
    return type(field) if isinstance(field, _pulsar_schema().Record) else None


def _pulsar_schema() -> Any:
    try:
        return importlib.import_module("pulsar.schema")
    except ImportError:
        raise RecordError(f"reading a pulsar-client Record class needs pulsar-client: {_INSTALL}") from None


def _is_record(cls: type) -> bool:
    schema = _pulsar_schema()
    return issubclass(cls, schema.Record) and cls is not schema.Record


def _is_protobuf(cls: type) -> bool:
    try:
        from google.protobuf.message import Message
    except ImportError:  # pragma: no cover - protobuf is a dependency of the core
        return False
    return issubclass(cls, Message) and cls is not Message
