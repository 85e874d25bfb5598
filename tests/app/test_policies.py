"""The Policies page: namespace toggles and topic strategy, an impact preview before saving, and saving."""

from __future__ import annotations

from pathlib import Path

from review_helpers import page_test

from app.state import os_user
from registry import AutoUpdateStrategy, CompatibilityStrategy, Registry

HR = "initech/hr"
EMPLOYEES = "persistent://initech/hr/employee-records"
ORDERS = "acme/orders"
CANCELLED = "persistent://acme/orders/order-cancelled"


def test_the_selected_topics_namespace_and_its_stored_policy_are_shown(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    assert not at.exception
    assert at.selectbox(key="pol_namespace").value == HR
    assert at.selectbox(key="pol_compat").value == CompatibilityStrategy.ALWAYS_COMPATIBLE
    assert at.selectbox(key="pol_topic").value == EMPLOYEES


def test_a_stricter_strategy_previews_refused_topics_and_consumers(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FULL_TRANSITIVE).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Latest change would be refused"]) >= 1
    impact = at.dataframe[1].value
    assert EMPLOYEES in set(impact.loc[impact["latest_refused"], "topic"])
    with Registry.open(db, create=True) as reg:  # a preview writes nothing
        assert reg.namespace_policy(HR).compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE


def test_undefined_strategy_preview_is_a_short_message(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.UNDEFINED).run()
    assert not at.exception
    assert at.error and "8 strategies" in at.error[0].value


def test_saving_namespace_toggles_writes_them(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.BACKWARD)
    at.selectbox(key="pol_allow").set_value("refused")
    at.selectbox(key="pol_auto_strategy").set_value("Full")
    at.toggle(key="pol_validation").set_value(True)
    at.run()
    at.button(key="pol_save_ns").click().run()
    assert not at.exception
    assert any("Saved the schema policies of initech/hr" in s.value for s in at.success)
    with Registry.open(db, create=True) as reg:
        policy = reg.namespace_policy(HR)
    assert policy.compatibility is CompatibilityStrategy.BACKWARD
    assert policy.allow_auto_update is False
    assert policy.auto_update_strategy is AutoUpdateStrategy.Full
    assert policy.validation_enforced is True
    assert at.selectbox(key="pol_compat").value == CompatibilityStrategy.BACKWARD


def test_saving_and_clearing_a_topic_strategy(db: Path) -> None:
    at = page_test("policies", db, topic=CANCELLED).run()
    assert at.selectbox(key="pol_topic_compat").value == CompatibilityStrategy.FULL_TRANSITIVE
    at.selectbox(key="pol_topic_compat").set_value(CompatibilityStrategy.UNDEFINED).run()
    at.button(key="pol_save_topic").click().run()
    assert not at.exception
    with Registry.open(db, create=True) as reg:
        assert reg.topic_policy(CANCELLED).compatibility is None
        assert reg.effective_policy(CANCELLED).admin_compatibility.value is CompatibilityStrategy.BACKWARD


def test_read_only_disables_both_saves(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES, read_only=True).run()
    assert at.button(key="pol_save_ns").disabled
    assert at.button(key="pol_save_topic").disabled


def test_the_audit_trail_lists_saves_and_refusals(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    assert "register" in set(at.dataframe[-1].value["action"])  # the sample data's own registrations
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FORWARD).run()
    at.button(key="pol_save_ns").click().run()
    newest = at.dataframe[-1].value.iloc[0]
    assert (newest["action"], newest["target"], newest["outcome"]) == ("set_namespace_policy", HR, "ok")
    assert newest["user"] == f"{os_user()} (os user)"
