"""Small things a person meets on the review pages: names are text (never mailto links), the Proposals list says
when to the second, a namespace's audit trail is newest first, and the comment picker names a place first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, NS, OPS, actor, app_page, proposal_page, propose, use_roles
from review_helpers import texts

from app.proposal_discussion import picker_label
from app.render import escape_markdown
from registry import Registry


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def test_an_address_in_markdown_is_a_code_span_and_the_rest_stays_escaped() -> None:
    assert escape_markdown("by alice@acme.io and **bob**.") == "by `alice@acme.io` and \\*\\*bob\\*\\*\\."
    assert escape_markdown("no address: a@b") == "no address\\: a@b"  # no dot after the @: markdown links nothing


def test_the_proposal_page_names_people_as_code_spans(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
    shown = texts(proposal_page(db, pid, OPS))
    assert f"proposed by **`{ALICE}`**" in shown
    assert f"1 of 1 \\(`{BOB}`\\)" in shown  # the approvals line, "1 of 1 (bob)" as markdown
    bare = re.compile(r"(?<!`)\b[\w.]+@acme\.io\b(?!`)")
    assert not bare.search(shown), bare.search(shown)


def test_the_proposals_list_shows_when_to_the_second(db: Path) -> None:
    propose(db)
    at = app_page("proposals", db, BOB).run()
    frame = next(d.value for d in at.main.dataframe if "updated" in d.value.columns)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", value) for value in frame["updated"])


def test_a_namespace_audit_trail_is_newest_first(db: Path) -> None:
    with Registry.open(db) as reg:  # a write now, after the sample data's history of older dates
        reg.set_namespace_policy(NS, compatibility="FULL", user=OPS)
    at = app_page("policies", db, OPS, namespace=NS).run()
    trail = next(d.value for d in at.main.dataframe if "outcome" in d.value.columns)
    assert list(trail["when"]) == sorted(trail["when"], reverse=True)
    assert trail.iloc[0]["user"] == OPS


def test_the_comment_picker_names_a_place_by_name_first() -> None:
    labels = {"/fields/2": "giftNote", "/fields/0/type": "TYPE_MISMATCH"}
    assert picker_label("/fields/2", labels) == "giftNote — /fields/2"
    assert picker_label("/fields/0/type", labels) == "TYPE_MISMATCH — /fields/0/type"
    assert picker_label("/fields/9", labels) == "/fields/9"  # typed: no name known
