"""Advisories: what Pulsar lets through but will hurt later, each with a code and a severity, never counted in
a verdict.

Why: Pulsar's resolver-based check and Avro's SchemaCompatibility (Confluent, Karapace, Python `avro`)
disagree on a few documented classes (avro-resolution.md, "Where Pulsar and SchemaCompatibility disagree");
PROTOBUF has no checker by default (pulsar-semantics.md §2.3, §4.4); an invalid default poisons a topic
(§4.8). The verdict must stay Pulsar's; the advisory is how a user learns the rest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from registry import (
    Advisory,
    AdvisoryCode,
    CompatibilityStrategy,
    Direction,
    Registry,
    RuleCode,
    SchemaInfo,
    SchemaType,
    Severity,
)
from schemas import S1, S2, S3, TOPIC, avro_info, field, info, record, record_dict, seed

CS = CompatibilityStrategy
A = AdvisoryCode


def R(*fields: dict[str, Any], name: str = "Order", namespace: str = "acme.shop", **extra: Any) -> SchemaInfo:
    return avro_info(record(name, list(fields), namespace, **extra))


def color(symbols: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": "Color", "symbols": symbols, **extra}


def point(name: str) -> dict[str, Any]:
    return record_dict(name, [field("x", "int"), field("y", "int")], "acme.shop")


_MISSING = object()


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901 over a parsed JSON document ("" is the whole document)."""
    node = document
    for raw in pointer[1:].split("/") if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def codes(advisories: tuple[Advisory, ...]) -> set[AdvisoryCode]:
    return {a.code for a in advisories}


# ------------------------------------------------------------------------------------------- table


@dataclass(frozen=True)
class Case:
    history: list[SchemaInfo]
    candidate: SchemaInfo
    strategy: CompatibilityStrategy
    code: AdvisoryCode
    severity: Severity
    direction: Direction
    mentions: tuple[str, ...]
    # The same change without what triggers the advisory: the verdict must not move.
    twin: SchemaInfo


