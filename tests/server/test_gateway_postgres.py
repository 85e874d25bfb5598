"""Two review gateways on one PostgreSQL workspace behave as two `serve`s on one database: a proposal made
through one is seen, approved and applied through the other, the broker gets exactly the approved schema once,
and both gateways' audit trails are the same one."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import registry
from registry import Actor, AuditAction, ProposalError, ProposalState, Registry, Role, SchemaInfo, SchemaType
from serving import Gateway, served

pytestmark = [pytest.mark.server, pytest.mark.postgres]

TOPIC = "persistent://acme/shared/orders"
PEOPLE = {"alice": "alice-token-0123456789abcdef0123", "bob": "bob-token-0123456789abcdef012345"}
ANYONE = Actor("ignored: each gateway names the person by the token", Role.VIEWER)


def avro(*fields: str) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}]
        + [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


@pytest.fixture(scope="module")
def two_gateways(tmp_path_factory: pytest.TempPathFactory, postgres_server: str) -> Iterator[tuple[Gateway, Gateway]]:
    import postgres

    where = tmp_path_factory.mktemp("gateways")
    db = where / "broker.db"
    with Registry.open(db, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace("acme/shared")
        reg.register(TOPIC, avro())
    tokens = where / "tokens.json"
    tokens.write_text(json.dumps({name: {"role": "producer", "token": t} for name, t in PEOPLE.items()}))
    workspace = postgres.fresh_database(postgres_server)
    with served(db, log_dir=where, admin_only=True) as broker:
        first = Gateway(broker, workspace, tokens=tokens, people=PEOPLE, log_dir=where)
        second = Gateway(broker, workspace, tokens=tokens, people=PEOPLE, log_dir=where)
        first.start()
        try:
            second.start()
            try:
                yield first, second
            finally:
                second.stop()
        finally:
            first.stop()


def test_a_proposal_made_through_one_gateway_is_applied_through_the_other(
    two_gateways: tuple[Gateway, Gateway],
) -> None:
    first, second = two_gateways
    with first.open("alice") as alice, second.open("bob") as bob:
        made = alice.proposals.propose_schema(TOPIC, avro("note"), title="shared", actor=ANYONE)
        assert bob.proposals.get(made.id).title == "shared"
        bob.proposals.approve(made.id, actor=ANYONE)
    with second.open("alice") as alice, first.open("alice") as again:
        assert alice.proposals.apply(made.id, actor=ANYONE).applied_version == 1
        assert [(e.action, e.user) for e in again.audit_trail(TOPIC)[:3]] == [
            (AuditAction.APPLY_PROPOSAL, "alice"),
            (AuditAction.APPROVE_PROPOSAL, "bob"),
            (AuditAction.PROPOSE, "alice"),
        ]
        with pytest.raises(ProposalError):  # applied once: the other gateway sees it applied
            again.proposals.apply(made.id, actor=ANYONE)
        assert again.proposals.get(made.id).state is ProposalState.APPLIED
    with registry.open(first.upstream, workspace="memory:") as plain:
        assert [v.version for v in plain.history(TOPIC)] == [0, 1]
        assert plain.get(TOPIC).data.decode() == avro("note").schema
