"""What-if: Pulsar's answer to a candidate under all 8 strategies, simulated registration and admissions, and
a policy change previewed over a namespace — with nothing written (users.md #4, #7, #8).

Why: users want a dry-run button before registering, and to see what a namespace strategy toggle would have
refused before toggling it (kafbat/kafka-ui#1174, apache/pulsar#10244). A preview that writes, or that
disagrees with the real check, is worse than none; so each preview is compared with the real call.
"""

from __future__ import annotations

from typing import Any

import pytest

from registry import (
    STRATEGIES,
    ClientRole,
    CompatibilityStrategy,
    PolicyError,
    PolicySource,
    Registry,
    RuleCode,
    SchemaInfo,
)
from schemas import P1, P2, P3, P4, S1, S3, avro_info, seed

CS = CompatibilityStrategy
NS = "acme/shop"
ORDERS = f"persistent://{NS}/orders"
AUTO_UPDATE_DISABLED = "Schema not found and schema auto updating is disabled."


def snapshot(reg: Registry) -> Any:
    """Everything what_if / policy_impact could write: histories, clients, policies, topics."""
    topics = {ns: reg.topics(ns) for t in reg.tenants() for ns in reg.namespaces(t)}
    return (
        topics,
        {t: reg.history(t, include_deleted=True) for ts in topics.values() for t in ts},
        sorted(reg.clients(), key=lambda c: (c.topic, c.role, c.name)),
        {ns: reg.namespace_policy(ns) for ns in topics},
        {t: reg.topic_policy(t) for ts in topics.values() for t in ts},
    )


@pytest.fixture
def shop(reg: Registry) -> Registry:
    """orders: v0 = P1 {id}, v1 = P2 {id, name="Tom"}; a producer on v1, a consumer on v0, one without schema."""
    assert seed(reg, ORDERS, [avro_info(P1), avro_info(P2)]) == [0, 1]
    assert reg.connect_producer(ORDERS, avro_info(P2), name="checkout").version == 1
    assert reg.connect_consumer(ORDERS, avro_info(P1), subscription="billing").version == 0
    assert reg.connect_consumer(ORDERS, None, subscription="archive").accepted
    return reg


# ------------------------------------------------------------------------------------------- all 8 strategies


def test_a_verdict_for_each_of_the_eight_strategies(shop: Registry) -> None:
    what = shop.what_if(ORDERS, avro_info(P3))
    assert set(what.by_strategy) == set(STRATEGIES) and len(what.by_strategy) == 8
    for strategy, result in what.by_strategy.items():
        assert result.strategy is strategy
        if strategy is CS.ALWAYS_COMPATIBLE:
            assert result.checked_versions == ()
        elif strategy.is_transitive:
            assert result.checked_versions == (0, 1), strategy
        else:
            assert result.checked_versions == (1,), strategy
    # P3 drops P2's default: fine against v1 both ways, but cannot read v0 (no `name`).
    compatible = {s for s, r in what.by_strategy.items() if r.compatible}
    assert compatible == {CS.ALWAYS_COMPATIBLE, CS.BACKWARD, CS.FORWARD, CS.FULL, CS.FORWARD_TRANSITIVE}
    refused = what.by_strategy[CS.BACKWARD_TRANSITIVE]
    assert {(p.code, p.version) for p in refused.problems} == {(RuleCode.READER_FIELD_WITHOUT_DEFAULT, 0)}


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: f"namespace {s}")
def test_effective_verdict_equals_check(shop: Registry, strategy: CompatibilityStrategy) -> None:
    shop.set_namespace_policy(NS, compatibility=strategy)
    for candidate in (P3, P4, P1):
        what = shop.what_if(ORDERS, avro_info(candidate))
        assert what.effective.value is strategy and what.effective.source is PolicySource.NAMESPACE
        assert what.result == shop.check(ORDERS, avro_info(candidate))
        assert what.result == what.by_strategy[strategy]
        for other in STRATEGIES:
            assert what.by_strategy[other] == shop.check(ORDERS, avro_info(candidate), other)


