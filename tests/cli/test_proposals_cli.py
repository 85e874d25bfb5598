"""`propose`, `proposals ...` and `check --format markdown` over a seeded registry file, run in-process through
`cli.main.main(argv)`: the sequences a team goes through (propose, review, approve as someone else, apply), the
refusals on the way (exit 1, one line), and bad input (exit 2, naming it, storing nothing).
"""

from __future__ import annotations

import getpass
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from registry import Registry
from serving import PROJECT_ROOT

ORDERS = "persistent://acme/orders/order-created"
NS = "acme/orders"
LATEST_ORDER = PROJECT_ROOT / "sample_data" / "schemas" / "acme/orders/order-created/v13.avsc"
ME = f"{getpass.getuser()} (os user)"


def order_file(tmp_path: Path, name: str, *fields: dict[str, object], doc: str | None = None) -> Path:
    """The latest order schema plus `fields` (and a record doc), as an .avsc file."""
    schema = json.loads(LATEST_ORDER.read_text())
    schema["fields"] += list(fields)
    if doc is not None:
        schema["doc"] = doc
    path = tmp_path / name
    path.write_text(json.dumps(schema, indent=2))
    return path


NOTE = {"name": "note", "type": ["null", "string"], "default": None}
TIER = {"name": "loyaltyTier", "type": "string"}  # no default: BACKWARD refuses it


def one_line_error(err: str, kind: str = "error") -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schema-explorer: {kind}: "), err
    assert "Traceback" not in err
    return lines[0]


def live_versions(db: str) -> list[int]:
    with Registry.open(db) as reg:
        return [entry.version for entry in reg.history(ORDERS)]


def proposals(db: str) -> list[dict[str, object]]:
    with Registry.open(db) as reg:
        return [{"id": p.id, "state": str(p.state), "author": p.author} for p in reg.proposals.list()]


# --- a schema proposal from start to end --------------------------------------------------------------------


def test_a_proposal_goes_from_propose_to_apply_with_another_persons_approval(cli, db, tmp_path):
    good = order_file(tmp_path, "order.avsc", NOTE)
    code, out, err = cli(
        "propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "Add a note", "--description", "for the shop"
    )
    assert (code, err) == (0, "")
    assert out.startswith("proposal #1 created: Add a note\n")
    assert f"schema proposal for {ORDERS}, against version 13 · state open · revision 1 by {ME}" in out
    assert "verdict: compatible under BACKWARD (checked against version 13)" in out
    assert "stale: no" in out

    code, out, _ = cli("proposals", "list", "--db", db)
    assert code == 0
    header, row = out.strip().splitlines()
    assert header.split()[:4] == ["ID", "STATE", "KIND", "TARGET"]
    assert row.split()[:4] == ["#1", "open", "schema", ORDERS] and row.endswith("Add a note")

    code, out, err = cli("proposals", "approve", "1", "--db", db)
    assert code == 1 and out == ""
    assert "never reviews their own proposal" in one_line_error(err, "refused")
    code, out, err = cli("proposals", "apply", "1", "--db", db, "--as", "alice")
    assert code == 1 and "0 of the 1 approvals" in one_line_error(err, "refused")
    assert live_versions(db)[-1] == 13  # nothing applied

    code, out, err = cli(
        "proposals", "comment", "1", "why nullable?", "--path", "/fields/15", "--db", db, "--as", "bob"
    )
    assert (code, err) == (0, "") and out.strip() == "proposal #1: comment 1 on /fields/15 by bob on revision 1"
    code, out, err = cli("proposals", "approve", "1", "--db", db, "--as", "bob")
    assert (code, err) == (0, "")
    assert out.strip() == "proposal #1 approved: approvals 1 of 1 (bob); now approved"

    code, out, err = cli("proposals", "show", "1", "--db", db)
    assert (code, err) == (0, "")
    for fact in (
        f"proposal #1 · schema · {ORDERS}",
        "  title:       Add a note",
        "  state:       approved",
        f"  author:      {ME}",
        "  revision:    1, against version 13",
        "  change:      AVRO schema against version 13",
        "  approvals:   1 of 1 (bob)",
        "    for the shop",
        "  [1] bob, ",
        "      why nullable?",
        "review, computed now (as Pulsar master",
        "stale: no (its base is still the latest)",
        "verdict: compatible under BACKWARD (checked against version 13)",
        "registration: accepted with version 14 (registers it)",
        "upgrade order: any order",
        "changes against version 13:",
        "FIELD_ADDED note",
    ):
        assert fact in out, (fact, out)

    code, out, err = cli("proposals", "apply", "1", "--db", db)
    assert (code, err) == (0, "")
    assert out.strip() == (
        f"proposal #1 applied by {ME}: stored as version 14 of {ORDERS} (revision 1, approved by bob)"
    )
    with Registry.open(db) as reg:
        latest = reg.get(ORDERS)
        assert (latest.version, latest.user) == (14, ME)
        assert json.loads(latest.schema) == json.loads(good.read_text())
    code, out, _ = cli("proposals", "show", "1", "--db", db, "--json")
    doc = json.loads(out)
    assert (doc["state"], doc["applied_version"], doc["approvers"], doc["review_computed"]) == (
        "applied",
        14,
        ["bob"],
        "at apply",
    )
    assert doc["review"]["compatible"] is True and doc["comments"][0]["text"] == "why nullable?"
    code, _, err = cli("proposals", "apply", "1", "--db", db)
    assert code == 1 and "proposal #1 is applied" in one_line_error(err, "refused")


