"""The JSON form of the core's values: one serialiser, used by the REST API's explorer routes, the CLI's
`--json` and the app's tables, so the same question gets the same JSON everywhere; and its inverse,
`from_json`, with which a remote registry reads the explorer API's answers back into the same values.

A value's JSON is its dataclass fields, by name, plus the derived facts a reader should not have to
recompute (`Change.is_breaking`, `CompatibilityResult.message`, ...: each class's `JSON_DERIVED`). Enums become their
names, tuples lists, mappings objects; nested values the same way. The REST API's pydantic models describe
exactly this form for OpenAPI, and validate it (a key either side lacks fails there, so the two cannot drift).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from ._errors import InvalidArgumentError
from ._model import NamespacePolicy, SchemaVersion


def derived(kind: type) -> tuple[str, ...]:
    """The properties that are part of a value's JSON beside its fields (`Change.is_breaking`, ...): each
    class names its own in `JSON_DERIVED`, so this module needs none of them and sits below them all."""
    names: tuple[str, ...] = getattr(kind, "JSON_DERIVED", ())
    return names


def to_json(value: Any) -> Any:
    """`value` as JSON-ready data (dicts, lists, strings, numbers, booleans, None)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        doc = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in derived(type(value)):
            doc[name] = to_json(getattr(value, name))
        return doc
    if isinstance(value, Mapping):
        return {to_json(key) if isinstance(key, enum.Enum) else str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        return [to_json(item) for item in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")


T = TypeVar("T")


def from_json(kind: type[T], data: Any) -> T:
    """The value of type `kind` whose `to_json` is `data`: `from_json(type(v), to_json(v)) == v` for the
    core's answer types (TopicPage, SchemaDiff, WhatIf, UpgradePlan, PolicyImpact, ClientRecord, ...).

    Strict, because a remote answer that does not fit must not pass for a verdict: a missing field without a
    default, a key that is neither a field nor a derived fact, or a value of the wrong type raises
    InvalidArgumentError naming where (`WhatIf.result.problems[0].code`)."""
    return typing.cast(T, _decode(kind, data, kind.__name__))


def _decode(kind: Any, data: Any, where: str) -> Any:
    if kind is Any:
        return data
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        if data is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _decode(option, data, where)
            except InvalidArgumentError as exc:
                errors.append(str(exc))
        raise InvalidArgumentError(errors[0] if len(errors) == 1 else f"{where}: {data!r} fits none of {kind}")
    if kind in (str, int, float, bool):
        ok = isinstance(data, kind) and (kind is bool or not isinstance(data, bool))
        if kind is float and isinstance(data, int) and not isinstance(data, bool):
            return float(data)
        if not ok:
            raise InvalidArgumentError(f"{where}: expected {kind.__name__}, got {_shown(data)}")
        return data
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(data)
        except ValueError:
            raise InvalidArgumentError(f"{where}: {_shown(data)} is no {kind.__name__}") from None
    if origin in (tuple, list, frozenset, set):
        if not isinstance(data, list):
            raise InvalidArgumentError(f"{where}: expected a list, got {_shown(data)}")
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(data):
                raise InvalidArgumentError(f"{where}: expected {len(args)} items, got {len(data)}")
            return tuple(_decode(a, item, f"{where}[{i}]") for i, (a, item) in enumerate(zip(args, data, strict=True)))
        items = [_decode(args[0] if args else Any, item, f"{where}[{i}]") for i, item in enumerate(data)]
        return origin(items)
    if origin in (dict, Mapping) or kind in (dict, Mapping):
        if not isinstance(data, dict):
            raise InvalidArgumentError(f"{where}: expected an object, got {_shown(data)}")
        key_kind, value_kind = args or (Any, Any)
        return {
            _key(key_kind, key, where): _decode(value_kind, value, f"{where}[{key!r}]") for key, value in data.items()
        }
    target = origin if origin is not None else kind
    if dataclasses.is_dataclass(target) and isinstance(target, type):
        return _dataclass(target, args, data, where)
    raise InvalidArgumentError(f"{where}: no JSON form is known for {kind!r}")


def _key(kind: Any, key: str, where: str) -> Any:
    """Mapping keys are strings in JSON (`to_json` writes an enum key as its value)."""
    if kind is int:
        try:
            return int(key)
        except ValueError:
            raise InvalidArgumentError(f"{where}: key {key!r} is not a whole number") from None
    return _decode(kind, key, f"{where} key")


def _dataclass(cls: type, args: tuple[Any, ...], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{where}: expected an object for {cls.__name__}, got {_shown(data)}")
    hints = _hints(cls)
    bound = dict(zip(getattr(cls, "__parameters__", ()), args, strict=False))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields) - set(derived(cls))
    if unknown:
        raise InvalidArgumentError(f"{where}: {cls.__name__} has no field {', '.join(sorted(map(repr, unknown)))}")
    values = {}
    for name, spec in fields.items():
        if name not in data:
            if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise InvalidArgumentError(f"{where}: {cls.__name__} lacks {name!r}")
            continue
        values[name] = _decode(_bind(hints[name], bound), data[name], f"{where}.{name}")
    return cls(**values)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """A dataclass's field types; names its module imports only for type checking (`Advisory` in _model)
    are found among the package's public names."""
    package = vars(sys.modules[__name__.rpartition(".")[0]])
    return typing.get_type_hints(cls, {**package, **vars(sys.modules[cls.__module__])})


def _bind(kind: Any, bound: Mapping[Any, Any]) -> Any:
    """A field typed by the class's own type parameter (`Effective[T].value`) takes the alias's argument."""
    if isinstance(kind, TypeVar):
        return bound.get(kind, Any)
    return kind


def _shown(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:60] + "…"


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
