"""`schema-explorer ui --url URL --read-only` against a live `schema-explorer serve` on loopback: the app
explores a remote admin endpoint through the same facade, and read-only mode hides writes. Against
`serve --admin-only` (a plain broker) Browse shows the search index's progress, then its topics."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import wait_idle
from playwright.sync_api import expect

from serving import served


@pytest.fixture(scope="module")
def admin_url(e2e_db: Path) -> Iterator[str]:
    with served(e2e_db, log_dir=e2e_db.parent) as url:
        yield url


@pytest.fixture(scope="module")
def broker_app_url(e2e_db: Path, start_app: Any) -> Iterator[str]:
    """The app on `serve --admin-only`: a new URL, so its index cache (the test run's cache folder) is empty."""
    with served(e2e_db, log_dir=e2e_db.parent, admin_only=True) as url:
        yield str(start_app(e2e_db, "--read-only", source=["--url", url]))


@pytest.fixture(scope="module")
def remote_app_url(e2e_db: Path, admin_url: str, start_app: Any) -> str:
    return str(start_app(e2e_db, "--read-only", source=["--url", admin_url]))


def test_the_app_browses_a_remote_endpoint_read_only(page: Any, remote_app_url: str, admin_url: str, shot: Any):
    page.goto(remote_app_url)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text(re.compile(r"48 topics match"))).to_be_visible(timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Remote", exact=True)).to_be_visible()
    expect(sidebar.get_by_text(admin_url)).to_be_visible()
    shot(page, "remote-browse")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="What-if", exact=True).click()
    wait_idle(page)
    box = main.get_by_role("textbox", name="Topic", exact=True)
    box.fill("persistent://acme/orders/order-created")
    box.press("Enter")
    wait_idle(page)
    verdict = main.get_by_text(re.compile("Identical to live version|Registering would be")).first
    expect(verdict).to_be_visible(timeout=60_000)
    expect(main.get_by_role("button", name="Register", exact=True)).to_be_disabled()
    shot(page, "remote-whatif-read-only")


def test_the_app_searches_a_remote_endpoint_and_shows_its_recorded_clients(
    page: Any, remote_app_url: str, shot: Any
) -> None:
    """Issue 22: over `schema-explorer serve` the app searches through the explorer API and shows the recorded
    producers and consumers, as it does over the file."""
    page.goto(remote_app_url)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text(re.compile(r"48 topics match"))).to_be_visible(timeout=60_000)
    search = main.get_by_role("textbox", name="Search", exact=True)
    search.fill("field:currency")
    search.press("Enter")
    expect(main.get_by_text(re.compile(r"^\d+ topics? match"))).to_be_visible()
    expect(main.get_by_text(re.compile(r"48 topics match"))).to_have_count(0)
    shot(page, "remote-search")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Topic", exact=True).click()
    wait_idle(page)
    box = main.get_by_role("textbox", name="Topic", exact=True)
    box.fill("persistent://acme/orders/order-created")
    box.press("Enter")
    expect(main.get_by_role("heading", name="order-created")).to_be_visible(timeout=60_000)
    main.get_by_role("tab", name="Producers and consumers").click()
    expect(main.locator("[data-testid='stDataFrame']:visible").first).to_be_visible()
    expect(main.get_by_text("admin API does not say")).to_have_count(0)
    shot(page, "remote-topic-clients")


def test_the_app_indexes_a_plain_broker_then_browses_it(page: Any, broker_app_url: str, shot: Any) -> None:
    """Issue 22: a plain broker has no search; the first visit shows the index's progress (the script never waits
    for it), then the page reruns by itself and lists the topics; the sidebar says how old the index is."""
    page.goto(broker_app_url)
    main = page.get_by_test_id("stMain")
    sidebar = page.get_by_test_id("stSidebar")
    expect(main.get_by_text(re.compile(r"48 topics match"))).to_be_visible(timeout=60_000)
    expect(main.get_by_text("Building the search index of")).to_have_count(0)
    expect(main.get_by_text(re.compile("results come from this app's index of"))).to_be_visible()
    expect(sidebar.get_by_text(re.compile(r"Search index: 48 topics, updated"))).to_be_visible()
    shot(page, "remote-broker-index-ready")
    sidebar.get_by_role("button", name="Refresh index").click()
    expect(sidebar.get_by_text(re.compile(r"Search index: 48 topics, updated (just now|\d+ s ago)"))).to_be_visible()
    expect(sidebar.get_by_role("button", name="Refresh index")).to_be_visible(timeout=60_000)
    expect(main.get_by_text(re.compile(r"48 topics match"))).to_be_visible()
