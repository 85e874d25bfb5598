"""Every write in the app asks the core who may make it (app/proposal_access.py → `allowed_steps`): a viewer has no
enabled write (Register, Save…, delete, Propose…), a producer no policy write, and a namespace whose review rules
require proposals shows the rule beside Register, Save and delete, each disabled, while Propose… stays; proposals
still open on the same target are named on What-if and Policies. People sign in through `st.user`, with roles from
a roles file, on a copy of the sample registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, NS, OPS, TOPIC, VICTOR, actor, app_page, propose, said, use_roles, with_field
from streamlit.testing.v1 import AppTest

from registry import CompatibilityStrategy, NamespacePolicyChange, Registry, ReviewRules


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def whatif(db: Path, who: str) -> AppTest:
    at = app_page("whatif", db, who)
    at.session_state["selected_topic"] = TOPIC
    at.run()
    at.text_area(key="whatif_cand_text").set_value(with_field(db, "giftNote").schema).run()
    assert not at.exception
    return at


def help_of(at: AppTest, key: str) -> str:
    return (at.button(key=key).help or "").replace("\\", "")


def require_proposals(db: Path) -> None:
    with Registry.open(db) as reg:
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, require_proposals=True), actor=actor(OPS))


def test_a_viewer_has_no_enabled_write_on_whatif(db: Path) -> None:
    at = whatif(db, VICTOR)
    register = at.button(key="whatif_register")
    assert register.disabled
    refusal = "Registering a schema needs the producer role; `victor@acme.io` is a viewer."
    assert help_of(at, "whatif_register") == refusal
    assert at.button(key="whatif_propose_denied").disabled


def change_namespace_policy(at: AppTest) -> AppTest:
    at.selectbox(key="pol_compat").set_value(CompatibilityStrategy.FULL_TRANSITIVE).run()
    assert not at.exception
    return at


def test_a_viewer_and_a_producer_cannot_save_a_policy(db: Path) -> None:
    for who, role in ((VICTOR, "viewer"), (BOB, "producer")):
        at = change_namespace_policy(app_page("policies", db, who, namespace="initech/hr").run())
        save = at.button(key="pol_save_ns")
        assert save.disabled, who
        assert help_of(at, "pol_save_ns") == f"Setting a policy needs the admin role; `{who}` is a {role}."
    admin = change_namespace_policy(app_page("policies", db, OPS, namespace="initech/hr").run())
    assert not admin.button(key="pol_save_ns").disabled


def test_only_an_admin_sees_delete_on_the_topic_page(db: Path) -> None:
    for who in (VICTOR, BOB):
        at = app_page("topic", db, who, topic="acme/orders/order-created").run()
        assert not [b for b in at.button if b.key == "topic_delete"], who
    admin = app_page("topic", db, OPS, topic="acme/orders/order-created").run()
    assert admin.button(key="topic_delete").disabled  # until "I understand"


def test_require_proposals_disables_register_save_and_delete_and_says_why(db: Path) -> None:
    require_proposals(db)
    at = whatif(db, OPS)
    assert at.button(key="whatif_register").disabled
    rule = f"The review rules of {NS} require proposals (require_proposals)"
    assert help_of(at, "whatif_register").startswith(rule)
    assert rule in said(at) and "schema-explorer propose" in said(at)
    assert "whatif_propose" in [b.key for b in at.button]  # proposing is the way
    policies = change_namespace_policy(app_page("policies", db, OPS, namespace=NS).run())
    assert policies.button(key="pol_save_ns").disabled and rule in said(policies)
    assert f"Changes in {NS} go through proposals" in said(policies)
    topic = app_page("topic", db, OPS, topic="acme/orders/order-created").run()
    assert topic.button(key="topic_delete").disabled and rule in said(topic)


def test_an_admin_sets_require_proposals_in_the_review_rules_form(db: Path) -> None:
    admin = app_page("policies", db, OPS, namespace=NS).run()
    admin.checkbox(key=f"rules_require_{NS}").check()
    admin.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    assert not admin.exception
    assert "changes go through proposals" in said(admin)
    with Registry.open(db) as reg:
        assert reg.proposals.rules(NS).require_proposals
    again = app_page("policies", db, OPS, namespace=NS).run()  # another edit keeps it unless unticked
    again.number_input(key=f"rules_approvals_{NS}").set_value(2)
    again.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    with Registry.open(db) as reg:
        assert reg.proposals.rules(NS) == ReviewRules(required_approvals=2, require_proposals=True)


def test_open_proposals_on_the_same_target_are_named_before_a_direct_write(db: Path) -> None:
    pid = propose(db, title="Add a gift note")
    at = whatif(db, BOB)
    assert f"#{pid} 'Add a gift note' (open)" in said(at)
    assert "A direct write here makes them stale" in said(at)
    with Registry.open(db) as reg:
        reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="Full", actor=actor(ALICE))
    policies = app_page("policies", db, OPS, namespace=NS).run()
    assert "proposal(s) not yet applied change the policies of acme/orders" in said(policies)
    assert "'Full' (open)" in said(policies)


def test_a_revision_someone_wrote_is_not_waiting_for_their_review(db: Path) -> None:
    from app.proposal_access import steps, waiting_for

    pid = propose(db)
    with Registry.open(db) as reg:
        revised = reg.proposals.revise(pid, schema=with_field(db, "memo"), actor=actor(OPS))
    rules = ReviewRules()
    assert not waiting_for(revised, rules, actor(OPS)) and waiting_for(revised, rules, actor(BOB))
    assert not steps(revised, rules, actor(OPS), read_only=False, stale=False).approve
    at = app_page("proposal", db, OPS, id=str(pid)).run()
    assert f"{OPS} wrote revision 2 of proposal #{pid}: nobody approves their own revision" in said(at)


def test_only_an_admin_may_create_a_registry_file_from_the_sidebar(db: Path, tmp_path: Path) -> None:
    from app.widgets import PENDING

    missing = tmp_path / "new.db"
    for who, allowed in ((VICTOR, False), (BOB, False), (OPS, True)):
        at = app_page("whatif", db, who)
        at.session_state[PENDING] = str(missing)
        at.run()
        assert at.button(key="conn_create").disabled is not allowed, who
        refusal = "creating tenants, namespaces, topics or registries needs the admin role"
        assert (refusal in said(at)) is not allowed, who
    assert not missing.exists()


def test_a_click_on_a_page_drawn_before_the_rule_was_set_writes_nothing(db: Path) -> None:
    at = whatif(db, OPS)
    assert not at.button(key="whatif_register").disabled
    require_proposals(db)  # another admin sets the rule while the page is open
    at.button(key="whatif_register").click().run()
    assert not at.exception
    assert at.button(key="whatif_register").disabled
    assert f"The review rules of {NS} require proposals" in said(at)
    with Registry.open(db) as reg:
        assert reg.get(TOPIC).version == 13