def test_an_admin_applies_without_approvals_only_with_a_reason(cli, db, tmp_path):
    good = order_file(tmp_path, "order.avsc", NOTE)
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "t", "--as", "alice")[0] == 0
    code, _, err = cli("proposals", "apply", "1", "--db", db)
    assert code == 1 and "--override-reason" in one_line_error(err, "refused")
    code, _, err = cli("proposals", "apply", "1", "--db", db, "--override-reason", "  ")
    assert code == 2 and "--override-reason must not be empty" in one_line_error(err)
    code, out, err = cli("proposals", "apply", "1", "--db", db, "--override-reason", "incident 42: warehouse down")
    assert (code, err) == (0, "")
    assert f"applied WITHOUT the approvals the namespace asks for, by {ME}: incident 42: warehouse down" in out
    with Registry.open(db) as reg:
        assert reg.proposals.get(1).reason == "incident 42: warehouse down"
        assert "WITHOUT the approvals" in reg.audit_trail(ORDERS)[0].detail


def test_an_incompatible_proposal_is_stored_and_refused_at_apply(cli, db, tmp_path):
    bad = order_file(tmp_path, "order.avsc", TIER)
    code, out, _ = cli("propose", "--db", db, "-t", ORDERS, "-f", str(bad), "--title", "tier", "--as", "alice")
    assert code == 0  # stored whatever its verdict; the gate is check --proposal
    assert "verdict: INCOMPATIBLE under BACKWARD (checked against version 13): 1 problem, 1 introduced" in out
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    code, out, err = cli("proposals", "apply", "1", "--db", db, "--as", "alice")
    assert code == 1 and "READER_FIELD_WITHOUT_DEFAULT" in out
    assert "Pulsar refuses its schema under BACKWARD" in one_line_error(err, "refused")
    assert live_versions(db)[-1] == 13


def test_a_stale_proposal_is_refused_then_rebased(cli, db, tmp_path):
    good = order_file(tmp_path, "order.avsc", NOTE)
    other = order_file(tmp_path, "other.avsc", {"name": "gift", "type": ["null", "string"], "default": None})
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "note", "--as", "alice")[0] == 0
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    assert cli("upload", "--db", db, "-t", ORDERS, "-f", str(other))[0] == 0  # version 14, meanwhile
    code, out, _ = cli("check", "--db", db, "--proposal", "1")
    assert code == 1 and "stale: YES, against version 13; stored since: 14" in out
    code, _, err = cli("proposals", "apply", "1", "--db", db, "--as", "alice")
    assert code == 1 and "proposal #1 is stale, nothing was applied" in one_line_error(err, "refused")
    code, out, err = cli("proposals", "rebase", "1", "--db", db, "--as", "alice")
    assert (code, err) == (0, "")
    assert "proposal #1 rebased (revision 2; approvals cleared)" in out and "against version 14" in out
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    assert cli("proposals", "apply", "1", "--db", db, "--as", "alice")[0] == 0
    assert live_versions(db)[-1] == 15


