"""Audits run from the app, in headless Chromium: each Run button starts the real Spark job on the connected
registry, shows its progress, ends with its tables and a record of their source and time; Cancel stops a run.
Each test starts its own app on its own copy of the e2e registry and writes into its own folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from browser_helpers import WAIT_MS, seed_e2e, wait_idle
from playwright.sync_api import expect

RUN_MS = 240_000  # a Spark job on two cores, JVM start included, with CI's other work beside it


def main(page: Any) -> Any:
    return page.get_by_test_id("stMain")


def audit_page(browser: Any, url: str, folder: Path) -> Any:
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{url}/audit")
    wait_idle(page)
    box = main(page).get_by_role("textbox", name="Folder of the pipeline's Parquet tables (--out)")
    box.fill(str(folder))
    box.press("Enter")
    wait_idle(page)
    return page


def test_each_audit_runs_from_the_app_to_its_tables(browser: Any, start_app: Any, tmp_path: Path, shot: Any) -> None:
    db = seed_e2e(tmp_path / "registry.db")
    folder = tmp_path / "audit"
    page = audit_page(browser, start_app(db), folder)
    for tab, job, metric in (
        ("Compatibility matrix", "compat-matrix", "Topics checked"),
        ("Policy impact", "policy-impact", "Latest change would be refused"),
        ("Data audit", "data", "Messages"),
    ):
        main(page).get_by_role("tab", name=tab).click()
        panel = main(page).get_by_role("tabpanel", name=tab)
        expect(panel.get_by_text("table in this folder yet").first).to_be_visible()
        panel.get_by_role("button", name=f"Run {job}").click()
        expect(panel.get_by_test_id("stProgress")).to_be_visible()  # "starting Spark…", then tasks done
        expect(panel.get_by_text(f"{job} finished at")).to_be_visible(timeout=RUN_MS)
        wait_idle(page)
        expect(panel.get_by_test_id("stMetric").filter(has_text=metric).first).to_be_visible()
        expect(panel.get_by_text(re.compile(r"^Computed from .* at \d{4}-"))).to_be_visible()
        assert (folder / "_runs" / f"{job}.json").is_file()
        shot(page, f"audit-run-{job}")
    assert not page.get_by_test_id("stException").count()


def test_a_run_can_be_cancelled(browser: Any, start_app: Any, tmp_path: Path) -> None:
    db = seed_e2e(tmp_path / "registry.db")
    folder = tmp_path / "audit"
    page = audit_page(browser, start_app(db), folder)
    panel = main(page).get_by_role("tabpanel", name="Compatibility matrix")
    panel.get_by_role("button", name="Run compat-matrix").click()
    cancel = panel.get_by_role("button", name="Cancel")
    expect(cancel).to_be_visible()
    cancel.click()
    expect(panel.get_by_text("compat-matrix was cancelled")).to_be_visible(timeout=60_000)
    assert not (folder / "_runs" / "compat-matrix.json").exists()
    expect(panel.get_by_role("button", name="Run compat-matrix")).to_be_enabled()
