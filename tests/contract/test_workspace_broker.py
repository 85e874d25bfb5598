"""Proposals over a plain Pulsar broker, kept in a workspace beside it (registry/remote/_workspace.py): the
broker is `serve --admin-only` on loopback (the admin v2 API only, no explorer routes), the workspace a SQLite
file. Proposed by one person, approved by another, applied as exactly the approved schema; a write around the
explorer makes the next apply stale with nothing written; a policy proposal changes the broker's policy;
require_proposals refuses direct writes; the workspace survives a restart; a write landing right after an
apply's own is recorded as interleaved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import registry
from registry import (
    Actor,
    AuditAction,
    AuditOutcome,
    NamespacePolicyChange,
    ProposalsRequiredError,
    ProposalState,
    Registry,
    ReviewRules,
    Role,
    SchemaInfo,
    SchemaType,
    StaleProposalError,
)
from registry.remote._handle import RemoteRegistry
from serving import served

NS = "acme/reviews"
TOPIC = f"persistent://{NS}/orders"
ALICE = Actor("alice", Role.PRODUCER)
BOB = Actor("bob", Role.PRODUCER)
OPS = Actor("ops", Role.ADMIN)
FULL = NamespacePolicyChange(compatibility="FULL")


def avro(*fields: str) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "string"}]
        + [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[str]:
    """A plain broker's admin API over a fresh registry with one version on TOPIC (BACKWARD)."""
    db = tmp_path / "broker.db"
    with Registry.open(db, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.set_namespace_policy(NS, compatibility="BACKWARD")
        reg.register(TOPIC, avro())
    with served(db, log_dir=tmp_path, admin_only=True) as url:
        yield url


def test_proposed_reviewed_and_applied_as_exactly_the_approved_schema(broker: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws.db"
    with registry.open(broker, workspace=workspace) as reg:
        assert reg.workspace == str(workspace)
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="add a note", actor=ALICE)
        assert (made.state, made.base_version) == (ProposalState.OPEN, 0)
        assert reg.history(TOPIC)[-1].version == 0  # nothing reached the broker yet
        assert reg.proposals.review(made.id).compatible
        reg.proposals.approve(made.id, actor=BOB, revision=1)
        done = reg.proposals.apply(made.id, actor=ALICE)
        assert (done.state, done.applied_version, done.applied_note) == (ProposalState.APPLIED, 1, "")
    with registry.open(broker, workspace="memory:") as plain:  # the broker as anyone else reads it
        latest = plain.get(TOPIC)
        assert latest.version == 1 and latest.data.decode() == avro("note").schema
    with registry.open(broker, workspace=workspace) as reg:  # the workspace survives a restart
        again = reg.proposals.get(made.id)
        assert again.state is ProposalState.APPLIED and again.approvers == ("bob",)
        trail = reg.audit_trail(TOPIC)
        assert [e.action for e in trail[:3]] == [
            AuditAction.APPLY_PROPOSAL,
            AuditAction.APPROVE_PROPOSAL,
            AuditAction.PROPOSE,
        ]
        assert trail[0].user == "alice" and "version 1" in trail[0].detail


def test_a_write_around_the_explorer_makes_the_apply_stale_with_nothing_written(broker: str, tmp_path: Path) -> None:
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="add a note", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        with registry.open(broker, workspace=tmp_path / "elsewhere.db") as around:
            assert around.register(TOPIC, avro("other")).version == 1
        with pytest.raises(StaleProposalError, match="nothing was applied"):
            reg.proposals.apply(made.id, actor=ALICE)
        assert [v.version for v in reg.history(TOPIC)] == [0, 1]
        assert reg.get(TOPIC).data.decode() == avro("other").schema
        assert reg.proposals.get(made.id).state is ProposalState.STALE
        line = reg.audit_trail(TOPIC)[0]
        assert (line.action, line.outcome) == (AuditAction.APPLY_PROPOSAL, AuditOutcome.REFUSED)


def test_a_policy_proposal_changes_the_brokers_policy(broker: str, tmp_path: Path) -> None:
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        made = reg.proposals.propose_policy(NS, FULL, title="stricter", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        done = reg.proposals.apply(made.id, actor=OPS)
        assert done.state is ProposalState.APPLIED and done.applied_note == ""
    with registry.open(broker, workspace="memory:") as plain:
        assert str(plain.namespace_policy(NS).compatibility) == "FULL"


def test_a_policy_changed_around_the_explorer_makes_the_policy_proposal_stale(broker: str, tmp_path: Path) -> None:
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        made = reg.proposals.propose_policy(NS, FULL, title="stricter", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        with registry.open(broker, workspace="memory:") as around:
            around.set_namespace_policy(NS, compatibility="FORWARD")
        with pytest.raises(StaleProposalError):
            reg.proposals.apply(made.id, actor=OPS)
        assert str(reg.namespace_policy(NS).compatibility) == "FORWARD"


def test_require_proposals_refuses_direct_writes_and_every_write_is_audited(broker: str, tmp_path: Path) -> None:
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        assert reg.register(TOPIC, avro("a"), user="carol").version == 1
        reg.proposals.set_rules(NS, ReviewRules(require_proposals=True), actor=OPS)
        with pytest.raises(ProposalsRequiredError, match="require proposals"):
            reg.register(TOPIC, avro("b"), user="carol")
        with pytest.raises(ProposalsRequiredError):
            reg.set_namespace_policy(NS, compatibility="FULL", user="carol")
        with pytest.raises(ProposalsRequiredError):
            reg.delete(TOPIC, user="carol")
        assert [v.version for v in reg.history(TOPIC)] == [0, 1]
        assert str(reg.namespace_policy(NS).compatibility) == "BACKWARD"
        trail = reg.audit_trail(NS)
        assert [(e.action, e.outcome, e.user) for e in trail[:2]] == [
            (AuditAction.DELETE, AuditOutcome.REFUSED, "carol"),
            (AuditAction.SET_NAMESPACE_POLICY, AuditOutcome.REFUSED, "carol"),
        ]
        first = [e for e in trail if e.action is AuditAction.REGISTER and e.outcome is AuditOutcome.OK]
        assert first and first[0].detail == "schema stored as version 1"
        made = reg.proposals.propose_schema(TOPIC, avro("a", "b"), title="the way in", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        assert reg.proposals.apply(made.id, actor=ALICE).applied_version == 2  # proposals are the way in


def test_the_default_workspace_is_one_file_per_cluster(broker: str) -> None:
    with registry.open(broker) as first:
        assert first.workspace is not None and first.workspace.endswith(".db")
        made = first.proposals.propose_schema(TOPIC, avro("note"), title="kept", actor=ALICE)
    with registry.open(broker) as second:
        assert second.workspace == first.workspace
        assert second.proposals.get(made.id).title == "kept"


def test_serve_and_embedded_registries_take_no_workspace(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    Registry.open(db, create=True).close()
    with pytest.raises(registry.InvalidArgumentError, match="plain broker"):
        registry.open(db, workspace=tmp_path / "ws.db")
    with served(db, log_dir=tmp_path) as url:
        with pytest.raises(registry.InvalidArgumentError, match="own storage"):
            registry.open(url, workspace=tmp_path / "ws.db")
        with registry.open(url) as serve:
            assert serve.workspace is None


class _Interleaving(RemoteRegistry):
    """A broker handle whose register is followed at once by another writer's (what no test can time): the
    apply's read-back must see it."""

    around: str = ""

    def _send_register(self, topic: str, info: SchemaInfo) -> registry.Registration:
        made = super()._send_register(topic, info)
        with registry.open(self.around, workspace="memory:") as other:
            other.register(topic, avro("note", "sneaked"))
        return made


def test_a_write_right_after_the_apply_is_recorded_as_interleaved(broker: str, tmp_path: Path) -> None:
    _Interleaving.around = broker
    with _Interleaving(broker, workspace=tmp_path / "ws.db") as reg:
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="add a note", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        done = reg.proposals.apply(made.id, actor=ALICE)
        assert done.state is ProposalState.APPLIED and done.applied_version == 1
        assert done.applied_note == "applied, but another write interleaved (version 2)"
        assert done.applied_note in reg.audit_trail(TOPIC)[0].detail


def test_a_plain_broker_keeps_proposals_and_webhooks_in_its_workspace(broker: str, tmp_path: Path) -> None:
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        assert reg.proposals.list() == [] and reg.webhooks.list() == []
        hook = reg.webhooks.add("http://127.0.0.1:9/hook", events=["proposal.*"], actor=OPS)
        assert [h.id for h in reg.webhooks.list()] == [hook.id]
    with registry.open(broker, workspace=tmp_path / "ws.db") as reg:
        assert [h.url for h in reg.webhooks.list()] == ["http://127.0.0.1:9/hook"]
    with pytest.raises(registry.StorageError, match="not a workspace"):
        registry.open(broker, workspace=broker)


def test_reading_a_broker_never_makes_its_default_workspace(
    broker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is only read is never created: get, history and the (empty) audit trail leave no workspace file
    behind, and work where the data folder cannot be made; the first proposal makes it."""
    from registry.remote._workspace import WORKSPACE_ENV_VAR

    folder = tmp_path / "data" / "workspaces"
    monkeypatch.setenv(WORKSPACE_ENV_VAR, str(folder))
    with registry.open(broker) as reg:
        assert reg.get(TOPIC).version == 0 and len(reg.history(TOPIC)) == 1
        assert reg.audit_trail() == []
        assert reg.workspace is not None and reg.workspace.startswith(str(folder))
    with registry.open(broker, read_only=True) as reg:
        assert reg.get(TOPIC).version == 0
    assert not folder.exists()
    blocked = tmp_path / "a-file"  # a data folder that cannot be made (even for root): reading still works
    blocked.write_text("")
    monkeypatch.setenv(WORKSPACE_ENV_VAR, str(blocked / "workspaces"))
    with registry.open(broker) as reg:
        assert reg.get(TOPIC).version == 0
        with pytest.raises(registry.StorageError, match="cannot make the workspace folder"):
            reg.proposals.list()
    monkeypatch.setenv(WORKSPACE_ENV_VAR, str(folder))
    with registry.open(broker) as reg:
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="add a note", actor=ALICE)
        workspace = reg.workspace
    assert workspace is not None and Path(workspace).is_file()
    with registry.open(broker) as reg:  # and keeps it: the next command finds the proposal there
        assert reg.proposals.get(made.id).title == "add a note"
