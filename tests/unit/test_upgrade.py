"""Which clients to upgrade first: by strategy, by the actual change, and as a plan over recorded clients.

Why: the upgrade-order table (users.md, "Conventions users already know") is what Kafka-world users expect;
none of the explored UIs turns it into a plan over real clients (users.md #11). Each plan step must keep
every consumer able to read every producer, so the test recomputes that with the core's own `can_read`.
"""

from __future__ import annotations

from typing import Any

import pytest

from registry import STRATEGIES, ClientRole, CompatibilityStrategy, Registry, SchemaInfo, UpgradeOrder, UpgradePlan
from registry._compatibility import can_read
from registry._model import ClientRecord
from registry._schema_data import to_schema_data
from registry._types import SchemaData
from registry.explain._upgrade import STRATEGY_UPGRADE_ORDER, change_order, strategy_order
from schemas import avro_info, field, record

CS = CompatibilityStrategy
U = UpgradeOrder
NS = "acme/shop"
TOPIC = f"persistent://{NS}/orders"

# ------------------------------------------------------------------------------------------- by strategy

TABLE = {
    CS.BACKWARD: U.CONSUMERS_FIRST,
    CS.BACKWARD_TRANSITIVE: U.CONSUMERS_FIRST,
    CS.FORWARD: U.PRODUCERS_FIRST,
    CS.FORWARD_TRANSITIVE: U.PRODUCERS_FIRST,
    CS.FULL: U.ANY_ORDER,
    CS.FULL_TRANSITIVE: U.ANY_ORDER,
    CS.ALWAYS_COMPATIBLE: U.ANY_ORDER,
    CS.ALWAYS_INCOMPATIBLE: U.EVOLUTION_DISABLED,
}


@pytest.mark.parametrize("strategy, order", list(TABLE.items()), ids=[f"{s} means {o}" for s, o in TABLE.items()])
def test_strategy_order_table(strategy: CompatibilityStrategy, order: UpgradeOrder) -> None:
    assert strategy_order(strategy) is order
    assert STRATEGY_UPGRADE_ORDER[strategy] is order


def test_the_table_covers_exactly_the_eight_strategies() -> None:
    assert set(STRATEGY_UPGRADE_ORDER) == set(STRATEGIES) == set(TABLE)


def test_undefined_has_no_order() -> None:
    with pytest.raises(ValueError):
        strategy_order(CS.UNDEFINED)


# ------------------------------------------------------------------------------------------- by change


@pytest.mark.parametrize(
    "new_reads_old, old_reads_new, order",
    [
        (True, False, U.CONSUMERS_FIRST),
        (False, True, U.PRODUCERS_FIRST),
        (True, True, U.ANY_ORDER),
        (False, False, U.BREAKING),
    ],
    ids=[
        "backward only means consumers first",
        "forward only means producers first",
        "both means any order",
        "neither means breaking",
    ],
)
def test_change_order(new_reads_old: bool, old_reads_new: bool, order: UpgradeOrder) -> None:
    result = change_order(new_reads_old, old_reads_new)
    assert result.order is order
    assert (result.new_reads_old, result.old_reads_new) == (new_reads_old, old_reads_new)
    assert result.explanation.strip()


# ------------------------------------------------------------------------------------------- plans


def R(*fields: dict[str, Any]) -> SchemaInfo:
    return avro_info(record("Order", list(fields), "acme.shop"))


ID_INT = R(field("id", "int"))
ID_LONG = R(field("id", "long"))  # promotion: the new schema reads old data, old readers fail on new data
WITH_NOTE = R(field("id", "int"), field("note", "string"))  # new field without default: old readers skip it
WITH_DEFAULT = R(field("id", "int"), field("note", "string", ""))  # both ways
ID_STRING = R(field("id", "string"))  # neither way


def connect(reg: Registry, info: SchemaInfo, producers: list[str], consumers: list[str]) -> None:
    for name in producers:
        assert reg.connect_producer(TOPIC, info, name=name).accepted
    for name in consumers:
        assert reg.connect_consumer(TOPIC, info, subscription=name).accepted