def test_revise_clears_approvals_and_withdraw_and_reject_end_proposals(cli, db, tmp_path):
    first = order_file(tmp_path, "a.avsc", NOTE)
    second = order_file(tmp_path, "b.avsc", NOTE, {"name": "gift", "type": ["null", "string"], "default": None})
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(first), "--title", "a", "--as", "alice")[0] == 0
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    code, out, err = cli("proposals", "revise", "1", "-f", str(second), "--db", db, "--as", "alice")
    assert (code, err) == (0, "") and "revised (revision 2; approvals cleared)" in out and "state open" in out
    code, _, err = cli("proposals", "approve", "1", "--revision", "1", "--db", db, "--as", "bob")
    assert code == 1 and "is at revision 2, newer than revision 1 (the one reviewed)" in one_line_error(err, "refused")
    code, out, _ = cli("proposals", "reject", "1", "--reason", "split it", "--db", db, "--as", "bob", "--json")
    assert code == 0 and (json.loads(out)["state"], json.loads(out)["reason"]) == ("rejected", "split it")
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(first), "--title", "b", "--as", "alice")[0] == 0
    code, _, err = cli("proposals", "withdraw", "2", "--db", db, "--as", "bob")
    assert code == 0  # on a registry file everyone is an admin, who may withdraw anyone's
    code, out, _ = cli("proposals", "list", "--db", db, "--state", "withdrawn", "--json")
    assert [p["id"] for p in json.loads(out)["proposals"]] == [2]
    code, out, _ = cli("proposals", "list", "--db", db, "--state", "open")
    assert (code, out.strip()) == (0, "no proposals (state open)")


# --- a policy proposal --------------------------------------------------------------------------------------


def test_a_policy_proposal_is_previewed_approved_and_applied(cli, db):
    code, out, err = cli(
        "propose", "--db", db, "--namespace", NS, "--compatibility", "FULL", "--title", "stricter", "--as", "alice"
    )
    assert (code, err) == (0, "")
    assert f"policy proposal for {NS}, against the policy as stored" in out
    assert "changes: compatibility: BACKWARD → FULL" in out
    code, out, _ = cli("proposals", "show", "1", "--db", db)
    assert (
        code == 0
        and "compatibility: BACKWARD → FULL (sha256" in out
        and "preview of the change on namespace acme/orders" in out
    )
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    code, out, err = cli("proposals", "apply", "1", "--db", db)
    assert (
        (code, err)
        == (
            0,
            "",
        )
        and out.strip()
        == f"proposal #1 applied by {ME}: {NS}: compatibility: BACKWARD → FULL (revision 1, approved by bob)"
    )
    code, out, _ = cli("policy", "get", "--db", db, "--namespace", NS, "--json")
    assert json.loads(out)["schema_compatibility_strategy"] == "FULL"


def test_a_topic_policy_proposal_takes_topic_options_only(cli, db):
    code, out, _ = cli(
        "propose", "--db", db, "-t", ORDERS, "--validation-enforced", "true", "--title", "enforce", "--json"
    )
    assert code == 0 and json.loads(out)["revisions"][0]["policy"] == {"validation_enforced": True}
    code, _, err = cli("propose", "--db", db, "-t", ORDERS, "--allow-auto-update", "false", "--title", "x")
    assert code == 2 and "--allow-auto-update is a namespace policy" in one_line_error(err)
    code, _, err = cli("proposals", "revise", "1", "--db", db, "-f", str(LATEST_ORDER))
    assert code == 2 and "proposal #1 changes a policy" in one_line_error(err)
    code, out, _ = cli("proposals", "revise", "1", "--db", db, "--validation-enforced", "false")
    assert code == 0 and "revision 2" in out


# --- review rules -------------------------------------------------------------------------------------------