def test_topic_strategy_wins_over_namespace(shop: Registry) -> None:
    shop.set_namespace_policy(NS, compatibility=CS.FULL)
    shop.set_topic_policy(ORDERS, compatibility=CS.BACKWARD_TRANSITIVE)
    what = shop.what_if(ORDERS, avro_info(P3))
    assert what.effective.value is CS.BACKWARD_TRANSITIVE and what.effective.source is PolicySource.TOPIC
    assert not what.result.compatible and not what.would_register


# ------------------------------------------------------------------------------------------- duplicates


def test_duplicate_of_an_older_live_version(shop: Registry) -> None:
    what = shop.what_if(ORDERS, avro_info(P1))
    assert what.duplicate_of == 0
    assert what.registration.accepted and not what.registration.registered
    assert what.registration.version == 0


def test_duplicate_under_avro_equality(shop: Registry) -> None:
    """§3.3: dedup compares parsed Avro schemas, so whitespace and key order do not matter."""
    import json

    pretty = json.dumps(dict(reversed(list(json.loads(P2).items()))), indent=4)
    assert shop.what_if(ORDERS, avro_info(pretty)).duplicate_of == 1


def test_duplicate_under_always_incompatible(shop: Registry) -> None:
    """§2.5: re-registering any live version is accepted even under ALWAYS_INCOMPATIBLE (dedup runs first),
    although REST /compatibility says incompatible for anything but the latest."""
    shop.set_namespace_policy(NS, compatibility=CS.ALWAYS_INCOMPATIBLE)
    older = shop.what_if(ORDERS, avro_info(P1))
    assert older.duplicate_of == 0 and older.would_register
    assert not older.result.compatible
    latest = shop.what_if(ORDERS, avro_info(P2))
    assert latest.duplicate_of == 1 and latest.result.compatible
    new = shop.what_if(ORDERS, avro_info(P3))
    assert new.duplicate_of is None and not new.would_register
    assert [p.code for p in new.result.problems] == [RuleCode.STRATEGY_FORBIDS_CHANGE]


def test_no_duplicate_for_a_new_schema(shop: Registry) -> None:
    what = shop.what_if(ORDERS, avro_info(P3))
    assert what.duplicate_of is None
    assert what.registration.accepted and what.registration.registered and what.registration.version == 2


# ------------------------------------------------------------------------------------------- nothing written


@pytest.mark.parametrize(
    "candidate",
    [P1, P2, P3, P4, S1],
    ids=["a duplicate of v0", "the latest", "a compatible change", "an incompatible change", "another record"],
)
def test_what_if_writes_nothing(shop: Registry, candidate: str) -> None:
    before = snapshot(shop)
    shop.what_if(ORDERS, avro_info(candidate))
    assert snapshot(shop) == before


def test_what_if_on_an_empty_topic_writes_nothing(reg: Registry) -> None:
    """An idle topic: registration, a producer and a consumer would all register the schema (§3.3 step 3,
    §8.2 idle) — simulated only."""
    topic = f"persistent://{NS}/fresh"
    reg.create_namespace(NS)
    before = snapshot(reg)
    what = reg.what_if(topic, avro_info(P1))

    assert what.registration.accepted and what.registration.registered and what.registration.version == 0
    assert what.producer.accepted and what.consumer.accepted
    assert what.duplicate_of is None and what.latest_version is None and what.diff is None
    assert what.change_order is None and what.plan is None
    assert snapshot(reg) == before
    assert reg.history(topic, include_deleted=True) == [] and reg.clients(topic) == []


def test_policy_impact_writes_nothing(shop: Registry) -> None:
    before = snapshot(shop)
    shop.policy_impact(NS, CS.BACKWARD_TRANSITIVE)
    assert snapshot(shop) == before


# ------------------------------------------------------------------------------------------- admissions


