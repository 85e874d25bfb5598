"""Where the answer to a write is shown (app/answers.py): beside the button that made it, not at the top of the
page, and still there after the next run that is not a write (a tab, a picker), until another write replaces it;
through the real core on a copy of the sample registry, people signed in through `st.user` with roles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from proposal_helpers import BOB, NS, OPS, TOPIC, app_page, proposal_page, propose, use_roles, with_field

from registry import Registry


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def in_order(node: Any) -> list[str]:
    """The page from top to bottom: each button and popover by its label, each message and markdown by its text."""
    found: list[str] = []
    for child in getattr(node, "children", {}).values():
        proto = getattr(child, "proto", None)
        if type(child).__name__ == "Block" and proto is not None and proto.WhichOneof("type") == "popover":
            found.append(f"popover:{proto.popover.label}")
        elif type(child).__name__ == "Button":
            found.append(f"button:{child.label}")
        elif hasattr(child, "value") and isinstance(child.value, str):
            found.append(child.value.replace("\\", ""))
        found.extend(in_order(child))
    return found


def position(page: list[str], text: str) -> int:
    return next(i for i, shown in enumerate(page) if text in shown)


def test_an_approval_answers_under_the_buttons_and_stays_until_the_next_step(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    at.button(key="prop_approve").click().run()
    page = in_order(at.main)
    answer = position(page, f"You approved revision 1 of #{pid}.")
    assert position(page, "Approvals of revision 1") < answer < position(page, "Judged as Pulsar")
    at.run()  # a run that is no write (a tab, a picker): the answer stays
    assert f"You approved revision 1 of #{pid}." in in_order(at.main)
    at.text_area(key="prop_comment_text").set_value("Thanks.")
    at.button(key="FormSubmitter:prop_comment_form-Comment").click().run()
    page = in_order(at.main)
    assert position(page, "button:Comment") < position(page, "Comment added.")  # under the Comment button
    assert f"You approved revision 1 of #{pid}." in page  # each place keeps its own answer


def test_a_rejection_without_a_reason_says_so_beside_the_form_and_takes_no_step(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    at.button(key="prop_reject").click().run()
    page = in_order(at.main)
    assert position(page, "popover:Reject…") < position(page, "Nothing was rejected: write why first")
    with Registry.open(db) as reg:
        assert not reg.proposals.get(pid).state.final


def test_register_answers_under_the_register_button_and_stays(db: Path) -> None:
    at = app_page("whatif", db, OPS)
    at.session_state["selected_topic"] = TOPIC
    at.run()
    at.text_area(key="whatif_cand_text").set_value(with_field(db, "giftNote").schema).run()
    at.button(key="whatif_register").click().run()
    page = in_order(at.main)
    assert position(page, "button:Register") < position(page, f"Registered on {TOPIC} as version 14.")
    at.run()
    assert f"Registered on {TOPIC} as version 14." in in_order(at.main)
    at.switch_page("app_pages/browse.py").run()
    at.switch_page("app_pages/whatif.py").run()  # back to the page: a new visit, without the old answer
    assert not any("Registered on" in shown for shown in in_order(at.main))


def test_a_policy_save_answers_under_its_section_not_at_the_top(db: Path) -> None:
    at = app_page("policies", db, OPS, namespace=NS).run()
    at.selectbox(key="pol_compat").set_value("FULL").run()
    at.button(key="pol_save_ns").click().run()
    at.button(key="pol_save_ns_confirm").click().run()
    page = in_order(at.main)
    saved = position(page, f"Saved on {NS}: compatibility FULL.")
    assert position(page, f"Namespace {NS}") < saved < position(page, "Topic strategy")
    at.run()
    assert any(f"Saved on {NS}" in shown for shown in in_order(at.main))


def test_review_rules_answer_under_their_form(db: Path) -> None:
    at = app_page("policies", db, OPS, namespace=NS).run()
    at.number_input(key=f"rules_approvals_{NS}").set_value(2)
    at.button(key=f"FormSubmitter:rules_form_{NS}-Save review rules").click().run()
    page = in_order(at.main)
    assert position(page, "button:Save review rules") < position(page, f"Review rules of {NS}: 2 approval(s)")
    assert json.dumps(page).count(f"Review rules of {NS}: 2 approval(s)") == 1


def test_copy_link_is_at_the_top_of_the_proposal_page(db: Path) -> None:
    at = proposal_page(db, propose(db), BOB)
    page = in_order(at.main)
    assert position(page, "popover:Copy link") < position(page, "Approvals of revision 1")


@pytest.mark.parametrize("page", ["proposals", "audit", "policies"])
def test_copy_link_is_at_the_top_of_every_list_page(db: Path, page: str) -> None:
    at = app_page(page, db, BOB).run()
    assert not at.exception
    assert in_order(at.main)[:3].count("popover:Copy link") == 1  # beside the title
