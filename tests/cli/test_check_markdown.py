"""`check --format markdown` reads as one comment: the verdict and a summary of the change first, one item per
distinct problem naming every version it fails against, the upgrade order as a list, no word cut, short enough
to read (a topic of 14 versions and a candidate that breaks against all of them: under 60 lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_proposals_cli import LATEST_ORDER, ORDERS

from cli._markdown import MarkedProblem, group_problems, text, versions_text
from registry import Direction, Problem, Registry, RuleCode


def breaking_everywhere(tmp_path: Path) -> Path:
    """The latest order schema without `orderId` (there since version 0) and with a required `tier`: every
    version reads neither way."""
    schema = json.loads(LATEST_ORDER.read_text())
    schema["fields"] = [f for f in schema["fields"] if f["name"] != "orderId"] + [{"name": "tier", "type": "string"}]
    path = tmp_path / "order.avsc"
    path.write_text(json.dumps(schema))
    return path


def test_a_candidate_failing_against_every_version_gives_one_item_per_problem(cli, db, tmp_path):
    with Registry.open(db) as reg:
        reg.set_topic_policy(ORDERS, compatibility="FULL_TRANSITIVE")
        versions = [v.version for v in reg.history(ORDERS)]
    assert len(versions) >= 12
    code, out, err = cli(
        "check", "--db", db, "-t", ORDERS, "-f", str(breaking_everywhere(tmp_path)), "--format", "markdown"
    )
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert len(lines) < 60, out
    span = f"{versions[0]}–{versions[-1]}"
    assert lines[1] == "### ❌ Schema check: incompatible"
    assert f"checked against versions {span} ·" in lines[3]
    summary = lines[5]  # the verdict, then the summary, before any detail
    assert summary.startswith(f"**2 problems** ({2 * len(versions)} failed checks against {len(versions)} versions)")
    assert "**changes against version 13**: ❗ FIELD_REMOVED `orderId`, ❗ FIELD_ADDED `tier`" in summary
    assert "**upgrade order**: breaking" in summary
    items = [line for line in lines if re.match(r"\d+\. ", line)]
    assert len(items) == 2, items  # not one per version
    assert items[0].endswith(f"the new schema, as a reader, cannot read data written with versions {span}  ")
    assert f"versions {span}, as a reader, cannot read data written with the new schema" in items[1]
    assert lines.index("#### Upgrade order") < lines.index(next(x for x in lines if x.startswith("<details>")))
    order = lines[lines.index("#### Upgrade order") + 2 :]
    assert order[0].startswith("- This change: **breaking: no safe order**")
    assert order[2] == "- Recorded clients: no safe order:"
    clients = [x for x in order if x.startswith("  - ")]
    assert len(clients) >= 2 and all("…" not in x for x in clients)
    assert any(
        x.startswith("  - consumer 'analytics\\-sink' on version 10 cannot read version candidate\\:") for x in clients
    )


def test_a_long_text_is_cut_between_words() -> None:
    said = text("version candidate " * 60, limit=50)
    assert said.endswith(" …") and said.removesuffix(" …").split(" ")[-1] in ("version", "candidate")
    assert text("x" * 80, limit=50) == "x" * 50 + " …"  # one word longer than the room: cut where it must
    assert text("short", limit=50) == "short"


def test_versions_read_as_runs_and_problems_group_by_what_fails() -> None:
    assert versions_text([0, 1, 2, 3, 5, 7, 8]) == "0–3, 5, 7–8"
    assert versions_text([4]) == "4" and versions_text([None]) == "the latest"

    def problem(version: int, message: str = "field 'a' is gone") -> MarkedProblem:
        return MarkedProblem(
            problem=Problem(
                code=RuleCode.READER_FIELD_WITHOUT_DEFAULT,
                direction=Direction.FORWARD,
                message=message,
                version=version,
            )
        )

    grouped = group_problems([problem(3), problem(2), problem(3, "field 'b' is gone"), problem(1)])
    assert [(g.first.problem.message, g.versions) for g in grouped] == [
        ("field 'a' is gone", (3, 2, 1)),
        ("field 'b' is gone", (3,)),
    ]
