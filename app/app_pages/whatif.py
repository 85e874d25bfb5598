"""What-if: a candidate schema against a topic, under all 8 strategies, before anyone registers it.

Everything comes from one `SchemaRegistry.what_if` call (nothing is written); the Register button is the only
direct write, through `SchemaRegistry.register`, and shows the version it stored or Pulsar's exact refusal.
Propose… makes the candidate on screen a proposal to review first (app/proposing.py), and links to it.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app import answers, links, session
from app.candidate import candidate_input
from app.proposal_access import allowed_in, open_proposals
from app.proposing import propose_popover, show_proposed, show_rule, warn_open, write_button
from app.render import escape_markdown, show_error
from app.review import (
    VERDICT_SHADE,
    shaded,
    show_consequences,
    show_diff,
    show_problems,
    show_strategy_table,
    show_verdict,
)
from app.topic_page import topic_page
from registry import (
    CompatibilityResult,
    IncompatibleSchemaError,
    ProposalKind,
    ReadOnlyError,
    RegistryError,
    SchemaInfo,
    SchemaNotFoundError,
    SchemaRegistry,
    SchemaVersion,
    Step,
    TopicName,
)
from registry.views.charts import strategy_matrix_chart
from registry.views.tables import strategy_frame

ANSWER = "whatif_register"  # where Register's answer is kept (app/answers.py)


def _latest(reg: SchemaRegistry, topic: str) -> SchemaVersion | None:
    try:
        return reg.get(topic)
    except SchemaNotFoundError:
        return None


def _register(reg: SchemaRegistry, topic: str, info: SchemaInfo, on_write: Callable[[], None]) -> None:
    """Register `info`: the candidate built from the widgets in THIS run, i.e. what is on screen at the click
    (a callback would get the candidate of the previous run). The registry checks it again as it is now, so a
    candidate edited since its verdict is judged before anything is stored. The outcome is shown after a rerun,
    which then shows the registry after the write."""
    try:
        done = reg.register(topic, info, user=session.user() or "")
    except IncompatibleSchemaError as exc:
        answers.give(ANSWER, topic, ("refused", str(exc), exc.result))
    except ReadOnlyError as exc:
        answers.give(ANSWER, topic, ("not written", str(exc), None))
    except RegistryError as exc:
        answers.give(ANSWER, topic, ("refused", str(exc), None))
    else:
        on_write()
        if done.stored:
            answers.give(ANSWER, topic, ("registered", f"Registered on {topic} as version {done.version}.", None))
        else:
            message = f"Identical to version {done.version} of {topic}: nothing was stored."
            answers.give(ANSWER, topic, ("unchanged", message, None))
    st.rerun()


def _outcome(outcome: tuple[str, str, CompatibilityResult | None]) -> None:
    """Register's answer, under the button (app/answers.py)."""
    kind, message, result = outcome
    if kind == "registered":
        st.success(escape_markdown(message), icon=":material/check_circle:")
        return
    if kind == "unchanged":
        st.info(escape_markdown(message), icon=":material/info:")
        return
    if kind == "not written":
        st.error(escape_markdown(f"Not registered: {message}"), icon=":material/block:")
        return
    st.error(escape_markdown(f"Pulsar refused the registration: {message}"), icon=":material/block:")
    if result is not None:
        show_problems(result)


def render(
    reg: SchemaRegistry, topic: str, *, read_only: bool = False, on_write: Callable[[], None] = lambda: None
) -> None:
    latest = _latest(reg, topic)
    st.caption(
        "Edit the latest version, paste or upload a schema. Nothing is written until you press Register "
        "(or Propose…, to have it reviewed first)."
        if latest is not None
        else "This topic has no schema yet: the first registration is stored without any check."
    )
    info = candidate_input("whatif_cand", start=latest)
    if info is None:
        return
    try:
        what_if = reg.what_if(topic, info)
    except RegistryError as exc:
        show_error(exc)
        return
    show_verdict(what_if)

    st.subheader("Under each strategy")
    # Wide enough for the rule code beside a refusal (the chart is 420 px of marks plus its strategy labels).
    st.altair_chart(strategy_matrix_chart(what_if, title=""), width=640)
    frame = strategy_frame(what_if)
    show_strategy_table(shaded(frame, VERDICT_SHADE, "accepted"), tuple(frame.columns))
    strategies = list(what_if.by_strategy)
    chosen = st.selectbox(
        "Problems under",
        strategies,
        index=strategies.index(what_if.effective.value),
        key="whatif_strategy",
        format_func=lambda s: f"{s} (in force)" if s is what_if.effective.value else str(s),
    )
    show_problems(what_if.by_strategy[chosen])

    show_consequences(what_if)

    if what_if.diff is not None:
        with st.expander(f"Diff against the latest version (v{what_if.latest_version})"):
            show_diff(what_if.diff, old_label=f"v{what_if.latest_version}", new_label="candidate", key="whatif_diff")

    st.divider()
    namespace = str(TopicName.parse(topic).namespace_name)
    allowed = allowed_in(reg, namespace, session.actor(), read_only=read_only)
    warn_open(open_proposals(reg, topic, kind=ProposalKind.SCHEMA), f"the schema of {links.short_topic(topic)}")
    with st.container(horizontal=True):
        help_text = "Registers the candidate on screen now, as Pulsar would judge it."
        if write_button("Register", key="whatif_register", allowed=allowed, step=Step.REGISTER, help=help_text):
            _register(reg, topic, info, on_write)
        propose_popover(
            "whatif",
            lambda title, description, actor: reg.proposals.propose_schema(
                topic, info, title=title, description=description, actor=actor
            ),
            allowed=allowed,
            what="this candidate",
            subject=topic,
        )
    show_rule(allowed, Step.REGISTER)
    answers.show(ANSWER, topic, _outcome)
    show_proposed("whatif", topic)


st.title("What-if")
st.caption("Would Pulsar accept this schema? Under every strategy, for producers and consumers; and the upgrade order.")
topic_page(lambda reg, topic: render(reg, topic, read_only=session.read_only(), on_write=session.clear_caches))
