"""Pulsar's compatibility flows (§3.4) and per-type checkers (§4), producing explained verdicts.

Only this module speaks of "candidate" and "existing"; checkers below it take reader= and writer=.
Strategy → directions lives in one table; SchemaType → checker in another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ._changes import Advisory, AdvisoryCode, Outcome, Severity
from ._errors import InvalidSchemaError
from ._key_value import decode_key_value
from ._model import STRATEGY_FACTS, CompatibilityResult, CompatibilityStrategy, Direction, Problem, RuleCode
from ._pulsar_version import current_line
from ._schema_data import parse_avro_data
from ._types import SchemaData, SchemaType
from .avro._json_legacy import jackson_id, jackson_schema
from .avro._nodes import AvroSchema
from .avro._resolution import read_outcome
from .protobuf._advisories import protobuf_advisories
from .protobuf._native import parse_protobuf_native

S = CompatibilityStrategy


def _demands_reads(strategy: CompatibilityStrategy) -> bool:
    """A strategy that checks reads (the six BACKWARD/FORWARD/FULL ones), rather than taking or refusing all."""
    facts = STRATEGY_FACTS.get(strategy)
    return facts is not None and (facts.backward or facts.forward)


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


def _refuse(*problems: Problem) -> Outcome:
    return Outcome(list(problems), [])


Checker = Callable[[Sequence[Versioned], SchemaData, CompatibilityStrategy], Outcome]


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
        return _verdict(strategy, (), Outcome([], []))
    latest = existing[-1]
    checked = (latest.version,)
    if latest.schema.type is not candidate.type:
        return _verdict(strategy, checked, _refuse(_type_changed(latest, candidate)))
    if latest.sha256 == _sha256(candidate.data):
        return _verdict(strategy, checked, Outcome([], []))
    return _verdict(strategy, checked, checker_for(candidate.type)([latest], candidate, check_strategy or strategy))


def check_with_all(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> CompatibilityResult:
    """`checkCompatibilityWithAll`: every live version must have the candidate's type; no identical shortcut."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return _verdict(strategy, (), Outcome([], []))
    checked = tuple(v.version for v in existing)
    mismatched = [v for v in existing if v.schema.type is not candidate.type]
    if mismatched:
        return _verdict(strategy, checked, _refuse(_type_changed(mismatched[0], candidate)))
    return _verdict(strategy, checked, checker_for(candidate.type)(existing, candidate, strategy))


