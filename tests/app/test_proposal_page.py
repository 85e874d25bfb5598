"""The proposal page (`/proposal?id=N`): a proposal, its review computed now, its discussion, and the steps each
person may take, through the real core on a copy of the sample registry. People are signed in through
`st.user` (AppTest.user), with roles from a roles file (app/roles.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from proposal_helpers import (
    ALICE,
    BOB,
    CAROL,
    NS,
    OPS,
    TOPIC,
    VICTOR,
    actor,
    button_labels,
    proposal_page,
    propose,
    said,
    use_roles,
    with_field,
)

from registry import NamespacePolicyChange, ProposalState, Registry, ReviewRules, comment_paths

SCRIPT = "<script>window.__pwned = 1</script>"


def gift_note_pointer(reg: Registry, pid: int) -> str:
    """The pointer the comment picker offers for the proposal's added field."""
    offered = comment_paths(reg.proposals.get(pid), reg.proposals.review(pid))
    return next(pointer for pointer, label in offered.items() if label.endswith("giftNote"))


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def test_the_page_shows_the_proposal_its_review_and_its_comments_as_text(db: Path) -> None:
    pid = propose(db, title=f"Gift note {SCRIPT}", description=f"For the **warehouse**.\n{SCRIPT}")
    with Registry.open(db) as reg:
        pointer = gift_note_pointer(reg, pid)
        reg.proposals.comment(pid, f"Looks fine {SCRIPT} **bold**", path=pointer, actor=actor(BOB))
    at = proposal_page(db, pid, BOB)
    assert not at.exception and not at.error
    shown = said(at)
    assert f"#{pid} · Gift note <script>" in shown  # the title escaped: markdown shows the characters
    assert "proposed by **alice@acme.io**" in shown and "base v13" in shown and "open" in shown
    assert "Applying would be accepted under BACKWARD (from the namespace) and store version 14." in shown
    assert "Judged as Pulsar" in shown
    assert "Writes are recorded as bob@acme.io · producer" in shown  # the sidebar names the role
    plain = [t.value for t in at.text]
    assert f"For the **warehouse**.\n{SCRIPT}" in plain  # the description as typed, never markdown or HTML
    assert f"Looks fine {SCRIPT} **bold**" in plain  # so is a comment
    assert f"on {pointer}" in plain and pointer not in shown  # a path is shown as text, never markdown
    strategies = next(d.value for d in at.dataframe if "introduces a refusal" in d.value.columns)
    assert len(strategies) == 8
    assert at.query_params["id"] == [str(pid)] or at.query_params["id"] == str(pid)


def test_a_problem_is_marked_introduced(db: Path) -> None:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_schema(
            TOPIC, with_field(db, "tier", required=True), title="Tier", actor=actor(ALICE)
        )
    at = proposal_page(db, made.id, BOB)
    assert not at.exception
    assert "Applying would be refused under BACKWARD" in said(at)
    problems = next(t.value for t in at.table if "this change" in t.value.columns)
    assert set(problems["this change"]) == {"introduced"}
    assert "READER_FIELD_WITHOUT_DEFAULT" in set(problems["code"])


@pytest.mark.parametrize(("value", "says"), [("abc", "expected a whole number, 1 or more"), ("0", "1 or more")])
def test_a_bad_id_says_what_is_wrong(db: Path, value: str, says: str) -> None:
    at = proposal_page(db, value, BOB)
    assert not at.exception
    assert any("The link's `id` is" in w.value and says in w.value for w in at.warning)
    assert "No proposal chosen" in said(at)


def test_an_unknown_id_says_there_is_no_such_proposal(db: Path) -> None:
    at = proposal_page(db, 99, BOB)
    assert not at.exception
    assert "There is no proposal #99 in this registry." in said(at)
    assert not at.main.button  # nothing to act on