@pytest.mark.parametrize("candidate", [P1, P3, P4], ids=["a live version", "a compatible change", "a breaking one"])
def test_simulated_producer_matches_the_real_connection(shop: Registry, candidate: str) -> None:
    what = shop.what_if(ORDERS, avro_info(candidate))
    real = shop.connect_producer(ORDERS, avro_info(candidate), name="new-producer")
    assert (what.producer.accepted, what.producer.version) == (real.accepted, real.version)
    assert what.registration.accepted == real.accepted


@pytest.mark.parametrize("candidate", [P1, P3, P4], ids=["a live version", "a compatible change", "a breaking one"])
def test_simulated_consumer_matches_the_real_subscription(shop: Registry, candidate: str) -> None:
    what = shop.what_if(ORDERS, avro_info(candidate))
    real = shop.connect_consumer(ORDERS, avro_info(candidate), subscription="new-sub")
    assert what.consumer.role is ClientRole.CONSUMER
    assert (what.consumer.accepted, what.consumer.version) == (real.accepted, real.version)


def test_producer_simulation_honours_auto_update(shop: Registry) -> None:
    shop.set_namespace_policy(NS, allow_auto_update=False)
    what = shop.what_if(ORDERS, avro_info(P3))
    assert not what.producer.accepted and what.producer.reason == AUTO_UPDATE_DISABLED
    # REST registration ignores the flag (§2.4).
    assert what.registration.accepted
    assert shop.what_if(ORDERS, avro_info(P1)).producer.version == 0


def test_breaking_candidate_is_refused_everywhere_under_full(shop: Registry) -> None:
    what = shop.what_if(ORDERS, avro_info(P4))
    assert not what.result.compatible
    assert not what.registration.accepted and not what.producer.accepted and not what.consumer.accepted
    assert what.registration.result is not None
    assert what.registration.result.problems[0].code is RuleCode.READER_FIELD_WITHOUT_DEFAULT


# ------------------------------------------------------------------------------------------- diff, order


def test_diff_against_the_latest(shop: Registry) -> None:
    candidate = avro_info(P4)
    what = shop.what_if(ORDERS, candidate)
    assert what.latest_version == 1
    assert what.diff == shop.diff(ORDERS, 1, candidate)
    assert what.diff is not None and what.diff.changes


def test_diff_skips_deleted_versions(shop: Registry) -> None:
    shop.delete(ORDERS)
    shop.set_namespace_policy(NS, compatibility=CS.ALWAYS_COMPATIBLE)
    v = shop.register(ORDERS, avro_info(P3)).version
    what = shop.what_if(ORDERS, avro_info(P4))
    assert what.latest_version == v
    assert set(what.by_strategy[CS.FULL_TRANSITIVE].checked_versions) == {v}


def test_strategy_and_change_order(shop: Registry) -> None:
    from registry import UpgradeOrder

    shop.set_namespace_policy(NS, compatibility=CS.BACKWARD)
    what = shop.what_if(ORDERS, avro_info(P3))
    assert what.strategy_order is UpgradeOrder.CONSUMERS_FIRST
    assert what.change_order is not None and what.change_order.order is UpgradeOrder.ANY_ORDER
    breaking = shop.what_if(ORDERS, avro_info(P4))
    assert breaking.change_order is not None and breaking.change_order.order is UpgradeOrder.PRODUCERS_FIRST


# ------------------------------------------------------------------------------------------- policy impact

FLEET = "acme/fleet"
T_HIST = f"persistent://{FLEET}/grew-carelessly"
T_OVER = f"persistent://{FLEET}/pinned"
T_CONSUMER = f"persistent://{FLEET}/dropped-field"
T_CLEAN = f"persistent://{FLEET}/clean"