def test_review_rules_are_read_and_set(cli, db, tmp_path):
    code, out, _ = cli("proposals", "rules", NS, "--db", db)
    assert (code, out.strip()) == (0, f"namespace {NS}: 1 approval(s) from anyone who may write (never the author)")
    code, out, _ = cli(
        "proposals",
        "rules",
        NS,
        "--db",
        db,
        "--set",
        "--required-approvals",
        "2",
        "--reviewer",
        "carol",
        "--reviewer",
        "dan",
    )
    assert (code, out.strip()) == (0, f"namespace {NS}: 2 approval(s) from carol, dan")
    good = order_file(tmp_path, "order.avsc", NOTE)
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "t", "--as", "alice")[0] == 0
    code, _, err = cli("proposals", "approve", "1", "--db", db, "--as", "bob")
    assert code == 1 and "bob is not one of the reviewers" in one_line_error(err, "refused")
    code, out, _ = cli("proposals", "approve", "1", "--db", db, "--as", "carol")
    assert code == 0 and "approvals 1 of 2 (carol); now open" in out
    code, out, _ = cli("proposals", "rules", NS, "--db", db, "--set", "--any-reviewer", "--json")
    assert json.loads(out) == {"namespace": NS, "required_approvals": 2, "reviewers": [], "require_proposals": False}
    for args, message in (
        (["--required-approvals", "1"], "add --set"),
        (["--set"], "--set changes nothing"),
        (["--set", "--reviewer", "a", "--any-reviewer"], "not both"),
        (["--set", "--required-approvals", "9"], "required_approvals is 9"),
    ):
        code, _, err = cli("proposals", "rules", NS, "--db", db, *args)
        assert code == 2 and message in one_line_error(err), (args, err)


def test_a_namespace_that_requires_proposals_refuses_upload_and_policy_set(cli, db, tmp_path):
    code, out, _ = cli("proposals", "rules", NS, "--db", db, "--set", "--require-proposals")
    assert code == 0 and out.strip().endswith("; direct writes refused: changes go through proposals")
    good = order_file(tmp_path, "order.avsc", NOTE)
    # A refusal, as for a proposal step: exit 1 and one line (a usage error is exit 2).
    code, _, err = cli("upload", "--db", db, "-t", ORDERS, "-f", str(good), "--as", "carol")
    line = one_line_error(err, "refused")
    assert code == 1 and f"the review rules of {NS} require proposals" in line and "schema-explorer propose" in line
    code, _, err = cli("policy", "set", "--db", db, "-n", NS, "--compatibility", "FULL")
    assert code == 1 and "require proposals" in one_line_error(err, "refused")
    code, _, err = cli("delete", "--db", db, "-t", ORDERS)
    assert code == 1 and "require proposals" in one_line_error(err, "refused")
    with Registry.open(db) as reg:
        refusal = reg.audit_trail(ORDERS, limit=2)[-1]  # the upload's refusal, before the delete's
        assert (str(refusal.action), refusal.user) == ("register", "carol")
    assert live_versions(db)[-1] == 13
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "t", "--as", "alice")[0] == 0
    assert cli("proposals", "approve", "1", "--db", db, "--as", "bob")[0] == 0
    assert cli("proposals", "apply", "1", "--db", db)[0] == 0  # the way a change is made there
    assert live_versions(db)[-1] == 14
    code, out, _ = cli("proposals", "rules", NS, "--db", db, "--set", "--required-approvals", "2", "--json")
    assert json.loads(out)["require_proposals"] is True  # other changes keep the rule
    assert cli("proposals", "rules", NS, "--db", db, "--set", "--no-require-proposals")[0] == 0
    assert cli("upload", "--db", db, "-t", ORDERS, "-f", str(order_file(tmp_path, "o2.avsc", NOTE, doc="d")))[0] == 0


# --- identity -----------------------------------------------------------------------------------------------


def test_on_a_file_the_os_user_acts_and_as_names_someone_else(cli, db, tmp_path):
    good = order_file(tmp_path, "order.avsc", NOTE)
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "mine")[0] == 0
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "hers", "--as", " alice ")[0] == 0
    assert [p["author"] for p in proposals(db)] == ["alice", ME]
    code, _, err = cli("proposals", "approve", "1", "--db", db, "--as", "")
    assert code == 2 and "--as must name someone" in one_line_error(err)


