"""One click after typing acts, and the answer to a write is where the person looks, in headless Chromium against
`schema-explorer ui --user-header --roles`, each person behind their own identity proxy (identity_proxy.py).

A button that needs a text (Reject the proposal, Apply anyway) used to stay disabled until the text box lost
focus: the click that took the focus away hit a disabled button and did nothing. Here the reason is typed and the
button clicked at once, as a person does, and the step must be taken. The answer of each write (reject, apply,
comment, Register, Save) must then be in the viewport, not at the top of a page scrolled down to its button.
No fixed sleeps: every step waits for what it expects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import WAIT_MS, seed_e2e, wait_idle
from playwright.sync_api import expect

from registry import Actor, ProposalState, Registry, Role, SchemaInfo, SchemaType

TOPIC = "persistent://acme/inventory/product-catalog"
SHORT = "acme/inventory/product-catalog"
NAMESPACE = "acme/inventory"
HEADER = "X-Forwarded-User"
ALICE, BOB, OPS = "alice@example.com", "bob@example.com", "ops@example.com"


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def popover(page: Any) -> Any:
    return page.get_by_test_id("stPopoverBody")


def new_page(browser: Any) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(WAIT_MS)
    return page


def candidate(db: Path, field: str) -> str:
    with Registry.open(db) as reg:
        doc = json.loads(reg.get(TOPIC).schema)
    doc["fields"].append({"name": field, "type": ["null", "string"], "default": None})
    return json.dumps(doc, indent=2)


def propose(db: Path, field: str) -> int:
    info = SchemaInfo(type=SchemaType.AVRO, schema=candidate(db, field))
    with Registry.open(db) as reg:
        return reg.proposals.propose_schema(TOPIC, info, title=f"Add {field}", actor=Actor(ALICE, Role.PRODUCER)).id


def state(db: Path, pid: int) -> ProposalState:
    with Registry.open(db) as reg:
        return reg.proposals.get(pid).state


def answered(page: Any, text: str) -> None:
    """The write's answer is on the page and inside the viewport (the person sees it without scrolling)."""
    answer = main(page).get_by_text(text)
    expect(answer).to_be_visible()
    wait_idle(page)
    expect(answer).to_be_in_viewport()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return seed_e2e(tmp_path / "registry.db")


@pytest.fixture
def app(start_app: Any, db: Path, tmp_path: Path) -> str:
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({ALICE: "producer", BOB: "producer", OPS: "admin"}), encoding="utf-8")
    return str(start_app(db, "--user-header", HEADER, "--roles", str(roles)))


def test_reject_and_apply_anyway_act_on_one_click_after_typing(
    browser: Any, app: str, behind_proxy: Any, db: Path, shot: Any
) -> None:
    rejected, forced = propose(db, "giftNote"), propose(db, "warehouseNote")

    # bob types why and clicks Reject the proposal once, the text box still focused.
    bob = new_page(browser)
    bob.goto(f"{behind_proxy(app, HEADER, BOB)}/proposal?id={rejected}")
    expect(main(bob).get_by_role("heading", name=f"#{rejected} · Add giftNote")).to_be_visible()
    assert bob.locator("a[href^='mailto:']").count() == 0  # the author's address is text, not a mailto link
    main(bob).get_by_role("button", name="Reject…").click()
    reason = popover(bob).get_by_label("Why (the author sees this)", exact=True)
    reason.fill("Use the notes topic instead")
    expect(reason).to_be_focused()
    popover(bob).get_by_role("button", name="Reject the proposal").click()
    answered(bob, f"#{rejected} was rejected.")
    assert state(db, rejected) is ProposalState.REJECTED
    shot(bob, "one-click-rejected")

    # ops, an admin, types the reason and clicks Apply anyway once.
    ops = new_page(browser)
    ops.goto(f"{behind_proxy(app, HEADER, OPS)}/proposal?id={forced}")
    expect(main(ops).get_by_role("heading", name=f"#{forced} · Add warehouseNote")).to_be_visible()
    main(ops).get_by_role("button", name="Apply without the approvals…").click()
    reason = popover(ops).get_by_label("Reason", exact=True)
    reason.fill("Hotfix for the warehouse outage")
    expect(reason).to_be_focused()
    popover(ops).get_by_role("button", name="Apply anyway").click()
    answered(ops, f"#{forced} was applied: {TOPIC} now has version 3.")
    assert state(db, forced) is ProposalState.APPLIED
    shot(ops, "one-click-applied-anyway")

    # Copy link is at the top of the (long) proposal page, above the review's tabs.
    link = main(ops).get_by_role("button", name="Copy link")
    tabs = main(ops).get_by_role("tab", name="Review")
    assert link.bounding_box()["y"] < tabs.bounding_box()["y"]


def test_the_answer_to_a_write_is_in_view(browser: Any, app: str, behind_proxy: Any, db: Path, shot: Any) -> None:
    pid = propose(db, "giftNote")

    # bob comments at the bottom of the discussion: its answer is beside the Comment button.
    bob = new_page(browser)
    bob.goto(f"{behind_proxy(app, HEADER, BOB)}/proposal?id={pid}")
    main(bob).get_by_role("tab", name="Discussion").click()
    main(bob).get_by_label("Add a comment", exact=True).fill("Fine by me.")
    main(bob).get_by_role("button", name="Comment", exact=True).click()
    answered(bob, "Comment added.")

    # alice registers a candidate from the bottom of the What-if page, far below its top.
    alice = new_page(browser)
    alice.goto(f"{behind_proxy(app, HEADER, ALICE)}/whatif?topic={SHORT}")
    text = main(alice).get_by_label("Schema text", exact=True)
    text.fill(candidate(db, "ecoLabel"))
    text.press("Control+Enter")
    expect(main(alice).get_by_text("store version 3")).to_be_visible()
    chart = main(alice).get_by_test_id("stVegaLiteChart").first  # wide enough for STRATEGY_FORBIDS_CHANGE
    expect(chart).to_be_visible()
    assert chart.bounding_box()["width"] >= 600
    register = main(alice).get_by_role("button", name="Register", exact=True)
    register.scroll_into_view_if_needed()
    assert alice.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTop") > 0  # scrolled down
    register.click()
    answered(alice, f"Registered on {TOPIC} as version 3.")
    shot(alice, "one-click-registered")

    # ops saves a namespace policy: the answer is under Save, not at the top of the page.
    ops = new_page(browser)
    ops.goto(f"{behind_proxy(app, HEADER, OPS)}/policies?namespace={NAMESPACE}")
    main(ops).get_by_label("Compatibility strategy", exact=True).click()
    ops.get_by_role("option", name="FORWARD_TRANSITIVE", exact=True).click()
    main(ops).get_by_role("button", name=f"Save… policies of {NAMESPACE}").click()
    main(ops).get_by_role("button", name="Confirm and save").click()
    answered(ops, f"Saved on {NAMESPACE}")
    with Registry.open(db) as reg:
        assert str(reg.namespace_policy(NAMESPACE).compatibility) == "FORWARD_TRANSITIVE"
    shot(ops, "one-click-policy-saved")
