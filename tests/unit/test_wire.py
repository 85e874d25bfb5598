"""One serialiser per value (registry.to_json): the REST explorer API, the CLI's --json and the app's tables
give the same JSON for the same question, and the REST models describe exactly that JSON."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from registry import (
    CompatibilityStrategy,
    InvalidArgumentError,
    Registry,
    SchemaInfo,
    SchemaType,
    TopicQuery,
    from_json,
    seed_sample_data,
    to_json,
)
from registry.views import tables
from server import _explorer_wire as wire

ORDERS = "persistent://acme/orders/order-created"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wire") / "registry.db"
    with Registry.open_file(path, create=True) as reg:
        seed_sample_data(reg)
    return path


@pytest.fixture(scope="module")
def reg(db: Path) -> Registry:
    return Registry.open_file(db)


def candidate(reg: Registry) -> SchemaInfo:
    """The latest order schema with a required field added: BACKWARD refuses it, FORWARD takes it."""
    doc = json.loads(reg.get(ORDERS).schema)
    doc["fields"].append({"name": "loyaltyTier", "type": "string"})
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


VALUES: dict[str, tuple[type[wire.Wire], Callable[[Registry], Any]]] = {
    "check": (wire.CompatibilityResult, lambda reg: reg.check(ORDERS, candidate(reg))),
    "diff": (wire.SchemaDiff, lambda reg: reg.diff(ORDERS, 3, 5)),
    "what-if": (wire.WhatIf, lambda reg: reg.what_if(ORDERS, candidate(reg))),
    "effective policy": (wire.EffectivePolicy, lambda reg: reg.effective_policy(ORDERS)),
    "upgrade plan": (wire.UpgradePlan, lambda reg: reg.upgrade_plan(ORDERS)),
    "policy impact": (wire.PolicyImpact, lambda reg: reg.policy_impact("acme/orders", CompatibilityStrategy.FULL)),
    "topic page": (wire.TopicPage, lambda reg: reg.search_topics(TopicQuery(text="order"))),
}


@pytest.mark.parametrize(("model", "make"), VALUES.values(), ids=list(VALUES))
def test_the_rest_body_is_the_cores_json(reg: Registry, model: type[wire.Wire], make: Callable[..., Any]) -> None:
    value = make(reg)
    assert model.of(value).model_dump(mode="json") == to_json(value)


def test_a_key_the_rest_model_lacks_fails_there(reg: Registry) -> None:
    doc = to_json(reg.check(ORDERS, candidate(reg))) | {"extra": 1}
    with pytest.raises(ValueError, match="extra"):
        wire.CompatibilityResult.model_validate(doc)


def cli_json(*args: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([*args, "--json"])
    return json.loads(out.getvalue())


def test_the_cli_json_is_the_cores_json(reg: Registry, db: Path) -> None:
    info = candidate(reg)
    source = db.parent / "candidate.avsc"
    source.write_text(info.text)
    checked = cli_json("check", "--db", str(db), "-t", ORDERS, "-f", str(source))
    assert {k: v for k, v in checked.items() if k not in ("topic", "pulsar_version")} == to_json(
        reg.check(ORDERS, info)
    )
    diffed = cli_json("diff", "--db", str(db), "-t", ORDERS, "--from", "3", "--to", "5")
    assert diffed == to_json(reg.diff(ORDERS, 3, 5)), "one shape: topic, old_version, new_version from the core"
    assert (diffed["topic"], diffed["old_version"], diffed["new_version"]) == (ORDERS, 3, 5)
    effective = cli_json("policy", "get", "--db", str(db), "-t", ORDERS)
    assert {k: v for k, v in effective.items() if k != "topic_policy"} == to_json(reg.effective_policy(ORDERS))
    assert effective["topic_policy"] == to_json(reg.topic_policy(ORDERS))
    impact = cli_json("policy", "set", "--db", str(db), "-n", "acme/orders", "--compatibility", "FULL", "--dry-run")
    assert impact == to_json(reg.policy_impact("acme/orders", "FULL"))


def test_the_tables_columns_come_from_the_same_json(reg: Registry) -> None:
    diff = reg.diff(ORDERS, 3, 5)
    frame = tables.changes_frame(diff)
    rows = [to_json(c) for c in diff.changes]
    assert list(frame["is_breaking"]) == [row["is_breaking"] for row in rows]
    assert list(frame["path"]) == [row["path"] for row in rows]
    problems = tables.problems_frame(reg.check(ORDERS, candidate(reg)))
    assert list(problems["direction"]) == [
        p["direction"] for p in to_json(reg.check(ORDERS, candidate(reg)))["problems"]
    ]


def test_a_value_without_a_json_form_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no JSON form for Registry"):
        to_json(Registry.in_memory())


# --- from_json: the inverse a remote registry reads the explorer API's answers with -----------------------


def every_answer(reg: Registry) -> list[Any]:
    """Every kind of answer the explorer API carries, over every sample topic where it applies, so each
    enum value, optional and nested shape the samples reach goes through the round trip."""
    answers: list[Any] = [reg.search_topics(TopicQuery(), limit=100), reg.clients()]
    strategies = [s for s in CompatibilityStrategy if s is not CompatibilityStrategy.UNDEFINED]
    answers += [reg.policy_impact(ns, s) for ns in ("acme/orders", "initech/hr") for s in strategies]
    for page_row in reg.search_topics(TopicQuery(), limit=100).items:
        topic = page_row.topic
        answers += [reg.topic_summary(topic), reg.effective_policy(topic), reg.clients(topic)]
        live = reg.history(topic)
        if not live:
            continue
        answers += [reg.what_if(topic, live[0].info), reg.upgrade_plan(topic), reg.diff(topic, live[0].version)]
        if live[0].type is SchemaType.AVRO:
            answers.append(reg.what_if(topic, SchemaInfo(type=SchemaType.AVRO, schema='"string"')))
    return answers


def test_from_json_reads_back_every_answer_exactly(reg: Registry) -> None:
    answers = every_answer(reg)
    assert len(answers) > 200
    for value in answers:
        kind = list[type(value[0])] if isinstance(value, list) and value else type(value)  # type: ignore[misc]
        if isinstance(value, list) and not value:
            continue
        assert from_json(kind, json.loads(json.dumps(to_json(value)))) == value


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"items": [], "total": 0, "offset": 0}, r"TopicPage lacks 'limit'"),
        ({"items": [], "total": 0, "offset": 0, "limit": 5, "surprise": 1}, r"TopicPage has no field 'surprise'"),
        ({"items": [], "total": "0", "offset": 0, "limit": 5}, r"TopicPage.total: expected int, got '0'"),
        ({"items": [], "total": True, "offset": 0, "limit": 5}, r"TopicPage.total: expected int, got True"),
        ({"items": [{"topic": 1}], "total": 1, "offset": 0, "limit": 5}, r"TopicPage.items\[0\]"),
        ({"items": [], "total": 0, "offset": 0, "limit": 5, "by_type": []}, r"TopicPage.by_type: expected an object"),
    ],
)
def test_from_json_refuses_what_does_not_fit_and_says_where(doc: dict[str, Any], message: str) -> None:
    from registry import TopicPage

    with pytest.raises(InvalidArgumentError, match=message):
        from_json(TopicPage, doc)


def test_from_json_reads_enum_keys_and_generic_fields(reg: Registry) -> None:
    value = reg.what_if(ORDERS, candidate(reg))
    back = from_json(type(value), to_json(value))
    assert set(back.by_strategy) == set(CompatibilityStrategy) - {CompatibilityStrategy.UNDEFINED}
    assert all(isinstance(k, CompatibilityStrategy) for k in back.by_strategy)
    assert isinstance(back.effective.value, CompatibilityStrategy)
    with pytest.raises(InvalidArgumentError, match=r"WhatIf.by_strategy key: 'SOMETIMES' is no CompatibilityStrategy"):
        from_json(type(value), {**to_json(value), "by_strategy": {"SOMETIMES": to_json(value.result)}})
