"""The review gateway, end to end: `schema-explorer serve --upstream URL --workspace FILE --tokens FILE` as a
child process in front of a plain broker (`serve --admin-only` on loopback, which only the gateway's own token
may write). People reach the gateway with their tokens, through a remote registry (the explorer API) or the
admin v2 REST API; the broker must end up with exactly what was approved, and nothing else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import registry
from cli.main import main
from registry import (
    Actor,
    AuditAction,
    AuditOutcome,
    NamespacePolicyChange,
    ProposalState,
    Registry,
    ReviewRules,
    Role,
    SchemaInfo,
    SchemaRegistry,
    SchemaType,
    StaleProposalError,
    TopicQuery,
)
from server import ServerLimits, create_app
from serving import LOCAL, Gateway, served
from webhook_receiver import Receiver

pytestmark = pytest.mark.server  # the broker and the gateway are child processes

UPSTREAM_TOKEN = "gateway-upstream-token-0123456789abcdef"
TOKENS = {
    "alice": {"role": "producer", "token": "alice-token-0123456789abcdef0123"},
    "bob": {"role": "producer", "token": "bob-token-0123456789abcdef012345"},
    "ops": {"role": "admin", "token": "ops-token-0123456789abcdef012345"},
    "vera": {"role": "viewer", "token": "vera-token-0123456789abcdef01234"},
}
REVIEWS, POLICIES, GUARDED = "acme/reviews", "acme/policies", "acme/guarded"
ANYONE = Actor("ignored: the gateway names the person by the token", Role.VIEWER)


def avro(*fields: str) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}]
        + [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]['token']}"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A plain broker's admin API that only the gateway's token may use; each namespace has one topic at
    version 0 (BACKWARD)."""
    where = tmp_path_factory.mktemp("broker")
    db = where / "broker.db"
    with Registry.open(db, create=True) as reg:
        reg.create_tenant("acme")
        for ns in (REVIEWS, POLICIES, GUARDED):
            reg.create_namespace(ns)
            reg.set_namespace_policy(ns, compatibility="BACKWARD")
            reg.register(f"persistent://{ns}/orders", avro())
        reg.register(f"persistent://{REVIEWS}/stale", avro())
        reg.register(f"persistent://{REVIEWS}/restart", avro())
        reg.register(f"persistent://{REVIEWS}/viewed", avro())
    env = {"SCHEMA_EXPLORER_TOKENS": json.dumps({"gateway": {"role": "admin", "token": UPSTREAM_TOKEN}})}
    with served(db, log_dir=where, env=env, admin_only=True) as url:
        yield url