# --- bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["proposals", "show", "99"], "no proposal #99"),
        (["proposals", "approve", "99", "--as", "bob"], "no proposal #99"),
        (["check", "--proposal", "99"], "no proposal #99"),
        (["propose", "-t", ORDERS, "-f", "{order}", "--title", "  "], "--title must not be empty"),
        (["propose", "-t", ORDERS, "-f", "{bad}", "--title", "t"], "Invalid schema definition data for AVRO schema"),
        (["propose", "-t", ORDERS, "-f", "{missing}", "--title", "t"], "no such file"),
        (["propose", "-t", ORDERS, "--title", "t"], "--file is required"),
        (["propose", "-t", ORDERS, "-f", "{order}", "--compatibility", "FULL", "--title", "t"], "not both"),
        (["propose", "-n", NS, "-f", "{order}", "--title", "t"], "a namespace proposal changes its policies"),
        (["propose", "-n", NS, "--compatibility", "SIDEWAYS", "--title", "t"], "SIDEWAYS"),
        (["propose", "-t", "persistent://acme/orders/a/b/c", "-f", "{order}", "--title", "t"], "acme/orders/a/b/c"),
        (["proposals", "list", "--state", "merged"], "unknown proposal state 'merged'"),
        (["proposals", "revise", "1"], "nothing to revise"),
        (["proposals", "comment", "1", "  "], "the comment must not be empty"),
        (["proposals", "reject", "1", "--reason", " "], "--reason must not be empty"),
    ],
    ids=[
        "show an unknown id",
        "approve an unknown id",
        "check an unknown id",
        "an empty title",
        "an unparseable schema",
        "a missing file",
        "no schema",
        "a schema and a policy",
        "a schema for a namespace",
        "an unknown strategy",
        "an invalid topic name",
        "an unknown state",
        "a revision without a change",
        "an empty comment",
        "an empty reason",
    ],
)
def test_bad_input_is_one_line_exit_2_and_stores_nothing(cli, db, tmp_path, args, message):
    paths = {
        "order": order_file(tmp_path, "order.avsc", NOTE),
        "bad": tmp_path / "bad.avsc",
        "missing": tmp_path / "x.avsc",
    }
    paths["bad"].write_text('{"type": "record", "name": "X", "fields": [{"name": "a"}]}')
    if args[:2] in (["proposals", "revise"], ["proposals", "comment"], ["proposals", "reject"]):
        assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(paths["order"]), "--title", "t")[0] == 0
    with Registry.open(db) as reg:
        before = reg.proposals.list()
    argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in args]
    code, out, err = cli(*argv, "--db", db)
    assert code == 2 and out == "", (code, out, err)
    assert message in one_line_error(err), err
    with Registry.open(db) as reg:
        assert reg.proposals.list() == before  # nothing stored: no proposal, revision, comment or state change


def test_an_id_that_is_not_a_number_is_a_usage_error(cli, db):
    code, out, err = cli("proposals", "show", "first", "--db", db)
    assert code == 2 and out == "" and "not a whole number: 'first'" in err


# --- check --format markdown ----------------------------------------------------------------------------------


def test_check_markdown_is_a_pull_request_comment(cli, db, tmp_path):
    bad = order_file(tmp_path, "order.avsc", TIER)
    code, out, err = cli("check", "--db", db, "-t", ORDERS, "-f", str(bad), "--format", "markdown")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[:3] == ["<!-- schema-explorer check -->", "### ❌ Schema check: incompatible", ""]
    assert lines[3].startswith(
        f"**Topic** `{ORDERS}` · **strategy** `BACKWARD` · checked against version 13 · answered as Pulsar master"
    )
    assert "#### Problems (1)" in lines
    first = lines.index("#### Problems (1)") + 2
    assert lines[first].startswith("1. `READER_FIELD_WITHOUT_DEFAULT` at `/fields/15`: the new schema, as a reader")
    assert "loyaltyTier" in lines[first + 1] and "introduced" not in out  # a plain check marks nothing
    assert "#### Upgrade order" in lines and "This change: **producers first**" in out
    assert "❗ FIELD\\_ADDED" not in out and "- ❗ FIELD_ADDED `loyaltyTier`" in out
    code, out, _ = cli("check", "--db", db, "-t", ORDERS, "-f", str(LATEST_ORDER), "--format", "markdown")
    assert code == 0 and "### ✅ Schema check: compatible" in out and "#### Problems" not in out


