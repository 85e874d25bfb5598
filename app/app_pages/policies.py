"""Policies: a namespace's schema policies and a topic's own strategy, each change previewed and confirmed.

Every change (compatibility strategy, allow auto-update, validation enforced, the deprecated auto-update
strategy, a topic's own strategy set or cleared) is previewed with `SchemaRegistry.preview_policy` as soon
as a value differs from the stored one: the topics whose latest change would be refused, the recorded
producers and consumers that could no longer connect, and apart, the topics the change does not reach.
Saving asks for a confirmation that repeats the change, and saves exactly that change,
only if nobody changed the stored policy since (`set_namespace_policy` / `set_topic_policy`, pulsar-admin's
set-schema-compatibility-strategy, set-is-allow-auto-update-schema, set-schema-validation-enforce).
Propose… beside Save… makes the change on screen a proposal to review first (app/proposing.py). The namespace's
review rules of proposals (an explorer setting, not a Pulsar policy) are shown, and an admin edits them
(app/review_rules.py). The page opens from `/policies?namespace=tenant/ns` or `/policies?topic=tenant/ns/name`
(app/links.py).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import answers, links, selection, session
from app.proposal_access import allowed_in, open_proposals
from app.proposing import propose_popover, show_proposed, show_rule, warn_open, write_button
from app.render import escape_markdown, show_error, when
from app.review import BAD, shaded, show_preview
from app.review_rules import rules_section
from registry import (
    STRATEGIES,
    AuditEntry,
    AutoUpdateStrategy,
    CompatibilityStrategy,
    NamespacePolicy,
    NamespacePolicyChange,
    PolicyChangedError,
    PolicyPreview,
    ProposalKind,
    RegistryError,
    SchemaRegistry,
    Step,
    TopicName,
    TopicPolicy,
    TopicPolicyChange,
)

UNDEFINED = CompatibilityStrategy.UNDEFINED
STRATEGY_CHOICES = (UNDEFINED, *STRATEGIES)
# A selectbox shows None as "no choice made", so "not set" is a word here and None only in the core call.
NOT_SET = "not set"
AUTO_UPDATE_CHOICES = (NOT_SET, *(s.value for s in AutoUpdateStrategy))
ALLOW_VALUES = {"not set (broker default)": None, "allowed": True, "refused": False}
ALLOW_LABELS = {value: label for label, value in ALLOW_VALUES.items()}


PENDING = "policies_pending"  # the change waiting for its confirmation: (scope, target, values, stored before)


def _strategy_label(value: CompatibilityStrategy) -> str:
    return "not set (UNDEFINED)" if value is UNDEFINED else str(value)


def namespaces(reg: SchemaRegistry) -> list[str]:
    return [ns for tenant in reg.tenants() for ns in reg.namespaces(tenant)]


def _load(prefix: str, ident: object, values: dict[str, Any]) -> None:
    """Seed the editing widgets from the stored policy when another namespace/topic is shown, or after a save."""
    marker = f"{prefix}_loaded"
    if st.session_state.get(marker) == ident:
        return
    st.session_state[marker] = ident
    for key, value in values.items():
        st.session_state[key] = value


def _where(scope: str) -> str:
    """Where a scope's writes keep their answers (app/answers.py): "pol_ns" or "pol_topic", as its widget keys."""
    return "pol_ns" if scope == "namespace" else "pol_topic"


def show_answers(scope: str, target: str) -> None:
    """The answer of the last Save… or Propose… of this scope about `target`, under their buttons."""
    answers.show(f"{_where(scope)}_saved", target, _saved)
    show_proposed(_where(scope), target)


def _saved(outcome: tuple[str, Any]) -> None:
    kind, value = outcome
    if kind == "saved":
        st.success(escape_markdown(value), icon=":material/check_circle:")
    elif kind == "stale":
        st.warning(escape_markdown(value), icon=":material/sync_problem:")
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


# --- preview and confirmation -------------------------------------------------------------------------


def _change(scope: str, values: dict[str, Any]) -> NamespacePolicyChange | TopicPolicyChange:
    """The change the widgets of a scope ask for, as the core takes it."""
    return NamespacePolicyChange.of(values) if scope == "namespace" else TopicPolicyChange.of(values)


def _ask(scope: str, target: str, values: dict[str, Any], before: NamespacePolicy | TopicPolicy) -> None:
    st.session_state[PENDING] = (scope, target, values, before)


