"""The app in headless Chromium against `schema-explorer ui` on loopback: Browse renders and searches, the
Topic page shows a `<script>` schema doc as inert text, errors are short messages, every page renders in
light and dark themes. Screenshots of every page land in tests/e2e/artifacts/."""

from __future__ import annotations

import re
from typing import Any

from browser_helpers import PROBE_TOPIC, SCRIPT, wait_idle
from playwright.sync_api import expect


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def nav(page: Any, name: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()
    wait_idle(page)


def open_topic(page: Any, topic: str) -> None:
    nav(page, "Topic")
    box = main(page).get_by_role("textbox", name="Topic", exact=True)
    box.fill(topic)
    box.press("Enter")
    wait_idle(page)


def test_browse_renders_counts_and_table_then_searches(page: Any, app_url: str, shot: Any) -> None:
    page.goto(app_url)
    expect(main(page).get_by_text(re.compile(r"48 topics match"))).to_be_visible()
    expect(main(page).get_by_test_id("stDataFrame")).to_be_visible()
    shot(page, "browse")
    search = main(page).get_by_role("textbox", name="Search", exact=True)
    search.fill("xss")
    search.press("Enter")
    expect(main(page).get_by_text("1 topic matches")).to_be_visible()
    shot(page, "browse-search")
    search.fill("type:NOPE")
    search.press("Enter")
    expect(main(page).get_by_text("No topic matches")).to_be_visible()


def test_the_script_doc_stays_inert_on_the_topic_page(page: Any, app_url: str, shot: Any) -> None:
    page.goto(app_url)
    expect(main(page).get_by_text(re.compile(r"topics match"))).to_be_visible()
    open_topic(page, PROBE_TOPIC)
    expect(main(page).get_by_role("heading", name="xss-probe")).to_be_visible()
    code = main(page).get_by_test_id("stCode").first
    expect(code).to_contain_text("<script>window.__pwned = 1;")
    shot(page, "topic-script-doc")
    assert page.evaluate("() => window.__pwned") is None
    assert page.dialogs == []
    injected = page.evaluate("() => [...document.scripts].filter(s => s.text.includes('pwned')).length")
    assert injected == 0
    assert SCRIPT not in page.content().replace("&lt;", "<") or "&lt;script&gt;" in page.content()


def test_a_topic_with_history_and_clients(page: Any, app_url: str, shot: Any) -> None:
    page.goto(app_url)
    expect(main(page).get_by_text(re.compile(r"topics match"))).to_be_visible()
    open_topic(page, "persistent://acme/orders/order-created")
    expect(main(page).get_by_role("heading", name="order-created")).to_be_visible()
    expect(main(page).locator("[data-testid='stVegaLiteChart'], .vega-embed").first).to_be_visible()
    shot(page, "topic")
    main(page).get_by_role("tab", name="Producers and consumers").click()
    expect(main(page).locator("[data-testid='stDataFrame']:visible").first).to_be_visible()
    shot(page, "topic-clients")


def test_errors_are_short_messages(page: Any, app_url: str, shot: Any) -> None:
    page.goto(app_url)
    expect(main(page).get_by_text(re.compile(r"topics match"))).to_be_visible()
    open_topic(page, "persistent://acme/orders/does-not-exist")
    alert = main(page).get_by_test_id("stAlert").first
    expect(alert).to_contain_text("does not exist")
    expect(alert).to_contain_text("Browse")
    assert "Traceback" not in page.content()
    shot(page, "topic-error")


def test_every_page_renders_in_light_and_dark(make_page: Any, app_url: str, shot: Any) -> None:
    for scheme in ("light", "dark"):
        page = make_page(scheme)
        page.goto(app_url)
        expect(main(page).get_by_text(re.compile(r"topics match"))).to_be_visible()
        wait_idle(page)
        background = page.evaluate(
            "() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
        )
        level = sum(int(x) for x in re.findall(r"\d+", background)[:3])
        assert (level < 300) == (scheme == "dark"), background
        links = page.get_by_test_id("stSidebarNav").get_by_role("link")
        names = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]  # after the icon
        assert names[:2] == ["Browse", "Topic"]
        for name in names:
            nav(page, name)
            if name == "Topic":
                open_topic(page, "persistent://acme/orders/order-created")
                expect(main(page).locator("[data-testid='stCode']").first).to_be_visible()
                expect(main(page).locator(".vega-embed canvas, .vega-embed svg").first).to_be_visible()
            assert not page.get_by_test_id("stException").count(), f"{name} shows a traceback"
            shot(page, f"page-{name.lower().replace(' ', '-')}-{scheme}")
