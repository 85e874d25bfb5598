"""A person's path through the review pages, in headless Chromium against `schema-explorer ui` on loopback:
browse → topic → diff → what-if → register → toggle a namespace policy → see its effect on What-if.

Uses tests/e2e/conftest.py (the seeded registry, the app on loopback, ONE browser per module, `shot`); one
page for the whole path; no fixed sleeps (every step waits for the text it expects); a screenshot of every
page in tests/e2e/artifacts/review-*.png; the sample data's `<script>` doc must stay inert text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry import Registry

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


TOPIC = "persistent://acme/inventory/product-catalog"
NAMESPACE = "acme/inventory"
SCRIPT = "<script>alert(1)</script>"
WAIT_MS = 30_000
TOPIC_PAGES = ("Topic", "Diff", "What-if")


@pytest.fixture(scope="module")
def page(browser: object) -> Iterator[object]:
    """One page for the whole path, so the session (selected topic, registered version) carries over."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    yield page
    context.close()


def candidate(db: Path, field: str) -> str:
    """The topic's latest schema plus one optional field (a change every strategy but ALWAYS_INCOMPATIBLE takes)."""
    with Registry.open(db, create=True) as reg:
        doc = json.loads(reg.get(TOPIC).schema)
    doc["fields"].append({"name": field, "type": ["null", "string"], "default": None})
    return json.dumps(doc, indent=2)


def main(page: object) -> object:
    return page.get_by_test_id("stMain")  # type: ignore[attr-defined]


def open_page(page: object, name: str) -> None:
    """Follow the sidebar's navigation link (keeps the session, so the selected topic travels along)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()  # type: ignore[attr-defined]
    expect(main(page).get_by_role("heading", name=name, exact=True)).to_be_visible()
    if name in TOPIC_PAGES:
        # the shared topic travels with the session: no topic page comes up with an empty Topic box
        expect(main(page).get_by_role("textbox", name="Topic", exact=True)).to_have_value(TOPIC)


def choose(page: object, label: str, option: str) -> None:
    """Pick `option` in the selectbox labelled `label`."""
    main(page).get_by_label(label, exact=True).click()  # type: ignore[attr-defined]
    page.get_by_role("option", name=option, exact=True).click()  # type: ignore[attr-defined]


def test_browse_to_topic_keeps_the_script_doc_inert(page: object, app_url: str, shot) -> None:  # noqa: ANN001
    page.goto(app_url)  # type: ignore[attr-defined]
    expect(main(page).get_by_role("heading", name="Browse", exact=True)).to_be_visible()
    # by role: the table toolbar also has a "Search" button
    search = main(page).get_by_role("textbox", name="Search", exact=True)
    search.fill("name:product-catalog")
    search.press("Enter")
    expect(main(page).get_by_text("1 topic matches")).to_be_visible()
    shot(page, "review-browse")
    grid = main(page).get_by_test_id("stDataFrame").first
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 120, box["y"] + 35 + 18)  # type: ignore[attr-defined]  # a click on the row opens it
    expect(main(page).get_by_role("heading", name="product-catalog")).to_be_visible()
    expect(main(page).get_by_text(SCRIPT).first).to_be_visible()
    assert page.locator("script", has_text="alert(1)").count() == 0  # type: ignore[attr-defined]
    shot(page, "review-topic")
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_diff_shows_badges_and_the_doc_as_text(page: object, shot) -> None:
    open_page(page, "Diff")
    expect(main(page).get_by_text("v1 → v2")).to_be_visible()
    expect(main(page).get_by_text("BACKWARD:").first).to_be_visible()
    main(page).get_by_text("Show the whole schemas").click()
    expect(main(page).locator(".side-by-side-diff").get_by_text(SCRIPT).first).to_be_visible()
    assert page.locator("script", has_text="alert(1)").count() == 0  # type: ignore[attr-defined]
    shot(page, "review-diff")
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_whatif_then_register_stores_the_next_version(page: object, e2e_db: Path, shot) -> None:
    open_page(page, "What-if")
    expect(main(page).get_by_text("Identical to live version 2")).to_be_visible()
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(candidate(e2e_db, "ecoLabel"))
    text.press("Control+Enter")
    expect(main(page).get_by_text("store version 3")).to_be_visible()
    expect(main(page).get_by_role("button", name="Register", exact=True)).to_be_visible()
    shot(page, "review-whatif")
    main(page).get_by_role("button", name="Register", exact=True).click()
    expect(main(page).get_by_text(f"Registered on {TOPIC} as version 3.")).to_be_visible()
    with Registry.open(e2e_db, create=True) as reg:
        assert reg.get(TOPIC).version == 3


def test_a_policy_toggle_is_previewed_saved_and_takes_effect(page: object, e2e_db: Path, shot) -> None:
    open_page(page, "Policies")
    expect(main(page).get_by_label("Namespace", exact=True)).to_have_value(NAMESPACE)
    choose(page, "Compatibility strategy", "ALWAYS_INCOMPATIBLE")
    expect(main(page).get_by_text("Latest change would be refused")).to_be_visible()
    shot(page, "review-policies")
    main(page).get_by_role("button", name=f"Save… policies of {NAMESPACE}").click()
    main(page).get_by_role("button", name="Confirm and save").click()
    expect(main(page).get_by_text(f"Saved on {NAMESPACE}")).to_be_visible()
    with Registry.open(e2e_db, create=True) as reg:
        assert str(reg.namespace_policy(NAMESPACE).compatibility) == "ALWAYS_INCOMPATIBLE"

    open_page(page, "What-if")
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(candidate(e2e_db, "recycledContent"))
    text.press("Control+Enter")
    expect(main(page).get_by_text("would be refused under ALWAYS_INCOMPATIBLE (from the namespace)")).to_be_visible()
    expect(main(page).get_by_role("button", name="Register", exact=True)).to_be_visible()
    shot(page, "review-whatif-after-policy")


def test_audit_explains_how_to_produce_the_pipeline_outputs(page: object, shot) -> None:
    open_page(page, "Audit")
    expect(main(page).get_by_text("schema-explorer audit compat-matrix").first).to_be_visible()
    shot(page, "review-audit")
