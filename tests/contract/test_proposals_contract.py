"""Schema change proposals, one behaviour everywhere: the same sequence through the embedded facade and through
`registry.open(url)` over a live `serve` (with one token per person) gives the same answers, and the REST routes
answer with the issue's status codes. Also two servers on one PostgreSQL database: proposed on one, approved
and applied on the other; and two applies racing each other and a direct register, over REST and on one file."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

import registry
from registry import (
    Actor,
    ApprovalsMissingError,
    NamespacePolicyChange,
    PermissionDeniedError,
    ProposalNotFoundError,
    Registry,
    ReviewRules,
    Role,
    SchemaInfo,
    SchemaRegistry,
    SchemaType,
    StaleProposalError,
    to_json,
)
from serving import served

NS = "acme/reviews"
TOPIC = f"persistent://{NS}/orders"
TOKENS = {
    "alice": ("producer", "alice-token-0123456789abcdef0123456789"),
    "bob": ("producer", "bob-token-0123456789abcdef0123456789ab"),
    "ops": ("admin", "ops-token-0123456789abcdef0123456789abc"),
    "victor": ("viewer", "victor-token-0123456789abcdef0123456789"),
}
ACTORS = {name: Actor(name, Role(role)) for name, (role, _) in TOKENS.items()}


def avro(*fields: str) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}]
        + [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


def _prepare(reg: SchemaRegistry) -> None:
    reg.create_tenant("acme")
    reg.create_namespace(NS)
    reg.set_namespace_policy(NS, compatibility="BACKWARD")
    reg.register(TOPIC, avro())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("proposals")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({name: {"role": role, "token": token} for name, (role, token) in TOKENS.items()}))
    db = folder / "registry.db"
    with Registry.open(db, create=True) as reg:
        _prepare(reg)
    with served(db, log_dir=folder, env={"SCHEMA_EXPLORER_TOKENS": str(tokens.read_text())}) as url:
        yield url


@pytest.fixture(scope="module")
def people(server: str) -> Iterator[dict[str, SchemaRegistry]]:
    """One remote handle per person (their token names them); and the embedded twin under "embedded"."""
    with ExitStack() as stack:
        handles: dict[str, SchemaRegistry] = {
            name: stack.enter_context(registry.open(server, token=token)) for name, (_, token) in TOKENS.items()
        }
        twin = stack.enter_context(Registry.in_memory())
        _prepare(twin)
        handles["embedded"] = twin
        yield handles


def normalised(value: Any) -> Any:
    """The JSON of an answer without the moments it was made at (the two registries ran at other times)."""
    doc = to_json(value)

    def blank(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: 0 if k in ("at", "created_at", "updated_at", "timestamp") else blank(v) for k, v in item.items()}
        if isinstance(item, list):
            return [blank(v) for v in item]
        return item

    return blank(doc)


def both(people: dict[str, SchemaRegistry], who: str, call: Callable[[SchemaRegistry, Actor], Any]) -> Any:
    """`call` as `who` on the embedded twin and remotely; the answers (or errors) must be the same."""
    outcomes = []
    for handle in (people["embedded"], people[who]):
        try:
            outcomes.append(("ok", normalised(call(handle, ACTORS[who]))))
        except registry.RegistryError as exc:
            outcomes.append(("error", type(exc).__name__))
    assert outcomes[1] == outcomes[0], outcomes
    return outcomes[0]


def test_the_whole_sequence_answers_alike(people: dict[str, SchemaRegistry]) -> None:
    made = both(
        people, "alice", lambda r, a: r.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=a)
    )
    pid = made[1]["id"]
    assert made[1]["state"] == "open" and made[1]["author"] == "alice"
    assert both(people, "alice", lambda r, a: r.proposals.approve(pid, actor=a)) == ("error", "PermissionDeniedError")
    assert both(people, "victor", lambda r, a: r.proposals.approve(pid, actor=a)) == ("error", "PermissionDeniedError")
    both(people, "victor", lambda r, a: r.proposals.comment(pid, "why nullable?", path="/fields/1", actor=a))
    both(people, "alice", lambda r, a: r.proposals.review(pid))
    assert both(people, "alice", lambda r, a: r.proposals.apply(pid, actor=a)) == ("error", "ApprovalsMissingError")
    approved = both(people, "bob", lambda r, a: r.proposals.approve(pid, actor=a))
    assert approved[1]["state"] == "approved" and approved[1]["approvers"] == ["bob"]
    applied = both(people, "alice", lambda r, a: r.proposals.apply(pid, actor=a))
    assert applied[1]["state"] == "applied" and applied[1]["applied_version"] == 1
    both(people, "alice", lambda r, a: [(v.version, v.data.decode()) for v in r.history(TOPIC)])
    both(people, "victor", lambda r, a: r.proposals.list(topic=TOPIC))
    counts = both(people, "victor", lambda r, a: r.proposals.counts())[1]
    assert counts == {"open": 0, "approved": 0, "applied": 1, "rejected": 0, "withdrawn": 0, "stale": 0}


def test_stale_then_rebase_and_a_policy_proposal_answer_alike(people: dict[str, SchemaRegistry]) -> None:
    made = both(people, "alice", lambda r, a: r.proposals.propose_schema(TOPIC, avro("note", "x"), title="x", actor=a))
    pid = made[1]["id"]
    both(people, "bob", lambda r, a: r.proposals.approve(pid, actor=a))
    both(people, "ops", lambda r, a: r.register(TOPIC, avro("note", "direct")))
    assert both(people, "alice", lambda r, a: r.proposals.apply(pid, actor=a)) == ("error", "StaleProposalError")
    assert both(people, "alice", lambda r, a: r.proposals.get(pid))[1]["state"] == "stale"
    rebased = both(people, "alice", lambda r, a: r.proposals.rebase(pid, actor=a))
    assert rebased[1]["revisions"][-1]["base_version"] == 2 and rebased[1]["approvals"] == []
    old = both(people, "bob", lambda r, a: r.proposals.approve(pid, actor=a, revision=1))  # reviewed before rebase
    assert old == ("error", "RevisionChangedError")
    assert both(people, "bob", lambda r, a: r.proposals.get(pid))[1]["approvals"] == []
    policy = both(
        people,
        "bob",
        lambda r, a: r.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="p", actor=a),
    )
    both(people, "alice", lambda r, a: r.proposals.approve(policy[1]["id"], actor=a))
    assert both(people, "bob", lambda r, a: r.proposals.apply(policy[1]["id"], actor=a)) == (
        "error",
        "PermissionDeniedError",
    )
    both(people, "ops", lambda r, a: r.proposals.apply(policy[1]["id"], actor=a))
    both(people, "ops", lambda r, a: r.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=a))
    both(people, "victor", lambda r, a: r.proposals.rules(NS))
    assert both(people, "victor", lambda r, a: r.proposals.counts())[1]["applied"] == 2  # and the open rebased one


def test_a_rebase_merges_and_revisions_diff_alike_and_over_rest(server: str, people: dict[str, SchemaRegistry]) -> None:
    carts = f"persistent://{NS}/carts"
    both(people, "ops", lambda r, a: r.register(carts, avro("a")))
    made = both(
        people, "alice", lambda r, a: r.proposals.propose_schema(carts, avro("a", "gift"), title="gift", actor=a)
    )
    pid = made[1]["id"]
    both(people, "ops", lambda r, a: r.register(carts, avro("a", "promo")))  # someone else, meanwhile
    rebased = both(people, "alice", lambda r, a: r.proposals.rebase(pid, actor=a))
    fields = [f["name"] for f in json.loads(rebased[1]["revisions"][-1]["schema"]["schema"])["fields"]]
    assert fields == ["id", "a", "gift", "promo"]
    diff = both(people, "victor", lambda r, a: r.proposals.diff(pid))[1]
    assert (diff["from_revision"], diff["to_revision"], diff["from_base"], diff["to_base"]) == (1, 2, 0, 1)
    assert [(c["kind"], c["path"]) for c in diff["diff"]["changes"]] == [("FIELD_ADDED", "promo")]
    missing = both(people, "victor", lambda r, a: r.proposals.diff(pid, from_revision=3))
    assert missing == ("error", "InvalidArgumentError")
    headers = {"Authorization": f"Bearer {TOKENS['victor'][1]}"}
    over_rest = httpx.get(f"{server}/explorer/v1/proposals/{pid}/diff?from=1&to=2", headers=headers, timeout=30)
    assert over_rest.status_code == 200 and over_rest.json()["diff"]["changes"][0]["path"] == "promo"
    assert httpx.get(f"{server}/explorer/v1/proposals/{pid}/diff?to=7", headers=headers, timeout=30).status_code == 400
    both(people, "alice", lambda r, a: r.proposals.revise(pid, schema=avro("a", "gift", "promo", "x"), actor=a))
    doc = json.loads(avro("a", "promo").schema)
    doc["fields"].append({"name": "x", "type": ["null", "int"], "default": None})  # x, but another x
    both(people, "ops", lambda r, a: r.register(carts, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))))
    assert both(people, "alice", lambda r, a: r.proposals.rebase(pid, actor=a)) == ("error", "RebaseConflictError")
    alice = {"Authorization": f"Bearer {TOKENS['alice'][1]}"}
    refused = httpx.post(f"{server}/explorer/v1/proposals/{pid}/rebase", headers=alice, timeout=30)
    assert refused.status_code == 409 and "field Order.x" in refused.json()["reason"], refused.text
    assert len(both(people, "victor", lambda r, a: r.proposals.get(pid))[1]["revisions"]) == 3  # nothing written


def test_the_rest_routes_answer_with_the_issue_s_status_codes(server: str, people: dict[str, SchemaRegistry]) -> None:
    def call(who: str, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {TOKENS[who][1]}"}
        return httpx.request(method, f"{server}/explorer/v1{path}", json=body, headers=headers, timeout=30)

    schema = {"type": "AVRO", "schema": avro("rest").schema, "properties": {}}
    one = call("ops", "PUT", "/namespaces/acme/reviews/review-rules", {"required_approvals": 1, "reviewers": []})
    assert one.status_code == 200 and one.json() == {
        "required_approvals": 1,
        "reviewers": [],
        "require_proposals": False,
    }
    made = call("alice", "POST", "/proposals", {"topic": TOPIC, "schema": schema, "title": "over REST"})
    assert made.status_code == 201, made.text
    body = made.json()
    assert {"id", "state", "revisions", "author"} <= set(body) and body["author"] == "alice"
    pid = body["id"]
    shown = call("victor", "GET", f"/proposals/{pid}").json()
    assert shown["review"]["line"] and shown["comments"] == [] and shown["approvals"] == []
    assert call("victor", "POST", "/proposals", {"topic": TOPIC, "schema": schema, "title": "t"}).status_code == 403
    assert call("alice", "GET", "/proposals/9999").status_code == 404
    assert call("alice", "POST", f"/proposals/{pid}/approve").status_code == 403  # her own
    assert call("ops", "POST", f"/proposals/{pid}/apply", {}).status_code == 403  # no approvals, no reason
    assert call("bob", "POST", f"/proposals/{pid}/approve").status_code == 200
    assert call("bob", "POST", f"/proposals/{pid}/approve").json()["approvers"] == ["bob"]  # counts once
    lone = httpx.post(  # a lone surrogate, escaped in the JSON text as a client may send it
        f"{server}/explorer/v1/proposals/{pid}/comments",
        content=b'{"text": "\\ud800 alone"}',
        headers={"Authorization": f"Bearer {TOKENS['bob'][1]}", "Content-Type": "application/json"},
    )
    assert lone.status_code == 400 and "comment" in lone.json()["reason"]
    bad = call(
        "alice", "POST", "/proposals", {"topic": "persistent://acme/reviews/a/b", "schema": schema, "title": "t"}
    )
    assert bad.status_code == 412
    unparseable = {"type": "AVRO", "schema": "{nope", "properties": {}}
    assert call("alice", "POST", "/proposals", {"topic": TOPIC, "schema": unparseable, "title": "t"}).status_code == 422
    ok = call("alice", "POST", f"/proposals/{pid}/apply", {})
    assert ok.status_code == 200 and ok.headers["X-Registry-Version"] == str(ok.json()["applied_version"]), ok.text
    assert call("alice", "POST", f"/proposals/{pid}/apply", {}).status_code == 409  # applied: once
    rules = call("victor", "GET", "/namespaces/acme/reviews/review-rules")
    assert rules.status_code == 200 and set(rules.json()) == {"required_approvals", "reviewers", "require_proposals"}
    assert call("alice", "PUT", "/namespaces/acme/reviews/review-rules", {"required_approvals": 1}).status_code == 403
    assert call("ops", "PUT", "/namespaces/acme/reviews/review-rules", {"required_approvals": 9}).status_code == 400


@pytest.mark.postgres
def test_two_servers_on_one_postgresql_database(postgres_server: str, tmp_path: Path) -> None:
    import postgres

    dsn = postgres.fresh_database(postgres_server)
    with Registry.open(dsn, create=True) as reg:
        _prepare(reg)
    tokens = json.dumps({name: {"role": role, "token": token} for name, (role, token) in TOKENS.items()})
    env = {"SCHEMA_EXPLORER_TOKENS": tokens}
    with served(dsn, log_dir=tmp_path, env=env) as one, served(dsn, log_dir=tmp_path, env=env) as two:  # type: ignore[arg-type]
        with registry.open(one, token=TOKENS["alice"][1]) as alice, registry.open(two, token=TOKENS["bob"][1]) as bob:
            made = alice.proposals.propose_schema(TOPIC, avro("shared"), title="across servers", actor=ACTORS["alice"])
            assert bob.proposals.get(made.id).title == "across servers"
            bob.proposals.approve(made.id, actor=ACTORS["bob"])
            with pytest.raises(PermissionDeniedError):
                alice.proposals.approve(made.id, actor=ACTORS["alice"])
            with registry.open(two, token=TOKENS["alice"][1]) as alice_on_two:
                assert alice_on_two.proposals.apply(made.id, actor=ACTORS["alice"]).applied_version == 1
            assert alice.get(TOPIC).version == 1
            with pytest.raises(ProposalNotFoundError):
                bob.proposals.get(made.id + 100)
            with pytest.raises((StaleProposalError, ApprovalsMissingError, registry.ProposalError)):
                alice.proposals.apply(made.id, actor=ACTORS["alice"])


def test_a_one_mebibyte_candidate_goes_through_rest_whole(people: dict[str, SchemaRegistry]) -> None:
    fields = [{"name": f"f{i}", "type": ["null", "string"], "default": None, "doc": "x" * 200} for i in range(3700)]
    doc = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}, *fields]})
    assert 900_000 < len(doc) <= 1_048_576
    made = people["alice"].proposals.propose_schema(
        TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=doc), title="big", actor=ACTORS["alice"]
    )
    again = people["victor"].proposals.get(made.id)
    assert again.revision.schema is not None and again.revision.schema.schema == doc
    assert people["victor"].proposals.review(made.id).what_if is not None


def _race(handles: dict[str, SchemaRegistry], topic: str) -> None:
    """Two approved proposals on one base applied at once, beside a direct register of a third schema.

    Exactly one write takes the base's next version. When an apply takes it, the other proposal goes stale and
    the direct register (never compare-and-set, as in Pulsar) lands after it; when the register takes it, both
    proposals go stale. A stale proposal stores nothing, and nothing is stored twice."""
    handles["ops"].register(topic, avro())
    one = handles["alice"].proposals.propose_schema(topic, avro("one"), title="one", actor=ACTORS["alice"])
    two = handles["bob"].proposals.propose_schema(topic, avro("two"), title="two", actor=ACTORS["bob"])
    handles["bob"].proposals.approve(one.id, actor=ACTORS["bob"])
    handles["alice"].proposals.approve(two.id, actor=ACTORS["alice"])
    calls: dict[str, Callable[[], Any]] = {
        "one": lambda: handles["alice"].proposals.apply(one.id, actor=ACTORS["alice"]),
        "two": lambda: handles["bob"].proposals.apply(two.id, actor=ACTORS["bob"]),
        "direct": lambda: handles["ops"].register(topic, avro("direct")),
    }
    start = threading.Barrier(len(calls))
    answers: dict[str, Any] = {}

    def run(name: str) -> None:
        start.wait()
        try:
            answers[name] = calls[name]()
        except registry.RegistryError as exc:
            answers[name] = exc

    threads = [threading.Thread(target=run, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history = [(v.version, json.loads(v.data)["fields"][-1]["name"]) for v in handles["ops"].history(topic)]
    applied = {name for name in ("one", "two") if not isinstance(answers[name], Exception)}
    assert len(applied) <= 1, answers
    assert isinstance(answers["direct"], registry.Registration), answers
    for name, made in (("one", one), ("two", two)):
        state = handles["ops"].proposals.get(made.id)
        if name in applied:
            assert state.applied_version == 1 and history[1] == (1, name), (history, answers)
        else:
            assert isinstance(answers[name], StaleProposalError), answers
            assert state.state.value == "stale" and name not in {field for _, field in history}
    expected = ["id", *sorted(applied), "direct"] if applied else ["id", "direct"]
    assert [field for _, field in history] == expected and [v for v, _ in history] == list(range(len(expected)))


@pytest.mark.parametrize("round_", range(4))
def test_applies_racing_each_other_and_a_register_over_rest(people: dict[str, SchemaRegistry], round_: int) -> None:
    people["ops"].create_namespace(f"acme/race-{round_}")
    _race(people, f"persistent://acme/race-{round_}/orders")


@pytest.mark.parametrize("round_", range(4))
def test_applies_racing_each_other_and_a_register_on_one_file(tmp_path: Path, round_: int) -> None:
    db = tmp_path / "race.db"
    with Registry.open(db, create=True) as reg:
        _prepare(reg)
    with ExitStack() as stack:
        handles: dict[str, SchemaRegistry] = {name: stack.enter_context(Registry.open(db)) for name in TOKENS}
        _race(handles, f"persistent://{NS}/race-{round_}")


def test_two_reviewers_approving_at_once_over_rest_both_count(people: dict[str, SchemaRegistry]) -> None:
    people["ops"].create_namespace("acme/two-reviewers")
    people["ops"].proposals.set_rules("acme/two-reviewers", ReviewRules(required_approvals=2), actor=ACTORS["ops"])
    topic = "persistent://acme/two-reviewers/orders"
    made = people["alice"].proposals.propose_schema(topic, avro(), title="t", actor=ACTORS["alice"])
    start = threading.Barrier(2)

    def approve(who: str) -> None:
        start.wait()
        people[who].proposals.approve(made.id, actor=ACTORS[who])

    threads = [threading.Thread(target=approve, args=(who,)) for who in ("bob", "ops")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = people["victor"].proposals.get(made.id)
    assert sorted(found.approvers) == ["bob", "ops"] and found.state.value == "approved"


@pytest.mark.parametrize("round_", range(4))
def test_two_admins_saving_one_policy_at_once_over_rest(server: str, round_: int) -> None:
    """Both previewed the same policy; over `serve` the compare and the write are one transaction
    (server/_policy_writes.py), so exactly one save lands and the other is PolicyChangedError, as on one file."""
    namespace = f"acme/cas-{round_}"
    with registry.open(server, token=TOKENS["ops"][1]) as one, registry.open(server, token=TOKENS["ops"][1]) as two:
        one.create_namespace(namespace)
        seen = one.namespace_policy(namespace)
        start = threading.Barrier(2)
        answers: dict[str, Any] = {}

        def save(handle: SchemaRegistry, strategy: str) -> None:
            start.wait()
            try:
                answers[strategy] = handle.set_namespace_policy(namespace, compatibility=strategy, expected=seen)
            except registry.RegistryError as exc:
                answers[strategy] = exc

        threads = [threading.Thread(target=save, args=pair) for pair in ((one, "FULL"), (two, "FORWARD"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        won = [strategy for strategy, answer in answers.items() if isinstance(answer, registry.NamespacePolicy)]
        lost = [answer for answer in answers.values() if isinstance(answer, registry.PolicyChangedError)]
        assert len(won) == 1 and len(lost) == 1, answers
        assert one.namespace_policy(namespace).compatibility == won[0]


def test_the_schema_policy_route_refuses_bad_input_naming_it(server: str) -> None:
    def put(who: str, path: str, body: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {TOKENS[who][1]}"}
        return httpx.put(f"{server}/explorer/v1{path}", json=body, headers=headers, timeout=30)

    route = "/namespaces/acme/reviews/schema-policy"
    before = put("ops", route, {"changes": {}}).json()
    unknown = put("ops", route, {"changes": {"compatibility": "FULL", "retention": 3}})
    assert unknown.status_code == 400 and "'retention'" in unknown.json()["reason"]
    bad_value = put("ops", route, {"changes": {"compatibility": "SIDEWAYS"}})
    assert bad_value.status_code == 400 and "SIDEWAYS" in bad_value.json()["reason"]
    bad_expected = put("ops", route, {"changes": {"compatibility": "FULL"}, "expected": {"colour": "red"}})
    assert bad_expected.status_code == 400 and "colour" in bad_expected.json()["reason"]
    assert put("alice", route, {"changes": {"compatibility": "FULL"}}).status_code == 403  # a producer
    stale = put("ops", route, {"changes": {"compatibility": "FULL"}, "expected": {"compatibility": "FORWARD"}})
    assert stale.status_code == 409 and stale.headers["X-Registry-Error"] == "PolicyChangedError"
    assert put("ops", route, {"changes": {}}).json() == before  # nothing of the refused ones was stored
    topic = put("ops", "/topics/acme/reviews/orders/schema-policy", {"changes": {"validation_enforced": True}})
    assert topic.status_code == 200 and topic.json() == {"compatibility": None, "validation_enforced": True}