CASES = {
    "an enum symbol the new reader lacks, no enum default": Case(
        [R(field("color", color(["RED", "BLUE", "GREEN"])))],
        R(field("color", color(["RED", "BLUE"]))),
        CS.BACKWARD,
        A.ENUM_SYMBOL_REMOVED,
        Severity.ERROR,
        Direction.BACKWARD,
        ("GREEN", "Color"),
        R(field("color", color(["RED", "BLUE"], default="RED"))),
    ),
    "an enum symbol added that old readers lack": Case(
        [R(field("color", color(["RED", "BLUE"])))],
        R(field("color", color(["RED", "BLUE", "GREEN"]))),
        CS.FORWARD,
        A.ENUM_SYMBOL_REMOVED,
        Severity.ERROR,
        Direction.FORWARD,
        ("GREEN", "Color"),
        R(field("color", color(["RED", "BLUE"])), field("note", "string", "")),
    ),
    "a record renamed without alias": Case(
        [R(field("id", "long"), name="Order")],
        R(field("id", "long"), name="PurchaseOrder"),
        CS.BACKWARD,
        A.RECORD_RENAMED,
        Severity.WARNING,
        Direction.BACKWARD,
        ("acme.shop.Order", "acme.shop.PurchaseOrder"),
        R(field("id", "long"), field("note", "string", ""), name="Order"),
    ),
    "a record renamed while also adding a field without default": Case(
        [R(field("id", "long"), name="Order")],
        R(field("id", "long"), field("note", "int"), name="PurchaseOrder"),
        CS.BACKWARD,
        A.RECORD_RENAMED,
        Severity.WARNING,
        Direction.BACKWARD,
        ("acme.shop.Order", "acme.shop.PurchaseOrder"),
        R(field("id", "long"), field("note", "int"), name="Order"),
    ),
    "a record read through a renamed union branch": Case(
        [R(field("at", point("Point")))],
        R(field("at", ["null", point("Location")], None)),
        CS.BACKWARD,
        A.UNION_RECORD_BRANCH_RENAMED,
        Severity.WARNING,
        Direction.BACKWARD,
        ("acme.shop.Point", "acme.shop.Location"),
        R(field("at", ["null", point("Point")], None)),
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_advisory_is_raised_with_code_severity_and_place(reg: Registry, case: Case) -> None:
    seed(reg, TOPIC, case.history)
    result = reg.check(TOPIC, case.candidate, case.strategy)

    matching = [a for a in result.advisories if a.code is case.code]
    assert matching, result.advisories
    advisory = matching[0]
    assert advisory.severity is case.severity
    assert advisory.direction is case.direction
    assert advisory.version == 0
    assert advisory.hint.strip() and advisory.source.strip()
    for word in case.mentions:
        assert word in advisory.message, (word, advisory.message)
    # The path is a pointer into the reader's document.
    reader_text = case.candidate.text if case.direction is Direction.BACKWARD else reg.get(TOPIC, 0).schema
    assert resolve_pointer(json.loads(reader_text), advisory.path) is not _MISSING
    # what_if lists it too (it gathers the effective strategy's and FULL's advisories).
    assert case.code in codes(reg.what_if(TOPIC, case.candidate).advisories)


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_advisory_never_changes_the_verdict(reg: Registry, case: Case) -> None:
    """The verdict with the advisory's trigger equals the verdict of its twin without it, problem for
    problem, under every strategy."""
    seed(reg, TOPIC, case.history)
    for strategy in [s for s in CS if s is not CS.UNDEFINED]:
        with_trigger = reg.check(TOPIC, case.candidate, strategy)
        without = reg.check(TOPIC, case.twin, strategy)
        assert case.code not in codes(without.advisories)
        assert with_trigger.compatible == without.compatible, strategy
        assert [(p.code, p.direction, p.version) for p in with_trigger.problems] == [
            (p.code, p.direction, p.version) for p in without.problems
        ], strategy


def test_enum_symbol_removed_is_accepted_by_pulsar(reg: Registry) -> None:
    """avro-resolution.md: missing symbols are not an error for Pulsar's validator (derived-enum-removed)."""
    seed(reg, TOPIC, [R(field("color", color(["RED", "BLUE", "GREEN"])))])
    for strategy in (CS.BACKWARD, CS.FORWARD, CS.FULL, CS.FULL_TRANSITIVE):
        result = reg.check(TOPIC, R(field("color", color(["RED", "BLUE"]))), strategy)
        assert result.compatible and result.problems == ()


def test_no_enum_advisory_when_the_reader_has_an_enum_default(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("color", color(["RED", "BLUE", "GREEN"])))])
    result = reg.check(TOPIC, R(field("color", color(["RED", "BLUE"], default="RED"))), CS.BACKWARD)
    assert result.compatible
    assert A.ENUM_SYMBOL_REMOVED not in codes(result.advisories)


def test_no_enum_advisory_when_no_symbol_is_lost(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("color", color(["RED", "BLUE"])))])
    result = reg.check(TOPIC, R(field("color", color(["RED", "BLUE", "GREEN"]))), CS.BACKWARD)
    assert A.ENUM_SYMBOL_REMOVED not in codes(result.advisories)


def test_no_rename_advisory_when_the_old_name_is_an_alias(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("id", "long"), name="Order")])
    result = reg.check(TOPIC, R(field("id", "long"), name="PurchaseOrder", aliases=["acme.shop.Order"]), CS.BACKWARD)
    assert result.compatible
    assert A.RECORD_RENAMED not in codes(result.advisories)


def test_record_rename_is_compatible_under_full_with_an_advisory_each_way(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("id", "long"), name="Order")])
    result = reg.check(TOPIC, R(field("id", "long"), name="PurchaseOrder"), CS.FULL)
    assert result.compatible
    renamed = [a for a in result.advisories if a.code is A.RECORD_RENAMED]
    assert {a.direction for a in renamed} == {Direction.BACKWARD, Direction.FORWARD}


# ------------------------------------------------------------------------------------------- invalid default


