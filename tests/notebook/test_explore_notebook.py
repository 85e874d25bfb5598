"""notebooks/explore.ipynb executed end to end with nbclient, on a kernel from the project's own environment,
against a temporary copy of the seeded sample registry; then its outputs are read like a reviewer would.

The kernel is this interpreter (`sys.executable`, the .venv's python) through a kernelspec written to a
temporary JUPYTER_PATH, so the test never depends on a kernel installed on the machine. The Spark audit is
not run: its `compat_matrix` table is written with the same columns from `registry.views.tables`.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from registry import Registry, seed_sample_data
from registry.views import notebook as nb

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"
KERNEL = "pulsar-schema-explorer-test"
TOPIC = "persistent://acme/orders/returns"
MARKUP = "<script>alert('not run')</script>"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def seeded_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "sample.db"
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory, seeded_file: Path) -> Path:
    """A fresh copy of the seeded registry, a kernelspec for this interpreter, and a fake audit folder."""
    work = tmp_path_factory.mktemp("notebook")
    shutil.copy(seeded_file, work / "registry.db")
    spec = work / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Pulsar Schema Explorer (.venv)",
                "language": "python",
            }
        )
    )
    with Registry.open(work / "registry.db", create=True) as reg:
        pairs = [nb.compatibility_matrix(reg, t) for t in (TOPIC, "persistent://acme/inventory/stock-levels")]
    audit = work / "audit" / "compat_matrix"
    audit.mkdir(parents=True)
    pd.concat(pairs, ignore_index=True).to_parquet(audit / "part-00000.parquet", index=False)
    return work


@pytest.fixture(scope="module")
def executed(workdir: Path) -> Iterator[nbformat.NotebookNode]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    patch = pytest.MonkeyPatch()
    patch.setenv("JUPYTER_PATH", str(workdir / "jupyter"))
    patch.setenv("SCHEMA_EXPLORER_DB", str(workdir / "registry.db"))
    patch.setenv("SCHEMA_EXPLORER_AUDIT", str(workdir / "audit"))
    try:
        client = NotebookClient(
            notebook,
            kernel_name=KERNEL,
            timeout=120,
            startup_timeout=60,
            allow_errors=True,  # each failing cell is reported by test_every_cell_ran_without_error
            resources={"metadata": {"path": str(workdir)}},
        )
        client.execute()
    finally:
        patch.undo()
    yield notebook


def cell(notebook: nbformat.NotebookNode, cell_id: str) -> Any:
    return next(c for c in notebook.cells if c.get("id") == cell_id)


def outputs(notebook: nbformat.NotebookNode, cell_id: str, mime: str) -> list[str]:
    found = []
    for output in cell(notebook, cell_id).outputs:
        if output.get("output_type") == "stream" and mime == "text/plain":
            found.append(output["text"])
        data = output.get("data", {})
        if mime in data:
            value = data[mime]
            found.append(value if isinstance(value, str) else json.dumps(value))
    return found


def html(notebook: nbformat.NotebookNode, cell_id: str) -> str:
    found = outputs(notebook, cell_id, "text/html")
    assert found, f"cell {cell_id!r} displayed no HTML"
    return "\n".join(found)


def test_the_committed_notebook_has_no_outputs_and_clean_metadata() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    for c in notebook.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"cell {c.id!r} has outputs in git"
        assert set(c.metadata) <= {"tags"}, f"cell {c.id!r} carries metadata {dict(c.metadata)}"
    assert set(notebook.metadata) <= {"kernelspec", "language_info"}
    assert "parameters" in cell(notebook, "parameters").metadata["tags"]


def test_every_cell_ran_without_error(executed: nbformat.NotebookNode) -> None:
    for c in executed.cells:
        if c.cell_type == "code":
            errors = [o for o in c.outputs if o.get("output_type") == "error"]
            assert not errors, f"cell {c.id!r} failed: {errors[0]['ename']}: {errors[0]['evalue']}"
            assert c.execution_count is not None


def test_it_opened_the_temporary_copy(executed: nbformat.NotebookNode, workdir: Path) -> None:
    assert str(workdir / "registry.db") in outputs(executed, "open", "text/plain")[0]


def test_browse_shows_every_topic_as_a_table(executed: nbformat.NotebookNode) -> None:
    page = html(executed, "browse")
    assert "<table" in page and "dataframe" in page
    assert "47 topics in 3 tenants and 8 namespaces" in outputs(executed, "browse", "text/plain")[0]
    assert "persistent://globex/telemetry/sensor-readings" in page
    assert "<table" in html(executed, "search")


def test_history_policy_and_clients_are_tables(executed: nbformat.NotebookNode) -> None:
    history = html(executed, "history")
    assert "History of" in history and "tombstone" in history and "<table" in history
    assert "BACKWARD" in html(executed, "policy")
    assert "refund-orchestrator" in html(executed, "clients")
    assert "version 5" in html(executed, "latest")


def test_charts_are_vega_lite_with_a_static_image_for_offline_viewers(executed: nbformat.NotebookNode) -> None:
    charts = 0
    for cell_id in ("timeline", "matrix", "strategies", "audit-matrix"):
        bundles = [o["data"] for o in cell(executed, cell_id).outputs if "data" in o]
        drawn = [d for d in bundles if any(k.startswith("application/vnd.vegalite") for k in d)]
        assert drawn, f"cell {cell_id!r} drew no chart"
        for bundle in drawn:
            svg = bundle.get("image/svg+xml", "")
            assert svg.lstrip().startswith("<svg") and "<text" in svg, f"cell {cell_id!r}: no static image"
            assert "text/html" not in bundle  # altair's HTML output loads Vega from a CDN
            charts += 1
    assert charts == 4


def test_the_diff_and_what_if_are_explained(executed: nbformat.NotebookNode) -> None:
    diff = html(executed, "diff")
    assert "FIELD_ADDED" in diff and "Text diff" in diff
    what_if = html(executed, "candidate")
    assert "READER_FIELD_WITHOUT_DEFAULT" in what_if
    for strategy in ("ALWAYS_INCOMPATIBLE", "FULL_TRANSITIVE", "FORWARD"):
        assert strategy in what_if
    assert "<table" in html(executed, "strategy-table")


def test_schema_markup_is_displayed_as_text_never_as_html(executed: nbformat.NotebookNode) -> None:
    what_if = html(executed, "candidate")
    assert "&lt;script&gt;alert(&#x27;not run&#x27;)&lt;/script&gt;" in what_if
    for c in executed.cells:
        for output in c.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            assert MARKUP not in page, f"cell {c.id!r} put raw schema markup in its HTML"
            assert not re.search(r"<script>\s*alert", page)


def test_the_scratch_copy_changes_and_the_original_does_not(executed: nbformat.NotebookNode, workdir: Path) -> None:
    printed = "".join(outputs(executed, "toggle", "text/plain"))
    assert re.search(r"scratch: .*compatibility=FULL_TRANSITIVE", printed)
    assert re.search(r"original: .*compatibility=BACKWARD", printed)
    assert "incompatible" in html(executed, "toggle") and "FULL_TRANSITIVE" in html(executed, "toggle")
    assert "If <code" in html(executed, "scratch")
    with Registry.open(workdir / "registry.db", create=True) as reg:
        assert reg.effective_policy(TOPIC).compatibility.value == "BACKWARD"


def test_the_audit_output_is_read(executed: nbformat.NotebookNode) -> None:
    summary = html(executed, "audit")
    assert "compat_matrix" in summary
    assert "<table" in html(executed, "audit-matrix")