def _verdict(strategy: CompatibilityStrategy, checked: tuple[int, ...], outcome: Outcome) -> CompatibilityResult:
    return CompatibilityResult(
        compatible=not outcome.problems,
        strategy=strategy,
        checked_versions=checked,
        problems=tuple(outcome.problems),
        advisories=tuple(dict.fromkeys(outcome.advisories)),
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


def check_default(existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy) -> Outcome:
    """`SchemaCompatibilityCheck.DEFAULT` (primitives, NONE): refuses only under ALWAYS_INCOMPATIBLE."""
    if strategy is S.ALWAYS_INCOMPATIBLE:
        version = existing[-1].version if existing else None
        return _refuse(
            Problem(
                code=RuleCode.STRATEGY_FORBIDS_CHANGE,
                message="Schema compatibility strategy is ALWAYS_INCOMPATIBLE",
                version=version,
                hint="re-register an existing version unchanged, or choose another strategy",
            )
        )
    return Outcome([], [])


def check_protobuf(existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy) -> Outcome:
    """PROTOBUF has no checker by default (§4.4): DEFAULT decides, and an advisory says what Avro rules would."""
    outcome = check_default(existing, candidate, strategy)
    if outcome.problems or strategy is S.ALWAYS_COMPATIBLE or not existing:
        return outcome
    would = check_avro(existing, candidate, strategy)
    breaks = {p.version for p in would.problems}
    outcome.advisories.append(
        Advisory(
            code=AdvisoryCode.PROTOBUF_NO_CHECKER,
            severity=Severity.ERROR if would.problems else Severity.INFO,
            message=f"Pulsar has no PROTOBUF checker configured, so any change passes under {strategy}"
            + (
                f"; Avro's rules would refuse it against version(s) {sorted(v for v in breaks if v is not None)}: "
                f"{would.problems[0].message}"
                if would.problems
                else ""
            ),
            hint="check PROTOBUF changes yourself, or migrate the topic to PROTOBUF_NATIVE",
            source="Pulsar broker configuration",
        )
    )
    return outcome


def check_avro(existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy) -> Outcome:
    """AVRO and JSON: Avro 1.12 reader/writer resolution in the strategy's directions (§4.2, §4.3); on 3.0/4.0 a
    JSON schema that does not parse as Avro is judged by the legacy JSON rules instead (`_legacy_json_pair`)."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return Outcome([], [])
    legacy = candidate.type is SchemaType.JSON and current_line().legacy_json
    try:
        new: AvroSchema | None = parse_avro_data(candidate.type, candidate.data)
    except InvalidSchemaError as exc:
        if not legacy:
            return _refuse(
                Problem(
                    code=RuleCode.UNPARSEABLE_SCHEMA,
                    message=f"the new schema does not parse: {exc}",
                    hint="fix the new schema so that it parses as Avro",
                )
            )
        new = None
    parsed: dict[int, AvroSchema | None] = {}
    for old in existing:
        try:
            parsed[old.version] = parse_avro_data(old.schema.type, old.schema.data)
        except InvalidSchemaError as exc:
            if not legacy:
                return _refuse(
                    Problem(
                        code=RuleCode.UNPARSEABLE_SCHEMA,
                        version=old.version,
                        message=f"version {old.version} does not parse as Avro, so nothing is compatible with it: "
                        f"{exc}",
                        hint="delete the schema to start a new history",
                    )
                )
            parsed[old.version] = None
    if not _demands_reads(strategy):  # ALWAYS_INCOMPATIBLE, UNDEFINED: fail iff there is an existing schema
        return _refuse(_forbidden(strategy, existing[-1].version)) if existing else Outcome([], [])
    outcome = Outcome([], [])
    for target in _targets(existing, strategy):
        old_avro = parsed[target.version]
        if new is None or old_avro is None:
            outcome += _legacy_json_pair(target, candidate, old_avro is not None, new is not None)
            continue
        if STRATEGY_FACTS[strategy].backward:
            outcome += read_outcome(new, old_avro, Direction.BACKWARD, target.version)
        if STRATEGY_FACTS[strategy].forward:
            outcome += read_outcome(old_avro, new, Direction.FORWARD, target.version)
    return outcome


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """One cell of a topic's reader × writer matrix (the app's heatmap, the Spark compat-matrix job)."""

    compatible: bool  # Pulsar's verdict: the reader checked BACKWARD against the writer version
    readable: bool  # can_read: Pulsar's verdict plus the wire breaks its checkers let through
    first: Problem | None  # the first problem of Pulsar's verdict


def pair_verdict(reader: SchemaData, writer: SchemaData, writer_version: int) -> PairVerdict:
    """Can `reader` read data written with version `writer_version` (`writer`)? One definition for every matrix."""
    result = check_with_latest([Versioned(writer_version, writer)], reader, S.BACKWARD)
    # One check answers both: it is the checker call can_read makes (type pre-check and identical shortcut
    # included), so `readable` only adds the wire breaks among its advisories.
    return PairVerdict(
        compatible=result.compatible,
        readable=result.compatible and not _wire_breaks(result.advisories),
        first=result.problems[0] if result.problems else None,
    )


def can_read(reader: SchemaData, writer: SchemaData) -> list[str]:
    """Why `reader` cannot read data written with `writer` (empty when it can): Pulsar's BACKWARD check of the
    pair, plus the wire breaks its checkers let through (PROTOBUF_NATIVE fields, PROTOBUF without a checker)."""
    if reader.type is not writer.type:
        return [f"schema type {writer.type} cannot be read as {reader.type}"]
    if reader.data == writer.data:
        return []
    outcome = checker_for(reader.type)([Versioned(-1, writer)], reader, S.BACKWARD)
    return [p.message for p in outcome.problems] + [a.message for a in _wire_breaks(outcome.advisories)]


def _wire_breaks(advisories: Sequence[Advisory]) -> list[Advisory]:
    """The advisories that mean the data cannot be read: protobuf wire breaks Pulsar's checkers let through."""
    return [a for a in advisories if a.severity is Severity.ERROR and a.code.startswith("PROTOBUF_")]