def test_a_reviewer_approves_then_the_author_applies_and_the_version_is_stored(db: Path) -> None:
    pid = propose(db)
    author = proposal_page(db, pid, ALICE)
    assert "Approve" not in button_labels(author)  # an author never approves their own
    assert "Apply" not in button_labels(author)  # not approved yet
    assert "never reviews their own proposal" in said(author)
    reviewer = proposal_page(db, pid, BOB)
    reviewer.button(key="prop_approve").click().run()
    assert not reviewer.exception
    assert "You approved revision 1" in said(reviewer)
    assert "approved" in said(reviewer) and "Approve" not in button_labels(reviewer)
    author = proposal_page(db, pid, ALICE)
    author.button(key="prop_apply").click().run()
    assert not author.exception and not author.error
    assert "now has version 14" in said(author)
    assert "Applied by alice@acme.io" in said(author) and "stored as version 14" in said(author)
    assert "as it was when the proposal was applied" in said(author)  # the frozen review
    assert any(link.label == "Open version 14 on the Topic page" for link in author.page_link)
    with Registry.open(db) as reg:
        assert reg.get(TOPIC).version == 14 and reg.get(TOPIC).user == ALICE
        assert reg.proposals.get(pid).state is ProposalState.APPLIED


def test_a_viewer_may_only_comment(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, VICTOR)
    assert not at.exception
    assert button_labels(at) == ["Comment"]
    assert "reviewing needs the producer role" in said(at)
    at.text_area(key="prop_comment_text").set_value(f"What about {SCRIPT}?")
    with Registry.open(db) as reg:
        pointer = gift_note_pointer(reg, pid)
    picker = at.selectbox(key="prop_comment_path")
    assert picker.options[1] == f"giftNote — {pointer}"  # what it is, by name, then the pointer
    picker.set_value(pointer)
    at.button(key="FormSubmitter:prop_comment_form-Comment").click().run()
    assert not at.exception and not at.error
    with Registry.open(db) as reg:
        comments = reg.proposals.get(pid).comments
    assert [(c.user, c.text, c.path) for c in comments] == [(VICTOR, f"What about {SCRIPT}?", pointer)]
    assert f"What about {SCRIPT}?" in [t.value for t in at.text]


def test_a_path_stored_before_paths_were_checked_shows_as_text_never_markdown(db: Path) -> None:
    """A comment path holding a newline and markdown rendered as an image and a link (issue 40); the core now
    refuses such a path, and one already stored shows as the characters it holds."""
    pid = propose(db)
    with Registry.open(db) as reg:
        pointer = gift_note_pointer(reg, pid)
        reg.proposals.comment(pid, "see", path=pointer, actor=actor(BOB))
    planted = "x\n\n![x](https://evil.example/x.png) [click](https://evil.example)"
    with sqlite3.connect(db) as conn:
        (doc,) = conn.execute("SELECT doc FROM proposals WHERE id = ?", (pid,)).fetchone()
        conn.execute(
            "UPDATE proposals SET doc = ? WHERE id = ?", (doc.replace(json.dumps(pointer), json.dumps(planted)), pid)
        )
    conn.close()
    at = proposal_page(db, pid, BOB)
    assert not at.exception
    assert f"on {planted}" in [t.value for t in at.text]
    assert not any("evil.example" in m.value for m in (*at.markdown, *at.caption))


def test_an_empty_comment_stores_nothing_and_says_so(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    at.text_area(key="prop_comment_text").set_value("   ")
    at.button(key="FormSubmitter:prop_comment_form-Comment").click().run()
    assert "empty comment is not kept" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.get(pid).comments == ()


def test_a_read_only_session_reads_but_can_do_nothing(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, OPS, read_only=True)
    assert not at.exception
    assert button_labels(at) == [] and not at.main.text_area and not at.main.form
    assert "Read-only: this session cannot approve" in said(at)


def test_a_refusal_shows_the_cores_message(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    with Registry.open(db) as reg:  # meanwhile, in another tab
        reg.proposals.withdraw(pid, actor=actor(ALICE))
    at.button(key="prop_approve").click().run()
    assert not at.exception
    assert f"proposal #{pid} is withdrawn: it cannot be approved any more" in said(at)
    assert "Approve" not in button_labels(at)  # the page now shows it withdrawn


def test_reviewers_named_by_the_rules_are_the_only_ones_who_may_approve(db: Path) -> None:
    with Registry.open(db) as reg:
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, reviewers=(BOB, CAROL)), actor=actor(OPS))
    pid = propose(db)
    ops = proposal_page(db, pid, OPS)
    assert "Approve" not in button_labels(ops)
    assert "is not one of the reviewers of acme/orders" in said(ops)
    assert "2 more approvals, from the reviewers of acme/orders: bob@acme.io, carol@acme.io" in said(ops)
    bob = proposal_page(db, pid, BOB)
    bob.button(key="prop_approve").click().run()
    assert "1 more approval, from the reviewers of acme/orders: carol@acme.io" in said(bob)


