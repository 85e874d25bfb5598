"""What the app writes, in headless Chromium against `schema-explorer ui` on loopback: Register stores the
candidate on screen at the click (never the one of an earlier verdict), a refusal stores nothing; a --read-only
app cannot be switched back nor write from any page; writes are attributed through --user-header; the sidebar
asks before creating a registry file.

Each test starts its own app on its own copy of the e2e registry (conftest's `start_app`), so the writes of one
do not change what another sees. No fixed sleeps: every step waits for the text it expects.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import WAIT_MS, seed_e2e, wait_idle
from playwright import sync_api
from playwright.sync_api import expect

from registry import Actor, Registry, ReviewRules, Role, export_snapshot

TOPIC = "persistent://acme/inventory/product-catalog"
NAMESPACE = "acme/inventory"
HEADER = "X-Forwarded-User"


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def sidebar(page: Any) -> Any:
    return page.get_by_test_id("stSidebar")


def nav(page: Any, name: str) -> None:
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True)
    target = link.get_attribute("href")
    link.click()
    page.wait_for_url(lambda url: url.split("?")[0] == target)  # pages write their state into the query
    wait_idle(page)


def new_page(browser: Any, **context: Any) -> Any:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}, **context).new_page()
    page.set_default_timeout(WAIT_MS)
    return page


def open_whatif(page: Any, url: str) -> None:
    page.goto(url)
    nav(page, "What-if")
    box = main(page).get_by_role("textbox", name="Topic", exact=True)
    box.fill(TOPIC)
    box.press("Enter")
    expect(main(page).get_by_label("Schema text", exact=True)).to_be_visible()
    wait_idle(page)


def latest_doc(db: Path) -> dict[str, Any]:
    with Registry.open(db) as reg:
        doc: dict[str, Any] = json.loads(reg.get(TOPIC).schema)
    return doc


def with_field(db: Path, field: dict[str, Any]) -> str:
    doc = latest_doc(db)
    doc["fields"].append(field)
    return json.dumps(doc, indent=2)


def optional(name: str) -> dict[str, Any]:
    return {"name": name, "type": ["null", "string"], "default": None}


def export(db: Path) -> str:
    out = io.StringIO()
    with Registry.open(db) as reg:
        export_snapshot(reg, out)
    return out.getvalue()


def schemas_and_policies(exported: str) -> list[str]:
    """An export's records but the audit trail and the closing count."""
    return [line for line in exported.splitlines() if not line.startswith(('{"kind":"audit"', '{"kind":"end"'))]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return seed_e2e(tmp_path / "registry.db")


def test_register_stores_the_candidate_on_screen_not_the_last_checked(
    browser: Any, start_app: Any, db: Path, shot: Any
) -> None:
    page = new_page(browser)
    open_whatif(page, start_app(db))
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(with_field(db, optional("checkedFirst")))  # candidate A, checked
    text.press("Control+Enter")
    expect(main(page).get_by_text("store version 3")).to_be_visible()
    text.fill(with_field(db, optional("editedAfter")))  # candidate B, never checked before the click
    main(page).get_by_role("button", name="Register", exact=True).click()
    expect(main(page).get_by_text(f"Registered on {TOPIC} as version 3.")).to_be_visible()
    shot(page, "writes-register-b")
    names = [f["name"] for f in latest_doc(db)["fields"]]
    assert "editedAfter" in names and "checkedFirst" not in names
    with Registry.open(db) as reg:
        assert [v.version for v in reg.history(TOPIC)] == [0, 1, 2, 3]  # one new version, B


def test_a_refused_candidate_stores_nothing_and_says_so(browser: Any, start_app: Any, db: Path, shot: Any) -> None:
    with Registry.open(db) as reg:
        reg.set_topic_policy(TOPIC, compatibility="ALWAYS_INCOMPATIBLE", user="test")
    before = export(db)
    page = new_page(browser)
    open_whatif(page, start_app(db))
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(with_field(db, optional("refusedField")))
    main(page).get_by_role("button", name="Register", exact=True).click()
    expect(main(page).get_by_text("Pulsar refused the registration")).to_be_visible()
    assert not main(page).get_by_text(f"Registered on {TOPIC} as version").count()
    shot(page, "writes-register-refused")
    after = export(db)
    assert schemas_and_policies(after) == schemas_and_policies(before)  # only the refusal's audit line is new


