"""A proposal's rebase replays its change on the latest version (registry/proposals/_rebase.py): what someone
else stored meanwhile stays, and where both changed the same part differently the rebase is refused, naming it,
with nothing written. As sequences (propose on v13, v14 by someone else, rebase, apply), and per schema kind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from registry import (
    Actor,
    InvalidArgumentError,
    NamespacePolicyChange,
    ProposalState,
    RebaseConflictError,
    Registry,
    Role,
    SchemaInfo,
    SchemaType,
    StaleProposalError,
    parse_protobuf_native,
    to_protobuf_native_data,
)
from registry._schema_data import to_schema_data
from registry.proposals._rebase import merge_schemas
from schemas import PB_INT32, PB_INT64, PB_STRING, kv, protobuf_native

NS = "acme/shop"
TOPIC = f"persistent://{NS}/orders"
ALICE = Actor("alice", Role.PRODUCER)
BOB = Actor("bob", Role.PRODUCER)
DAVE = Actor("dave", Role.PRODUCER)


def opt(name: str, default: Any = None, kind: Any = None) -> dict[str, Any]:
    return {"name": name, "type": kind or ["null", "string"], "default": default}


def order(*fields: dict[str, Any], name: str = "Order") -> SchemaInfo:
    doc = {"type": "record", "name": name, "namespace": "com.acme", "fields": [{"name": "id", "type": "string"}]}
    doc["fields"] += list(fields)
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


def names(info: SchemaInfo) -> list[str]:
    return [f["name"] for f in json.loads(info.text)["fields"]]


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    """orders at version 13: fields f1..f13 added one version at a time."""
    with Registry.open(tmp_path / "r.db", create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.set_namespace_policy(NS, compatibility="BACKWARD")
        for n in range(14):
            reg.register(TOPIC, order(*(opt(f"f{i}") for i in range(1, n + 1))))
        assert reg.history(TOPIC)[-1].version == 13
        yield reg


V13 = [opt(f"f{i}") for i in range(1, 14)]


def test_a_rebase_keeps_what_another_person_stored_meanwhile_and_apply_stores_both(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, order(*V13, opt("giftWrap")), title="gift wrap", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    assert reg.register(TOPIC, order(*V13, opt("promoCode"))).version == 14  # dave, meanwhile
    with pytest.raises(StaleProposalError):
        reg.proposals.apply(made.id, actor=ALICE)
    rebased = reg.proposals.rebase(made.id, actor=ALICE)
    assert (rebased.revision.number, rebased.base_version, rebased.state) == (2, 14, ProposalState.OPEN)
    assert rebased.revision.schema is not None
    assert names(rebased.revision.schema)[-2:] == ["giftWrap", "promoCode"]  # placed after f13, as proposed
    review = reg.proposals.review(made.id)
    assert review.diff is not None and [(c.kind, c.path) for c in review.diff.changes] == [
        ("FIELD_ADDED", "giftWrap")
    ]  # against the new base, the proposal still only adds its field
    reg.proposals.approve(made.id, actor=BOB)
    applied = reg.proposals.apply(made.id, actor=ALICE)
    stored = json.loads(reg.history(TOPIC)[-1].data)
    assert applied.applied_version == 15 and {"giftWrap", "promoCode"} <= {f["name"] for f in stored["fields"]}


@pytest.mark.parametrize(
    ("proposed", "meanwhile", "named"),
    [
        (opt("f3", "a", ["string", "null"]), opt("f3", "b", ["string", "null"]), "field com.acme.Order.f3 (default)"),
        (
            opt("f3", None, ["null", {"type": "array", "items": "long"}]),
            opt("f3", None, ["null", {"type": "array", "items": "double"}]),
            "f3 (type), branch array",
        ),
        ({"name": "f3", "type": "long", "default": 1}, {"name": "f3", "type": "double", "default": 1.5}, "f3"),
    ],
)
def test_both_changing_one_field_differently_is_refused_naming_it_and_nothing_is_written(
    reg: Registry, proposed: dict[str, Any], meanwhile: dict[str, Any], named: str
) -> None:
    def fields(f3: dict[str, Any]) -> list[dict[str, Any]]:
        return [f3 if f["name"] == "f3" else f for f in V13]

    made = reg.proposals.propose_schema(TOPIC, order(*fields(proposed)), title="f3", actor=ALICE)
    reg.set_namespace_policy(NS, compatibility="ALWAYS_COMPATIBLE")
    reg.register(TOPIC, order(*fields(meanwhile)))
    with pytest.raises(RebaseConflictError, match="proposal #1 and version 14 both changed") as refused:
        reg.proposals.rebase(made.id, actor=ALICE)
    assert named in str(refused.value)
    after = reg.proposals.get(made.id)
    assert len(after.revisions) == 1 and after.revision.schema == made.revision.schema


def test_the_same_change_on_both_sides_is_no_conflict(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, order(*V13, opt("note")), title="note", actor=ALICE)
    reg.register(TOPIC, order(*V13, opt("note"), opt("other")))
    rebased = reg.proposals.rebase(made.id, actor=ALICE)
    assert rebased.revision.schema is not None and names(rebased.revision.schema)[-2:] == ["note", "other"]


def test_a_proposal_for_a_new_topic_cannot_be_rebased_onto_someone_else_s_first_version(reg: Registry) -> None:
    topic = f"persistent://{NS}/fresh"
    made = reg.proposals.propose_schema(topic, order(), title="first", actor=ALICE)
    reg.register(topic, order(opt("x")))
    with pytest.raises(RebaseConflictError, match="no live schema"):
        reg.proposals.rebase(made.id, actor=ALICE)


# --- the merge per schema kind ------------------------------------------------------------------------------------


def data(info: SchemaInfo) -> Any:
    return to_schema_data(info)


def merged(base: SchemaInfo, ours: SchemaInfo, theirs: SchemaInfo) -> SchemaInfo:
    result = merge_schemas(data(base), data(ours), data(theirs), "the proposal and the latest")
    to_schema_data(result)  # a valid schema
    return result


def record(fields: list[dict[str, Any]], **extra: Any) -> SchemaInfo:
    doc = {"type": "record", "name": "R", "namespace": "n", "fields": fields, **extra}
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


def status(*symbols: str) -> dict[str, Any]:
    return {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": list(symbols)}}


def test_enum_symbols_added_and_removed_on_both_sides_merge() -> None:
    result = merged(
        record([status("A", "B", "C")]), record([status("A", "C", "D")]), record([status("A", "B", "C", "E")])
    )
    assert json.loads(result.text)["fields"][0]["type"]["symbols"] == ["A", "C", "D", "E"]


def test_union_branches_merge_and_nested_records_merge_by_full_name() -> None:
    address = {"type": "record", "name": "Address", "fields": [{"name": "street", "type": "string"}]}
    base = record([{"name": "to", "type": address}, {"name": "x", "type": ["null", "string"], "default": None}])
    ours_address = {**address, "fields": [*address["fields"], opt("zip")]}
    ours = record(
        [{"name": "to", "type": ours_address}, {"name": "x", "type": ["null", "string", "int"], "default": None}]
    )
    theirs_address = {**address, "fields": [*address["fields"], opt("city")], "doc": "where it goes"}
    theirs = record(
        [
            {"name": "to", "type": theirs_address},
            {"name": "x", "type": ["null", "string", "long"], "default": None},
            {"name": "back", "type": ["null", "n.Address"], "default": None},
        ]
    )
    doc = json.loads(merged(base, ours, theirs).text)
    to = doc["fields"][0]["type"]
    assert [f["name"] for f in to["fields"]] == ["street", "zip", "city"] and to["doc"] == "where it goes"
    assert doc["fields"][1]["type"] == ["null", "string", "int", "long"]
    assert doc["fields"][2] == {"name": "back", "type": ["null", "n.Address"], "default": None}


def test_a_nested_record_changed_by_one_side_and_dropped_by_the_other_is_a_conflict() -> None:
    address = {"type": "record", "name": "Address", "fields": [{"name": "street", "type": "string"}]}
    base = record([{"name": "to", "type": address}])
    ours = record([{"name": "to", "type": {**address, "fields": [*address["fields"], opt("zip")]}}])
    theirs = record([opt("note")])
    with pytest.raises(RebaseConflictError, match="n.Address"):
        merged(base, ours, theirs)


def test_a_default_the_merge_would_make_wrong_is_a_conflict() -> None:
    inner = {"type": "record", "name": "Inner", "fields": [{"name": "a", "type": "int"}]}
    base = record([{"name": "x", "type": inner, "default": {"a": 1}}])
    retyped = {**inner, "fields": [{"name": "a", "type": "string"}]}
    ours = record([{"name": "x", "type": retyped, "default": {"a": "1"}}])
    theirs = record(
        [{"name": "x", "type": inner, "default": {"a": 1}}, {"name": "y", "type": "n.Inner", "default": {"a": 5}}]
    )
    with pytest.raises(RebaseConflictError, match=r"field y \(its default does not fit its type as merged\)"):
        merged(base, ours, theirs)


def test_json_schemas_merge_like_avro_and_properties_merge_one_by_one() -> None:
    def js(fields: list[dict[str, Any]], **props: str) -> SchemaInfo:
        return SchemaInfo(type=SchemaType.JSON, schema=record(fields).text, properties=props)

    result = merged(
        js([opt("a")], owner="x"), js([opt("a"), opt("b")], owner="x", team="t"), js([opt("a"), opt("c")], owner="y")
    )
    assert result.type is SchemaType.JSON and [f["name"] for f in json.loads(result.text)["fields"]] == ["a", "b", "c"]
    assert result.properties == {"owner": "y", "team": "t"}
    with pytest.raises(RebaseConflictError, match="schema property 'owner'"):
        merged(js([], owner="x"), js([], owner="y"), js([], owner="z"))


def test_key_value_merges_its_key_and_value_parts() -> None:
    def part(*fields: dict[str, Any]) -> str:
        return record(list(fields)).text

    result = merged(
        kv(part(opt("k")), part(opt("v"))),
        kv(part(opt("k"), opt("k2")), part(opt("v"))),
        kv(part(opt("k")), part(opt("v"), opt("v2"))),
    )
    doc = json.loads(result.text)
    assert [f["name"] for f in doc["key"]["fields"]] == ["k", "k2"]
    assert [f["name"] for f in doc["value"]["fields"]] == ["v", "v2"]
    with pytest.raises(RebaseConflictError, match="the value part: field n.R.v"):
        merged(*(kv(None, part(opt("v", d, ["string", "null"])), SchemaType.STRING) for d in "xyz"))


def test_primitive_schemas_are_taken_whole_only_when_one_side_changed() -> None:
    string = SchemaInfo(type=SchemaType.STRING, schema="")
    assert merged(string, string, SchemaInfo(type=SchemaType.INT64, schema="")).type is SchemaType.INT64
    with pytest.raises(RebaseConflictError, match="the schema type"):
        merged(string, SchemaInfo(type=SchemaType.INT32, schema=""), SchemaInfo(type=SchemaType.INT64, schema=""))


def fields_of(info: SchemaInfo, message: str = "Order") -> dict[str, tuple[int, int]]:
    schema = parse_protobuf_native(info.text.encode())
    found = {}
    for m in schema.file_set.file[0].message_type:
        if m.name == message:
            found = {f.name: (f.number, f.type) for f in m.field}
    return found


def test_protobuf_messages_merge_field_by_field() -> None:
    base = protobuf_native({"Order": [("id", 1, PB_STRING)], "Item": [("sku", 1, PB_STRING)]}, "Order")
    ours = protobuf_native(
        {"Order": [("id", 1, PB_STRING), ("gift", 2, PB_STRING)], "Item": [("sku", 1, PB_STRING)]}, "Order"
    )
    theirs = protobuf_native(
        {
            "Order": [("id", 1, PB_STRING), ("promo", 3, PB_STRING)],
            "Item": [("sku", 1, PB_STRING), ("qty", 2, PB_INT32)],
        },
        "Order",
    )
    result = merged(base, ours, theirs)
    assert fields_of(result) == {"id": (1, PB_STRING), "gift": (2, PB_STRING), "promo": (3, PB_STRING)}
    assert fields_of(result, "Item") == {"sku": (1, PB_STRING), "qty": (2, PB_INT32)}


def test_protobuf_conflicts_name_the_field() -> None:
    base = protobuf_native({"Order": [("id", 1, PB_STRING), ("n", 2, PB_INT32)]}, "Order")
    ours = protobuf_native({"Order": [("id", 1, PB_STRING), ("n", 2, PB_INT64)]}, "Order")
    theirs = protobuf_native({"Order": [("id", 1, PB_STRING), ("n", 2, PB_STRING)]}, "Order")
    with pytest.raises(RebaseConflictError, match=r"proto\.Order\.n \(type\)"):
        merged(base, ours, theirs)
    twice = protobuf_native({"Order": [("id", 1, PB_STRING), ("n", 2, PB_INT32), ("x", 3, PB_STRING)]}, "Order")
    again = protobuf_native({"Order": [("id", 1, PB_STRING), ("n", 2, PB_INT32), ("x", 4, PB_STRING)]}, "Order")
    with pytest.raises(RebaseConflictError, match="Order.x"):
        merged(base, twice, again)


def test_the_diff_between_two_revisions_defaults_to_previous_and_current(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, order(*V13, opt("a")), title="a", actor=ALICE)
    alone = reg.proposals.diff(made.id)
    assert (alone.from_revision, alone.to_revision) == (1, 1) and alone.diff is not None and not alone.diff.changes
    reg.proposals.revise(made.id, schema=order(*V13, opt("a"), opt("b")), actor=ALICE)
    reg.proposals.revise(made.id, schema=order(*V13, opt("b")), actor=ALICE)
    last = reg.proposals.diff(made.id)
    assert (last.from_revision, last.to_revision, last.from_base, last.to_base) == (2, 3, 13, 13)
    assert last.diff is not None and [(c.kind, c.path) for c in last.diff.changes] == [("FIELD_REMOVED", "a")]
    first = reg.proposals.diff(made.id, from_revision=1, to_revision=3)
    assert first.diff is not None and {(c.kind, c.path) for c in first.diff.changes} >= {
        ("FIELD_REMOVED", "a"),
        ("FIELD_ADDED", "b"),
    }
    with pytest.raises(InvalidArgumentError, match="has no revision 4"):
        reg.proposals.diff(made.id, to_revision=4)
    policy = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="p", actor=ALICE)
    reg.proposals.revise(
        policy.id, policy=NamespacePolicyChange(compatibility="FULL", validation_enforced=True), actor=ALICE
    )
    assert reg.proposals.diff(policy.id).policy_fields == ("validation_enforced",)


def native(build: Any) -> SchemaInfo:
    """A PROTOBUF_NATIVE schema of one proto3 file `build` fills in (package acme, root acme.Order)."""
    file = descriptor_pb2.FileDescriptorProto(name="o.proto", package="acme", syntax="proto3")
    build(file)
    data = to_protobuf_native_data(descriptor_pb2.FileDescriptorSet(file=[file]), "acme.Order", "o.proto")
    return SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=data)


def order_message(
    file: Any, *extra: tuple[str, int], status: tuple[str, ...] = ("NEW",), item: tuple[str, ...] = ()
) -> None:
    label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    message = file.message_type.add(name="Order")
    message.field.add(name="id", number=1, type=PB_STRING, label=label)
    for name, number in extra:
        message.field.add(name=name, number=number, type=PB_STRING, label=label, oneof_index=0)
    if extra:
        message.oneof_decl.add(name="contact")
    nested = message.nested_type.add(name="Item")
    nested.field.add(name="sku", number=1, type=PB_STRING, label=label)
    for number, name in enumerate(item, start=2):
        nested.field.add(name=name, number=number, type=PB_INT32, label=label)
    enum = file.enum_type.add(name="Status")
    for number, name in enumerate(status):
        enum.value.add(name=name, number=number)


def test_protobuf_nested_messages_enums_and_oneofs_merge() -> None:
    base = native(lambda f: order_message(f))
    ours = native(lambda f: order_message(f, ("email", 5), item=("qty",), status=("NEW", "PAID")))
    theirs = native(lambda f: order_message(f, ("phone", 6), status=("NEW", "SHIPPED")))
    schema = parse_protobuf_native(merged(base, ours, theirs).text.encode())
    file = schema.file_set.file[0]
    order = file.message_type[0]
    assert [(f.name, f.number) for f in order.field] == [("id", 1), ("email", 5), ("phone", 6)]
    assert [o.name for o in order.oneof_decl] == ["contact"] and {f.oneof_index for f in order.field[1:]} == {0}
    assert [f.name for f in order.nested_type[0].field] == ["sku", "qty"]
    assert [v.name for v in file.enum_type[0].value] == ["NEW", "PAID", "SHIPPED"]
    with pytest.raises(RebaseConflictError, match=r"both changed acme\.Status\.PAID"):
        clash = native(lambda f: order_message(f, status=("NEW", "SHIPPED", "PAID")))
        merged(base, ours, clash)


def _histories() -> list[list[Path]]:
    """The sample registry's Avro-text histories, each version file in order."""
    root = Path(__file__).resolve().parents[2] / "sample_data" / "schemas"
    found = []
    for topic in sorted({p.parent for p in root.rglob("v*.*") if p.suffix in (".avsc", ".json")}):
        texts = [p for p in topic.glob("v*.*") if p.suffix in (".avsc", ".json") and p.stem[1:].isdigit()]
        texts.sort(key=lambda p: int(p.stem[1:]))
        if len(texts) > 1:
            found.append(texts)
    return found