def test_an_admin_applies_without_approvals_only_with_a_reason(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, OPS)
    assert "Apply" not in button_labels(at)
    at.button(key="prop_apply_override").click().run()  # no reason typed yet: nothing is applied, and it says so
    assert "Nothing was applied: write the reason first" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.get(pid).state is ProposalState.OPEN
    # The reason and the click are submitted together (a form), as one click after typing in a browser.
    at.text_area(key="prop_override_reason").set_value("Hotfix for the warehouse outage")
    at.button(key="prop_apply_override").click().run()
    assert not at.exception and not at.error
    assert "Applied without its approvals. Reason: Hotfix for the warehouse outage" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.get(pid).applied_version == 14


def test_a_producer_never_gets_the_override(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, CAROL)
    labels = button_labels(at)
    assert "Apply" not in labels and "Apply anyway" not in labels and "Approve" in labels


def test_a_stale_proposal_says_what_was_stored_since_and_rebases(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.register(TOPIC, with_field(db, "other"), user=BOB)
    at = proposal_page(db, pid, ALICE)
    assert not at.exception
    assert "Stale: version 14 was stored since its base, v13." in said(at)
    bob = proposal_page(db, pid, BOB)
    assert "Approve" not in button_labels(bob) and "Rebase" not in button_labels(bob)
    at.button(key="prop_rebase").click().run()
    assert not at.exception and not at.error
    assert "rebased onto the latest version" in said(at)
    assert "base v14" in said(at) and "revision 2 of 2" in said(at)
    assert "Stale" not in said(at)


def test_a_rejection_needs_a_reason_and_shows_it(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    at.button(key="prop_reject").click().run()  # no reason typed yet: nothing is rejected, and it says so
    assert "Nothing was rejected: write why first" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.get(pid).state is ProposalState.OPEN
    at.text_area(key="prop_reject_reason").set_value("Use the notes topic instead")
    at.button(key="prop_reject").click().run()
    assert "Rejected: Use the notes topic instead" in said(at)
    assert button_labels(at) == ["Comment"]  # final: only the discussion goes on


def test_a_policy_proposal_shows_its_preview(db: Path) -> None:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_policy(
            "initech/hr",
            NamespacePolicyChange(compatibility="FULL_TRANSITIVE"),
            title="Stricter HR",
            actor=actor(ALICE),
        )
    at = proposal_page(db, made.id, BOB)
    assert not at.exception and not at.error
    change = next(t.value for t in at.table if "proposed" in t.value.columns)
    assert list(change["proposed"]) == ["FULL_TRANSITIVE"]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Latest change would be refused"]) >= 1
    assert "Apply" not in button_labels(proposal_page(db, made.id, ALICE))  # a policy needs an admin to apply


def test_an_approval_is_for_the_revision_on_screen(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    with Registry.open(db) as reg:  # alice pushes a new revision while bob reads the first
        reg.proposals.revise(pid, schema=with_field(db, "otherNote"), actor=actor(ALICE))
    at.button(key="prop_approve").click().run()
    assert not at.exception
    assert f"Nothing was done: proposal #{pid} is at revision 2, newer than revision 1 (the one reviewed)" in said(at)
    assert "revision 2 of 2" in said(at)
    with Registry.open(db) as reg:
        assert reg.proposals.get(pid).approvals == ()


def test_without_an_id_the_page_points_to_the_list(db: Path) -> None:
    at = proposal_page(db, None, BOB)
    assert not at.exception
    assert "No proposal chosen: open one from the Proposals page." in said(at)
    assert [link.label for link in at.main.page_link] == ["Proposals"]


def test_an_admin_applies_a_policy_proposal_once_approved(db: Path) -> None:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_policy(
            "initech/hr", NamespacePolicyChange(compatibility="FULL"), title="Full HR", actor=actor(ALICE)
        )
        reg.proposals.approve(made.id, actor=actor(BOB))
    at = proposal_page(db, made.id, OPS)
    at.button(key="prop_apply").click().run()
    assert not at.exception and not at.error
    assert f"#{made.id} was applied: the policies of initech/hr are saved." in said(at)
    with Registry.open(db) as reg:
        assert str(reg.namespace_policy("initech/hr").compatibility) == "FULL"