@pytest.fixture(scope="module")
def gateway(broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    where = tmp_path_factory.mktemp("gateway")
    tokens = where / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    people = {name: str(entry["token"]) for name, entry in TOKENS.items()}
    gate = Gateway(
        broker, str(where / "workspace.db"), tokens=tokens, people=people, log_dir=where, upstream_token=UPSTREAM_TOKEN
    )
    gate.start()
    yield gate
    gate.stop()


def straight(broker: str) -> SchemaRegistry:
    """The broker read (or written) around the gateway, with the broker's own token."""
    return registry.open(broker, token=UPSTREAM_TOKEN, workspace="memory:")


def test_the_broker_takes_no_write_without_the_gateways_credential(broker: str) -> None:
    answer = httpx.post(
        f"{broker}/admin/v2/schemas/acme/reviews/orders/schema",
        json={"type": "AVRO", "schema": avro("x").schema, "properties": {}},
    )
    assert answer.status_code == 401  # so every write the tests see on the broker came through the gateway


def test_proposed_reviewed_and_applied_through_the_gateway_as_exactly_the_approved_schema(
    gateway: Gateway, broker: str
) -> None:
    topic = f"persistent://{REVIEWS}/orders"
    with gateway.open("alice") as alice, gateway.open("bob") as bob:
        assert alice.workspace is None  # the gateway is reached as `serve` is: through its explorer API
        assert not alice.records_clients  # ... which says its broker records no clients
        assert alice.connected_clients(topic) == []  # the broker's topic stats, through the gateway
        made = alice.proposals.propose_schema(topic, avro("note"), title="add a note", actor=ANYONE)
        assert (made.author, made.state, made.base_version) == ("alice", ProposalState.OPEN, 0)
        with straight(broker) as plain:
            assert plain.get(topic).version == 0  # nothing reached the broker yet
        bob.proposals.approve(made.id, actor=ANYONE, revision=1)
        done = alice.proposals.apply(made.id, actor=ANYONE)
        assert (done.state, done.applied_version, done.applied_note) == (ProposalState.APPLIED, 1, "")
        trail = alice.audit_trail(topic)
        assert [(e.action, e.user) for e in trail[:3]] == [
            (AuditAction.APPLY_PROPOSAL, "alice"),
            (AuditAction.APPROVE_PROPOSAL, "bob"),
            (AuditAction.PROPOSE, "alice"),
        ]
    with straight(broker) as plain:
        assert [v.version for v in plain.history(topic)] == [0, 1]
        assert plain.get(topic).data.decode() == avro("note").schema


def test_a_write_around_the_gateway_makes_the_next_apply_stale_with_nothing_written(
    gateway: Gateway, broker: str
) -> None:
    topic = f"persistent://{REVIEWS}/stale"
    with gateway.open("alice") as alice, gateway.open("bob") as bob:
        made = alice.proposals.propose_schema(topic, avro("note"), title="add a note", actor=ANYONE)
        bob.proposals.approve(made.id, actor=ANYONE)
        with straight(broker) as around:
            assert around.register(topic, avro("other")).version == 1
        with pytest.raises(StaleProposalError):
            alice.proposals.apply(made.id, actor=ANYONE)
        assert alice.proposals.get(made.id).state is ProposalState.STALE
        line = alice.audit_trail(topic)[0]
        assert (line.action, line.outcome, line.user) == (AuditAction.APPLY_PROPOSAL, AuditOutcome.REFUSED, "alice")
    with straight(broker) as plain:
        assert [v.version for v in plain.history(topic)] == [0, 1]
        assert plain.get(topic).data.decode() == avro("other").schema


def test_a_policy_proposal_changes_the_brokers_policy(gateway: Gateway, broker: str) -> None:
    with gateway.open("alice") as alice, gateway.open("bob") as bob, gateway.open("ops") as ops:
        change = NamespacePolicyChange(compatibility="FULL")
        made = alice.proposals.propose_policy(POLICIES, change, title="stricter", actor=ANYONE)
        bob.proposals.approve(made.id, actor=ANYONE)
        done = ops.proposals.apply(made.id, actor=ANYONE)
        assert done.state is ProposalState.APPLIED and done.applied_note == ""
    with straight(broker) as plain:
        assert str(plain.namespace_policy(POLICIES).compatibility) == "FULL"


def test_a_namespace_requiring_proposals_refuses_direct_writes_through_the_gateway(
    gateway: Gateway, broker: str
) -> None:
    with gateway.open("ops") as ops:
        ops.proposals.set_rules(GUARDED, ReviewRules(require_proposals=True), actor=ANYONE)
    schema = httpx.post(
        f"{gateway.url}/admin/v2/schemas/acme/guarded/orders/schema",
        json={"type": "AVRO", "schema": avro("b").schema, "properties": {}},
        headers=bearer("alice"),
    )
    assert schema.status_code == 403 and "require proposals" in schema.json()["reason"]
    policy = httpx.put(
        f"{gateway.url}/admin/v2/namespaces/acme/guarded/schemaCompatibilityStrategy",
        json="FULL",
        headers=bearer("ops"),
    )
    assert policy.status_code == 403 and "require proposals" in policy.json()["reason"]
    with straight(broker) as plain:
        assert [v.version for v in plain.history(f"persistent://{GUARDED}/orders")] == [0]
        assert str(plain.namespace_policy(GUARDED).compatibility) == "BACKWARD"
    with gateway.open("vera") as vera:
        refused = [(e.action, e.outcome, e.user) for e in vera.audit_trail(GUARDED)[:2]]
    assert refused == [
        (AuditAction.SET_NAMESPACE_POLICY, AuditOutcome.REFUSED, "ops (admin)"),  # as `serve` names a caller
        (AuditAction.REGISTER, AuditOutcome.REFUSED, "alice (producer)"),
    ]


def test_a_direct_write_reaches_the_broker_with_the_persons_name_in_the_audit_trail(
    gateway: Gateway, broker: str
) -> None:
    answer = httpx.post(
        f"{gateway.url}/admin/v2/schemas/acme/policies/orders/schema",
        json={"type": "AVRO", "schema": avro("direct").schema, "properties": {}},
        headers=bearer("alice"),
    )
    assert answer.status_code == 200 and answer.json() == {"version": {"version": 1}}
    with straight(broker) as plain:
        assert plain.get(f"persistent://{POLICIES}/orders").data.decode() == avro("direct").schema
    trail = httpx.get(f"{gateway.url}/explorer/v1/audit", params={"target": POLICIES}, headers=bearer("vera"))
    line = trail.json()["entries"][0]
    assert (line["action"], line["user"], line["outcome"]) == ("register", "alice (producer)", "ok")


def test_a_viewers_token_reads_through_the_gateway_and_cannot_write(gateway: Gateway, broker: str) -> None:
    read = httpx.get(f"{gateway.url}/admin/v2/schemas/acme/reviews/viewed/schema", headers=bearer("vera"))
    assert read.status_code == 200 and read.json()["data"] == avro().schema
    write = httpx.post(
        f"{gateway.url}/admin/v2/schemas/acme/reviews/viewed/schema",
        json={"type": "AVRO", "schema": avro("v").schema, "properties": {}},
        headers=bearer("vera"),
    )
    assert write.status_code in (401, 403)
    nobody = httpx.get(f"{gateway.url}/admin/v2/schemas/acme/reviews/viewed/schema")
    assert nobody.status_code == 401
    with straight(broker) as plain:
        assert [v.version for v in plain.history(f"persistent://{REVIEWS}/viewed")] == [0]


def test_the_workspace_survives_a_gateway_restart_with_a_client_conf(
    gateway: Gateway, broker: str, tmp_path: Path
) -> None:
    topic = f"persistent://{REVIEWS}/restart"
    with gateway.open("alice") as alice:
        made = alice.proposals.propose_schema(topic, avro("later"), title="kept", actor=ANYONE)
    conf = tmp_path / "client.conf"
    conf.write_text(
        f"webServiceUrl={broker}\nauthPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
        f"authParams=token:{UPSTREAM_TOKEN}\n"
    )
    gateway.restart(str(conf))  # the same broker and credential, read as pulsar-admin reads them
    with gateway.open("bob") as bob:
        again = bob.proposals.get(made.id)
        assert (again.title, again.author, again.state) == ("kept", "alice", ProposalState.OPEN)
        assert bob.audit_trail(topic)[0].user == "alice"
        bob.proposals.approve(made.id, actor=ANYONE)
    with gateway.open("alice") as alice:
        assert alice.proposals.apply(made.id, actor=ANYONE).applied_version == 1


def test_the_cli_reaches_the_gateway_as_it_reaches_serve(
    gateway: Gateway, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "order.avsc"
    schema.write_text(avro("cli").schema)
    at = ["--url", gateway.url, "--token"]
    topic = f"persistent://{REVIEWS}/cli"
    title = ["--title", "from the command line"]
    assert main(["propose", *at, TOKENS["alice"]["token"], "--topic", topic, "--file", str(schema), *title]) == 0
    capsys.readouterr()
    assert main(["proposals", "list", *at, TOKENS["bob"]["token"], "--topic", topic, "--json"]) == 0
    [made] = json.loads(capsys.readouterr().out)["proposals"]
    assert (made["author"], made["state"], made["title"]) == ("alice", "open", "from the command line")
    assert main(["proposals", "approve", str(made["id"]), *at, TOKENS["vera"]["token"]]) == 1  # a viewer may not


def test_a_webhook_added_through_the_gateway_hears_of_a_proposal_signed(gateway: Gateway) -> None:
    with Receiver() as receiver, gateway.open("ops") as ops, gateway.open("alice") as alice:
        hook = ops.webhooks.add(receiver.url, events=["proposal.created"], secret="s3cret-for-the-test", actor=ANYONE)
        try:
            topic = f"persistent://{REVIEWS}/hooked"
            made = alice.proposals.propose_schema(topic, avro("h"), title="heard", actor=ANYONE)
            [notice] = receiver.wait_for(1)
        finally:
            ops.webhooks.remove(hook.id, actor=ANYONE)
    assert notice.signed_with("s3cret-for-the-test")
    assert (notice.doc["event"], notice.doc["actor"], notice.doc["proposal"]["id"]) == (
        "proposal.created",
        "alice",
        made.id,
    )


def test_search_and_what_if_are_answered_from_the_broker(gateway: Gateway) -> None:
    with gateway.open("vera") as vera:
        found = vera.search_topics(TopicQuery(text="orders"))
        assert {t.topic for t in found.items} >= {f"persistent://{ns}/orders" for ns in (REVIEWS, POLICIES, GUARDED)}
        verdict = vera.what_if(f"persistent://{REVIEWS}/restart", avro("maybe"))
        assert verdict.result.compatible and verdict.would_register


def test_the_gateway_is_not_ready_while_its_upstream_is_gone(tmp_path: Path) -> None:
    db = tmp_path / "gone.db"
    Registry.open(db, create=True).close()
    with served(db, log_dir=tmp_path, admin_only=True) as url:
        reg = registry.open(url, workspace=tmp_path / "ws.db")
        app = create_app(reg, limits=ServerLimits(request_timeout_s=5.0))
        with TestClient(app, base_url=LOCAL) as client:
            assert client.get("/ready").status_code == 200
    try:
        with TestClient(app, base_url=LOCAL) as client:
            answer = client.get("/ready")
        assert answer.status_code == 503 and "storage" in answer.json()["reason"]
        assert "127.0.0.1" not in answer.text  # the probe needs no token: it never names the host
    finally:
        reg.close()


def test_the_gateways_probes_and_metrics_speak_of_its_upstream(gateway: Gateway) -> None:
    ready = httpx.get(f"{gateway.url}/ready")
    assert ready.status_code == 200 and ready.json() == {"status": "ready", "storage": "remote"}
    scrape = httpx.get(f"{gateway.url}/metrics")
    assert scrape.status_code == 200
    assert "schema_explorer_info{pulsar_version=" in scrape.text and 'storage="remote"' in scrape.text


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ([], "needs --workspace"),
        (["--workspace", "ws.db", "--db", "r.db"], "--db and --upstream"),
        (["--workspace", "ws.db", "--admin-only"], "--admin-only and --upstream"),
        (["--workspace", "ws.db", "--upstream", "client.conf"], "carries its own credential"),
        (["--workspace", "ws.db"], "--upstream: cannot reach the Pulsar admin endpoint"),  # no workspace made
        (["--workspace", "ws.db", "--upstream", "http://me:pw-secret@127.0.0.1:9"], "a user name or password"),
    ],
)
def test_serve_upstream_refuses_what_it_cannot_serve(
    extra: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCHEMA_EXPLORER_UPSTREAM_TOKEN", UPSTREAM_TOKEN)
    (tmp_path / "client.conf").write_text("webServiceUrl=http://127.0.0.1:9\n")
    assert main(["serve", "--upstream", "http://127.0.0.1:9", *extra]) != 0
    err = capsys.readouterr().err
    assert says in err and "pw-secret" not in err
    assert not (tmp_path / "ws.db").exists() and not (tmp_path / "r.db").exists()


def test_a_workspace_without_an_upstream_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--workspace", "ws.db"]) != 0
    assert "--workspace only applies to the review gateway" in capsys.readouterr().err


def test_the_gateways_credential_is_never_printed(gateway: Gateway) -> None:
    logs = [path.read_text() for path in gateway.log_dir.glob("gateway-*.log")]
    assert logs and all("review gateway of http://127.0.0.1:" in text for text in logs)
    assert not any(UPSTREAM_TOKEN in text for text in logs)
