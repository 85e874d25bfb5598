"""A schema change proposal between two people, in headless Chromium against `schema-explorer ui --user-header
--roles`: alice proposes the candidate on What-if, bob finds it waiting for his review, comments on a field (a
`<script>` in it stays text) and approves, alice applies it, the Topic page links the new version to the
proposal, and the audit trail names both. Each person reaches the app through their own identity proxy
(identity_proxy.py), as behind oauth2-proxy. No fixed sleeps: every step waits for what it expects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import SCRIPT, WAIT_MS, seed_e2e, wait_idle
from playwright.sync_api import expect

from registry import ProposalState, Registry

TOPIC = "persistent://acme/inventory/product-catalog"
SHORT = "acme/inventory/product-catalog"
NAMESPACE = "acme/inventory"
HEADER = "X-Forwarded-User"
ALICE, BOB = "alice@example.com", "bob@example.com"
TITLE = "Add a warehouse note to products"


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def new_page(browser: Any, width: int, color_scheme: str = "light") -> Any:
    page = browser.new_context(viewport={"width": width, "height": 1000}, color_scheme=color_scheme).new_page()
    page.set_default_timeout(WAIT_MS)
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    return page


def candidate(db: Path) -> str:
    with Registry.open(db) as reg:
        doc = json.loads(reg.get(TOPIC).schema)
    doc["fields"].append({"name": "warehouseNote", "type": ["null", "string"], "default": None})
    return json.dumps(doc, indent=2)


def settled(page: Any) -> None:
    """Idle, and everything drawn: an element whose code is loaded on its first use shows a skeleton until then
    (tables, toggles, page links, in a new browser context), and a table draws its canvas after that; a
    screenshot would catch either."""
    wait_idle(page)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton]') && "
        "[...document.querySelectorAll('[data-testid=stDataFrame]')].filter(d => d.checkVisibility())"
        ".every(d => d.querySelector('canvas'))"
    )


def popover(page: Any) -> Any:
    return page.get_by_test_id("stPopoverBody")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return seed_e2e(tmp_path / "registry.db")


@pytest.fixture
def roles(tmp_path: Path) -> Path:
    path = tmp_path / "roles.json"
    path.write_text(json.dumps({ALICE: "producer", BOB: "producer"}), encoding="utf-8")
    return path


def test_two_people_propose_review_approve_and_apply(
    browser: Any, start_app: Any, behind_proxy: Any, db: Path, roles: Path, shot: Any
) -> None:
    url = start_app(db, "--user-header", HEADER, "--roles", str(roles))
    alice, bob = new_page(browser, 1400), new_page(browser, 1280)  # the widths the pages must read well at

    # alice proposes the candidate on screen from What-if.
    alice.goto(f"{behind_proxy(url, HEADER, ALICE)}/whatif?topic={SHORT}")
    text = main(alice).get_by_label("Schema text", exact=True)
    text.fill(candidate(db))
    text.press("Control+Enter")
    expect(main(alice).get_by_text("store version 3")).to_be_visible()
    expect(alice.get_by_test_id("stSidebar").get_by_text("producer")).to_be_visible()
    main(alice).get_by_role("button", name="Propose…").click()
    popover(alice).get_by_label("Title", exact=True).fill(TITLE)
    popover(alice).get_by_label("Description (optional)", exact=True).fill("The warehouse asked for a free-text note.")
    popover(alice).get_by_role("button", name="Propose", exact=True).click()
    expect(main(alice).get_by_text(f"Proposal #1 opened: {TITLE}")).to_be_visible()
    settled(alice)
    shot(alice, "proposals-whatif-proposed")
    with Registry.open(db) as reg:
        assert reg.get(TOPIC).version == 2  # proposing registers nothing
    main(alice).get_by_role("link", name="Open proposal #1").first.click()  # the answer and the open-proposals warning
    alice.wait_for_url("**/proposal?id=1*")
    expect(main(alice).get_by_role("heading", name=f"#1 · {TITLE}")).to_be_visible()

    # bob finds it waiting for his review, and opens it from the list.
    bob_url = behind_proxy(url, HEADER, BOB)
    bob.goto(f"{bob_url}/proposals?show=waiting")
    expect(main(bob).get_by_text(TITLE, exact=True)).to_be_attached()  # the row, in the table's grid
    settled(bob)
    shot(bob, "proposals-waiting-for-bob")
    bob.goto(f"{bob_url}/proposal?id=1")
    expect(main(bob).get_by_role("heading", name=f"#1 · {TITLE}")).to_be_visible()
    expect(main(bob).get_by_text("Applying would be accepted under")).to_be_visible()
    expect(main(bob).get_by_role("button", name="Approve")).to_be_visible()
    settled(bob)
    shot(bob, "proposals-review-bob")

    # bob comments on the new field: the <script> in it stays text.
    main(bob).get_by_role("tab", name="Discussion").click()
    main(bob).get_by_label("Add a comment", exact=True).fill(f"Fine by me. {SCRIPT}")
    note = f"/fields/{len(json.loads(candidate(db))['fields']) - 1}"  # the picker offers the field's pointer
    main(bob).get_by_role("combobox", name="On a field (optional)", exact=True).click()
    bob.get_by_role("option", name=f"warehouseNote — {note}", exact=True).click()
    main(bob).get_by_role("button", name="Comment", exact=True).click()
    expect(main(bob).get_by_text(f"Comment added on {note}.")).to_be_visible()
    expect(main(bob).get_by_text(f"Fine by me. {SCRIPT}", exact=True)).to_be_visible()
    assert bob.evaluate("() => window.__pwned") is None and bob.dialogs == []

    # bob approves; alice, the author, applies.
    main(bob).get_by_role("button", name="Approve").click()
    expect(main(bob).get_by_text("You approved revision 1 of #1.")).to_be_visible()
    settled(bob)
    shot(bob, "proposals-discussion-approved")
    alice.reload()
    expect(main(alice).get_by_text(f"1 of 1 ({BOB})", exact=False)).to_be_visible()
    expect(main(alice).get_by_role("button", name="Approve")).to_have_count(0)  # never one's own
    main(alice).get_by_role("button", name="Apply", exact=True).click()
    expect(main(alice).get_by_text(f"#1 was applied: {TOPIC} now has version 3.")).to_be_visible()
    expect(main(alice).get_by_text(f"Applied by {ALICE}")).to_be_visible()
    settled(alice)
    shot(alice, "proposals-applied")

    # The Topic page links the new version to the proposal.
    main(alice).get_by_role("link", name="Open version 3 on the Topic page").click()
    alice.wait_for_url("**/topic?*")
    link = main(alice).get_by_role("link", name=f"Applied through proposal #1: {TITLE}")
    expect(link).to_be_visible()
    settled(alice)
    shot(alice, "proposals-topic-link")
    link.click()
    alice.wait_for_url("**/proposal?id=1*")
    expect(main(alice).get_by_role("heading", name=f"#1 · {TITLE}")).to_be_visible()

    # The audit trail names both: on the Policies page, and in the registry.
    alice.goto(f"{behind_proxy(url, HEADER, ALICE)}/policies?namespace={NAMESPACE}")
    for person in (ALICE, BOB):
        expect(main(alice).get_by_text(person, exact=True).first).to_be_attached()
    settled(alice)
    shot(alice, "proposals-policies-audit")
    with Registry.open(db) as reg:
        proposal = reg.proposals.get(1)
        trail = {(e.action.value, e.user) for e in reg.audit_trail(NAMESPACE, limit=20)}
        assert reg.get(TOPIC).version == 3 and reg.get(TOPIC).user == ALICE
    assert proposal.state is ProposalState.APPLIED and proposal.approvers == (BOB,)
    assert [(c.user, c.path) for c in proposal.comments] == [(BOB, note)]
    assert {
        ("propose", ALICE),
        ("comment_proposal", BOB),
        ("approve_proposal", BOB),
        ("apply_proposal", ALICE),
    } <= trail
    assert alice.dialogs == [] and bob.dialogs == []

    # The applied proposal reads as well in the dark theme.
    dark = new_page(browser, 1280, "dark")
    dark.goto(f"{bob_url}/proposal?id=1")
    expect(main(dark).get_by_text(f"Applied by {ALICE}")).to_be_visible()
    settled(dark)
    shot(dark, "proposals-applied-dark")