def test_read_only_holds_on_every_page(browser: Any, start_app: Any, db: Path, shot: Any) -> None:
    before = export(db)
    url = start_app(db, "--read-only")
    page = new_page(browser)
    page.goto(url)
    wait_idle(page)
    toggle = sidebar(page).get_by_role("switch", name="Read-only")
    expect(toggle).to_be_checked()
    expect(toggle).to_be_disabled()
    toggle.click(force=True)  # a disabled toggle must not switch, even when clicked
    wait_idle(page)
    expect(toggle).to_be_checked()

    open_whatif(page, url)
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(with_field(db, optional("readOnlyField")))
    text.press("Control+Enter")
    expect(main(page).get_by_text("store version 3")).to_be_visible()
    expect(main(page).get_by_role("button", name="Register", exact=True)).to_be_disabled()
    shot(page, "writes-read-only-whatif")

    for name in ("Browse", "Topic", "Diff", "Policies", "Audit"):
        nav(page, name)
        assert not page.get_by_test_id("stException").count(), f"{name} shows a traceback"
        buttons = main(page).get_by_role("button", name="Save", exact=False)
        for i in range(buttons.count()):
            expect(buttons.nth(i)).to_be_disabled()
    page.reload()
    wait_idle(page)
    expect(sidebar(page).get_by_role("switch", name="Read-only")).to_be_checked()
    assert export(db) == before


def test_writes_are_attributed_through_the_user_header(
    browser: Any, start_app: Any, behind_proxy: Any, db: Path, shot: Any
) -> None:
    url = start_app(db, "--user-header", HEADER)
    page = new_page(browser)
    open_whatif(page, behind_proxy(url, HEADER, "alice@example.com"))
    expect(sidebar(page).get_by_text("alice@example.com")).to_be_visible()
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(with_field(db, optional("byAlice")))
    main(page).get_by_role("button", name="Register", exact=True).click()
    expect(main(page).get_by_text(f"Registered on {TOPIC} as version 3.")).to_be_visible()
    with Registry.open(db) as reg:
        assert reg.audit_trail(TOPIC)[0].user == "alice@example.com"
    nav(page, "Policies")
    expect(main(page).get_by_text("alice@example.com", exact=True).first).to_be_attached()  # the audit table
    shot(page, "writes-attributed")

    # Straight to the app, past the proxy: no header, no one to attribute a write to, so the session is read-only.
    anonymous = new_page(browser)
    open_whatif(anonymous, url)
    expect(sidebar(anonymous).get_by_text(f"carries no {HEADER} header")).to_be_visible()
    expect(main(anonymous).get_by_role("button", name="Register", exact=True)).to_be_disabled()


def test_the_sidebar_asks_before_creating_a_registry(
    browser: Any, start_app: Any, db: Path, tmp_path: Path, shot: Any
) -> None:
    missing = tmp_path / "new" / "fresh.db"
    missing.parent.mkdir()
    page = new_page(browser)
    page.goto(start_app(db))
    wait_idle(page)
    side = sidebar(page)
    side.get_by_text("Change connection").click()
    side.get_by_label("Path or URL", exact=True).fill(str(missing))
    side.get_by_role("button", name="Connect", exact=True).click()
    expect(side.get_by_text("Create a new, empty registry there?")).to_be_visible()
    shot(page, "writes-create-ask")
    assert not missing.exists()
    side.get_by_role("button", name="Cancel").click()
    expect(side.get_by_text("Create a new, empty registry there?")).to_have_count(0)
    assert not missing.exists()

    wait_idle(page)
    connect = side.get_by_role("button", name="Connect", exact=True)
    expect(connect).to_be_visible()  # Cancel leaves the form open, with what was typed in it
    expect(side.get_by_label("Path or URL", exact=True)).to_have_value(str(missing))
    connect.click()
    side.get_by_role("button", name="Create it").click()
    expect(side.get_by_text("Create a new, empty registry there?")).to_have_count(0)
    wait_idle(page)
    expect(side.get_by_text(str(missing)).first).to_be_visible()
    assert missing.exists()
    with Registry.open(missing) as reg:
        assert reg.tenants() == []


