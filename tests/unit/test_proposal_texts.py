"""What people type into a proposal, and who they are (issue 40): texts that show nothing are refused, a
comment's path is a JSON pointer that resolves in the candidate, and one person under two spellings (`alice`,
`Alice`, Cyrillic `аlice`, a decomposed `alicé`) is one person, who never approves their own proposal."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, NS, OPS, TOPIC, avro, proposal_registry
from registry import (
    Actor,
    InvalidArgumentError,
    NamespacePolicyChange,
    PermissionDeniedError,
    ProposalState,
    Registry,
    ReviewRules,
    Role,
    SchemaInfo,
    SchemaType,
    comment_paths,
    key_value_schema_info,
    name_clash,
    person_key,
    same_person,
)
from registry._text import blank
from schemas import PB_INT64, pn_test

# What shows nothing: zero-width space and word joiner, BOM, the Hangul fillers, the Mongolian vowel separator,
# a bidi override, a variation selector, a tag character, a soft hyphen, the braille blank, and a mixture.
INVISIBLE = [
    "\u200b",
    "\u2060",
    "\ufeff",
    "\u3164",
    "\u115f",
    "\u1160",
    "\uffa0",
    "\u180e",
    "\u202e",
    "\ufe0f",
    "\U000e0041",
    "\u00ad",
    "\u2800",
    " \u200b\u200d\u2066 \u3000",
]


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with proposal_registry(tmp_path / "r.db") as reg:
        yield reg


# --- texts that show nothing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("nothing", INVISIBLE, ids=[f"U+{ord(t.strip()[0]):04X}" for t in INVISIBLE])
def test_every_required_text_that_shows_nothing_is_refused_naming_it(reg: Registry, nothing: str) -> None:
    assert blank(nothing)
    with pytest.raises(InvalidArgumentError, match="the title shows nothing"):
        reg.proposals.propose_schema(TOPIC, avro("a"), title=nothing, actor=ALICE)
    assert reg.proposals.list() == []
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="Add a", actor=ALICE)
    before = reg.proposals.get(made.id)
    steps = [
        ("the comment", lambda: reg.proposals.comment(made.id, nothing, actor=BOB)),
        ("the reason for rejecting", lambda: reg.proposals.reject(made.id, nothing, actor=BOB)),
        ("the override reason", lambda: reg.proposals.apply(made.id, override_reason=nothing, actor=OPS)),
        ("the person's name", lambda: reg.proposals.approve(made.id, actor=Actor(nothing, Role.PRODUCER))),
    ]
    for field, step in steps:
        with pytest.raises(InvalidArgumentError, match=field):
            step()
    with pytest.raises(InvalidArgumentError, match="a reviewer's name"):
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, reviewers=("bob", nothing)), actor=OPS)
    assert reg.proposals.get(made.id) == before
    assert reg.history(TOPIC)[-1].version == 0


def test_a_text_with_an_invisible_character_inside_a_visible_one_is_kept(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="Add\u200b a", description="\u200b", actor=ALICE)
    assert (made.title, made.description) == ("Add\u200b a", "\u200b")  # a description may be empty
    note = reg.proposals.comment(made.id, "\u3164 ok", actor=BOB)
    assert note.text == "\u3164 ok"


# --- a comment's path -------------------------------------------------------------------------------------------


def test_a_comment_path_is_a_pointer_that_resolves_in_the_candidate(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note", extra={"a/b~c": {"x": 1}}), title="Add a note", actor=ALICE)
    for path in ("/fields/1", "/fields/1/type/1", "/name", "/a~1b~0c/x", ""):
        assert reg.proposals.comment(made.id, "here", path=path, actor=BOB).path == path
    before = reg.proposals.get(made.id)
    refused = {
        "/fields/1\n\n![x](https://evil.example/x.png) [click](https://evil.example)": "U+000A at index 9",
        "/fields/1\t": "U+0009",
        "/fields/\u202e1": "U+202E",
        "fields/1": "is not a JSON pointer",
        "/fields/2": "/fields is a list of 2",
        "/fields/01": "without index '01'",
        "/fields/1/name/x": "/fields/1/name is a value",
        "/nope": "nothing named 'nope' at /",
        "/a~2b": "'~' not followed by 0 or 1",
        "/" + "x" * 1000: "at most 1,000",
    }
    for path, says in refused.items():
        with pytest.raises(InvalidArgumentError, match="the comment's path") as caught:
            reg.proposals.comment(made.id, "here", path=path, actor=BOB)
        assert says in str(caught.value)
    assert reg.proposals.get(made.id) == before


def test_a_path_is_checked_against_the_current_revision(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a", "b"), title="Add two", actor=ALICE)
    assert reg.proposals.comment(made.id, "b?", path="/fields/2", actor=BOB).path == "/fields/2"
    reg.proposals.revise(made.id, schema=avro("a"), actor=ALICE)
    with pytest.raises(InvalidArgumentError, match="revision 2"):
        reg.proposals.comment(made.id, "b?", path="/fields/2", actor=BOB)


def test_the_pickers_paths_are_pointers_a_comment_may_name(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note", "gift"), title="Add two", actor=ALICE)
    offered = comment_paths(reg.proposals.get(made.id), reg.proposals.review(made.id))
    assert offered == {"/fields/1": "note", "/fields/2": "gift"}
    for pointer in offered:
        assert reg.proposals.comment(made.id, "ok", path=pointer, actor=BOB).path == pointer


def test_the_picker_names_a_place_only_an_advisory_points_at_by_its_field(reg: Registry) -> None:
    """An unchanged field with an invalid default: only the advisory names its pointer, and the picker shows the
    field's name there, as for the changes (never the rule's code)."""
    topic = f"persistent://{NS}/counted"

    def counted(*extra: str) -> SchemaInfo:
        fields = [{"name": "count", "type": "int", "default": "x"}]
        fields += [{"name": name, "type": ["null", "string"], "default": None} for name in extra]
        return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps({"type": "record", "name": "R", "fields": fields}))

    reg.register(topic, counted())
    made = reg.proposals.propose_schema(topic, counted("gift"), title="Add gift", actor=ALICE)
    review = reg.proposals.review(made.id)
    assert review.what_if is not None and [a.path for a in review.what_if.advisories] == ["/fields/0"]
    assert comment_paths(reg.proposals.get(made.id), review) == {"/fields/1": "gift", "/fields/0": "count"}


def test_the_pickers_pointers_into_protobuf_native_and_key_value_candidates_resolve(reg: Registry) -> None:
    native, pair = f"persistent://{NS}/native", f"persistent://{NS}/pair"
    reg.register(native, pn_test())
    reg.register(pair, key_value_schema_info(avro("k"), avro("v")))
    changed = reg.proposals.propose_schema(native, pn_test(int_type=PB_INT64), title="wider", actor=ALICE)
    offered = comment_paths(reg.proposals.get(changed.id), reg.proposals.review(changed.id))
    assert offered == {"/messages/proto.TestMessage/fields/6": "proto.TestMessage.intField"}
    wider = reg.proposals.propose_schema(pair, key_value_schema_info(avro("k"), avro("v", "w")), title="w", actor=ALICE)
    assert comment_paths(reg.proposals.get(wider.id), reg.proposals.review(wider.id)) == {"/value/fields/2": "value.w"}
    for made, offers in ((changed, offered), (wider, {"/value/fields/2": ""})):
        for pointer in offers:
            assert reg.proposals.comment(made.id, "ok", path=pointer, actor=BOB).path == pointer


def test_pointers_into_protobuf_native_key_value_and_policy_candidates(reg: Registry) -> None:
    native = f"persistent://{NS}/native"
    proposal = reg.proposals.propose_schema(native, pn_test(), title="p", actor=ALICE)
    root = json.loads(pn_test().schema)["rootMessageTypeName"]
    for path in ("/rootMessageTypeName", f"/messages/{root}/fields/6"):
        assert reg.proposals.comment(proposal.id, "ok", path=path, actor=BOB).path == path
    with pytest.raises(InvalidArgumentError, match="nothing named '99'"):
        reg.proposals.comment(proposal.id, "ok", path=f"/messages/{root}/fields/99", actor=BOB)

    kv = key_value_schema_info(avro("k"), avro("v", "w"))
    pair = reg.proposals.propose_schema(f"persistent://{NS}/pair", kv, title="kv", actor=ALICE)
    assert reg.proposals.comment(pair.id, "ok", path="/value/fields/2", actor=BOB).path == "/value/fields/2"
    with pytest.raises(InvalidArgumentError, match="/key/fields is a list of 2"):
        reg.proposals.comment(pair.id, "ok", path="/key/fields/2", actor=BOB)

    policy = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="full", actor=OPS)
    assert comment_paths(reg.proposals.get(policy.id), reg.proposals.review(policy.id)) == {
        "/compatibility": "compatibility"
    }
    assert reg.proposals.comment(policy.id, "ok", path="/compatibility", actor=BOB).path == "/compatibility"
    with pytest.raises(InvalidArgumentError, match="nothing named 'retention'"):
        reg.proposals.comment(policy.id, "ok", path="/retention", actor=BOB)

    string = reg.proposals.propose_schema(f"persistent://{NS}/text", SchemaInfo(type="STRING"), title="s", actor=ALICE)
    assert reg.proposals.comment(string.id, "ok", path="", actor=BOB).path == ""
    with pytest.raises(InvalidArgumentError, match="nothing named 'type'"):
        reg.proposals.comment(string.id, "ok", path="/type", actor=BOB)


# --- one person, many spellings ---------------------------------------------------------------------------------

SPELLINGS = ["Alice", "ALICE", "\u0430lice", "\u0410LICE", "ali\u200bce", "\uff41\uff4c\uff49\uff43\uff45"]


def test_names_that_look_alike_are_one_person() -> None:
    for spelling in SPELLINGS:
        assert same_person("alice", spelling) and person_key(spelling) == person_key("alice"), spelling
    decomposed, composed = unicodedata.normalize("NFD", "alicé"), unicodedata.normalize("NFC", "alicé")
    assert decomposed != composed and same_person(decomposed, composed)
    assert not same_person("alice", "alicé") and not same_person("alice", "alice2") and not same_person("bob", "rob")
    assert same_person("b0b", "bob") and same_person("rn", "m")  # UTS #39's skeleton: 0 → O, m → rn


def test_a_list_of_names_is_refused_naming_both_spellings_of_one_person_or_the_reserved_name() -> None:
    assert name_clash(["alice", "bob", "carol"]) is None
    clash = name_clash(["alice", "bob", "\u0430lice"])
    assert clash is not None and "'alice' and '\u0430lice' are one person" in clash
    for nothing in ("\u3164", "\u200b\u2060"):
        said = name_clash(["alice", nothing])
        assert said is not None and "shows nothing" in said
    for reserved in ("anonymous", "Anonymous", "an\u043enymous"):  # the last with a Cyrillic о
        said = name_clash(["alice", reserved])
        assert said is not None and "is reserved" in said and repr(reserved) in said


@pytest.mark.parametrize("spelling", [*SPELLINGS, unicodedata.normalize("NFD", "alicé")])
def test_the_author_under_another_spelling_never_approves_their_own_proposal(reg: Registry, spelling: str) -> None:
    author = unicodedata.normalize("NFC", "alicé") if "\u0301" in spelling else "alice"
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="Add a", actor=Actor(author, Role.PRODUCER))
    with pytest.raises(PermissionDeniedError, match="never reviews their own"):
        reg.proposals.approve(made.id, actor=Actor(spelling, Role.PRODUCER))
    with pytest.raises(PermissionDeniedError, match="withdraw it instead"):
        reg.proposals.reject(made.id, "no", actor=Actor(spelling, Role.PRODUCER))
    assert reg.proposals.get(made.id).approvals == ()
    assert reg.proposals.withdraw(made.id, actor=Actor(spelling, Role.PRODUCER)).state is ProposalState.WITHDRAWN


def test_one_reviewer_under_two_spellings_counts_once_and_is_a_named_reviewer(reg: Registry) -> None:
    rules = reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, reviewers=("Bob", "carol", "BOB")), actor=OPS)
    assert rules.reviewers == ("Bob", "carol")  # one person named twice is one reviewer
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="Add a", actor=ALICE)
    reg.proposals.approve(made.id, actor=Actor("bob", Role.PRODUCER))  # `Bob` in the rules is bob
    again = reg.proposals.approve(made.id, actor=Actor("B\u041eB", Role.PRODUCER))  # Cyrillic О: bob once more
    assert again.approvers == ("bob",) and again.state is ProposalState.OPEN
    done = reg.proposals.approve(made.id, actor=Actor("Carol", Role.PRODUCER))
    assert done.state is ProposalState.APPROVED and done.approvers == ("bob", "Carol")