def test_one_side_s_change_alone_comes_through_the_merge_whole_for_every_sample_history() -> None:
    """The merge's plain form and its JSON lose nothing: replaying a change on an untouched base gives the
    changed schema, as Avro's Schema.equals compares (docs and aliases too), for each step of each history."""
    from registry._three_way import Merger
    from registry.avro._merge import merge_avro
    from registry.avro._nodes import Named, walk
    from registry.avro._schema import parse_avro

    def named(schema: Any) -> dict[str, Any]:
        return {n.fullname: (n.doc, sorted(n.aliases)) for n in walk(schema.root) if isinstance(n, Named)}

    steps = 0
    for history in _histories():
        parsed = []
        for path in history:
            try:
                parsed.append(parse_avro(path.read_text(encoding="utf-8")))
            except ValueError:
                break  # not Avro text (a JSON schema in Jackson's form)
        for old, new in zip(parsed, parsed[1:], strict=False):
            for ours, theirs in ((new, old), (old, new)):
                merger = Merger()
                result = parse_avro(merge_avro(old, ours, theirs, merger))
                assert not merger.conflicts and result == new and named(result) == named(new)
                steps += 1
    assert steps > 50


def test_one_side_s_protobuf_change_alone_comes_through_the_merge_for_every_sample_history() -> None:
    """The same for the sample registry's PROTOBUF_NATIVE histories, compared as `.proto` text."""
    import tomllib

    from registry._three_way import Merger
    from registry.protobuf._merge import merge_protobuf_native
    from registry.protobuf._proto_text import proto_text

    root = Path(__file__).resolve().parents[2] / "sample_data"
    manifest = tomllib.loads((root / "manifest.toml").read_text(encoding="utf-8"))
    histories: dict[str, list[Any]] = {}
    for topic in manifest["topics"]:
        for step in topic.get("steps", []):
            if step.get("type") == "PROTOBUF_NATIVE":
                file_set = descriptor_pb2.FileDescriptorSet.FromString(
                    (root / "schemas" / step["register"]).read_bytes()
                )
                data = to_protobuf_native_data(file_set, step["root_message"], step["root_file"])
                histories.setdefault(topic["name"], []).append(parse_protobuf_native(data.encode()))
    steps = 0
    for versions in histories.values():
        for old, new in zip(versions, versions[1:], strict=False):
            for ours, theirs in ((new, old), (old, new)):
                merger = Merger()
                result = parse_protobuf_native(merge_protobuf_native(old, ours, theirs, merger).encode())
                assert not merger.conflicts and proto_text(result) == proto_text(new)
                steps += 1
    assert steps >= 20