def choose(page: Any, label: str, option: str) -> None:
    """Pick `option` in the select box `label`; a rerun that lands while the list opens closes it, so open it
    again until the option shows."""
    box = main(page).get_by_role("combobox", name=label, exact=True)
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        wait_idle(page)
        box.click()
        try:
            choice.wait_for(timeout=5_000)
            break
        except sync_api.TimeoutError:
            page.keyboard.press("Escape")
    choice.click()
    wait_idle(page)


def save_after_preview(page: Any, change: str, button: str, target: str) -> None:
    """The preview names the change; Save… asks once more; only Confirm writes."""
    expect(main(page).get_by_text(change).first).to_be_visible()
    main(page).get_by_role("button", name=button).click()
    wait_idle(page)
    expect(main(page).get_by_test_id("stAlert").filter(has_text=f"Save on {target}")).to_be_visible()
    main(page).get_by_role("button", name="Confirm and save").click()
    wait_idle(page)
    expect(main(page).get_by_test_id("stAlert").filter(has_text=f"Saved on {target}")).to_be_visible()


def test_every_policy_control_is_previewed_then_confirmed(
    browser: Any, start_app: Any, behind_proxy: Any, db: Path, tmp_path: Path, shot: Any
) -> None:
    roles = tmp_path / "roles.json"  # setting a policy is an admin's step (registry/proposals/_permissions.py)
    roles.write_text(json.dumps({"ops@example.com": "admin"}), encoding="utf-8")
    url = behind_proxy(start_app(db, "--user-header", HEADER, "--roles", str(roles)), HEADER, "ops@example.com")
    page = new_page(browser)
    page.goto(f"{url}/policies?namespace=initech/hr")
    wait_idle(page)
    choose(page, "Compatibility strategy", "FULL_TRANSITIVE")
    expect(main(page).get_by_text("Latest change would be refused")).to_be_visible()
    shot(page, "policies-preview")
    with Registry.open(db) as reg:
        assert str(reg.namespace_policy("initech/hr").compatibility) == "ALWAYS_COMPATIBLE"  # a preview writes nothing
    main(page).get_by_role("button", name="Save… policies of initech/hr").click()
    wait_idle(page)
    shot(page, "policies-confirm")
    with Registry.open(db) as reg:
        assert str(reg.namespace_policy("initech/hr").compatibility) == "ALWAYS_COMPATIBLE"  # asked, not saved
    main(page).get_by_role("button", name="Confirm and save").click()
    wait_idle(page)
    expect(main(page).get_by_test_id("stAlert").filter(has_text="Saved on initech/hr")).to_be_visible()
    allow = "Allow auto-update (clients may register new schemas on connect)"
    choose(page, allow, "refused")
    save_after_preview(page, "allow_auto_update", "Save… policies of initech/hr", "initech/hr")
    choose(page, "Auto-update strategy (deprecated; applies only when the strategy is not set)", "Backward")
    save_after_preview(page, "auto_update_strategy", "Save… policies of initech/hr", "initech/hr")
    main(page).get_by_text("Schema validation enforced", exact=True).click()
    wait_idle(page)
    save_after_preview(page, "validation_enforced", "Save… policies of initech/hr", "initech/hr")
    topic_label = "Topic strategy (overrides the namespace's)"
    choose(page, topic_label, "FORWARD")
    save_after_preview(page, "compatibility: unset → FORWARD", "Save… strategy of", "persistent://initech/hr/")
    with Registry.open(db) as reg:
        policy = reg.namespace_policy("initech/hr")
        topic = reg.topics("initech/hr")[0]
        trail = [(e.action.value, e.user) for e in reg.audit_trail("initech/hr", limit=5)]
        assert str(reg.topic_policy(topic).compatibility) == "FORWARD"
    assert str(policy.compatibility) == "FULL_TRANSITIVE" and policy.allow_auto_update is False
    assert str(policy.auto_update_strategy) == "Backward" and policy.validation_enforced is True
    assert trail[0] == ("set_topic_policy", "ops@example.com")
    assert [action for action, _ in trail[1:5]] == ["set_namespace_policy"] * 4


