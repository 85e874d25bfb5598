"""The audit trail: every write through the facade leaves one entry, refusals included; both storages."""

from __future__ import annotations

from pathlib import Path

import pytest

from registry import (
    AuditAction,
    AuditEntry,
    AuditOutcome,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    PolicyError,
    Registry,
)
from schemas import avro_info, field, record

TOPIC = "persistent://acme/orders/created"
V0 = avro_info(record("Order", [field("id", "string")]))
V1 = avro_info(record("Order", [field("id", "string"), field("note", "string", "")]))
BREAKING = avro_info(record("Order", [field("id", "long")]))

Row = tuple[str, str, str]


def last(reg: Registry, target: str | None = None) -> AuditEntry:
    return reg.audit_trail(target, limit=1)[0]


def summary(entry: AuditEntry) -> Row:
    return (entry.action.value, entry.target, entry.outcome.value)


def test_a_registration_is_recorded_with_its_user_and_version(reg: Registry) -> None:
    reg.register("acme/orders/created", V0, user="alice")
    entry = last(reg)
    assert summary(entry) == ("register", TOPIC, "ok")
    assert (entry.user, entry.detail) == ("alice", "AVRO schema stored as version 0")
    assert entry.at > 0 and (entry.tenant, entry.namespace) == ("acme", "acme/orders")
    reg.register(TOPIC, V0, user="bob")
    assert summary(last(reg)) == ("register", TOPIC, "unchanged")
    assert "identical to live version 0" in last(reg).detail


def test_a_refusal_is_recorded_with_its_reason_and_still_raised(reg: Registry) -> None:
    reg.register(TOPIC, V0)
    with pytest.raises(IncompatibleSchemaError):
        reg.register(TOPIC, BREAKING, user="mallory")
    entry = last(reg)
    assert summary(entry) == ("register", TOPIC, "refused")
    assert entry.user == "mallory" and "Incompatible schema" in entry.detail
    with pytest.raises(InvalidNameError):
        reg.register("not a topic//", V0)
    assert summary(last(reg)) == ("register", "not a topic//", "refused")


def test_policy_changes_say_what_changed(reg: Registry) -> None:
    reg.set_namespace_policy("acme/orders", compatibility="BACKWARD", user="ops")
    entry = last(reg)
    assert summary(entry) == ("set_namespace_policy", "acme/orders", "ok")
    assert entry.detail == "compatibility: UNDEFINED → BACKWARD"
    reg.set_namespace_policy("acme/orders", compatibility="BACKWARD")
    assert (last(reg).outcome, last(reg).detail) == (AuditOutcome.UNCHANGED, "no change")
    with pytest.raises(PolicyError):
        reg.set_namespace_policy("acme/orders", validation_enforced="yes")
    assert summary(last(reg)) == ("set_namespace_policy", "acme/orders", "refused")
    reg.set_topic_policy("acme/orders/created", compatibility="FORWARD", user="ops")
    entry = last(reg)
    assert summary(entry) == ("set_topic_policy", TOPIC, "ok")
    assert entry.detail == "compatibility: unset → FORWARD"


def test_deletions_and_creations(reg: Registry) -> None:
    reg.register(TOPIC, V0)
    reg.delete(TOPIC, user="ops")
    assert (summary(last(reg)), last(reg).detail) == (
        ("delete", TOPIC, "ok"),
        "soft delete: deletion marker stored as version 1",
    )
    reg.delete(TOPIC, force=True)
    assert last(reg).detail == "force: the whole history dropped"
    reg.delete(TOPIC, force=True)
    assert last(reg).outcome is AuditOutcome.UNCHANGED
    assert reg.create_tenant("globex", user="ops") is True
    assert reg.create_tenant("globex") is False
    reg.create_namespace("globex/audit")
    reg.create_topic("globex/audit/events")
    assert [summary(e) for e in reg.audit_trail(limit=4)] == [
        ("create_topic", "persistent://globex/audit/events", "ok"),
        ("create_namespace", "globex/audit", "ok"),
        ("create_tenant", "globex", "unchanged"),
        ("create_tenant", "globex", "ok"),
    ]


def test_the_trail_is_newest_first_and_filtered_by_target(reg: Registry) -> None:
    reg.register(TOPIC, V0)
    reg.register(TOPIC, V1)
    reg.register("persistent://acme/billing/invoice", V0)
    reg.set_namespace_policy("acme/orders", compatibility="FULL")
    reg.register("persistent://globex/audit/events", V0)
    assert [e.action for e in reg.audit_trail()][:2] == [AuditAction.REGISTER, AuditAction.SET_NAMESPACE_POLICY]
    assert len(reg.audit_trail()) == 5
    assert [summary(e)[1] for e in reg.audit_trail("acme/orders")] == ["acme/orders", TOPIC, TOPIC]
    assert len(reg.audit_trail("acme")) == 4
    assert len(reg.audit_trail("acme/orders/created")) == 2  # a short topic name is its persistent topic
    assert reg.audit_trail("persistent://acme/orders/other") == []
    assert len(reg.audit_trail(limit=2)) == 2


@pytest.mark.parametrize("limit", [0, -3, True, 2.5])
def test_the_limit_is_a_positive_whole_number(reg: Registry, limit: object) -> None:
    with pytest.raises(InvalidArgumentError, match="limit"):
        reg.audit_trail(limit=limit)  # type: ignore[arg-type]


def test_recording_does_not_invalidate_caches(reg: Registry) -> None:
    """Only the write moves the change token; its audit entry does not (no second catalog rebuild)."""
    reg.register(TOPIC, V0)
    token = reg.change_token()
    with pytest.raises(IncompatibleSchemaError):
        reg.register(TOPIC, BREAKING)
    assert reg.change_token() == token


def test_the_trail_is_kept_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, V0, user="alice")
    with Registry.open(path, create=True) as reg:
        assert [(e.user, e.action) for e in reg.audit_trail()] == [("alice", AuditAction.REGISTER)]
