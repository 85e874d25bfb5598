"""The pitfalls of a pulsar-client Record class's generated schema, as advisories with the fix in the
client's own terms (registry/_records.py says which, and why each matters)."""

from __future__ import annotations

import json
from typing import Any

from ._changes import Advisory, AdvisoryCode, Severity
from ._records import client_version, declared, load_record, nested_record, record_fields, record_schema
from ._types import SchemaType


def record_advisories(record: type | str, schema_type: SchemaType | str | None = None) -> tuple[Advisory, ...]:
    """What the installed pulsar-client makes of `record` that will hurt: each field's pitfall, with its fix."""
    cls = load_record(record)
    kind, text = record_schema(cls, schema_type)
    if kind is SchemaType.PROTOBUF_NATIVE:
        return ()
    source = f"pulsar-client {client_version()}"
    found: list[Advisory] = []
    _walk(cls, json.loads(text), "", source, found)
    return tuple(found)


def _walk(cls: type, generated: dict[str, Any], pointer: str, source: str, found: list[Advisory]) -> None:
    fields = generated.get("fields", []) if isinstance(generated, dict) else []
    by_name = {f.get("name"): (i, f) for i, f in enumerate(fields) if isinstance(f, dict)}
    for name, field in record_fields(cls).items():
        if name not in by_name:
            continue
        index, out = by_name[name]
        where = f"{pointer}/fields/{index}"
        label = f"{cls.__qualname__}.{name}"
        found.extend(_field_pitfalls(label, field, out, where, source))
        nested = nested_record(field)
        if nested is not None:
            body = _record_body(out.get("type"))
            if body is not None:
                own = nested.__dict__.get("_avro_namespace")
                if own and body.get("namespace") != own:
                    found.append(
                        Advisory(
                            code=AdvisoryCode.RECORD_NAMESPACE_LOST,
                            severity=Severity.WARNING,
                            message=f"{nested.__qualname__} declares _avro_namespace={own!r}, but nested in "
                            f"{label} it is generated without it: the record is named differently here than "
                            "on its own, and readers resolve named types by full name",
                            path=f"{where}/type",
                            hint=f"give the enclosing record the same namespace, or keep {nested.__qualname__} "
                            "in one namespace everywhere it is used",
                            source=source,
                        )
                    )
                _walk(nested, body, f"{where}/type", source, found)


def _field_pitfalls(label: str, field: Any, out: dict[str, Any], where: str, source: str) -> list[Advisory]:
    default, required, required_default = declared(field)
    kind = type(field).__name__
    schema_type = out.get("type")
    optional = isinstance(schema_type, list) and bool(schema_type) and schema_type[0] == "null"
    shown = json.dumps(schema_type, separators=(",", ":"))
    found: list[Advisory] = []
    if optional and "default" in out and out["default"] is not None:
        found.append(
            Advisory(
                code=AdvisoryCode.RECORD_DEFAULT_INVALID,
                severity=Severity.ERROR,
                message=f"{label} is optional ({shown}) with default {out['default']!r}: Avro takes a union's default "
                "from its first branch, null, so the schema is invalid and Pulsar fails its registration with an "
                "internal error (HTTP 500)",
                path=where,
                hint=f"make it required: {kind}(default={default!r}, required=True, required_default=True), "
                "or leave out default=",
                source=source,
            )
        )
    elif optional and "default" not in out:
        found.append(
            Advisory(
                code=AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT,
                severity=Severity.WARNING,
                message=f"{label} is optional ({shown}) but has no default: a schema that adds it cannot read data "
                "written before, so adding it to a topic in use is refused under BACKWARD, FULL and their "
                "transitive forms",
                path=where,
                hint=f"declare it {kind}(required_default=True): pulsar-client then writes a null default",
                source=source,
            )
        )
    if default is not None and "default" not in out:
        found.append(
            Advisory(
                code=AdvisoryCode.RECORD_DEFAULT_DROPPED,
                severity=Severity.WARNING,
                message=f"{label} declares default={default!r}, but the generated schema has no default: "
                "pulsar-client writes a field's default only with required_default=True",
                path=where,
                hint=f"{kind}(default={default!r}, required=True, required_default=True)"
                + ("" if required or required_default else ", or required_default=True alone for a null default"),
                source=source,
            )
        )
    return found


def _record_body(generated: Any) -> dict[str, Any] | None:
    """The record definition inside a field's generated type (itself, or a union's record branch)."""
    if isinstance(generated, dict) and generated.get("type") == "record":
        return generated
    if isinstance(generated, list):
        return next((b for b in generated if isinstance(b, dict) and b.get("type") == "record"), None)
    return None