def invalid_default_advisories(schema: AvroSchema) -> list[Advisory]:
    """Defaults Avro's validation refuses: Pulsar stores them, then fails every later put with a 500 (§4.8)."""
    return [
        Advisory(
            code=AdvisoryCode.INVALID_DEFAULT,
            severity=Severity.ERROR,
            path=bad.pointer,
            message=f"{bad.message}: Pulsar accepts it on an empty topic, then fails every later "
            "registration on the topic with an internal error (HTTP 500)",
            hint=f"fix the default of field {bad.field!r}",
            source="Avro default validation",
        )
        for bad in schema.invalid_defaults
    ]


def _legacy_json_pair(old: Versioned, candidate: SchemaData, old_avro: bool, new_avro: bool) -> Outcome:
    """Pulsar 3.0/4.0 `JsonSchemaCompatibilityCheck.checkCompatible` for one existing version, when one side
    does not parse as Avro (registry/avro/_json_legacy.py): Avro then Jackson, or Jackson then Avro, is accepted (the
    new one overwrites); Jackson then Jackson needs equal `id`s; a new schema in neither form is an "Unknown
    schema format"; an existing one in neither form is overwritten (accepted)."""
    old_doc = None if old_avro else jackson_schema(old.schema.data)
    if not old_avro and old_doc is None:
        return Outcome([], [])
    new_doc = None if new_avro else jackson_schema(candidate.data)
    if not new_avro and new_doc is None:
        return _refuse(
            Problem(
                code=RuleCode.UNPARSEABLE_SCHEMA,
                version=old.version,
                message="Unknown schema format: the new JSON schema is neither Avro nor a Jackson JSON-Schema document",
                hint="give the JSON schema in Avro form",
            )
        )
    if old_doc is None or new_doc is None:
        return Outcome([], [])
    old_id = jackson_id(old_doc)
    if old_id is None or old_id != jackson_id(new_doc):
        return _refuse(
            Problem(
                code=RuleCode.JSON_SCHEMA_ID_CHANGED,
                version=old.version,
                message=f"both version {old.version} and the new schema are Jackson JSON-Schema documents "
                "(the form Pulsar 3.0/4.0 still accept), and their ids differ or are missing",
                hint="keep the JSON-Schema `id`, or move to an Avro-form JSON schema (accepted after it)",
            )
        )
    return Outcome([], [])


def check_protobuf_native(
    existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy
) -> Outcome:
    """ProtobufNativeSchemaCompatibilityCheck: only the root message's full name must stay (§4.6).

    buf's WIRE / WIRE_JSON rules add advisories for the field-level breaks Pulsar does not look at.
    """
    if strategy is S.ALWAYS_COMPATIBLE:
        return Outcome([], [])
    new = parse_protobuf_native(candidate.data)
    outcome = Outcome([], [])
    for old in existing:  # the list form checks each schema it is given
        if not _demands_reads(strategy):
            return _refuse(
                Problem(
                    code=RuleCode.STRATEGY_FORBIDS_CHANGE,
                    version=old.version,
                    message="Unknown SchemaCompatibilityStrategy: PROTOBUF_NATIVE refuses every change under "
                    f"{strategy}",
                    hint="re-register an existing version unchanged, or choose another strategy",
                )
            )
        before = parse_protobuf_native(old.schema.data)
        if before.root_full_name != new.root_full_name:
            outcome.problems.append(
                Problem(
                    code=RuleCode.ROOT_MESSAGE_CHANGED,
                    version=old.version,
                    message=f"Protobuf root message change is not allowed under the '{strategy}' strategy. "
                    f"Original message name: '{before.root_full_name}', new message name: "
                    f"'{new.root_full_name}'.",
                    reader_path="/rootMessageTypeName",
                    writer_path="/rootMessageTypeName",
                    hint=f"restore the root message name {before.root_full_name!r}",
                )
            )
        outcome.advisories += protobuf_advisories(before, new, version=old.version)
    return outcome