def test_check_markdown_of_a_proposal_marks_introduced_and_already_there(cli, db, tmp_path):
    topic = "persistent://acme/orders/legacy"
    base = {"type": "record", "name": "Legacy", "fields": [{"name": "id", "type": "string"}]}
    with Registry.open(db) as reg:
        from registry import SchemaInfo, SchemaType

        def avro(*required: str) -> SchemaInfo:
            fields = base["fields"] + [{"name": name, "type": "string"} for name in required]  # type: ignore[operator]
            return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps({**base, "fields": fields}))

        reg.register(topic, avro())
        reg.set_topic_policy(topic, compatibility="ALWAYS_COMPATIBLE")
        reg.register(topic, avro("sku"))  # v1 already breaks v0
        reg.set_topic_policy(topic, compatibility="BACKWARD_TRANSITIVE")
        candidate = tmp_path / "legacy.avsc"
        candidate.write_text(avro("sku", "qty").schema)  # keeps v1's break, adds its own
    code, out, err = cli(
        "propose", "--db", db, "-t", topic, "-f", str(candidate), "--title", "Add *qty* <b>now</b>", "--as", "alice"
    )
    assert code == 0, err
    code, out, err = cli(
        "check", "--db", db, "--proposal", "1", "--format", "markdown", "--app-url", "https://schemas.example.com/"
    )
    assert (code, err) == (1, "")
    assert (
        "**Proposal [#1](<https://schemas.example.com/proposal?id=1>)**: Add \\*qty\\* \\<b\\>now\\</b\\> · open" in out
    )
    assert "<b>" not in out
    problems = [line for line in out.splitlines() if re.match(r"\d+\. ", line)]
    marks = [("introduced" if "**introduced**" in p else "already there") for p in problems]
    assert marks and marks == sorted(marks, key=lambda m: m != "introduced")  # introduced ones first
    assert "already there" in marks and "introduced" in marks
    assert re.search(r"#### Problems \(\d+: \d+ introduced, \d+ already there(, \d+ failed checks)?\)", out)
    assert "❌ `BACKWARD_TRANSITIVE`" in out  # it introduces a refusal there
    code, out, _ = cli("check", "--db", db, "--proposal", "1")  # text: the same review
    assert code == 1 and "[already there]" in out and "[introduced]" in out and "proposal #1: Add *qty*" in out
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "--json")
    doc = json.loads(out)
    assert doc["proposal"]["id"] == 1 and doc["review"]["introduced_problems"] >= 1 and doc["compatible"] is False
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "--format", "markdown")
    assert "**Proposal #1**:" in out  # no app URL: just the number


def test_check_markdown_escapes_schema_text(cli, db, tmp_path):
    """A doc (shown in the diff) and a title can hold HTML and Markdown; the comment shows them as typed."""
    evil = "<script>alert(1)</script> **bold** [click](http://evil.example) ![img](x) # head\n=== | a | `x`"
    changed = order_file(tmp_path, "order.avsc", NOTE, doc=evil)
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(changed), "--title", evil, "--as", "alice")[0] == 0
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "--format", "markdown")
    assert code == 0 and "DOC_CHANGED" in out
    for raw in ("<script>", "</script>", "**bold**", "[click]", "](http", "![img]", "\n===", "| a |", "`x`"):
        assert raw not in out, raw
    assert "\\<script\\>alert\\(1\\)\\</script\\>" in out and "\\*\\*bold\\*\\*" in out
    # every line of the comment is ours or starts with our own markup: no user text opens a block
    for line in out.splitlines():
        assert not line.startswith(("=", "#####", "<script", "|")), line
    # rendered as a CommonMark renderer with raw HTML allowed would: the text shows, nothing else comes of it
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(out)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** [click](http://evil.example)" in html
    for tag in ("<script", "<strong>bold", "<a href", "<img", "<h1", "<table", "<code>x</code>"):
        assert tag not in html, tag


def test_check_format_and_json_agree_and_conflict(cli, sample_db):
    args = ("check", "--db", str(sample_db), "-t", ORDERS, "-f", str(LATEST_ORDER))
    assert cli(*args, "--json")[:2] == cli(*args, "--format", "json")[:2]
    code, _, err = cli(*args, "--json", "--format", "markdown")
    assert code == 2 and "--json asks for --format json" in one_line_error(err)
    code, _, err = cli(*args, "--app-url", "https://x.example")
    assert code == 2 and "--app-url links a proposal" in one_line_error(err)
    code, _, err = cli("check", "--db", str(sample_db), "-f", str(LATEST_ORDER))
    assert code == 2 and "--topic is required" in one_line_error(err)


def test_check_a_file_against_a_proposal_links_it_and_says_it_differs(cli, db, tmp_path):
    good = order_file(tmp_path, "order.avsc", NOTE)
    assert cli("propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "note", "--as", "alice")[0] == 0
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "-f", str(LATEST_ORDER), "--format", "markdown")
    assert code == 0 and "the schema checked is not revision 1 of proposal \\#1" in out
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "-f", str(good))  # the same schema: its review
    assert code == 0 and "review, computed now" in out
    code, _, err = cli("check", "--db", db, "--proposal", "1", "-t", "acme/orders/other", "-f", str(good))
    assert code == 2 and "is not proposal #1's topic" in one_line_error(err)
    code, _, err = cli("check", "--db", db, "--proposal", "1", "--strategy", "FULL")
    assert code == 2 and "--strategy" in one_line_error(err)
    for bad in ("ftp://x", "https://x.example/?q=1", "https://x.example/<a>", "schemas.example.com"):
        code, _, err = cli("check", "--db", db, "--proposal", "1", "--app-url", bad)
        assert code == 2 and "is not the app's address" in one_line_error(err), bad


