"""Links a reviewer can send, in headless Chromium against `schema-explorer ui`: each link form opened cold in
a new browser context shows what it names; a reload keeps what is on screen; Copy link gives the URL; a bad
value is a message, never a traceback; a click on a Browse row opens its topic at 1280 px; field search reaches
KEY_VALUE and protobuf fields; PROTOBUF_NATIVE reads as .proto source; the uploader states the real limit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import WAIT_MS, wait_idle
from playwright.sync_api import expect

from registry import Registry, SchemaType, TopicQuery

ORDERS = "acme/orders/order-created"


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def cold(browser: Any, url: str, width: int = 1400) -> Any:
    """A page in a new browser context (no cookie, no session): what a teammate gets from a link."""
    page = browser.new_context(viewport={"width": width, "height": 1000}).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(url)
    wait_idle(page)
    return page


def params(page: Any) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlparse(page.url).query).items()}


def no_traceback(page: Any) -> None:
    assert not page.get_by_test_id("stException").count()
    assert "Traceback" not in page.content()


def version_box(page: Any) -> Any:
    return main(page).get_by_role("combobox", name="Version", exact=True)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/browse?q=amount&type=AVRO", "4 topics match"),
        (f"/topic?topic={ORDERS}&version=2", "order-created"),
        (f"/diff?topic=persistent://{ORDERS}&old_version=3&new_version=5", "v3 → v5"),
        (f"/whatif?topic={ORDERS}", "Would Pulsar accept this schema?"),
        ("/policies?namespace=initech/hr", "Namespace initech/hr"),
        (f"/policies?topic={ORDERS}", "Namespace acme/orders"),
        ("/audit", "Fleet-wide results"),
    ],
    ids=["browse", "topic", "diff", "whatif", "policies-namespace", "policies-topic", "audit"],
)
def test_each_link_form_opens_cold(browser: Any, app_url: str, shot: Any, path: str, expected: str) -> None:
    page = cold(browser, app_url + path)
    expect(main(page).get_by_text(expected).first).to_be_visible()
    if "version=2" in path:
        expect(version_box(page)).to_have_value(re.compile(r"^v2 · AVRO"))
    no_traceback(page)
    shot(page, "link-" + path.strip("/").split("?")[0])


def test_a_reload_keeps_what_is_on_screen_and_copy_link_gives_it(browser: Any, app_url: str) -> None:
    page = cold(browser, f"{app_url}/topic?topic={ORDERS}")
    version_box(page).click()
    page.get_by_role("option", name=re.compile(r"^v5 · AVRO")).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"version=5"))
    page.reload()
    wait_idle(page)
    expect(version_box(page)).to_have_value(re.compile(r"^v5 · AVRO"))
    main(page).get_by_role("button", name=re.compile("Copy link")).click()
    link = page.get_by_test_id("stPopoverBody").get_by_test_id("stCode").inner_text()
    assert link.startswith(app_url + "/topic?") and "version=5" in link and ORDERS in link
    again = cold(browser, link)  # the copied link, opened by a teammate
    expect(version_box(again)).to_have_value(re.compile(r"^v5 · AVRO"))


def test_a_link_with_a_pulsar_line_answers_as_it_and_a_reload_keeps_it(browser: Any, app_url: str) -> None:
    """A reviewer who answered as Pulsar 4.0 sends the link: the teammate's session answers as 4.0 too."""
    page = cold(browser, f"{app_url}/whatif?topic={ORDERS}&pulsar=4.0")
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text(re.compile(r"Pulsar 4\.0 LTS.*chosen for this session"))).to_be_visible()
    expect(sidebar.get_by_role("combobox", name="Answer as Pulsar")).to_have_value("4.0")
    page.reload()
    wait_idle(page)
    expect(sidebar.get_by_text(re.compile(r"Pulsar 4\.0 LTS"))).to_be_visible()
    assert params(page).get("pulsar") == "4.0"
    no_traceback(page)


