"""`propose` and `proposals ...` over `--url`, against a live `schema-explorer serve` with bearer tokens: the
server names the person by the token (never by `--as`), and refuses by role as the embedded registry does;
the CLI turns its refusals into exit 1 and one line, as on a registry file. Against a plain broker's API the
proposals live in a workspace beside it (`--workspace`), where `--as` names the person.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from serving import PROJECT_ROOT, seeded, served

ORDERS = "persistent://acme/orders/order-created"
NS = "acme/orders"
LATEST_ORDER = PROJECT_ROOT / "sample_data" / "schemas" / "acme/orders/order-created/v13.avsc"
PEOPLE = {"alice": "producer", "bob": "producer", "victor": "viewer", "ops": "admin"}
TOKENS = {name: secrets.token_hex(32) for name in PEOPLE}

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("served-proposals")
    tokens = {name: {"role": role, "token": TOKENS[name]} for name, role in PEOPLE.items()}
    with served(
        seeded(folder / "registry.db"), log_dir=folder, env={"SCHEMA_EXPLORER_TOKENS": json.dumps(tokens)}
    ) as url:
        yield url


@pytest.fixture(scope="module")
def broker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("served-broker")
    with served(seeded(folder / "registry.db"), log_dir=folder, admin_only=True) as url:
        yield url


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """`cli(person, *args) -> (exit code, stdout, stderr)`, with `person`'s token in $SCHEMA_EXPLORER_TOKEN."""

    def run(person: str | None, *args: str) -> tuple[int, str, str]:
        if person is None:
            monkeypatch.delenv("SCHEMA_EXPLORER_TOKEN", raising=False)
        else:
            monkeypatch.setenv("SCHEMA_EXPLORER_TOKEN", TOKENS[person])
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def one_line(err: str, kind: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schema-explorer: {kind}: "), err
    return lines[0]


def order_file(tmp_path: Path, *fields: dict[str, object]) -> Path:
    schema = json.loads(LATEST_ORDER.read_text())
    schema["fields"] += list(fields)
    path = tmp_path / "order.avsc"
    path.write_text(json.dumps(schema))
    return path


NOTE = {"name": "note", "type": ["null", "string"], "default": None}
EXTRA = {"name": "extra", "type": ["null", "string"], "default": None}


def test_the_token_names_the_person_and_roles_decide(cli, url, tmp_path):
    good = order_file(tmp_path, NOTE)
    code, out, err = cli("alice", "propose", "--url", url, "-t", ORDERS, "-f", str(good), "--title", "note", "--json")
    assert code == 0, err
    made = json.loads(out)
    pid = str(made["id"])
    assert (made["author"], made["state"], made["revisions"][0]["base_version"]) == ("alice", "open", 13)

    code, _, err = cli("alice", "proposals", "approve", pid, "--url", url, "--as", "bob")
    assert code == 2 and "with --url the server names you by your token" in one_line(err, "error")
    code, _, err = cli("alice", "proposals", "approve", pid, "--url", url)
    assert code == 1 and "never reviews their own proposal" in one_line(err, "refused")
    code, _, err = cli("victor", "proposals", "approve", pid, "--url", url)
    assert code == 1 and "producer role" in one_line(err, "refused")
    code, out, err = cli("victor", "proposals", "comment", pid, "looks fine", "--url", url)
    assert code == 0 and "by victor" in out, err
    code, _, err = cli("alice", "proposals", "apply", pid, "--url", url)
    assert code == 1 and "0 of the 1 approvals" in one_line(err, "refused")

    code, out, err = cli("bob", "proposals", "approve", pid, "--url", url)
    assert (code, err) == (0, "") and "approvals 1 of 1 (bob); now approved" in out
    code, out, _ = cli("victor", "proposals", "show", pid, "--url", url)
    assert code == 0 and "  approvals:   1 of 1 (bob)" in out and "verdict: compatible under BACKWARD" in out
    code, out, _ = cli("victor", "check", "--url", url, "--proposal", pid, "--format", "markdown")
    assert code == 0 and f"**Proposal #{pid}**: note · approved" in out

    code, _, err = cli("victor", "proposals", "apply", pid, "--url", url)
    assert code == 1 and "producer role" in one_line(err, "refused")
    code, out, err = cli("alice", "proposals", "apply", pid, "--url", url)
    assert (code, err) == (0, "") and out.strip() == (
        f"proposal #{pid} applied by alice: stored as version 14 of {ORDERS} (revision 1, approved by bob)"
    )
    code, out, _ = cli("victor", "proposals", "list", "--url", url, "--state", "applied", "--json")
    assert [p["id"] for p in json.loads(out)["proposals"]] == [made["id"]]


def test_a_policy_proposal_needs_an_admin_to_apply(cli, url):
    code, out, err = cli(
        "alice", "propose", "--url", url, "-n", NS, "--validation-enforced", "true", "--title", "enforce", "--json"
    )
    assert code == 0, err
    pid = str(json.loads(out)["id"])
    assert cli("bob", "proposals", "approve", pid, "--url", url)[0] == 0
    code, _, err = cli("alice", "proposals", "apply", pid, "--url", url)
    assert code == 1 and "admin role" in one_line(err, "refused")
    code, out, err = cli("ops", "proposals", "apply", pid, "--url", url)
    assert (code, err) == (0, "") and "validation_enforced: False → True" in out


def test_review_rules_over_url(cli, url):
    code, _, err = cli(
        "alice", "proposals", "rules", "acme/inventory", "--url", url, "--set", "--required-approvals", "2"
    )
    assert code == 1 and "admin" in one_line(err, "refused")
    code, out, err = cli("ops", "proposals", "rules", "acme/inventory", "--url", url, "--set", "--reviewer", "bob")
    assert (code, err) == (0, "") and out.strip() == "namespace acme/inventory: 1 approval(s) from bob"


def test_bad_input_over_url(cli, url):
    code, out, err = cli("victor", "proposals", "show", "99", "--url", url)
    assert code == 2 and out == "" and "#99" in one_line(err, "error")
    code, _, err = cli(None, "proposals", "list", "--url", url)
    assert code == 2 and out == "" and err.count("\n") == 1


def test_proposals_over_a_plain_broker_live_in_a_workspace(cli, broker_url, tmp_path):
    """The same steps against a broker's admin API alone: the workspace keeps the proposal, `--as` names each
    person (the broker knows none), and the apply registers exactly the approved schema on the broker."""
    ws = ["--url", broker_url, "--workspace", str(tmp_path / "ws.db")]
    good = order_file(tmp_path, NOTE)
    code, out, err = cli(None, "propose", *ws, "--as", "alice", "-t", ORDERS, "-f", str(good), "--title", "n", "--json")
    assert code == 0, err
    pid = str(json.loads(out)["id"])
    code, _, err = cli(None, "proposals", "approve", pid, *ws, "--as", "alice")
    assert code == 1 and "never reviews their own proposal" in one_line(err, "refused")
    code, out, err = cli(None, "proposals", "approve", pid, *ws, "--as", "bob")
    assert (code, err) == (0, "") and "now approved" in out
    code, out, _ = cli(None, "check", *ws, "--proposal", pid, "--format", "markdown")
    assert code == 0 and f"**Proposal #{pid}**: n · approved" in out
    code, out, err = cli(None, "proposals", "apply", pid, *ws, "--as", "alice")
    assert (code, err) == (0, "") and "stored as version 14" in out
    code, out, _ = cli(None, "proposals", "list", *ws, "--state", "applied", "--json")
    assert [str(p["id"]) for p in json.loads(out)["proposals"]] == [pid]
    code, out, err = cli(None, "proposals", "rules", NS, *ws, "--as", "ops", "--set", "--require-proposals")
    assert code == 0, err
    code, _, err = cli(None, "upload", *ws, "--as", "carol", "-t", ORDERS, "-f", str(order_file(tmp_path, EXTRA)))
    assert code == 1 and "require proposals" in one_line(err, "refused")


def test_a_workspace_is_refused_beside_serve(cli, url, tmp_path):
    code, out, err = cli("victor", "proposals", "list", "--url", url, "--workspace", str(tmp_path / "ws.db"))
    assert code == 2 and out == "" and "own storage" in one_line(err, "error")
