"""`schema-explorer ui --url URL --read-only` against a live `schema-explorer serve` on loopback: the app
explores a remote admin endpoint through the same facade, and read-only mode hides writes."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import wait_idle
from playwright.sync_api import expect

from conftest import ROOT, AppServer, free_port


@pytest.fixture(scope="module")
def admin_url(e2e_db: Path) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = Path(sys.executable).parent / "schema-explorer"
    log = (e2e_db.parent / f"serve-{port}.log").open("wb")
    server = subprocess.Popen(
        [str(exe), "serve", "--db", str(e2e_db), "--port", str(port)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/admin/v2/tenants", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail("schema-explorer serve did not start")
            time.sleep(0.2)  # polling readiness, not a fixed wait
    yield url
    server.terminate()
    server.wait(timeout=15)
    log.close()


@pytest.fixture(scope="module")
def remote_app_url(e2e_db: Path, admin_url: str) -> Iterator[str]:
    app = AppServer(e2e_db, "--read-only", source=["--url", admin_url])
    yield app.url
    app.stop()


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