def test_a_browse_search_survives_a_reload(browser: Any, app_url: str) -> None:
    page = cold(browser, app_url)
    search = main(page).get_by_role("textbox", name="Search", exact=True)
    search.fill("customer")
    search.press("Enter")
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"q=customer"))
    page.reload()
    wait_idle(page)
    expect(main(page).get_by_role("textbox", name="Search", exact=True)).to_have_value("customer")


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/topic?topic=acme/orders/never-was", "never-was"),
        (f"/diff?topic={ORDERS}&old_version=99", "99"),
        ("/browse?type=NOPE&page=zero", "NOPE"),
        ("/policies?namespace=nobody/home", "nobody/home"),
        (f"/topic?topic={ORDERS}&registry=/no/such/registry.db", "/no/such/registry.db"),
        (f"/whatif?topic={ORDERS}&pulsar=9.9", "9.9"),
    ],
    ids=["unknown-topic", "missing-version", "bad-filters", "unknown-namespace", "missing-registry", "unknown-line"],
)
def test_a_bad_link_value_is_a_message(browser: Any, app_url: str, path: str, named: str) -> None:
    page = cold(browser, app_url + path)
    expect(main(page).get_by_test_id("stAlert").filter(has_text=named).first).to_be_visible()
    no_traceback(page)


def test_a_click_on_a_browse_row_opens_its_topic(browser: Any, app_url: str, shot: Any) -> None:
    page = cold(browser, f"{app_url}/browse?q=amount&type=AVRO", width=1280)
    grid = main(page).get_by_test_id("stDataFrame")
    expect(grid).to_be_visible()
    shot(page, "browse-1280")
    box = grid.bounding_box()
    row_height = 35  # Streamlit's default row height; the header row is as tall
    page.mouse.click(box["x"] + 120, box["y"] + row_height * 2.5)  # the second data row, in the name column
    expect(page).to_have_url(re.compile(r"/topic\?topic="))
    wait_idle(page)
    topic = params(page)["topic"]
    assert topic.startswith("acme/") and topic.count("/") == 2
    expect(main(page).get_by_role("heading", name=topic.rsplit("/", 1)[1])).to_be_visible()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Browse", exact=True).click()
    wait_idle(page)  # back on Browse, the row clicked before does not reopen its topic by itself
    expect(main(page).get_by_text(re.compile(r"topics match"))).to_be_visible()
    assert "/topic" not in page.url


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("field:amount.currency_code", "PROTOBUF_NATIVE"),  # nested message field, by dotted path
        ("field:key.customerId", "KEY_VALUE"),  # a KEY_VALUE key part
        ("sessionId type:KEY_VALUE", "KEY_VALUE"),  # a value part, by a plain word
    ],
)
def test_field_search_reaches_key_value_and_protobuf_fields(
    browser: Any, app_url: str, e2e_db: Path, query: str, kind: str
) -> None:
    with Registry.open(e2e_db) as reg:
        found = reg.search_topics(TopicQuery(text=query))
    assert found.total >= 1 and {t.schema_type for t in found.items} == {SchemaType(kind)}
    page = cold(browser, app_url)
    search = main(page).get_by_role("textbox", name="Search", exact=True)
    search.fill(query)
    search.press("Enter")
    wait_idle(page)
    matches = "topic matches" if found.total == 1 else "topics match"
    expect(main(page).get_by_text(f"{found.total} {matches}")).to_be_visible()
    expect(main(page).get_by_text(f"Types: {kind} {found.total}")).to_be_visible()
    grid = main(page).get_by_test_id("stDataFrame")
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 120, box["y"] + 35 * 1.5)  # the first row opens its topic
    expect(page).to_have_url(re.compile(r"/topic\?topic="))
    assert params(page)["topic"] in {t.topic.split("://")[1] for t in found.items}


def test_protobuf_native_reads_as_proto_source(browser: Any, app_url: str) -> None:
    page = cold(browser, f"{app_url}/topic?topic=acme/payments/ledger-entries")
    code = main(page).get_by_test_id("stCode").filter(has_text="syntax =").first
    expect(code).to_contain_text("message LedgerEntry {")
    assert "fileDescriptorSet" not in code.inner_text()


def test_the_uploader_states_the_registrys_limit(browser: Any, app_url: str) -> None:
    page = cold(browser, f"{app_url}/whatif?topic={ORDERS}")
    zone = main(page).get_by_test_id("stFileUploaderDropzoneInstructions").first
    expect(zone).to_contain_text("1MB per file")
    assert "200MB" not in zone.inner_text()
