"""The Proposals page (`/proposals`: filters and rows that open a proposal), Propose… on What-if and Policies, the
review rules on Policies, and the Topic page's link from a version to the proposal that stored it; through the
real core on a copy of the sample registry, people signed in through `st.user` with roles from a roles file."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from proposal_helpers import (
    ALICE,
    BOB,
    CAROL,
    NS,
    OPS,
    TOPIC,
    VICTOR,
    actor,
    app_page,
    button_labels,
    propose,
    said,
    use_roles,
    with_field,
)
from streamlit.testing.v1 import AppTest

from registry import CompatibilityStrategy, ProposalKind, ProposalState, Registry, ReviewRules


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def listed(at: AppTest) -> list[int]:
    frame = next((d.value for d in at.main.dataframe if "link" in d.value.columns), None)
    return [] if frame is None else [int(i) for i in frame["id"]]


def proposals(db: Path, who: str | None, **params: str) -> AppTest:
    return app_page("proposals", db, who, **params).run()


@pytest.fixture
def four(db: Path) -> dict[str, int]:
    """alice's open proposal, bob's approved one, carol's withdrawn one, and alice's stale one on another topic."""
    ids = {"open": propose(db, title="Gift note")}
    with Registry.open(db) as reg:
        cart = "persistent://acme/orders/order-cancelled"
        bobs = reg.proposals.propose_schema(TOPIC, with_field(db, "bobField"), title="Bob's", actor=actor(BOB))
        reg.proposals.approve(bobs.id, actor=actor(CAROL))
        ids["approved"] = bobs.id
        carols = reg.proposals.propose_schema(TOPIC, with_field(db, "carolField"), title="Carol's", actor=actor(CAROL))
        reg.proposals.withdraw(carols.id, actor=actor(CAROL))
        ids["withdrawn"] = carols.id
        stale = reg.proposals.propose_schema(
            cart, with_field(db, "reason2", topic=cart), title="Stale", actor=actor(ALICE)
        )
        reg.register(cart, with_field(db, "other", topic=cart), user=OPS)
        ids["stale"] = stale.id
    return ids


def test_each_filter_lists_what_it_says(db: Path, four: dict[str, int]) -> None:
    at = proposals(db, BOB)
    assert not at.exception and not at.error
    assert set(listed(at)) == {four["open"], four["approved"], four["stale"]}  # open: not applied, rejected, withdrawn
    at.segmented_control(key="props_filter").set_value("mine").run()
    assert listed(at) == [four["approved"]]
    at.segmented_control(key="props_filter").set_value("waiting").run()
    assert listed(at) == [four["open"]]  # open, not bob's, bob may approve, not yet approved by bob
    at.segmented_control(key="props_filter").set_value("stale").run()
    assert listed(at) == [four["stale"]]  # stale now, though nobody tried to apply it yet
    at.segmented_control(key="props_filter").set_value("all").run()
    assert set(listed(at)) == set(four.values())
    assert at.query_params["show"] in ("all", ["all"])
    at.selectbox(key="props_namespace").set_value("initech/hr").run()
    assert listed(at) == [] and "No proposal in initech/hr yet" in said(at)


def test_waiting_for_my_review_follows_the_rules_and_my_approvals(db: Path, four: dict[str, int]) -> None:
    carol = proposals(db, CAROL, show="waiting")
    assert listed(carol) == [four["open"]]
    with Registry.open(db) as reg:
        reg.proposals.approve(four["open"], actor=actor(CAROL))
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, reviewers=(BOB, OPS)), actor=actor(OPS))
    assert listed(proposals(db, CAROL, show="waiting")) == []  # approved already, and no longer a reviewer
    assert listed(proposals(db, BOB, show="waiting")) == [four["open"]]
    assert listed(proposals(db, VICTOR, show="waiting")) == []  # a viewer never reviews


def test_a_link_opens_with_its_filters_and_a_bad_value_is_named(db: Path, four: dict[str, int]) -> None:
    at = proposals(db, ALICE, show="mine", namespace=NS)
    assert at.segmented_control(key="props_filter").value == "mine"
    assert set(listed(at)) == {four["open"], four["stale"]}
    bad = proposals(db, ALICE, show="everything", namespace="acme/nowhere")
    assert not bad.exception
    assert "The link's `show` is `everything`" in said(bad) and "The link's `namespace` is `acme/nowhere`" in said(bad)
    assert bad.segmented_control(key="props_filter").value == "open"


def test_each_row_links_to_its_proposal(db: Path, four: dict[str, int]) -> None:
    at = proposals(db, BOB)
    frame = next(d.value for d in at.main.dataframe if "link" in d.value.columns)
    row = frame.set_index("id").loc[four["approved"]]
    link = urlsplit(row["link"])
    assert link.path.endswith("/proposal") and parse_qs(link.query) == {
        "id": [str(four["approved"])],
        "registry": [str(db)],
    }
    assert (row["state"], row["approvals"], row["author"]) == ("approved", f"1 of 1 ({CAROL})", BOB)
    assert frame.set_index("id").loc[four["stale"], "state"] == "stale"


def test_whatif_proposes_the_candidate_on_screen_and_links_to_it(db: Path) -> None:
    at = app_page("whatif", db, ALICE)
    at.session_state["selected_topic"] = TOPIC
    at.run()
    at.text_area(key="whatif_cand_text").set_value(with_field(db, "giftNote").schema).run()
    at.text_input(key="whatif_propose_title").set_value("Gift note <b>please</b>")
    at.text_area(key="whatif_propose_description").set_value("For the warehouse.")
    at.text_area(key="whatif_cand_text").set_value(with_field(db, "editedAfter").schema)  # edited, not checked
    at.button(key="whatif_propose").click().run()
    assert not at.exception and not at.error
    assert "Proposal #1 opened: Gift note <b>please</b>" in said(at)
    assert any(link.label == "Open proposal #1" for link in at.main.page_link)
    with Registry.open(db) as reg:
        made = reg.proposals.get(1)
        assert reg.get(TOPIC).version == 13  # proposing registers nothing
    assert (made.author, made.kind, made.base_version, made.description) == (
        ALICE,
        ProposalKind.SCHEMA,
        13,
        "For the warehouse.",
    )
    assert "editedAfter" in str(made.revision.schema.schema if made.revision.schema else "")


def test_whatif_propose_without_a_title_stores_nothing_and_says_why(db: Path) -> None:
    at = app_page("whatif", db, ALICE)
    at.session_state["selected_topic"] = TOPIC
    at.run()
    at.text_area(key="whatif_cand_text").set_value(with_field(db, "giftNote").schema).run()
    at.button(key="whatif_propose").click().run()
    assert not at.exception
    assert "the title must not be empty" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.list() == []


def test_a_viewer_cannot_propose_and_a_read_only_session_sees_no_propose(db: Path) -> None:
    at = app_page("whatif", db, VICTOR)
    at.session_state["selected_topic"] = TOPIC
    at.run()
    assert "whatif_propose" not in [b.key for b in at.main.button]
    assert at.button(key="whatif_propose_denied").disabled
    assert "Proposing needs the producer role; `victor@acme.io` is a viewer." in at.button(
        key="whatif_propose_denied"
    ).help.replace("\\", "")
    ro = app_page("whatif", db, OPS, read_only=True)
    ro.session_state["selected_topic"] = TOPIC
    ro.run()
    assert "Propose" not in button_labels(ro)


def test_policies_proposes_the_change_after_its_preview(db: Path) -> None:
    at = app_page("policies", db, CAROL, namespace="initech/hr").run()
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FULL_TRANSITIVE).run()
    assert "Latest change would be refused" in [m.label for m in at.metric]
    assert at.text_input(key="pol_ns_propose_title").value.startswith("initech/hr: compatibility")
    at.button(key="pol_ns_propose").click().run()
    assert not at.exception and not at.error
    assert "Proposal #1 opened" in said(at)
    with Registry.open(db) as reg:
        made = reg.proposals.get(1)
        assert reg.namespace_policy("initech/hr").compatibility is CompatibilityStrategy.ALWAYS_COMPATIBLE
    assert (made.kind, made.target, dict(made.revision.policy or {})) == (
        ProposalKind.POLICY,
        "initech/hr",
        {"compatibility": "FULL_TRANSITIVE"},
    )


def test_review_rules_are_shown_as_an_explorer_setting_and_only_an_admin_edits_them(db: Path) -> None:
    producer = app_page("policies", db, BOB, namespace=NS).run()
    assert "not a Pulsar policy" in said(producer)
    assert "Setting review rules needs the admin role; bob@acme.io is a producer." in said(producer)
    assert "Save review rules" not in [b.label for b in producer.main.button]
    admin = app_page("policies", db, OPS, namespace=NS).run()
    admin.number_input(key=f"rules_approvals_{NS}").set_value(2)
    admin.text_area(key=f"rules_reviewers_{NS}").set_value(f"{BOB}\n{CAROL}, {VICTOR}\n")
    admin.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    assert not admin.exception and not admin.error
    assert f"Review rules of {NS}: 2 approval(s) from {BOB}, {CAROL}, {VICTOR}." in said(admin)
    assert f"{VICTOR} cannot approve: the roles file makes them viewers" in said(admin)
    with Registry.open(db) as reg:
        assert reg.proposals.rules(NS) == ReviewRules(required_approvals=2, reviewers=(BOB, CAROL, VICTOR))


def test_a_viewer_as_the_only_reviewer_is_refused_and_nothing_is_stored(db: Path) -> None:
    admin = app_page("policies", db, OPS, namespace=NS).run()
    admin.text_area(key=f"rules_reviewers_{NS}").set_value(VICTOR)
    admin.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    assert not admin.exception
    assert f"{NS} would need 1 approval from 0 named reviewers; {VICTOR} cannot approve (a viewer" in said(admin)
    with Registry.open(db) as reg:
        assert reg.proposals.rules(NS) == ReviewRules()


def test_a_bad_reviewer_name_stores_nothing_and_says_what_was_wrong(db: Path) -> None:
    admin = app_page("policies", db, OPS, namespace=NS).run()
    admin.text_area(key=f"rules_reviewers_{NS}").set_value("x" * 301)
    admin.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    assert "a reviewer's name is 301 characters long; at most 300 are kept" in said(admin)
    with Registry.open(db) as reg:
        assert reg.proposals.rules(NS) == ReviewRules()


def test_the_topic_page_links_a_version_to_the_proposal_that_stored_it(db: Path) -> None:
    pid = propose(db, title="Gift **note**")
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
        reg.proposals.apply(pid, actor=actor(ALICE))
    at = app_page("topic", db, BOB, topic="acme/orders/order-created", version="14").run()
    assert not at.exception and not at.error
    link = next(link for link in at.main.page_link if "proposal" in link.label)
    assert link.label.replace("\\", "") == f"Applied through proposal #{pid}: Gift **note**"
    versions = next(d.value for d in at.main.dataframe if "proposal" in d.value.columns)
    assert versions.set_index("version").loc[14, "proposal"] == f"#{pid}"
    older = app_page("topic", db, BOB, topic="acme/orders/order-created", version="13").run()
    assert not any("proposal" in link.label for link in older.main.page_link)


def test_the_proposals_page_lists_nothing_for_a_registry_without_any(db: Path) -> None:
    at = proposals(db, BOB)
    assert not at.exception and "No open proposal" in said(at)
    assert json.dumps(listed(at)) == "[]"


def test_an_applied_proposal_is_no_longer_open(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
        reg.proposals.apply(pid, actor=actor(ALICE))
        assert reg.proposals.get(pid).state is ProposalState.APPLIED
    assert listed(proposals(db, BOB)) == []
    assert listed(proposals(db, BOB, show="all")) == [pid]