def _confirm(
    reg: SchemaRegistry, scope: str, target: str, values: dict[str, Any], preview: PolicyPreview, *, read_only: bool
) -> None:
    """The Save button, then the confirmation that repeats the change and what it refuses. A pending change
    that no longer matches the widgets (edited since) is dropped: only what is on screen can be saved."""
    pending = st.session_state.get(PENDING)
    if pending is not None and pending[:3] != (scope, target, values):
        if pending[0] == scope:
            st.session_state.pop(PENDING, None)
        pending = None
    key = _where(scope).replace("pol_", "pol_save_")
    label = (
        f"Save… policies of {target}"
        if scope == "namespace"
        else f"Save… strategy of {TopicName.parse(target).local_name}"
    )
    namespace = target if scope == "namespace" else str(TopicName.parse(target).namespace_name)
    allowed = allowed_in(reg, namespace, session.actor(), read_only=read_only)
    with st.container(horizontal=True):
        if write_button(
            label,
            key=key,
            allowed=allowed,
            step=Step.SET_POLICY,
            disabled=pending is not None,
            help="Shows the change once more before it is saved.",
        ):
            _ask(scope, target, values, preview.before)
            st.rerun()
        propose_popover(
            key.replace("_save", ""),
            lambda title, description, actor: reg.proposals.propose_policy(
                target, _change(scope, values), title=title, description=description, actor=actor
            ),
            allowed=allowed,
            default_title=_default_title(scope, target, preview),
            what="this policy change",
            subject=target,
        )
    show_rule(allowed, Step.SET_POLICY)
    if pending is None or not allowed.allows(Step.SET_POLICY):
        return
    refusals = f"{len(preview.refused_topics)} topic(s) whose latest change would be refused, " + (
        f"{len(preview.refused_clients)} client(s) that could no longer connect"
    )
    with st.container(border=True):
        st.warning(
            escape_markdown(f"Save on {target}: {'; '.join(preview.changes)}? {refusals}."),
            icon=":material/help:",
        )
        yes, no = st.columns(2)
        yes.button(
            "Confirm and save",
            key=f"{key}_confirm",
            type="primary",
            on_click=_save,
            args=(reg, pending),
        )
        no.button("Cancel", key=f"{key}_cancel", on_click=lambda: st.session_state.pop(PENDING, None))


def _warn_open(reg: SchemaRegistry, scope: str, target: str) -> None:
    """The policy proposals not yet applied on this namespace or topic: saving directly would overtake them."""
    if scope == "namespace":
        waiting = open_proposals(reg, target, kind=ProposalKind.POLICY, namespace=target)
    else:
        waiting = open_proposals(reg, target, kind=ProposalKind.POLICY)
    warn_open(waiting, f"the policies of {target if scope == 'namespace' else links.short_topic(target)}")


def _default_title(scope: str, target: str, preview: PolicyPreview) -> str:
    """A proposal's title to start from: where, and what changes (the core keeps at most 200 characters)."""
    where = links.short_topic(target) if scope == "topic" else target
    return f"{where}: {'; '.join(preview.changes)}"[:200]


def _drop_pending(scope: str) -> None:
    pending = st.session_state.get(PENDING)
    if pending is not None and pending[0] == scope:
        st.session_state.pop(PENDING, None)


def _save(reg: SchemaRegistry, pending: tuple[str, str, dict[str, Any], NamespacePolicy | TopicPolicy]) -> None:
    """Confirm's callback: save the pending change against the policy it was previewed with (`expected=`): the
    registry refuses it, atomically, when another person or tab saved meanwhile, and the page then shows the
    policy as it is now."""
    scope, target, values, before = pending
    st.session_state.pop(PENDING, None)
    st.session_state.pop("pol_ns_loaded", None)
    st.session_state.pop("pol_topic_loaded", None)
    where = f"{_where(scope)}_saved"
    try:
        if isinstance(before, NamespacePolicy):
            reg.set_namespace_policy(target, **values, expected=before, user=session.user() or "")
        else:
            reg.set_topic_policy(target, **values, expected=before, user=session.user() or "")
    except PolicyChangedError:
        answers.give(
            where,
            target,
            (
                "stale",
                f"Not saved: the policies of {target} changed since this preview (someone else saved). "
                "The page now shows them as they are; review the change again.",
            ),
        )
        return
    except RegistryError as exc:
        answers.give(where, target, ("error", exc))
        return
    session.clear_caches()
    done = "; ".join(f"{k.replace('_', ' ')} {_shown(v)}" for k, v in values.items())
    answers.give(where, target, ("saved", f"Saved on {target}: {done}."))


def _shown(value: object) -> str:
    if value is None:
        return "not set"
    return str(value).lower() if isinstance(value, bool) else str(value)


# --- sections -----------------------------------------------------------------------------------------


