"""Pulsar's compatibility flows (§3.4) and per-type checkers (§4), producing explained verdicts.

Only this module speaks of "candidate" and "existing"; checkers below it take reader= and writer=.
Strategy → directions lives in one table; SchemaType → checker in another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ._avro_resolution import Finding, InvalidDefaultHit, resolve
from ._avro_schema import AvroSchema
from ._errors import InvalidSchemaError
from ._model import CompatibilityResult, CompatibilityStrategy, Direction, Problem, RuleCode, SchemaType
from ._protobuf_native import parse_protobuf_native
from ._schema_data import SchemaData, decode_key_value, parse_avro_data

S = CompatibilityStrategy


@dataclass(frozen=True, slots=True)
class Reads:
    """Which reads a strategy demands: the candidate reading existing data, existing readers reading the
    candidate's data, and whether against every live version or the latest."""

    backward: bool
    forward: bool
    transitive: bool


STRATEGY_READS: Mapping[CompatibilityStrategy, Reads] = {
    S.BACKWARD: Reads(True, False, False),
    S.FORWARD: Reads(False, True, False),
    S.FULL: Reads(True, True, False),
    S.BACKWARD_TRANSITIVE: Reads(True, False, True),
    S.FORWARD_TRANSITIVE: Reads(False, True, True),
    S.FULL_TRANSITIVE: Reads(True, True, True),
}


@dataclass(frozen=True, slots=True)
class Versioned:
    """An existing schema with its version number, oldest first in every list."""

    version: int
    schema: SchemaData

    @property
    def sha256(self) -> bytes:
        return _sha256(self.schema.data)


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


Checker = Callable[[Sequence[Versioned], SchemaData, CompatibilityStrategy], list[Problem]]


# --- flows (§3.4) -----------------------------------------------------------------------------------------


def check_with_latest(
    existing: Sequence[Versioned],
    candidate: SchemaData,
    strategy: CompatibilityStrategy,
    *,
    check_strategy: CompatibilityStrategy | None = None,
) -> CompatibilityResult:
    """`checkCompatibilityWithLatest`: ALWAYS_COMPATIBLE, no latest, type pre-check, identical shortcut, checker.

    `check_strategy` lets the consumer path check BACKWARD while reporting the topic's strategy (§8.2).
    """
    if strategy is S.ALWAYS_COMPATIBLE or not existing:
        return _verdict(strategy, (), [])
    latest = existing[-1]
    checked = (latest.version,)
    if latest.schema.type is not candidate.type:
        return _verdict(strategy, checked, [_type_changed(latest, candidate)])
    if latest.sha256 == _sha256(candidate.data):
        return _verdict(strategy, checked, [])
    return _verdict(strategy, checked, checker_for(candidate.type)([latest], candidate, check_strategy or strategy))


