"""`proposals list` and `show` say a proposal's state in the app's words (registry/proposals/_words.py):
approvals "1 of 2 (bob)", what the current revision changes (after a rebase too; the title stays as written),
what an apply stored, and refusals a change introduces with ALWAYS_INCOMPATIBLE left out."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

from serving import PROJECT_ROOT

ORDERS = "persistent://acme/orders/order-created"
NS = "acme/orders"
LATEST_ORDER = PROJECT_ROOT / "sample_data" / "schemas" / "acme/orders/order-created/v13.avsc"
ME = f"{getpass.getuser()} (os user)"
TITLE = "acme/orders: compatibility: BACKWARD → FULL_TRANSITIVE"


def with_note(tmp_path: Path) -> Path:
    schema = json.loads(LATEST_ORDER.read_text())
    schema["fields"].append({"name": "note", "type": ["null", "string"], "default": None})
    path = tmp_path / "order.avsc"
    path.write_text(json.dumps(schema))
    return path


def row_of(out: str, pid: int) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"#{pid} "))


def test_list_and_show_say_approvals_and_the_current_change_after_a_rebase(cli, db):
    assert cli("proposals", "rules", NS, "--db", db, "--set", "--required-approvals", "2")[0] == 0
    code, _, err = cli("propose", "--db", db, "-n", NS, "--compatibility", "FULL_TRANSITIVE", "--title", TITLE)
    assert (code, err) == (0, "")
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    code, out, _ = cli("proposals", "list", "--db", db)
    assert code == 0 and "1 of 2 (bob)" in row_of(out, 1)
    assert "compatibility: BACKWARD → FULL_TRANSITIVE" in row_of(out, 1)

    # Someone saves FULL directly; the proposal is rebased onto it: its approvals start over.
    assert cli("policy", "set", "--db", db, "-n", NS, "--compatibility", "FULL", "--as", "carol")[0] == 0
    assert cli("proposals", "rebase", "1", "--db", db)[0] == 0
    code, out, _ = cli("proposals", "list", "--db", db)
    row = row_of(out, 1)
    assert "0 of 2" in row and "compatibility: FULL → FULL_TRANSITIVE" in row and row.endswith(TITLE)
    code, out, _ = cli("proposals", "show", "1", "--db", db)
    assert f"  title:       {TITLE}" in out
    assert "  change:      compatibility: FULL → FULL_TRANSITIVE" in out
    assert "  approvals:   0 of 2" in out
    assert f"by {ME}: compatibility: FULL → FULL_TRANSITIVE (sha256" in out


def test_show_leaves_always_incompatible_out_and_an_applied_one_says_what_it_stored(cli, db, tmp_path):
    code, _, err = cli("propose", "--db", db, "-t", ORDERS, "-f", str(with_note(tmp_path)), "--title", "note")
    assert (code, err) == (0, "")
    code, out, _ = cli("proposals", "show", "1", "--db", db)
    assert code == 0
    assert "  introduces a refusal under 0 of 7 strategies\n" in out
    assert "ALWAYS_INCOMPATIBLE refuses every change (not counted)" in out
    code, out, _ = cli("check", "--proposal", "1", "--db", db, "--format", "markdown")
    assert "This change introduces a refusal under 0 of 7 strategies" in out
    assert "➖ `ALWAYS_INCOMPATIBLE` refuses every change (not counted)" in out

    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    assert cli("proposals", "apply", "1", "--db", db, "--as", "alice")[0] == 0
    code, out, _ = cli("proposals", "show", "1", "--db", db)
    assert f"  outcome:     applied by alice: stored as version 14 of {ORDERS}" in out
    assert "  approvals:   1 of 1 (bob) under the rules it was applied under" in out
    assert cli("proposals", "rules", NS, "--db", db, "--set", "--required-approvals", "2")[0] == 0
    code, out, _ = cli("proposals", "show", "1", "--db", db)
    assert "  approvals:   1 of 1 (bob) under the rules it was applied under" in out  # the rules then, not now
