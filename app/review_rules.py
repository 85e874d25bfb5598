"""A namespace's review rules on the Policies page: how many approvals a proposal there needs and who may give
them, and whether changes there must go through proposals. An explorer setting kept with the registry
(`review_rules` / `set_review_rules`), never a Pulsar policy: the page says so where it shows them. An admin
edits them (the core's `allowed_steps` decides); everyone else reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st

from app import answers, session
from app.proposing import sentence
from app.render import escape_markdown, show_error
from app.roles import Roles
from registry import (
    NotFoundError,
    NotSupportedError,
    RegistryError,
    ReviewRules,
    Role,
    SchemaRegistry,
    Step,
    allowed_steps,
    require_satisfiable,
)

ANSWER = "rules"  # where Save review rules keeps its answer (app/answers.py): the message, or the error
MAX_APPROVALS = 5  # the core's bound (registry/proposals/_rules.py), stated here for the widget


def reviewer_names(text: str) -> tuple[str, ...]:
    """The names typed in the reviewers box: one per line or separated by commas, blanks dropped."""
    return tuple(name.strip() for name in re.split(r"[\n,]", text) if name.strip())


def rules_section(reg: SchemaRegistry, namespace: str, *, read_only: bool) -> None:
    st.caption(
        "An explorer setting kept with this registry, **not a Pulsar policy** (no broker sees it): how many "
        "approvals a schema change proposal in this namespace needs before it is applied, and who may give them."
    )
    try:
        rules = reg.proposals.rules(namespace)
    except (NotSupportedError, NotFoundError) as exc:  # a plain broker, or a `serve` from before proposals
        st.info(escape_markdown(f"This registry keeps no review rules: {exc}"), icon=":material/info:")
        return
    except RegistryError as exc:
        show_error(exc)
        return
    if rules.require_proposals:
        st.info(
            escape_markdown(
                f"Changes in {namespace} go through proposals: Register, Save and delete are refused here, for "
                "everyone (require_proposals). An applied proposal is the way a change is made."
            ),
            icon=":material/lock:",
        )
    left, right = st.columns([1, 3])
    left.metric("Approvals needed", rules.required_approvals)
    with right:
        st.markdown("**Reviewers**")
        if rules.reviewers:
            st.dataframe(pd.DataFrame({"reviewer": list(rules.reviewers)}), hide_index=True, width="content")
        else:
            st.caption("Anyone who may write (producers and admins), except a proposal's author.")
        _unable(rules)
    actor = session.actor()
    if read_only or actor is None:
        return
    refused = allowed_steps(actor, rules, namespace=namespace).reason(Step.EDIT_RULES)
    if refused is not None:
        st.caption(escape_markdown(sentence(refused)))
        return
    with st.expander("Change the review rules"), st.form(f"rules_form_{namespace}", border=False):
        approvals = st.number_input(
            "Approvals needed (0: a proposal may be applied at once)",
            min_value=0,
            max_value=MAX_APPROVALS,
            step=1,
            value=rules.required_approvals,
            key=f"rules_approvals_{namespace}",
        )
        names = st.text_area(
            "Reviewers: one name per line, as the app names people (empty: anyone who may write)",
            value="\n".join(rules.reviewers),
            key=f"rules_reviewers_{namespace}",
        )
        required = st.checkbox(
            "Require proposals: refuse every direct schema or policy write here (Register, Save, delete, REST, "
            "the CLI), an admin's too",
            value=rules.require_proposals,
            key=f"rules_require_{namespace}",
        )
        if st.form_submit_button("Save review rules", type="primary"):
            wanted = ReviewRules(
                required_approvals=int(approvals), reviewers=reviewer_names(names), require_proposals=bool(required)
            )
            try:
                require_satisfiable(wanted, namespace, _may_approve())  # the core knows no roles; the app does
                saved = reg.proposals.set_rules(namespace, wanted, actor=actor)
            except RegistryError as exc:
                answers.give(ANSWER, namespace, exc)
            else:
                who = ", ".join(saved.reviewers) or "anyone who may write"
                through = "; changes go through proposals" if saved.require_proposals else ""
                done = f"Review rules of {namespace}: {saved.required_approvals} approval(s) from {who}{through}."
                answers.give(ANSWER, namespace, done)
                session.clear_caches()
            st.rerun()
    answers.show(ANSWER, namespace, _outcome)


def _may_approve() -> Callable[[str], bool] | None:
    """Whether the roles file lets a named person approve (None without a usable one: the core's check alone)."""
    roles = session.current_roles()
    if not isinstance(roles, Roles):
        return None
    return lambda name: roles.role_of(name).at_least(Role.PRODUCER)


def _unable(rules: ReviewRules) -> None:
    """Reviewers who cannot approve under the roles file (viewers, or not named there): say so."""
    roles = session.current_roles()
    if not isinstance(roles, Roles):
        return
    unable = [name for name in rules.reviewers if not roles.role_of(name).at_least(Step.APPROVE.role)]
    if unable:
        st.warning(
            escape_markdown(
                f"{', '.join(unable)} cannot approve: the roles file makes them viewers (approving needs a producer)."
            ),
            icon=":material/person_off:",
        )


def _outcome(value: str | BaseException) -> None:
    if isinstance(value, BaseException):
        show_error(value)
    else:
        st.success(escape_markdown(value), icon=":material/check_circle:")