def namespace_section(reg: SchemaRegistry, namespace: str, *, read_only: bool) -> None:
    policy = reg.namespace_policy(namespace)
    st.dataframe(policy_frame(policy), hide_index=True, width="content")
    _warn_open(reg, "namespace", namespace)
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
        validation = st.toggle(
            "Schema validation enforced", key="pol_validation", help="Producers must declare a schema to connect."
        )
    wanted = {
        "compatibility": compat,
        "allow_auto_update": ALLOW_VALUES[allow],
        "validation_enforced": validation,
        "auto_update_strategy": None if auto_strategy == NOT_SET else AutoUpdateStrategy.parse(auto_strategy),
    }
    stored = {
        "compatibility": policy.compatibility,
        "allow_auto_update": policy.allow_auto_update,
        "validation_enforced": policy.validation_enforced,
        "auto_update_strategy": policy.auto_update_strategy,
    }
    values = {k: v for k, v in wanted.items() if v != stored[k]}
    if not values:
        _drop_pending("namespace")  # edited back to the stored values: nothing is waiting to be saved
        st.caption("Change a value above to preview what it would refuse before saving it.")
    else:
        try:
            preview = reg.preview_policy(namespace, NamespacePolicyChange.of(values))
        except RegistryError as exc:
            show_error(exc)
        else:
            show_preview(preview)
            _confirm(reg, "namespace", namespace, values, preview, read_only=read_only)
    show_answers("namespace", namespace)


def topic_section(reg: SchemaRegistry, namespace: str, *, read_only: bool) -> str | None:
    """A topic's own strategy, previewed and confirmed like the namespace's; returns the topic shown."""
    topics = reg.topics(namespace)
    if not topics:
        st.info("This namespace has no topic yet.")
        return None
    selected = selection.selected_topic()
    if st.session_state.get("pol_topic") not in topics:
        st.session_state["pol_topic"] = selected if selected in topics else topics[0]
    topic = st.selectbox("Topic", topics, key="pol_topic")
    _warn_open(reg, "topic", topic)
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
    if choice == stored:
        _drop_pending("topic")
        st.caption("Choose another strategy for this topic (or clear it) to preview it before saving.")
    else:
        values = {"compatibility": None if choice is UNDEFINED else choice}
        try:
            preview = reg.preview_policy(topic, TopicPolicyChange.of(values))
        except RegistryError as exc:
            show_error(exc)
        else:
            show_preview(preview)
            _confirm(reg, "topic", topic, values, preview, read_only=read_only)
    show_answers("topic", topic)
    return topic


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


def audit_section(reg: SchemaRegistry, namespace: str) -> None:
    """Who changed what in this namespace (policies, registrations, deletions), newest first."""
    # The trail comes in the order it was written; entries may carry older times (an import, the sample data's
    # history), so sort by when, newest first (a stable sort keeps the written order of equal times).
    entries = sorted(reg.audit_trail(namespace, limit=100), key=lambda entry: entry.at, reverse=True)
    if not entries:
        st.caption("Nothing has changed in this namespace yet.")
        return
    st.dataframe(shaded(audit_frame(entries), {"refused": BAD}, "outcome"), hide_index=True, width="stretch")


def _open_link(reg: SchemaRegistry, options: list[str]) -> None:
    """`namespace=` or `topic=` (the topic's namespace then opens, with the topic chosen below)."""
    params = links.opened()
    if "topic" in params:
        topic = links.resolve_topic(reg, params["topic"])
        if topic is not None:
            selection.select_topic(topic)
            st.session_state["pol_namespace"] = str(TopicName.parse(topic).namespace_name)
            st.session_state["pol_topic"] = topic
    elif "namespace" in params:
        if params["namespace"] in options:
            st.session_state["pol_namespace"] = params["namespace"]
        else:
            links.bad_value("namespace", params["namespace"], "no such namespace in this registry")


def render(reg: SchemaRegistry, share: DeltaGenerator, *, read_only: bool) -> None:
    options = namespaces(reg)
    if not options:
        st.info("This registry has no namespace yet. Seed the sample data with `schema-explorer seed`.")
        links.keep({})
        return
    _open_link(reg, options)
    selected = selection.selected_topic()
    if st.session_state.get("pol_namespace") not in options:
        home = str(TopicName.parse(selected).namespace_name) if selected else options[0]
        st.session_state["pol_namespace"] = home if home in options else options[0]
    namespace = st.selectbox("Namespace", options, key="pol_namespace")
    st.subheader(f"Namespace {escape_markdown(namespace)}")
    namespace_section(reg, namespace, read_only=read_only)
    st.subheader("Topic strategy")
    topic = topic_section(reg, namespace, read_only=read_only)
    st.subheader("Review rules of proposals (explorer setting)")
    rules_section(reg, namespace, read_only=read_only)
    st.subheader("Audit trail")
    audit_section(reg, namespace)
    links.keep({"namespace": namespace, "topic": links.short_topic(topic) if topic else None})
    with share:
        links.copy_link()


share_place = links.title_row("Policies")
st.caption("Change a namespace's schema policies or a topic's strategy: each change is previewed, then confirmed.")
try:
    render(session.registry(), share_place, read_only=session.read_only())
except RegistryError as exc:
    show_error(exc)
