"""A proposal's revisions on its page (app/proposal_revisions.py): the diff between any two revisions, by default
the previous and the current one; a new revision pushed from the page with the What-if editor, by whom the core
lets revise; and a rebase from the page that keeps what another person stored meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, TOPIC, VICTOR, actor, button_labels, proposal_page, propose, said, with_field

from registry import Registry, SchemaInfo, SchemaType


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from proposal_helpers import use_roles

    use_roles(monkeypatch, tmp_path)


def changes(at: object) -> list[tuple[str, str]]:
    frames = [d.value for d in at.dataframe if "kind" in d.value.columns and "path" in d.value.columns]  # type: ignore[attr-defined]
    return [(str(k), str(p)) for k, p in zip(frames[-1]["kind"], frames[-1]["path"], strict=True)]


def names(text: str) -> list[str]:
    return [f["name"] for f in json.loads(text)["fields"]]


def test_the_page_shows_what_the_new_revision_changes_against_the_previous_one(db: Path) -> None:
    pid = propose(db)  # revision 1 adds giftNote
    with Registry.open(db) as reg:
        second = json.loads(reg.proposals.get(pid).revision.schema.text)  # type: ignore[union-attr]
        second["fields"].append({"name": "wrapping", "type": ["null", "string"], "default": None})
        reg.proposals.revise(
            pid, schema=SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(second)), actor=actor(ALICE)
        )
    at = proposal_page(db, pid, BOB)
    assert not at.exception and not at.error
    assert "What changed between revisions" in said(at)
    assert (at.selectbox(key="prop_rev_from").value, at.selectbox(key="prop_rev_to").value) == (1, 2)
    assert changes(at) == [("FIELD_ADDED", "wrapping")]  # not giftNote: revision 1 already added it
    at.selectbox(key="prop_rev_from").set_value(2).run()
    at.selectbox(key="prop_rev_to").set_value(1).run()
    assert not at.exception and changes(at) == [("FIELD_REMOVED", "wrapping")]
    assert "Push revision 3" not in button_labels(at)  # bob is not its author


def test_the_author_pushes_a_revision_from_the_page_and_a_viewer_cannot(db: Path) -> None:
    pid = propose(db)
    assert "Push revision 2" not in button_labels(proposal_page(db, pid, VICTOR))
    at = proposal_page(db, pid, ALICE)
    editor = at.text_area(key="prop_rev_cand_text")
    assert "giftNote" in editor.value  # seeded with the current revision
    doc = json.loads(editor.value)
    doc["fields"].append({"name": "ribbon", "type": ["null", "string"], "default": None})
    editor.set_value(json.dumps(doc, indent=2))
    at.button(key="prop_push_revision").click().run()
    assert not at.exception and not at.error
    assert f"#{pid} now has revision 2" in said(at) and "revision 2 of 2" in said(at)
    with Registry.open(db) as reg:
        pushed = reg.proposals.get(pid)
    assert pushed.revision.author == ALICE and names(pushed.revision.schema.text)[-2:] == ["giftNote", "ribbon"]  # type: ignore[union-attr]
    assert changes(at) == [("FIELD_ADDED", "ribbon")]  # the page now shows revision 1 → 2


def test_a_rebase_from_the_page_keeps_the_version_stored_meanwhile(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.register(TOPIC, with_field(db, "promoCode"), user=BOB)  # version 14, without giftNote
    at = proposal_page(db, pid, ALICE)
    at.button(key="prop_rebase").click().run()
    assert not at.exception and not at.error
    assert "rebased onto the latest version" in said(at)
    with Registry.open(db) as reg:
        rebased = reg.proposals.get(pid).revision
    assert rebased.base_version == 14
    assert {"giftNote", "promoCode"} <= set(names(rebased.schema.text))  # type: ignore[union-attr]
    assert changes(at) == [("FIELD_ADDED", "promoCode")]  # what revision 2 changes against revision 1
    assert "The base moved too: v13 → v14" in said(at)


def test_a_rebase_that_conflicts_names_the_field_and_writes_nothing(db: Path) -> None:
    pid = propose(db)  # adds giftNote as an optional string
    with Registry.open(db) as reg:
        other = json.loads(with_field(db, "giftNote").text)
        other["fields"][-1]["type"] = ["null", "int"]  # bob's giftNote is another one
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(other)), user=BOB)
    at = proposal_page(db, pid, ALICE)
    at.button(key="prop_rebase").click().run()
    assert not at.exception
    assert any("both changed" in e.value and "giftNote" in e.value for e in at.error)
    with Registry.open(db) as reg:
        assert len(reg.proposals.get(pid).revisions) == 1
