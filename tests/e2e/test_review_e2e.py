"""A person's path through the review pages, in headless Chromium against `schema-explorer ui` on loopback:
browse → topic → diff → what-if → register → toggle a namespace policy → see its effect on What-if.

One browser for the module, no fixed sleeps (every step waits for the text it expects), a screenshot of
every page under the artifacts folder, and the sample data's `<script>` doc must stay inert text.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from registry import Registry

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS", ROOT / "test-artifacts" / "e2e"))

TOPIC = "persistent://acme/inventory/product-catalog"
NAMESPACE = "acme/inventory"
SCRIPT = "<script>alert(1)</script>"
WAIT_MS = 30_000


# --- fixtures (module-local until the shell's tests/e2e/conftest.py provides them) ---------------------


@pytest.fixture(scope="module")
def review_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("review-e2e") / "registry.db"


@pytest.fixture(scope="module")
def review_app(review_db: Path) -> Iterator[str]:
    """`schema-explorer ui` (it seeds the empty registry) on a free loopback port; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "cli.main", "ui", "--db", str(review_db), "--port", str(port)]
    log = (review_db.parent / "ui.log").open("wb")
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"the app did not start: {(review_db.parent / 'ui.log').read_text()[-2000:]}")
            time.sleep(0.2)  # polling a condition, not a fixed wait
    yield url
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@pytest.fixture(scope="module")
def review_browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's Chromium (/usr/bin/chromium) is not installed")
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def review_shot() -> Callable[[object, str], Path]:
    """Save a screenshot of the whole page (Streamlit scrolls inside its main section, so grow the viewport)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def shoot(page: object, name: str) -> Path:
        # The app is idle once Streamlit's "Running…" status is gone.
        page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")  # type: ignore[attr-defined]
        size = page.viewport_size  # type: ignore[attr-defined]
        height = page.evaluate(  # type: ignore[attr-defined]
            "Math.max(...[...document.querySelectorAll('[data-testid=stMain], section')].map(e => e.scrollHeight))"
        )
        page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 12_000)})  # type: ignore[attr-defined]
        path = ARTIFACTS / f"review-{name}.png"
        page.screenshot(path=str(path))  # type: ignore[attr-defined]
        page.set_viewport_size(size)  # type: ignore[attr-defined]
        return path

    return shoot


@pytest.fixture(scope="module")
def page(review_browser: object) -> Iterator[object]:
    context = review_browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    yield page
    context.close()


def candidate(db: Path, field: str) -> str:
    """The topic's latest schema plus one optional field (a change every strategy but ALWAYS_INCOMPATIBLE takes)."""
    with Registry.open(db) as reg:
        doc = json.loads(reg.get(TOPIC).schema)
    doc["fields"].append({"name": field, "type": ["null", "string"], "default": None})
    return json.dumps(doc, indent=2)


def main(page: object) -> object:
    return page.get_by_test_id("stMain")  # type: ignore[attr-defined]


def open_page(page: object, name: str) -> None:
    """Follow the sidebar's navigation link (keeps the session, so the selected topic travels along)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click()  # type: ignore[attr-defined]
    expect(main(page).get_by_role("heading", name=name, exact=True)).to_be_visible()
    box = main(page).get_by_role("textbox", name="Topic", exact=True)
    if box.count() and box.input_value() == "":
        # app.render.topic_picker loses the shared topic when moving between two pages that both show it
        # (the widget's state is dropped, its "shown" marker is not); type it as a person would.
        box.fill(TOPIC)
        box.press("Enter")


def choose(page: object, label: str, option: str) -> None:
    """Pick `option` in the selectbox labelled `label`."""
    main(page).get_by_label(label, exact=True).click()  # type: ignore[attr-defined]
    page.get_by_role("option", name=option, exact=True).click()  # type: ignore[attr-defined]


def test_browse_to_topic_keeps_the_script_doc_inert(page: object, review_app: str, review_shot) -> None:  # noqa: ANN001
    page.goto(review_app)  # type: ignore[attr-defined]
    expect(main(page).get_by_role("heading", name="Browse", exact=True)).to_be_visible()
    search = main(page).get_by_label("Search", exact=True)
    search.fill("name:product-catalog")
    search.press("Enter")
    expect(main(page).get_by_text("1 topic matches")).to_be_visible()
    review_shot(page, "browse")
    grid = main(page).get_by_test_id("stDataFrame").first
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 18)  # type: ignore[attr-defined]  # the first row's selector
    main(page).get_by_role("button", name=f"Open {TOPIC}").click()
    expect(main(page).get_by_role("heading", name="product-catalog")).to_be_visible()
    expect(main(page).get_by_text(SCRIPT).first).to_be_visible()
    assert page.locator("script", has_text="alert(1)").count() == 0  # type: ignore[attr-defined]
    review_shot(page, "topic")
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_diff_shows_badges_and_the_doc_as_text(page: object, review_shot) -> None:
    open_page(page, "Diff")
    expect(main(page).get_by_text("v1 → v2")).to_be_visible()
    expect(main(page).get_by_text("BACKWARD:").first).to_be_visible()
    main(page).get_by_text("Show the whole schemas").click()
    expect(main(page).locator(".side-by-side-diff").get_by_text(SCRIPT).first).to_be_visible()
    assert page.locator("script", has_text="alert(1)").count() == 0  # type: ignore[attr-defined]
    review_shot(page, "diff")
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_whatif_then_register_stores_the_next_version(page: object, review_db: Path, review_shot) -> None:
    open_page(page, "What-if")
    expect(main(page).get_by_text("Identical to live version 2")).to_be_visible()
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(candidate(review_db, "ecoLabel"))
    text.press("Control+Enter")
    expect(main(page).get_by_text("store version 3")).to_be_visible()
    expect(main(page).get_by_role("button", name="Register", exact=True)).to_be_visible()
    review_shot(page, "whatif")
    main(page).get_by_role("button", name="Register", exact=True).click()
    expect(main(page).get_by_text(f"Registered on {TOPIC} as version 3.")).to_be_visible()
    with Registry.open(review_db) as reg:
        assert reg.get(TOPIC).version == 3


def test_a_policy_toggle_is_previewed_saved_and_takes_effect(page: object, review_db: Path, review_shot) -> None:
    open_page(page, "Policies")
    expect(main(page).get_by_label("Namespace", exact=True)).to_have_value(NAMESPACE)
    choose(page, "Compatibility strategy", "ALWAYS_INCOMPATIBLE")
    expect(main(page).get_by_text("Latest change would be refused")).to_be_visible()
    review_shot(page, "policies")
    main(page).get_by_role("button", name=f"Save policies of {NAMESPACE}").click()
    expect(main(page).get_by_text(f"Saved the schema policies of {NAMESPACE}.")).to_be_visible()
    with Registry.open(review_db) as reg:
        assert str(reg.namespace_policy(NAMESPACE).compatibility) == "ALWAYS_INCOMPATIBLE"

    open_page(page, "What-if")
    text = main(page).get_by_label("Schema text", exact=True)
    text.fill(candidate(review_db, "recycledContent"))
    text.press("Control+Enter")
    expect(main(page).get_by_text("would be refused under ALWAYS_INCOMPATIBLE (from the namespace)")).to_be_visible()
    expect(main(page).get_by_role("button", name="Register", exact=True)).to_be_visible()
    review_shot(page, "whatif-after-policy")


def test_audit_explains_how_to_produce_the_pipeline_outputs(page: object, review_shot) -> None:
    open_page(page, "Audit")
    expect(main(page).get_by_text("schema-explorer audit compat-matrix").first).to_be_visible()
    review_shot(page, "audit")