def check_key_value(existing: Sequence[Versioned], candidate: SchemaData, strategy: CompatibilityStrategy) -> Outcome:
    """KeyValueSchemaCompatibilityCheck: same sub-types, then key and value checked separately (§4.7)."""
    if strategy is S.ALWAYS_COMPATIBLE:
        return Outcome([], [])
    if candidate.type is not SchemaType.KEY_VALUE:
        return _refuse(
            Problem(
                code=RuleCode.NOT_KEY_VALUE,
                message="To schema is not a KEY_VALUE schema.",
                hint="register a KEY_VALUE schema",
            )
        )
    try:
        new = decode_key_value(candidate, exact=True)
    except InvalidSchemaError as exc:
        # KeyValueSchemaInfo.decodeSubSchemaInfo throws while the broker checks: refused, never admitted.
        return _refuse(
            Problem(
                code=RuleCode.UNPARSEABLE_SCHEMA,
                message=f"the new KEY_VALUE schema does not decode: {exc}",
                hint="give each part's type by its exact name (AVRO, JSON, STRING, ...)",
            )
        )
    keys: list[Versioned] = []
    values: list[Versioned] = []
    for old in existing:
        if old.schema.type is not SchemaType.KEY_VALUE:
            return _refuse(
                Problem(
                    code=RuleCode.NOT_KEY_VALUE,
                    version=old.version,
                    message=f"From schema is not a KEY_VALUE schema (version {old.version} is {old.schema.type}).",
                    hint="keep the schema type KEY_VALUE",
                )
            )
        parts = decode_key_value(old.schema)
        if parts.key.type is not new.key.type or parts.value.type is not new.value.type:
            return _refuse(
                Problem(
                    code=RuleCode.KEY_VALUE_PART_TYPE_CHANGED,
                    version=old.version,
                    message=f"Key schemas or Value schemas are different schema type: version {old.version} is "
                    f"KeyValue<{parts.key.type}, {parts.value.type}>, the new schema "
                    f"KeyValue<{new.key.type}, {new.value.type}>",
                    hint=f"keep KeyValue<{parts.key.type}, {parts.value.type}>",
                )
            )
        keys.append(Versioned(old.version, parts.key))
        values.append(Versioned(old.version, parts.value))
    outcome = _prefixed(checker_for(new.key.type)(keys, new.key, strategy), "key")
    outcome += _prefixed(checker_for(new.value.type)(values, new.value, strategy), "value")
    return outcome


def _prefixed(outcome: Outcome, part: str) -> Outcome:
    """Point a part's problems and advisories into the KEY_VALUE document (`/key`, `/value`)."""
    problems = [
        replace(
            p,
            message=f"{part} schema: {p.message}",
            reader_path=f"/{part}{p.reader_path}",
            writer_path=f"/{part}{p.writer_path}",
        )
        for p in outcome.problems
    ]
    advisories = [
        replace(a, message=f"{part} schema: {a.message}", path=f"/{part}{a.path}") for a in outcome.advisories
    ]
    return Outcome(problems, advisories)


# One dispatch table from SchemaType to checker; every other type uses DEFAULT. PROTOBUF's checker exists in
# Pulsar but is not configured by default (§2.3, §4.4), so PROTOBUF gets DEFAULT's verdict plus an advisory.
CHECKERS: Mapping[SchemaType, Checker] = {
    SchemaType.PROTOBUF: check_protobuf,
    SchemaType.AVRO: check_avro,
    SchemaType.JSON: check_avro,
    SchemaType.PROTOBUF_NATIVE: check_protobuf_native,
    SchemaType.KEY_VALUE: check_key_value,
}


def checker_for(kind: SchemaType) -> Checker:
    return CHECKERS.get(kind, check_default)