def test_invalid_default_advisory_on_an_empty_topic(reg: Registry) -> None:
    """§4.8: Pulsar stores the first schema even with an invalid default, then fails every later put. what_if
    says it would register, and warns."""
    candidate = R(field("id", "long"), field("note", "string", None))
    what = reg.what_if(TOPIC, candidate)

    assert what.registration.accepted and what.registration.registered
    invalid = [a for a in what.advisories if a.code is A.INVALID_DEFAULT]
    assert len(invalid) == 1
    advisory = invalid[0]
    assert advisory.severity is Severity.ERROR
    assert "note" in advisory.message and "string" in advisory.message
    assert advisory.hint.strip()
    target = resolve_pointer(json.loads(candidate.text), advisory.path)
    assert target is not _MISSING and target["name"] == "note"
    assert reg.history(TOPIC) == []


def test_invalid_default_advisory_on_a_topic_with_history(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("id", "long"))])
    candidate = R(field("id", "long"), field("note", "string", None))
    what = reg.what_if(TOPIC, candidate)

    assert A.INVALID_DEFAULT in codes(what.advisories)
    assert not what.registration.accepted
    # The verdict itself carries the INVALID_DEFAULT *problem* met during resolution (§4.8), independently.
    assert RuleCode.INVALID_DEFAULT in {p.code for p in what.result.problems}


def test_no_invalid_default_advisory_for_a_valid_default(reg: Registry) -> None:
    what = reg.what_if(TOPIC, R(field("id", "long"), field("note", ["null", "string"], None)))
    assert A.INVALID_DEFAULT not in codes(what.advisories)


# ------------------------------------------------------------------------------------------- PROTOBUF


def pb(text: str) -> SchemaInfo:
    return info(text, SchemaType.PROTOBUF)


@pytest.mark.parametrize(
    "candidate, severity, avro_would_accept",
    [(S2, Severity.INFO, True), (S3, Severity.ERROR, False)],
    ids=["a change Avro rules accept is INFO", "a change Avro rules refuse is ERROR"],
)
def test_protobuf_without_checker(reg: Registry, candidate: str, severity: Severity, avro_would_accept: bool) -> None:
    """§4.4: PROTOBUF uses DEFAULT (any change passes except under ALWAYS_INCOMPATIBLE); the advisory says
    whether Pulsar's own (unconfigured) Avro-based PROTOBUF checker would have refused it."""
    seed(reg, TOPIC, [pb(S1)])
    result = reg.check(TOPIC, pb(candidate), CS.FULL)

    assert result.compatible
    (advisory,) = [a for a in result.advisories if a.code is A.PROTOBUF_NO_CHECKER]
    assert advisory.severity is severity
    assert advisory.hint.strip()
    assert "FULL" in advisory.message

    avro_reg = Registry.in_memory()
    avro_reg.register(TOPIC, avro_info(S1))
    assert avro_reg.check(TOPIC, avro_info(candidate), CS.FULL).compatible is avro_would_accept


def test_protobuf_advisory_under_every_strategy_that_lets_it_through(reg: Registry) -> None:
    seed(reg, TOPIC, [pb(S1)])
    what = reg.what_if(TOPIC, pb(S3))
    for strategy, result in what.by_strategy.items():
        if strategy is CS.ALWAYS_INCOMPATIBLE:
            assert not result.compatible
            assert [p.code for p in result.problems] == [RuleCode.STRATEGY_FORBIDS_CHANGE]
        else:
            assert result.compatible, strategy
    assert A.PROTOBUF_NO_CHECKER in codes(what.advisories)


def test_protobuf_first_schema_has_no_advisory(reg: Registry) -> None:
    result = reg.check(TOPIC, pb(S1), CS.FULL)
    assert result.compatible and A.PROTOBUF_NO_CHECKER not in codes(result.advisories)


def test_protobuf_identical_schema_has_no_advisory(reg: Registry) -> None:
    """Byte-identical to the latest: the registry's shortcut answers before any checker (§3.4 step 4)."""
    seed(reg, TOPIC, [pb(S1)])
    assert reg.check(TOPIC, pb(S1), CS.FULL).advisories == ()