def schemas_of(reg: Registry, target: SchemaInfo | None) -> dict[int | str, SchemaData]:
    out: dict[int | str, SchemaData] = {v.version: SchemaData(v.type, v.data, v.properties) for v in reg.history(TOPIC)}
    if target is not None:
        out["candidate"] = to_schema_data(target)
    return out


def assert_every_step_is_safe(reg: Registry, plan: UpgradePlan, target: SchemaInfo | None = None) -> None:
    """Replay the plan: before it and after each step, every consumer version reads every producer version."""
    schemas = schemas_of(reg, target)
    state: dict[tuple[str, str, str], int | str] = {
        (c.role, c.name, c.subscription): c.version for c in reg.clients(TOPIC) if c.version is not None
    }

    def check_state(when: str) -> None:
        producers = {v for (role, _, _), v in state.items() if role is ClientRole.PRODUCER}
        consumers = {v for (role, _, _), v in state.items() if role is ClientRole.CONSUMER}
        for c in consumers:
            for p in producers:
                assert can_read(schemas[c], schemas[p]) == [], (when, c, p)

    check_state("before the plan")
    for step in plan.steps:
        assert step.clients and all(client.role is step.role for client in step.clients)
        assert step.explanation.strip()
        for client in step.clients:
            state[(client.role, client.name, client.subscription)] = plan.target_version
        check_state(f"after step {step.number}")
    if plan.feasible:
        assert set(state.values()) <= {plan.target_version}


@pytest.mark.parametrize(
    "target, roles",
    [
        (ID_LONG, [ClientRole.CONSUMER, ClientRole.PRODUCER]),
        (WITH_NOTE, [ClientRole.PRODUCER, ClientRole.CONSUMER]),
    ],
    ids=["a promotion moves consumers first", "a field without default moves producers first"],
)
def test_plan_orders_roles(reg: Registry, target: SchemaInfo, roles: list[ClientRole]) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout", "backfill"], ["billing", "analytics"])
    plan = reg.upgrade_plan(TOPIC, target)

    assert plan.feasible and plan.reason == ""
    assert plan.target_version == "candidate" and plan.topic == TOPIC
    assert [s.role for s in plan.steps] == roles
    assert [s.number for s in plan.steps] == [1, 2]
    names = {s.role: sorted(c.name for c in s.clients) for s in plan.steps}
    assert names == {ClientRole.PRODUCER: ["backfill", "checkout"], ClientRole.CONSUMER: ["analytics", "billing"]}
    assert_every_step_is_safe(reg, plan, target)


