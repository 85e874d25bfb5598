"""Limits on schema input: size and nesting depth, checked where schema text enters the core.

Pulsar has neither limit: a 10 MB schema is stored, and a deeply nested one fails the broker's recursive
parser with an internal error (HTTP 500). Here an oversized schema is refused with SchemaTooLargeError (the
REST shell answers 413) and a too deeply nested one with InvalidSchemaError (422), before any parser sees it,
so no input can raise RecursionError anywhere in the core.

Defaults suit real schemas with room to spare (the largest sample schema is a few kB and a dozen levels deep);
change them process-wide with `set_limits(Limits(...))`, for a block with `limited(...)`, or through the
environment variables SCHEMA_EXPLORER_MAX_SCHEMA_BYTES and SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH read at import.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._errors import InvalidSchemaError
from ._types import PRIMITIVE_TYPES, SchemaType

MAX_SCHEMA_BYTES_ENV = "SCHEMA_EXPLORER_MAX_SCHEMA_BYTES"
MAX_SCHEMA_DEPTH_ENV = "SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH"

# Types whose data no parser reads (NONE, BYTES, EXTERNAL) or that must be empty (primitives): only the size
# limit applies to them.
_UNPARSED = frozenset({SchemaType.NONE, SchemaType.BYTES, SchemaType.EXTERNAL}) | PRIMITIVE_TYPES
# A JSON string, escapes included; unrolled so that matching is linear.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_OPENERS = frozenset(b"[{")


class SchemaTooLargeError(InvalidSchemaError):
    """The schema is larger than `Limits.max_schema_bytes` (the REST shell answers 413)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """What the core accepts as schema input.

    `max_schema_bytes`: the schema as sent (UTF-8 bytes of the text, KEY_VALUE's admin form included).
    `max_depth`: JSON nesting, counting every object and array (an Avro record nested in a record's field
    is three levels: the record, its fields array, the field)."""

    max_schema_bytes: int = 1_048_576  # 1 MiB: Pulsar's default max message size is 5 MB; schemas are tiny
    max_depth: int = 128  # ~40 nested records; the core's recursive checks are safe far beyond this

    def __post_init__(self) -> None:
        for name in ("max_schema_bytes", "max_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{name} must be a whole number >= 1, got {value!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        """Defaults, overridden by SCHEMA_EXPLORER_MAX_SCHEMA_BYTES / SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH."""
        changes: dict[str, Any] = {}
        for field, variable in (("max_schema_bytes", MAX_SCHEMA_BYTES_ENV), ("max_depth", MAX_SCHEMA_DEPTH_ENV)):
            text = environ.get(variable, "").strip()
            if not text:
                continue
            try:
                changes[field] = int(text.replace("_", ""))
            except ValueError:
                raise ValueError(f"${variable} must be a whole number >= 1, got {text!r}") from None
        try:
            return cls(**changes)
        except ValueError as exc:
            raise ValueError(f"{exc} (from the environment)") from None


def _initial() -> Limits:
    try:
        return Limits.from_env()
    except ValueError as exc:
        warnings.warn(f"schema limits: {exc}; using the defaults", stacklevel=2)
        return Limits()


_lock = threading.Lock()
_current = _initial()


def current_limits() -> Limits:
    """The input limits in force in this process (from the environment unless `set_limits` or `limited`)."""
    return _current


def set_limits(limits: Limits) -> Limits:
    """Make `limits` the process-wide limits; returns the previous ones."""
    global _current
    if not isinstance(limits, Limits):
        raise TypeError(f"expected Limits, got {type(limits).__name__}")
    with _lock:
        previous, _current = _current, limits
    return previous


@contextlib.contextmanager
def limited(**changes: int) -> Iterator[Limits]:
    """`with limited(max_depth=10): ...`: other limits for a block (tests, one-off imports)."""
    previous = set_limits(replace(_current, **changes))
    try:
        yield _current
    finally:
        set_limits(previous)


def check_json_depth(text: str, what: str, limits: Limits | None = None) -> None:
    """Refuse JSON text nested deeper than the depth limit before it is decoded (json.loads recurses once per
    level: 100,000 brackets in a KEY_VALUE part's `*.schema.properties` raised RecursionError)."""
    limits = limits or _current
    if _too_deep(text.encode("utf-8", "surrogatepass"), limits):
        raise InvalidSchemaError(
            f"{what} is nested more than {limits.max_depth} levels deep (JSON objects and arrays; "
            f"${MAX_SCHEMA_DEPTH_ENV})"
        )


def check_schema_input(kind: SchemaType, schema: str | bytes, limits: Limits | None = None) -> None:
    """Refuse a schema over the size limit (SchemaTooLargeError) or nested deeper than the depth limit
    (InvalidSchemaError), naming the measure and the limit. Cheap: one length check, and for text that could
    nest at all, one pass over its brackets outside strings."""
    limits = limits or _current
    if isinstance(schema, str):
        try:
            schema = schema.encode("utf-8")
        except UnicodeEncodeError as exc:
            # JSON's "\ud800" escape decodes to a lone surrogate, which no UTF-8 text can hold.
            raise InvalidSchemaError(
                f"Invalid schema definition data for {kind} schema: not valid Unicode text ({exc.reason} "
                f"{schema[exc.start : exc.end]!r} at character {exc.start})"
            ) from None
    size = len(schema)
    if size > limits.max_schema_bytes:
        raise SchemaTooLargeError(
            f"Invalid schema definition data for {kind} schema: the schema is {size:,} bytes, over the limit of "
            f"{limits.max_schema_bytes:,} bytes (${MAX_SCHEMA_BYTES_ENV})"
        )
    if kind in _UNPARSED:
        return
    if _too_deep(bytes(schema), limits):
        raise InvalidSchemaError(
            f"Invalid schema definition data for {kind} schema: nested more than {limits.max_depth} levels deep "
            f"(JSON objects and arrays; ${MAX_SCHEMA_DEPTH_ENV}); Pulsar's parser fails such a schema with an "
            "internal error (HTTP 500)"
        )


def _too_deep(data: bytes, limits: Limits) -> bool:
    # Fewer brackets than the limit cannot nest past it: most schemas skip the scan.
    return (
        data.count(b"[") + data.count(b"{") > limits.max_depth
        and nesting_depth(data, stop_at=limits.max_depth + 1) > limits.max_depth
    )


def nesting_depth(data: bytes, *, stop_at: int | None = None) -> int:
    """The deepest nesting of JSON objects and arrays in `data`, brackets inside strings not counted; stops
    counting once it reaches `stop_at`. Works on any bytes (malformed JSON is the parser's business)."""
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_at is not None and deepest >= stop_at:
                    break
        elif depth:
            depth -= 1
    return deepest