def check_with_all(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> CompatibilityResult:
    """`checkCompatibilityWithAll`: every live version must have the candidate's type; no identical shortcut."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return _verdict(strategy, (), [])
    checked = tuple(v.version for v in existing)
    mismatched = [v for v in existing if v.schema.type is not candidate.type]
    if mismatched:
        return _verdict(strategy, checked, [_type_changed(mismatched[0], candidate)])
    return _verdict(strategy, checked, checker_for(candidate.type)(existing, candidate, strategy))


def _verdict(strategy: CompatibilityStrategy, checked: tuple[int, ...], problems: list[Problem]) -> CompatibilityResult:
    return CompatibilityResult(
        compatible=not problems, strategy=strategy, checked_versions=checked, problems=tuple(problems)
    )


def _type_changed(existing: Versioned, candidate: SchemaData) -> Problem:
    return Problem(
        code=RuleCode.SCHEMA_TYPE_CHANGED,
        message=f"Incompatible schema: exists schema type {existing.schema.type}, new schema type {candidate.type}",
        version=existing.version,
        hint=f"keep the schema type {existing.schema.type}; a new type needs a new topic, a delete of the schema, "
        "or the ALWAYS_COMPATIBLE strategy",
    )


def _forbidden(strategy: CompatibilityStrategy, version: int) -> Problem:
    return Problem(
        code=RuleCode.STRATEGY_FORBIDS_CHANGE,
        message=f"the strategy {strategy} refuses any schema that differs from the registered ones",
        version=version,
        hint="re-register an existing version unchanged, or choose another compatibility strategy",
    )


# --- checkers (§4) ----------------------------------------------------------------------------------------


def _targets(existing: Sequence[Versioned], strategy: CompatibilityStrategy) -> list[Versioned]:
    """Avro's validateLatest / validateAll, newest first as Pulsar reverses the list."""
    newest_first = list(reversed(existing))
    return newest_first if strategy.is_transitive else newest_first[:1]


def check_default(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> list[Problem]:
    """`SchemaCompatibilityCheck.DEFAULT` (primitives, NONE, PROTOBUF): refuses only under ALWAYS_INCOMPATIBLE."""
    if strategy is S.ALWAYS_INCOMPATIBLE:
        version = existing[-1].version if existing else None
        return [
            Problem(
                code=RuleCode.STRATEGY_FORBIDS_CHANGE,
                message="Schema compatibility strategy is ALWAYS_INCOMPATIBLE",
                version=version,
                hint="re-register an existing version unchanged, or choose another compatibility strategy",
            )
        ]
    return []


def check_avro(existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy) -> list[Problem]:
    """AVRO and JSON: Avro 1.12 reader/writer resolution in the strategy's directions (§4.2, §4.3)."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return []
    try:
        new = parse_avro_data(candidate.type, candidate.data)
    except InvalidSchemaError as exc:
        return [
            Problem(
                code=RuleCode.UNPARSEABLE_SCHEMA,
                message=f"the new schema does not parse: {exc}",
                hint="fix the new schema so that it parses as Avro",
            )
        ]
    parsed: list[tuple[Versioned, AvroSchema]] = []
    for old in existing:
        try:
            parsed.append((old, parse_avro_data(old.schema.type, old.schema.data)))
        except InvalidSchemaError as exc:
            return [
                Problem(
                    code=RuleCode.UNPARSEABLE_SCHEMA,
                    version=old.version,
                    message=f"version {old.version} does not parse as Avro, so nothing is compatible with it: {exc}",
                    hint="delete the schema to start a new history",
                )
            ]
    reads = STRATEGY_READS.get(strategy)
    if reads is None:  # ALWAYS_INCOMPATIBLE, UNDEFINED: fail iff there is an existing schema
        return [_forbidden(strategy, existing[-1].version)] if existing else []
    by_version = dict((v.version, schema) for v, schema in parsed)
    problems: list[Problem] = []
    for target in _targets(existing, strategy):
        old_schema = by_version[target.version]
        if reads.backward:
            problems += _explain(resolve_safely(new, old_schema), Direction.BACKWARD, target.version)
        if reads.forward:
            problems += _explain(resolve_safely(old_schema, new), Direction.FORWARD, target.version)
    return problems


def resolve_safely(reader: AvroSchema, writer: AvroSchema) -> list[Finding]:
    """Resolution findings; an invalid default that Avro would throw on becomes an INVALID_DEFAULT finding."""
    try:
        return resolve(reader, writer)
    except InvalidDefaultHit as hit:
        return [hit.finding]


def _explain(findings: list[Finding], direction: Direction, version: int) -> list[Problem]:
    return [
        Problem(
            code=f.code,
            message=f.message,
            direction=direction,
            version=version,
            reader_path=f.reader_path,
            writer_path=f.writer_path,
            hint=f.hint,
        )
        for f in findings
    ]


def check_protobuf_native(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> list[Problem]:
    """ProtobufNativeSchemaCompatibilityCheck: only the root message's full name must stay (§4.6)."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return []
    new = parse_protobuf_native(candidate.data)
    problems: list[Problem] = []
    for old in existing:  # the list form checks each schema it is given
        if strategy not in STRATEGY_READS:
            return [
                Problem(
                    code=RuleCode.STRATEGY_FORBIDS_CHANGE,
                    version=old.version,
                    message=f"Unknown SchemaCompatibilityStrategy: PROTOBUF_NATIVE refuses every change "
                    f"under {strategy}",
                    hint="re-register an existing version unchanged, or choose another strategy",
                )
            ]
        before = parse_protobuf_native(old.schema.data).root_full_name
        if before != new.root_full_name:
            problems.append(
                Problem(
                    code=RuleCode.ROOT_MESSAGE_CHANGED,
                    version=old.version,
                    message=f"Protobuf root message change is not allowed under the '{strategy}' strategy. "
                    f"Original message name: '{before}', new message name: '{new.root_full_name}'.",
                    reader_path="/rootMessageTypeName",
                    writer_path="/rootMessageTypeName",
                    hint=f"restore the root message name {before!r}",
                )
            )
    return problems


def check_key_value(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> list[Problem]:
    """KeyValueSchemaCompatibilityCheck: same sub-types, then key and value checked separately (§4.7)."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return []
    if candidate.type is not SchemaType.KEY_VALUE:
        return [
            Problem(
                code=RuleCode.NOT_KEY_VALUE,
                message="To schema is not a KEY_VALUE schema.",
                hint="register a KEY_VALUE schema",
            )
        ]
    new = decode_key_value(candidate)
    keys: list[Versioned] = []
    values: list[Versioned] = []
    for old in existing:
        if old.schema.type is not SchemaType.KEY_VALUE:
            return [
                Problem(
                    code=RuleCode.NOT_KEY_VALUE,
                    version=old.version,
                    message=f"From schema is not a KEY_VALUE schema (version {old.version} is {old.schema.type}).",
                    hint="keep the schema type KEY_VALUE",
                )
            ]
        parts = decode_key_value(old.schema)
        if parts.key.type is not new.key.type or parts.value.type is not new.value.type:
            return [
                Problem(
                    code=RuleCode.KEY_VALUE_PART_TYPE_CHANGED,
                    version=old.version,
                    message=f"Key schemas or Value schemas are different schema type: version {old.version} is "
                    f"KeyValue<{parts.key.type}, {parts.value.type}>, the new schema "
                    f"KeyValue<{new.key.type}, {new.value.type}>",
                    hint=f"keep KeyValue<{parts.key.type}, {parts.value.type}>",
                )
            ]
        keys.append(Versioned(old.version, parts.key))
        values.append(Versioned(old.version, parts.value))
    problems = _prefixed(checker_for(new.key.type)(keys, new.key, strategy), "/key", "key")
    problems += _prefixed(checker_for(new.value.type)(values, new.value, strategy), "/value", "value")
    return problems


def _prefixed(problems: list[Problem], pointer: str, part: str) -> list[Problem]:
    return [
        Problem(
            code=p.code,
            message=f"{part} schema: {p.message}",
            direction=p.direction,
            version=p.version,
            reader_path=pointer + p.reader_path,
            writer_path=pointer + p.writer_path,
            hint=p.hint,
        )
        for p in problems
    ]


# One dispatch table from SchemaType to checker; every other type uses DEFAULT. PROTOBUF's checker exists in
# Pulsar but is not configured by default (§2.3, §4.4), so PROTOBUF uses DEFAULT too.
CHECKERS: Mapping[SchemaType, Checker] = {
    SchemaType.AVRO: check_avro,
    SchemaType.JSON: check_avro,
    SchemaType.PROTOBUF_NATIVE: check_protobuf_native,
    SchemaType.KEY_VALUE: check_key_value,
}


def checker_for(kind: SchemaType) -> Checker:
    return CHECKERS.get(kind, check_default)