def test_check_markdown_of_a_policy_proposal(cli, db):
    assert (
        cli("propose", "--db", db, "-n", NS, "--compatibility", "FULL_TRANSITIVE", "--title", "strict", "--as", "a")[0]
        == 0
    )
    code, out, err = cli("check", "--db", db, "--proposal", "1", "--format", "markdown")
    assert code == 0, err
    assert out.startswith("<!-- schema-explorer check -->\n### ")
    assert "Policy proposal for `acme/orders`" in out
    assert "- compatibility\\: BACKWARD → FULL\\_TRANSITIVE" in out
    assert "#### Topics whose latest registration it would refuse" in out


def test_a_missing_registry_file_is_never_made(cli, tmp_path):
    missing = tmp_path / "nowhere.db"
    for args in (
        ["proposals", "list"],
        ["propose", "-t", ORDERS, "-f", str(LATEST_ORDER), "--title", "t"],
        ["proposals", "approve", "1", "--as", "bob"],
    ):
        code, out, err = cli(*args, "--db", str(missing))
        assert code == 2 and out == "" and f"no registry at {missing}" in one_line_error(err), args
    assert not missing.exists()


def test_a_stale_policy_proposal_fails_its_check(cli, db):
    assert cli("propose", "--db", db, "-n", NS, "--compatibility", "FULL", "--title", "full", "--as", "a")[0] == 0
    assert cli("policy", "set", "--db", db, "-n", NS, "--compatibility", "FORWARD")[0] == 0  # meanwhile
    code, out, _ = cli("check", "--db", db, "--proposal", "1")
    assert code == 1 and "stale: YES, the policy was changed since it was proposed" in out
    code, out, _ = cli("check", "--db", db, "--proposal", "1", "--format", "markdown")
    assert code == 1 and "> ⚠️ **Stale**: the policy was changed" in out


def test_the_console_script_runs_a_proposal_step(db, tmp_path):
    script = Path(sys.executable).with_name("schema-explorer")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
    good = order_file(tmp_path, "order.avsc", NOTE)
    done = subprocess.run(
        [*command, "propose", "--db", db, "-t", ORDERS, "-f", str(good), "--title", "t", "--as", "alice", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["author"] == "alice"
    done = subprocess.run(
        [*command, "proposals", "approve", "1", "--db", db, "--as", "alice"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_ROOT,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        "schema-explorer: refused: alice wrote proposal #1: an author never reviews their own proposal"
    )


def test_propose_takes_a_record_class_and_shows_its_pitfall(cli, db, tmp_path, monkeypatch):
    pytest.importorskip("pulsar")
    (tmp_path / "shop_proposal_v1.py").write_text(
        "from pulsar.schema import Record, String\n\n"
        "class Order(Record):\n"
        "    _avro_namespace = 'acme'\n"
        "    id = String(required=True)\n"
        "    note = String()\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(
        "propose", "--db", db, "-t", "acme/orders/records", "--record", "shop_proposal_v1:Order", "--title", "r"
    )
    assert (code, err) == (0, "")
    assert "against a topic without a live schema" in out and "RECORD_OPTIONAL_WITHOUT_DEFAULT" in out
    with Registry.open(db) as reg:
        schema = reg.proposals.get(1).revision.schema
        assert schema is not None and json.loads(schema.schema)["name"] == "Order"
