"""Who may do what, held by the server whatever a client shows (registry/proposals/_permissions.py): each write
a role does not allow is refused over REST and nothing changes; a namespace whose review rules require proposals
refuses direct writes from the embedded registry, over REST and through `registry.open(url)` alike, while a
proposal applies; and an admin who revised someone's proposal cannot approve their own revision."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

import registry
from registry import Actor, Registry, ReviewRules, Role, SchemaInfo, SchemaRegistry, SchemaType, Step, to_json
from serving import served

NS = "acme/guarded"
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
    folder = tmp_path_factory.mktemp("permissions")
    tokens = {name: {"role": role, "token": token} for name, (role, token) in TOKENS.items()}
    db = folder / "registry.db"
    with Registry.open(db, create=True) as reg:
        _prepare(reg)
    with served(db, log_dir=folder, env={"SCHEMA_EXPLORER_TOKENS": json.dumps(tokens)}) as url:
        yield url


@pytest.fixture(scope="module")
def people(server: str) -> Iterator[dict[str, SchemaRegistry]]:
    """One remote handle per person, and the embedded twin under "embedded"."""
    with ExitStack() as stack:
        handles: dict[str, SchemaRegistry] = {
            name: stack.enter_context(registry.open(server, token=token)) for name, (_, token) in TOKENS.items()
        }
        twin = stack.enter_context(Registry.in_memory())
        _prepare(twin)
        handles["embedded"] = twin
        yield handles


def call(server: str, who: str, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKENS[who][1]}"}
    return httpx.request(method, f"{server}{path}", json=body, headers=headers, timeout=30)


def both(people: dict[str, SchemaRegistry], who: str, act: Callable[[SchemaRegistry, Actor], Any]) -> tuple[str, Any]:
    """`act` as `who` on the embedded twin and remotely: the same answer, or the same error class."""
    outcomes: list[tuple[str, Any]] = []
    for handle in (people["embedded"], people[who]):
        try:
            value = act(handle, ACTORS[who])
            outcomes.append(("ok", None if value is None else type(value).__name__))
        except registry.RegistryError as exc:
            outcomes.append(("error", type(exc).__name__))
    assert outcomes[1] == outcomes[0], outcomes
    return outcomes[0]


SCHEMA = {"type": "AVRO", "schema": avro("rest").schema, "properties": {}}
ADMIN = "/admin/v2"
EXPLORER = "/explorer/v1"
# Every write a viewer or a producer may not make, and the step of the core's table it stands for.
WRITES: list[tuple[Step, str, str, Any]] = [
    (Step.REGISTER, "POST", f"{ADMIN}/schemas/{NS}/orders/schema", SCHEMA),
    (Step.DELETE, "DELETE", f"{ADMIN}/schemas/{NS}/orders/schema", None),
    (Step.SET_POLICY, "PUT", f"{ADMIN}/namespaces/{NS}/schemaCompatibilityStrategy", "FULL"),
    (Step.SET_POLICY, "PUT", f"{ADMIN}/persistent/{NS}/orders/schemaCompatibilityStrategy", "FULL"),
    (Step.SET_POLICY, "PUT", f"{EXPLORER}/namespaces/{NS}/schema-policy", {"changes": {"compatibility": "FULL"}}),
    (Step.SET_POLICY, "PUT", f"{EXPLORER}/topics/{NS}/orders/schema-policy", {"changes": {"compatibility": "FULL"}}),
    (Step.PROPOSE, "POST", f"{EXPLORER}/proposals", {"topic": TOPIC, "schema": SCHEMA, "title": "t"}),
    (Step.EDIT_RULES, "PUT", f"{EXPLORER}/namespaces/{NS}/review-rules", {"required_approvals": 0}),
]


@pytest.mark.parametrize("who", ["victor", "alice"])
def test_every_write_the_role_does_not_allow_is_refused_and_changes_nothing(server: str, who: str) -> None:
    before = call(server, "ops", "GET", f"{ADMIN}/schemas/{NS}/orders/schemas").json()
    policy = call(server, "ops", "GET", f"{ADMIN}/namespaces/{NS}/schemaCompatibilityStrategy").json()
    role = Role(TOKENS[who][0])
    refused = [(step, method, path) for step, method, path, _ in WRITES if not role.at_least(step.role)]
    assert refused  # a viewer: all of them; a producer: delete, policies, review rules
    for step, method, path, body in WRITES:
        if role.at_least(step.role):
            continue
        answer = call(server, who, method, path, body)
        assert answer.status_code in (401, 403), (step, path, answer.text)
    assert call(server, "ops", "GET", f"{ADMIN}/schemas/{NS}/orders/schemas").json() == before
    assert call(server, "ops", "GET", f"{ADMIN}/namespaces/{NS}/schemaCompatibilityStrategy").json() == policy
    assert call(server, "ops", "GET", f"{EXPLORER}/proposals?namespace={NS}").json()["proposals"] == []


def test_an_admin_who_revised_a_proposal_cannot_approve_it(people: dict[str, SchemaRegistry]) -> None:
    pids = [
        handle.proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ACTORS["alice"]).id
        for handle in (people["embedded"], people["alice"])
    ]
    for handle, pid in zip((people["embedded"], people["ops"]), pids, strict=True):
        revised = handle.proposals.revise(pid, schema=avro("note", "memo"), actor=ACTORS["ops"])
        assert revised.revision.author == "ops"
        with pytest.raises(registry.PermissionDeniedError, match="ops wrote revision 2"):
            handle.proposals.approve(pid, actor=ACTORS["ops"])
        assert handle.proposals.get(pid).approvals == ()
        handle.proposals.withdraw(pid, actor=ACTORS["ops"])


def test_require_proposals_refuses_direct_writes_in_every_shell(server: str, people: dict[str, SchemaRegistry]) -> None:
    for handle in (people["embedded"], people["ops"]):
        handle.proposals.set_rules(NS, ReviewRules(required_approvals=1, require_proposals=True), actor=ACTORS["ops"])
    refused = ("error", "ProposalsRequiredError")
    assert both(people, "ops", lambda r, a: r.register(TOPIC, avro("direct"))) == refused
    assert both(people, "alice", lambda r, a: r.register(TOPIC, avro("direct"))) == refused
    assert both(people, "ops", lambda r, a: r.set_namespace_policy(NS, compatibility="FULL")) == refused
    assert both(people, "ops", lambda r, a: r.set_topic_policy(TOPIC, compatibility="FULL")) == refused
    assert both(people, "ops", lambda r, a: r.delete(TOPIC)) == refused
    raw = call(server, "ops", "POST", f"{ADMIN}/schemas/{NS}/orders/schema", SCHEMA)
    assert raw.status_code == 403 and raw.headers["X-Registry-Error"] == "ProposalsRequiredError"
    assert f"the review rules of {NS} require proposals" in raw.json()["reason"]
    assert "schema-explorer propose" in raw.json()["reason"]
    policy = call(
        server, "ops", "PUT", f"{EXPLORER}/namespaces/{NS}/schema-policy", {"changes": {"compatibility": "FULL"}}
    )
    assert policy.status_code == 403 and "require proposals" in policy.json()["reason"]
    assert [v.version for v in people["ops"].history(TOPIC)] == [0]
    # A client that does not know the rule leaves it as it is.
    kept = call(server, "ops", "PUT", f"{EXPLORER}/namespaces/{NS}/review-rules", {"required_approvals": 1})
    assert kept.status_code == 200 and kept.json()["require_proposals"] is True
    # The way a change is made there: a proposal, approved and applied.
    made = people["alice"].proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ACTORS["alice"])
    people["bob"].proposals.approve(made.id, actor=ACTORS["bob"])
    assert people["alice"].proposals.apply(made.id, actor=ACTORS["alice"]).applied_version == 1
    off = call(server, "ops", "PUT", f"{EXPLORER}/namespaces/{NS}/review-rules", to_json(ReviewRules()))
    assert off.status_code == 200 and off.json()["require_proposals"] is False
    assert people["ops"].register(TOPIC, avro("note", "direct")).version == 2
