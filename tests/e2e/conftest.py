"""End-to-end fixtures, shared by every tests/e2e module: a seeded registry file, `schema-explorer ui` on a
free loopback port, ONE headless Debian Chromium per module, a fresh page per test, and screenshots.

    def test_x(app_url, page, shot):
        page.goto(app_url); wait_idle(page); shot(page, "browse")

Screenshots go to tests/e2e/artifacts/ (gitignored; CI keeps them as artifacts). No fixed sleeps: every
wait is for an element or a condition.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import WAIT_MS, seed_e2e, wait_idle
from identity_proxy import IdentityProxy

import needs
from serving import free_port

sync_api = pytest.importorskip("playwright.sync_api")
# Assertions wait as long as actions do (Playwright's default for `expect` is 5 s, which a loaded 2-core CI
# machine can exceed while Streamlit renders a page: a proto source block once took longer).
sync_api.expect.set_options(timeout=WAIT_MS)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


class AppServer:
    """`schema-explorer ui --db PATH --port N` as a subprocess, stopped by `stop()`. `source` replaces
    `--db PATH` (e.g. `["--url", URL]`); the log goes beside `db` either way."""

    def __init__(self, db: Path, *args: str, source: Sequence[str] | None = None) -> None:
        needs.require("server")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = db.parent / f"ui-{self.port}.log"
        exe = Path(sys.executable).parent / "schema-explorer"
        source = ["--db", str(db)] if source is None else list(source)
        command = [str(exe), "ui", *source, "--port", str(self.port), *args]
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the app did not start: {self.log_path.read_text()[-2000:]}")
            time.sleep(0.2)  # polling the health endpoint, not a fixed wait

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture(scope="module")
def e2e_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed_e2e(tmp_path_factory.mktemp("e2e") / "registry.db")


@pytest.fixture(scope="module")
def app_url(e2e_db: Path) -> Iterator[str]:
    """The URL of `schema-explorer ui` on the module's seeded registry."""
    server = AppServer(e2e_db)
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def start_app() -> Iterator[Callable[..., str]]:
    """`start_app(db, *args, source=None) -> url`: more `schema-explorer ui` processes, stopped with the module
    (e.g. `source=["--url", URL]` for the app on a remote admin endpoint)."""
    servers: list[AppServer] = []

    def start(db: Path, *args: str, source: Sequence[str] | None = None) -> str:
        servers.append(AppServer(db, *args, source=source))
        return servers[-1].url

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def behind_proxy() -> Iterator[Callable[[str, str, str], str]]:
    """`behind_proxy(app_url, header, person) -> url`: the app as `person` reaches it through a reverse proxy
    that sets `header` on every request, the WebSocket upgrade included (identity_proxy.py), as
    `ui --user-header` expects; one proxy per person, stopped with the module."""
    proxies: list[IdentityProxy] = []

    def start(app_url: str, header: str, person: str) -> str:
        proxies.append(IdentityProxy(app_url, header, person))
        return proxies[-1].url

    yield start
    for proxy in proxies:
        proxy.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    needs.require("browser")
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed; CI installs it with apt")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def make_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """`make_page(color_scheme="light"|"dark")`: a page in a fresh context; `page.dialogs` lists any alert."""
    contexts: list[Any] = []

    def factory(color_scheme: str = "light") -> Any:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=color_scheme)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.dialogs = dialogs
        return page

    yield factory
    for context in contexts:
        context.close()


@pytest.fixture
def page(make_page: Callable[..., Any]) -> Any:
    return make_page()


@pytest.fixture(scope="session")
def shot() -> Callable[[Any, str], Path]:
    """`shot(page, name)`: a full-height screenshot in tests/e2e/artifacts/<name>.png, once the app is idle."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def shoot(page: Any, name: str) -> Path:
        wait_idle(page)
        size = page.viewport_size
        height = page.evaluate(
            "Math.max(...[...document.querySelectorAll('[data-testid=stMain], section')].map(e => e.scrollHeight))"
        )
        page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 12_000)})
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path))
        page.set_viewport_size(size)
        return path

    return shoot