def test_plan_any_order(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    plan = reg.upgrade_plan(TOPIC, WITH_DEFAULT)
    assert plan.feasible
    assert {s.role for s in plan.steps} == {ClientRole.PRODUCER, ClientRole.CONSUMER}
    assert_every_step_is_safe(reg, plan, WITH_DEFAULT)
    # And either order would have been safe: the schemas read each other.
    old, new = to_schema_data(ID_INT), to_schema_data(WITH_DEFAULT)
    assert can_read(old, new) == [] and can_read(new, old) == []


def test_plan_infeasible_names_clients_and_versions(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    plan = reg.upgrade_plan(TOPIC, ID_STRING)

    assert not plan.feasible and plan.steps == ()
    assert "checkout" in plan.reason and "billing" in plan.reason
    assert "version 0" in plan.reason and "candidate" in plan.reason


def test_plan_to_a_registered_version(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    reg.set_namespace_policy(NS, compatibility=CS.BACKWARD)
    assert reg.register(TOPIC, ID_LONG).version == 1
    plan = reg.upgrade_plan(TOPIC, 1)
    assert plan.feasible and plan.target_version == 1
    assert [s.role for s in plan.steps] == [ClientRole.CONSUMER, ClientRole.PRODUCER]
    assert_every_step_is_safe(reg, plan)
    # Default target: the latest live version.
    assert reg.upgrade_plan(TOPIC) == plan


def test_clients_without_schema_are_unaffected(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    assert reg.connect_consumer(TOPIC, None, subscription="raw-bytes").accepted
    assert reg.connect_producer(TOPIC, None, name="legacy").accepted
    plan = reg.upgrade_plan(TOPIC, ID_LONG)

    assert sorted((c.role, c.name) for c in plan.unaffected) == [
        (ClientRole.CONSUMER, "raw-bytes"),
        (ClientRole.PRODUCER, "legacy"),
    ]
    moved = {c.name for s in plan.steps for c in s.clients}
    assert moved == {"checkout", "billing"}


def test_clients_already_on_the_target_do_not_move(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], [])
    reg.set_namespace_policy(NS, compatibility=CS.BACKWARD)
    reg.register(TOPIC, ID_LONG)
    connect(reg, ID_LONG, [], ["billing"])  # already on v1
    plan = reg.upgrade_plan(TOPIC, 1)
    assert [(s.role, [c.name for c in s.clients]) for s in plan.steps] == [(ClientRole.PRODUCER, ["checkout"])]
    assert_every_step_is_safe(reg, plan)


def test_no_clients_no_steps(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    plan = reg.upgrade_plan(TOPIC, ID_LONG)
    assert plan.feasible and plan.steps == () and plan.unaffected == ()


def test_mixed_versions_plan(reg: Registry) -> None:
    """v0 {id:int}, v1 {id:long}: a producer still on v0, consumers on v0 and v1; the target v2 adds a field
    with a default to v1. Consumers on v0 cannot read v2's long; v2 reads everything."""
    reg.set_namespace_policy(NS, compatibility=CS.ALWAYS_COMPATIBLE)
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["old-producer"], ["old-consumer"])
    reg.register(TOPIC, ID_LONG)
    connect(reg, ID_LONG, [], ["new-consumer"])
    target = R(field("id", "long"), field("note", "string", ""))
    assert reg.register(TOPIC, target).version == 2
    plan = reg.upgrade_plan(TOPIC, 2)
    assert plan.feasible
    assert plan.steps[0].role is ClientRole.CONSUMER
    assert_every_step_is_safe(reg, plan)


def test_what_if_carries_the_same_plan(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    what = reg.what_if(TOPIC, ID_LONG)
    assert what.plan == reg.upgrade_plan(TOPIC, ID_LONG)
    assert what.change_order is not None and what.change_order.order is U.CONSUMERS_FIRST


def test_plan_records_are_client_records(reg: Registry) -> None:
    reg.register(TOPIC, ID_INT)
    connect(reg, ID_INT, ["checkout"], ["billing"])
    plan = reg.upgrade_plan(TOPIC, ID_LONG)
    for step in plan.steps:
        for client in step.clients:
            assert isinstance(client, ClientRecord) and client.topic == TOPIC and client.version == 0


# ------------------------------------------------------------------------------------------- pair verdicts


def test_pair_verdict_readable_is_can_read_on_every_sample_pair() -> None:
    """pair_verdict derives `readable` from its one BACKWARD check; it must say what can_read says for every
    ordered pair of every sample topic (AVRO, JSON, PROTOBUF with its advisory, PROTOBUF_NATIVE wire breaks,
    KEY_VALUE, primitives, type changes, identical versions)."""
    from registry import seed_sample_data
    from registry._compatibility import pair_verdict

    reg = Registry.in_memory()
    seed_sample_data(reg)
    pairs = 0
    unreadable = 0
    for summary in reg.search_topics(limit=10_000).items:
        versions = reg.history(summary.topic)
        for reader in versions:
            for writer in versions:
                r = SchemaData(reader.type, reader.data, reader.properties)
                w = SchemaData(writer.type, writer.data, writer.properties)
                verdict = pair_verdict(r, w, writer.version)
                assert verdict.readable == (not can_read(r, w)), (summary.topic, reader.version, writer.version)
                assert verdict.compatible == (verdict.first is None)
                pairs += 1
                unreadable += not verdict.readable
    assert pairs > 100 and unreadable > 5