@pytest.fixture
def fleet(reg: Registry) -> Registry:
    """Histories made under ALWAYS_COMPATIBLE (seed), one topic with its own strategy, one stale consumer."""
    seed(reg, T_HIST, [avro_info(S1), avro_info(S3)])  # v1 adds field2 without default: BACKWARD refuses it
    seed(reg, T_OVER, [avro_info(S1), avro_info(S3)])
    reg.set_topic_policy(T_OVER, compatibility=CS.ALWAYS_COMPATIBLE)
    reg.register(T_CONSUMER, avro_info(S3))
    assert reg.connect_consumer(T_CONSUMER, avro_info(S3), subscription="reports").version == 0
    reg.set_namespace_policy(FLEET, compatibility=CS.ALWAYS_COMPATIBLE)
    reg.register(T_CONSUMER, avro_info(S1))  # field2 dropped: the v0 consumer cannot read v1 any more
    reg.set_namespace_policy(FLEET, compatibility=CS.UNDEFINED)
    reg.register(T_CLEAN, avro_info(S1))
    return reg


def test_policy_impact_per_topic(fleet: Registry) -> None:
    impact = fleet.policy_impact(FLEET, CS.BACKWARD)
    assert impact.namespace == FLEET and impact.proposed is CS.BACKWARD
    by_topic = {t.topic: t for t in impact.topics}
    assert set(by_topic) == {T_HIST, T_OVER, T_CONSUMER, T_CLEAN}

    hist = by_topic[T_HIST]
    assert hist.refused_versions == (1,) and hist.latest_refused and hist.affected
    assert hist.first_problem is not None
    assert hist.first_problem.code is RuleCode.READER_FIELD_WITHOUT_DEFAULT
    assert hist.first_problem.version == 0 and "field2" in hist.first_problem.message
    assert not hist.overridden

    over = by_topic[T_OVER]
    assert over.overridden and over.current.source is PolicySource.TOPIC
    assert over.current.value is CS.ALWAYS_COMPATIBLE
    assert over.refused_versions == () and not over.affected

    consumer = by_topic[T_CONSUMER]
    assert consumer.refused_versions == ()
    (refused,) = consumer.refused_clients
    assert refused.client.subscription == "reports" and refused.client.version == 0
    assert refused.reason

    clean = by_topic[T_CLEAN]
    assert not clean.affected and clean.first_problem is None

    assert [t.topic for t in impact.refused_topics] == [T_HIST]
    assert [c.client.subscription for c in impact.refused_clients] == ["reports"]


def test_policy_impact_of_always_compatible_refuses_nothing(fleet: Registry) -> None:
    impact = fleet.policy_impact(FLEET, "ALWAYS_COMPATIBLE")
    assert not any(t.affected for t in impact.topics)


def test_policy_impact_of_forward(fleet: Registry) -> None:
    """FORWARD: v0 (S1) reads S3 fine, but S3 → S1 drops field2 without default, so the S1 re-registration on
    the consumer topic is refused; the v0 consumer subscribes under a BACKWARD-vs-latest check (§8.2)."""
    by_topic = {t.topic: t for t in fleet.policy_impact(FLEET, CS.FORWARD).topics}
    assert by_topic[T_HIST].refused_versions == ()
    assert by_topic[T_CONSUMER].refused_versions == (1,)
    assert by_topic[T_CONSUMER].first_problem is not None
    assert by_topic[T_CONSUMER].first_problem.code is RuleCode.READER_FIELD_WITHOUT_DEFAULT


def test_policy_impact_refuses_undefined(fleet: Registry) -> None:
    with pytest.raises(PolicyError):
        fleet.policy_impact(FLEET, CS.UNDEFINED)
    with pytest.raises(PolicyError):
        fleet.policy_impact(FLEET, "UNDEFINED")


def test_policy_impact_agrees_with_check(shop: Registry) -> None:
    """The preview and the real check agree: a refused latest version is refused by check() under the
    proposed strategy against the version before it."""
    impact = {t.topic: t for t in shop.policy_impact(NS, CS.FORWARD_TRANSITIVE).topics}[ORDERS]
    previous = shop.get(ORDERS, 0)
    latest = shop.get(ORDERS, 1)
    probe = Registry.in_memory()
    probe.register(ORDERS, SchemaInfo(type=previous.type, schema=previous.schema))
    verdict = probe.check(ORDERS, SchemaInfo(type=latest.type, schema=latest.schema), CS.FORWARD_TRANSITIVE)
    assert (1 in impact.refused_versions) == (not verdict.compatible)
