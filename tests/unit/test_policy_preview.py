"""Previews of every policy change (Registry.preview_namespace_policy / preview_topic_policy): what would be
refused, which recorded clients could no longer connect, which topics a change does not reach, and that a
preview writes nothing and checks values exactly as saving does. Both storages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from registry import CompatibilityStrategy, PolicyError, Registry
from schemas import P1, P2, P3, avro_info, seed

CS = CompatibilityStrategy
NS = "acme/shop"
ORDERS = f"persistent://{NS}/orders"  # v0 P1 {id}, v1 P3 {id, name}: FULL_TRANSITIVE refuses v1 and a P1 consumer
CARTS = f"persistent://{NS}/carts"  # v0 P1, v1 P2 {id, name="Tom"}: passes every strategy but the INCOMPATIBLE one
GUARDED = f"persistent://{NS}/guarded"  # v0 P1, v1 P3, with its own strategy ALWAYS_COMPATIBLE


def everything(reg: Registry) -> Any:
    """What a preview could write: histories, clients, policies, topics, the audit trail, the change token."""
    topics = reg.topics(NS)
    return (
        topics,
        {t: reg.history(t, include_deleted=True) for t in topics},
        sorted(reg.clients(), key=lambda c: (c.topic, c.role, c.name)),
        reg.namespace_policy(NS),
        {t: reg.topic_policy(t) for t in topics},
        reg.audit_trail(),
        reg.change_token(),
    )


@pytest.fixture
def shop(reg: Registry) -> Registry:
    seed(reg, ORDERS, [avro_info(P1), avro_info(P3)])
    seed(reg, CARTS, [avro_info(P1), avro_info(P2)])
    seed(reg, GUARDED, [avro_info(P1), avro_info(P3)])
    reg.set_topic_policy(GUARDED, compatibility="ALWAYS_COMPATIBLE")
    reg.set_namespace_policy(NS, compatibility="ALWAYS_COMPATIBLE")
    assert reg.connect_consumer(ORDERS, avro_info(P1), subscription="billing").accepted
    assert reg.connect_consumer(GUARDED, avro_info(P1), subscription="audit").accepted
    assert reg.connect_producer(CARTS, None, name="legacy").accepted  # no schema: fine while not enforced
    assert reg.connect_producer(ORDERS, avro_info(P3), name="checkout").version == 1
    return reg


def by_topic(preview: Any) -> dict[str, Any]:
    return {t.topic: t for t in preview.topics}


def test_a_namespace_strategy_lists_refusals_and_keeps_shielded_topics_apart(shop: Registry) -> None:
    before = everything(shop)
    preview = shop.preview_namespace_policy(NS, compatibility="FULL_TRANSITIVE")
    assert preview.changes == ("compatibility: ALWAYS_COMPATIBLE → FULL_TRANSITIVE",)
    topics = by_topic(preview)
    assert [t.topic for t in preview.refused_topics] == [ORDERS]
    assert topics[ORDERS].refused_versions == (1,) and topics[ORDERS].first_problem is not None
    assert [(c.client.topic, c.client.subscription) for c in preview.refused_clients] == [(ORDERS, "billing")]
    # GUARDED keeps its own strategy: the change does not reach it, so nothing there is reported as refused.
    assert [t.topic for t in preview.shielded] == [GUARDED]
    assert topics[GUARDED].shielded_by == ("its own strategy ALWAYS_COMPATIBLE",)
    assert not topics[GUARDED].changed and not topics[GUARDED].affected
    assert topics[CARTS].changed and not topics[CARTS].affected
    # The same verdicts as the strategy-only impact on the topics the change reaches.
    impact = {t.topic: t for t in shop.policy_impact(NS, "FULL_TRANSITIVE").topics}
    assert topics[ORDERS].refused_versions == impact[ORDERS].refused_versions
    assert topics[ORDERS].refused_clients == impact[ORDERS].refused_clients
    assert everything(shop) == before


def test_validation_enforced_refuses_producers_without_a_schema(shop: Registry) -> None:
    preview = shop.preview_namespace_policy(NS, validation_enforced=True)
    assert preview.changes == ("validation_enforced: False → True",)
    refused = [(c.client.topic, c.client.name) for c in preview.refused_clients]
    assert refused == [(CARTS, "legacy")]
    assert "schema" in preview.refused_clients[0].reason.lower()
    assert preview.refused_topics == ()


def test_a_topics_own_validation_setting_and_the_broker_shield_it(make_reg: Callable[..., Registry]) -> None:
    reg = make_reg()
    seed(reg, CARTS, [avro_info(P1)])
    assert reg.connect_producer(CARTS, None, name="legacy").accepted
    reg.set_topic_policy(CARTS, validation_enforced=False)
    preview = reg.preview_namespace_policy(NS, validation_enforced=True)
    assert by_topic(preview)[CARTS].shielded_by == ("its own validation setting (false)",)
    assert preview.refused_clients == ()
    enforcing = make_reg(validation_enforced=True)
    seed(enforcing, CARTS, [avro_info(P1)])
    shielded = by_topic(enforcing.preview_namespace_policy(NS, validation_enforced=True))[CARTS]
    assert shielded.shielded_by == ("the broker enforces validation (isSchemaValidationEnforced=true)",)


def test_auto_update_and_the_deprecated_strategy_are_previewed_too(shop: Registry) -> None:
    preview = shop.preview_namespace_policy(NS, allow_auto_update=False, auto_update_strategy="Backward")
    assert set(preview.changes) == {"allow_auto_update: unset → False", "auto_update_strategy: unset → Backward"}
    # Every recorded client uses a live version: with auto-update refused they still connect (§8.1 dedup).
    assert preview.refused_clients == ()
    assert all(not t.proposed.allow_auto_update.value for t in preview.topics)


def test_clearing_the_namespace_strategy_previews_the_fallback(shop: Registry) -> None:
    """UNDEFINED is a value to preview like any other: the broker default (FULL) then applies."""
    preview = shop.preview_namespace_policy(NS, compatibility=CS.UNDEFINED)
    assert preview.changes == ("compatibility: ALWAYS_COMPATIBLE → UNDEFINED",)
    orders = by_topic(preview)[ORDERS]
    assert orders.proposed.admin_compatibility.value is CS.FULL and orders.latest_refused


def test_a_topic_strategy_set_then_cleared(shop: Registry) -> None:
    before = everything(shop)
    preview = shop.preview_topic_policy(ORDERS, compatibility="FORWARD_TRANSITIVE")
    assert (preview.scope, preview.target) == ("topic", ORDERS)
    assert preview.changes == ("compatibility: unset → FORWARD_TRANSITIVE",)
    assert [t.topic for t in preview.topics] == [ORDERS] and preview.shielded == ()
    cleared = shop.preview_topic_policy(GUARDED, compatibility=None)
    assert cleared.changes == ("compatibility: ALWAYS_COMPATIBLE → unset",)
    assert [(c.client.subscription) for c in cleared.refused_clients] == []  # ALWAYS_COMPATIBLE ns: still fine
    assert everything(shop) == before


def test_no_change_previews_nothing(shop: Registry) -> None:
    preview = shop.preview_namespace_policy(NS, compatibility="ALWAYS_COMPATIBLE")
    assert preview.changes == () and preview.topics == ()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda r: r.preview_namespace_policy(NS, compatibility="SIDEWAYS"), PolicyError),
        (lambda r: r.preview_namespace_policy(NS, allow_auto_update="maybe"), PolicyError),
        (lambda r: r.preview_namespace_policy(NS, auto_update_strategy="Upward"), PolicyError),
        (lambda r: r.preview_topic_policy(ORDERS + "-partition-0", compatibility="FULL"), PolicyError),
    ],
    ids=["an unknown strategy", "a non-boolean", "an unknown auto-update strategy", "a partition"],
)
def test_a_value_saving_would_refuse_is_refused_by_the_preview(
    shop: Registry, call: Callable[[Registry], Any], error: type[Exception]
) -> None:
    before = everything(shop)
    with pytest.raises(error) as previewed:
        call(shop)
    assert everything(shop) == before
    with pytest.raises(error) as saved:  # the same arguments, saved: the same refusal
        call(_Saving(shop))
    assert str(saved.value) == str(previewed.value)


class _Saving:
    """Runs a preview call's arguments through the matching save instead."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg

    def preview_namespace_policy(self, namespace: str, **values: Any) -> Any:
        return self._reg.set_namespace_policy(namespace, **values)

    def preview_topic_policy(self, topic: str, **values: Any) -> Any:
        return self._reg.set_topic_policy(topic, **values)


def test_the_read_only_view_previews(shop: Registry) -> None:
    view = shop.read_only()
    assert view.preview_namespace_policy(NS, compatibility="BACKWARD").refused_topics
    assert view.preview_topic_policy(ORDERS, compatibility="FULL").changes
