"""Policies: a namespace's schema policies and a topic's strategy, with a preview before saving.

The preview is `Registry.policy_impact` (which live registrations and recorded consumers the proposed
strategy would refuse); saving is `set_namespace_policy` / `set_topic_policy` (pulsar-admin's
set-schema-compatibility-strategy, set-is-allow-auto-update-schema, set-schema-validation-enforce).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from app import state
from app.render import escape_markdown, show_error, when
from app.review import ALARM_SHADE, BAD, shaded
from registry import (
    STRATEGIES,
    AuditEntry,
    AutoUpdateStrategy,
    CompatibilityStrategy,
    NamespacePolicy,
    PolicyImpact,
    Registry,
    RegistryError,
    TopicName,
)
from registry.tables import policy_impact_frame

UNDEFINED = CompatibilityStrategy.UNDEFINED
STRATEGY_CHOICES = (UNDEFINED, *STRATEGIES)
# A selectbox shows None as "no choice made", so "not set" is a word here and None only in the core call.
NOT_SET = "not set"
AUTO_UPDATE_CHOICES = (NOT_SET, *(s.value for s in AutoUpdateStrategy))
ALLOW_VALUES = {"not set (broker default)": None, "allowed": True, "refused": False}
ALLOW_LABELS = {value: label for label, value in ALLOW_VALUES.items()}
OUTCOME = "policies_outcome"


def _strategy_label(value: CompatibilityStrategy) -> str:
    return "not set (UNDEFINED)" if value is UNDEFINED else str(value)


def namespaces(reg: Registry) -> list[str]:
    return [ns for tenant in reg.tenants() for ns in reg.namespaces(tenant)]


def _load(prefix: str, ident: object, values: dict[str, Any]) -> None:
    """Seed the editing widgets from the stored policy when another namespace/topic is shown, or after a save."""
    marker = f"{prefix}_loaded"
    if st.session_state.get(marker) == ident:
        return
    st.session_state[marker] = ident
    for key, value in values.items():
        st.session_state[key] = value


def _save(action: Callable[[], object], done: str, on_write: Callable[[], None]) -> None:
    """Button callback: write, then forget the loaded values so the widgets show what is stored now."""
    try:
        action()
    except RegistryError as exc:
        st.session_state[OUTCOME] = ("error", exc)
        return
    on_write()
    st.session_state.pop("pol_ns_loaded", None)
    st.session_state.pop("pol_topic_loaded", None)
    st.session_state[OUTCOME] = ("saved", done)


def _show_outcome() -> None:
    outcome = st.session_state.pop(OUTCOME, None)
    if outcome is None:
        return
    kind, value = outcome
    if kind == "saved":
        st.success(escape_markdown(value), icon=":material/check_circle:")
    else:
        show_error(value)


def policy_frame(policy: NamespacePolicy) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"policy": "compatibility strategy", "stored value": _strategy_label(policy.compatibility)},
            {"policy": "allow auto-update", "stored value": ALLOW_LABELS[policy.allow_auto_update]},
            {"policy": "validation enforced", "stored value": str(policy.validation_enforced).lower()},
            {
                "policy": "auto-update strategy (deprecated)",
                "stored value": "not set" if policy.auto_update_strategy is None else str(policy.auto_update_strategy),
            },
        ]
    )


def show_impact(impact: PolicyImpact) -> None:
    refused, clients = impact.refused_topics, impact.refused_clients
    columns = st.columns(3)
    columns[0].metric("Topics in the namespace", len(impact.topics))
    columns[1].metric("Latest change would be refused", len(refused))
    columns[2].metric("Consumers that would be refused", len(clients))
    if not refused and not clients:
        st.success(f"Under {impact.proposed}, every topic's history and every recorded consumer still pass.")
    frame = policy_impact_frame(impact)
    order = ("topic", "latest_refused", "refused_versions", "refused_clients", "current", "current_source")
    st.dataframe(
        shaded(frame, ALARM_SHADE, "affected", "latest_refused"),
        hide_index=True,
        width="stretch",
        column_order=(*order, "overridden", "affected", "rule_code", "message"),
    )
    if clients:
        st.markdown("**Consumers that could no longer subscribe**")
        rows = [
            {
                "topic": c.client.topic,
                "client": c.client.name,
                "subscription": c.client.subscription,
                "version": c.client.version,
                "reason": c.reason,
            }
            for c in clients
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def namespace_section(reg: Registry, namespace: str, *, read_only: bool, on_write: Callable[[], None]) -> None:
    policy = reg.namespace_policy(namespace)
    st.dataframe(policy_frame(policy), hide_index=True, width="content")
    _load(
        "pol_ns",
        (namespace, policy),
        {
            "pol_compat": policy.compatibility,
            "pol_allow": ALLOW_LABELS[policy.allow_auto_update],
            "pol_validation": policy.validation_enforced,
            "pol_auto_strategy": NOT_SET if policy.auto_update_strategy is None else policy.auto_update_strategy.value,
        },
    )
    left, right = st.columns(2)
    with left:
        compat = st.selectbox("Compatibility strategy", STRATEGY_CHOICES, key="pol_compat", format_func=_strategy_label)
        allow = st.selectbox(
            "Allow auto-update (clients may register new schemas on connect)", list(ALLOW_VALUES), key="pol_allow"
        )
    with right:
        auto_strategy = st.selectbox(
            "Auto-update strategy (deprecated; applies only when the strategy is not set)",
            AUTO_UPDATE_CHOICES,
            key="pol_auto_strategy",
        )
        validation = st.toggle("Schema validation enforced (producers must declare a schema)", key="pol_validation")

    st.markdown("**Preview: what this strategy would refuse**")
    try:
        show_impact(reg.policy_impact(namespace, compat))
    except RegistryError as exc:
        show_error(exc)

    def save() -> object:
        return reg.set_namespace_policy(
            namespace,
            compatibility=compat,
            auto_update_strategy=None if auto_strategy == NOT_SET else auto_strategy,
            allow_auto_update=ALLOW_VALUES[allow],
            validation_enforced=validation,
            user=state.user() or "",
        )

    st.button(
        f"Save policies of {namespace}",
        key="pol_save_ns",
        type="primary",
        disabled=read_only,
        help="The app is read-only." if read_only else None,
        on_click=_save,
        args=(save, f"Saved the schema policies of {namespace}.", on_write),
    )


def topic_section(reg: Registry, namespace: str, *, read_only: bool, on_write: Callable[[], None]) -> None:
    topics = reg.topics(namespace)
    if not topics:
        st.info("This namespace has no topic yet.")
        return
    selected = state.selected_topic()
    if st.session_state.get("pol_topic") not in topics:
        st.session_state["pol_topic"] = selected if selected in topics else topics[0]
    topic = st.selectbox("Topic", topics, key="pol_topic")
    effective = reg.effective_policy(topic)
    stored = reg.topic_policy(topic).compatibility or UNDEFINED
    st.markdown(
        f"In force: **{effective.admin_compatibility.value}** (from the {effective.admin_compatibility.source}); "
        f"auto-update **{'allowed' if effective.allow_auto_update.value else 'refused'}** "
        f"(from the {effective.allow_auto_update.source}); validation enforced "
        f"**{str(effective.validation_enforced.value).lower()}** (from the {effective.validation_enforced.source})."
    )
    _load("pol_topic", (topic, stored), {"pol_topic_compat": stored})
    choice = st.selectbox(
        "Topic strategy (overrides the namespace's)",
        STRATEGY_CHOICES,
        key="pol_topic_compat",
        format_func=lambda v: "not set: use the namespace's (UNDEFINED)" if v is UNDEFINED else str(v),
    )
    st.button(
        f"Save the strategy of {TopicName.parse(topic).local_name}",
        key="pol_save_topic",
        disabled=read_only,
        on_click=_save,
        args=(
            lambda: reg.set_topic_policy(topic, compatibility=choice, user=state.user() or ""),
            f"Saved the topic strategy of {topic}: {_strategy_label(choice)}.",
            on_write,
        ),
    )


def audit_frame(entries: list[AuditEntry]) -> pd.DataFrame:
    rows = [
        {
            "when": when(e.at),
            "user": e.user or "—",
            "action": str(e.action),
            "target": e.target,
            "outcome": str(e.outcome),
            "detail": e.detail,
        }
        for e in entries
    ]
    return pd.DataFrame(rows, columns=["when", "user", "action", "target", "outcome", "detail"])


def audit_section(reg: Registry, namespace: str) -> None:
    """Who changed what in this namespace (policies, registrations, deletions), newest first."""
    entries = reg.audit_trail(namespace, limit=100)
    if not entries:
        st.caption("Nothing has changed in this namespace yet.")
        return
    st.dataframe(shaded(audit_frame(entries), {"refused": BAD}, "outcome"), hide_index=True, width="stretch")


def render(reg: Registry, *, read_only: bool, on_write: Callable[[], None]) -> None:
    _show_outcome()
    options = namespaces(reg)
    if not options:
        st.info("This registry has no namespace yet. Seed the sample data with `schema-explorer seed`.")
        return
    selected = state.selected_topic()
    if st.session_state.get("pol_namespace") not in options:
        home = str(TopicName.parse(selected).namespace_name) if selected else options[0]
        st.session_state["pol_namespace"] = home if home in options else options[0]
    namespace = st.selectbox("Namespace", options, key="pol_namespace")
    st.subheader(f"Namespace {escape_markdown(namespace)}")
    namespace_section(reg, namespace, read_only=read_only, on_write=on_write)
    st.subheader("Topic strategy")
    topic_section(reg, namespace, read_only=read_only, on_write=on_write)
    st.subheader("Audit trail")
    audit_section(reg, namespace)


st.title("Policies")
st.caption("Change a namespace's schema policies or a topic's strategy; see what it would refuse before saving.")
try:
    render(state.registry(), read_only=state.read_only(), on_write=state.clear_caches)
except RegistryError as exc:
    show_error(exc)