def test_roles_and_required_review_hold_for_four_people_behind_proxies(
    browser: Any, start_app: Any, behind_proxy: Any, db: Path, tmp_path: Path, shot: Any
) -> None:
    """The roles file decides every write, not only proposal steps (issue 39): carol (viewer) has no enabled
    write on What-if or Policies, alice (producer) registers but saves no policy, ops (admin) saves; once ops's
    review rules require proposals, even ops's Register is disabled with the rule beside it, and bob's Propose…
    stays offered. Each person reaches the app through their own header-setting proxy."""
    people = {"carol@example.com": "viewer", "alice@example.com": "producer", "bob@example.com": "producer"}
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps({**people, "ops@example.com": "admin"}), encoding="utf-8")
    url = start_app(db, "--user-header", HEADER, "--roles", str(roles))
    as_ = {name: behind_proxy(url, HEADER, name) for name in (*people, "ops@example.com")}

    carol = new_page(browser)
    open_whatif(carol, as_["carol@example.com"])
    main(carol).get_by_label("Schema text", exact=True).fill(with_field(db, optional("byCarol")))
    expect(main(carol).get_by_role("button", name="Register", exact=True)).to_be_disabled()
    expect(main(carol).get_by_role("button", name="Propose…")).to_be_disabled()
    carol.goto(f"{as_['carol@example.com']}/policies?namespace={NAMESPACE}")
    wait_idle(carol)
    choose(carol, "Compatibility strategy", "FULL_TRANSITIVE")  # a change on screen: Save… shows
    expect(main(carol).get_by_role("button", name=f"Save… policies of {NAMESPACE}")).to_be_disabled()
    shot(carol, "roles-viewer-policies")

    alice = new_page(browser)
    open_whatif(alice, as_["alice@example.com"])
    expect(main(alice).get_by_role("button", name="Register", exact=True)).to_be_enabled()
    alice.goto(f"{as_['alice@example.com']}/policies?namespace={NAMESPACE}")
    wait_idle(alice)
    choose(alice, "Compatibility strategy", "FULL_TRANSITIVE")  # a change on screen: Save… shows
    expect(main(alice).get_by_role("button", name=f"Save… policies of {NAMESPACE}")).to_be_disabled()

    with Registry.open(db) as reg:
        reg.proposals.set_rules(
            NAMESPACE, ReviewRules(require_proposals=True), actor=Actor("ops@example.com", Role.ADMIN)
        )
    ops = new_page(browser)
    open_whatif(ops, as_["ops@example.com"])
    text = main(ops).get_by_label("Schema text", exact=True)
    text.fill(with_field(db, optional("byOps")))
    text.press("Control+Enter")
    expect(main(ops).get_by_text("store version 3")).to_be_visible()  # Pulsar would take it; the rule would not
    expect(main(ops).get_by_role("button", name="Register", exact=True)).to_be_disabled()
    expect(main(ops).get_by_text("require proposals").first).to_be_visible()
    expect(main(ops).get_by_role("button", name="Propose…")).to_be_enabled()
    shot(ops, "roles-require-proposals")
    with Registry.open(db) as reg:
        assert [v.version for v in reg.history(TOPIC)][-1] == 2  # nobody stored anything
