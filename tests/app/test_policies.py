"""The Policies page: namespace toggles and topic strategy, an impact preview before saving, and saving."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from review_helpers import page_test, texts
from streamlit.testing.v1 import AppTest

from app.session import os_user
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


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_a_stricter_strategy_previews_refused_topics_and_consumers(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FULL_TRANSITIVE).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Latest change would be refused"]) >= 1
    impact = frame_with(at, "latest_refused")
    assert EMPLOYEES in set(impact.loc[impact["latest_refused"], "topic"])
    with Registry.open(db, create=True) as reg:  # a preview writes nothing
        assert reg.namespace_policy(HR).compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE


def test_every_namespace_opens_without_an_error_undefined_included(db: Path) -> None:
    with Registry.open(db) as reg:
        options = [ns for t in reg.tenants() for ns in reg.namespaces(t)]
        undefined = [ns for ns in options if reg.namespace_policy(ns).compatibility is CompatibilityStrategy.UNDEFINED]
    assert undefined, "the sample data has a namespace whose strategy is UNDEFINED"
    at = page_test("policies", db).run()
    for namespace in options:
        at.selectbox(key="pol_namespace").set_value(namespace).run()
        assert not at.exception and not at.error, namespace
    at.selectbox(key="pol_namespace").set_value(HR).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.UNDEFINED).run()  # clearing is previewed too
    assert not at.exception and not at.error
    assert "compatibility: ALWAYS_COMPATIBLE → UNDEFINED" in texts(at).replace("\\", "")


def test_a_namespace_change_is_saved_only_after_its_confirmation(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.BACKWARD)
    at.selectbox(key="pol_allow").set_value("refused")
    at.selectbox(key="pol_auto_strategy").set_value("Full")
    at.toggle(key="pol_validation").set_value(True)
    at.run()
    at.button(key="pol_save_ns").click().run()
    assert not at.exception
    assert any("Save on initech/hr" in w.value for w in at.warning)
    with Registry.open(db) as reg:
        assert reg.namespace_policy(HR).compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE  # not yet
    at.button(key="pol_save_ns_confirm").click().run()
    assert any("Saved on initech/hr" in s.value for s in at.success)
    with Registry.open(db) as reg:
        policy = reg.namespace_policy(HR)
    assert policy.compatibility is CompatibilityStrategy.BACKWARD
    assert policy.allow_auto_update is False
    assert policy.auto_update_strategy is AutoUpdateStrategy.Full
    assert policy.validation_enforced is True
    assert at.selectbox(key="pol_compat").value == CompatibilityStrategy.BACKWARD


def test_cancel_and_an_edit_after_save_store_nothing(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.BACKWARD).run()
    at.button(key="pol_save_ns").click().run()
    at.button(key="pol_save_ns_cancel").click().run()
    assert not at.button(key="pol_save_ns").disabled and "pol_save_ns_confirm" not in keys(at)
    at.button(key="pol_save_ns").click().run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FORWARD).run()  # edited after Save…
    assert "pol_save_ns_confirm" not in keys(at)  # the confirmation of BACKWARD is gone with it
    at.button(key="pol_save_ns").click().run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.ALWAYS_COMPATIBLE).run()  # back to stored
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FORWARD).run()  # and to the asked value
    assert "pol_save_ns_confirm" not in keys(at)  # asking again takes another Save…
    with Registry.open(db) as reg:
        assert reg.namespace_policy(HR).compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE


def test_a_policy_changed_by_someone_else_since_the_preview_is_not_overwritten(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.BACKWARD).run()
    at.button(key="pol_save_ns").click().run()
    with Registry.open(db) as other:  # a teammate saves first
        other.set_namespace_policy(HR, validation_enforced=True, user="teammate")
    at.button(key="pol_save_ns_confirm").click().run()
    assert any("changed since this preview" in w.value for w in at.warning)
    with Registry.open(db) as reg:
        policy = reg.namespace_policy(HR)
    assert policy.compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE and policy.validation_enforced
    assert at.toggle(key="pol_validation").value is True  # the page shows the policy as it is now


def test_saving_and_clearing_a_topic_strategy(db: Path) -> None:
    at = page_test("policies", db, topic=CANCELLED).run()
    assert at.selectbox(key="pol_topic_compat").value == CompatibilityStrategy.FULL_TRANSITIVE
    at.selectbox(key="pol_topic_compat").set_value(CompatibilityStrategy.UNDEFINED).run()
    assert "compatibility: FULL_TRANSITIVE → unset" in texts(at).replace("\\", "")
    at.button(key="pol_save_topic").click().run()
    at.button(key="pol_save_topic_confirm").click().run()
    assert not at.exception
    with Registry.open(db) as reg:
        assert reg.topic_policy(CANCELLED).compatibility is None
        assert reg.effective_policy(CANCELLED).admin_compatibility.value is CompatibilityStrategy.BACKWARD


def test_a_namespace_preview_lists_the_topics_their_own_strategy_shields_apart(db: Path) -> None:
    at = page_test("policies", db, topic=CANCELLED).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.ALWAYS_INCOMPATIBLE).run()
    shielded = frame_with(at, "kept_by")
    assert CANCELLED in set(shielded["topic"])
    assert CANCELLED not in set(frame_with(at, "latest_refused")["topic"])


def test_read_only_disables_both_saves(db: Path) -> None:
    at = page_test("policies", db, topic=CANCELLED, read_only=True).run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FORWARD)
    at.selectbox(key="pol_topic_compat").set_value(CompatibilityStrategy.FULL).run()
    assert at.button(key="pol_save_ns").disabled
    assert at.button(key="pol_save_topic").disabled


def test_the_audit_trail_lists_saves_and_refusals(db: Path) -> None:
    at = page_test("policies", db, topic=EMPLOYEES).run()
    assert "register" in set(at.dataframe[-1].value["action"])  # the sample data's own registrations
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FORWARD).run()
    at.button(key="pol_save_ns").click().run()
    at.button(key="pol_save_ns_confirm").click().run()
    newest = at.dataframe[-1].value.iloc[0]
    assert (newest["action"], newest["target"], newest["outcome"]) == ("set_namespace_policy", HR, "ok")
    assert newest["user"] == f"{os_user()} (os user)"


def test_the_page_opens_from_its_links(db: Path) -> None:
    at = page_test("policies", db)
    at.query_params["topic"] = "acme/orders/order-cancelled"
    at.run()
    assert (at.selectbox(key="pol_namespace").value, at.selectbox(key="pol_topic").value) == (ORDERS, CANCELLED)
    at = page_test("policies", db)
    at.query_params["namespace"] = "initech/nope"
    at.run()
    assert not at.exception and "initech/nope" in texts(at)


def keys(at: AppTest) -> set[str]:
    return {b.key for b in at.button}
