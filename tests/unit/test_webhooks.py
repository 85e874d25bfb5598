"""Notifications (registry/webhooks/): a real receiver on loopback is told of each write once it has committed,
each body signed; a receiver that fails is retried until it recovers, one that never answers neither slows nor
fails the write, and the secret is never read back nor logged."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, NS, OPS, TOPIC, avro, proposal_registry
from registry import (
    Actor,
    InvalidArgumentError,
    PermissionDeniedError,
    ReadOnlyError,
    Registry,
    ReviewRules,
    Role,
    StaleProposalError,
    to_json,
)
from registry.webhooks import DELIVERIES
from webhook_receiver import Receiver

SECRET = "s3cret-never-shown"


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with proposal_registry(tmp_path / "r.db") as reg:
        yield reg
    assert DELIVERIES.wait_idle(60)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries still come after a backoff, doubling, but from 0.05 s rather than 0.5 s: the tests count
    attempts and outcomes, not seconds (a test that wants none sets 0)."""
    monkeypatch.setattr(DELIVERIES, "_backoff", 0.05)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


def settled() -> None:
    assert DELIVERIES.wait_idle(60), "the deliveries did not end"


def test_each_event_reaches_the_receiver_once_signed(
    reg: Registry, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMA_EXPLORER_APP_URL", "https://schemas.example.com/")
    reg.webhooks.add(receiver.url, events=["*"], secret=SECRET, actor=OPS)
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1), actor=OPS)  # not an event
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    reg.proposals.comment(made.id, "why?", actor=BOB)
    reg.proposals.revise(made.id, schema=avro("note", "memo"), actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    reg.proposals.apply(made.id, actor=ALICE)
    other = reg.proposals.propose_schema(TOPIC, avro("note", "memo", "x"), title="Add x", actor=ALICE)
    reg.proposals.reject(other.id, "not now", actor=BOB)
    late = reg.proposals.propose_schema(TOPIC, avro("note", "memo", "y"), title="Add y", actor=ALICE)
    reg.register(TOPIC, avro("note", "memo", "z"), user="ops")  # around the proposal: its base moves
    with pytest.raises(StaleProposalError):
        reg.proposals.approve(late.id, actor=BOB)
    reg.set_namespace_policy(NS, compatibility="FULL", user="ops")
    reg.set_namespace_policy(NS, compatibility="FULL", user="ops")  # no change: no event
    settled()

    assert receiver.events() == [
        "proposal.created",
        "proposal.commented",
        "proposal.revised",
        "proposal.approved",
        "proposal.applied",
        "schema.registered",
        "proposal.created",
        "proposal.rejected",
        "proposal.created",
        "schema.registered",
        "proposal.stale",
        "policy.changed",
    ]
    assert all(r.signed_with(SECRET) for r in receiver.received)
    assert not any(r.signed_with("another") for r in receiver.received)
    created, _, _, approved, applied, registered = (r.doc for r in receiver.received[:6])
    assert created["actor"] == "alice" and created["target"] == str(TOPIC)
    assert created["proposal"] == {
        "id": made.id,
        "title": "Add a note",
        "kind": "schema",
        "target": TOPIC,
        "state": "open",
        "revision": 1,
        "approvals_needed": 1,
    }
    assert created["link"] == f"https://schemas.example.com/proposal?id={made.id}"
    assert created["text"].startswith("[schema-explorer] alice proposed proposal #")
    assert "“Add a note”" in created["text"] and created["link"] in created["text"]
    assert created["time"].endswith("Z")
    assert approved["actor"] == "bob" and approved["proposal"]["state"] == "approved"
    assert approved["proposal"]["approvals_needed"] == 0 and approved["proposal"]["revision"] == 2
    assert applied["proposal"]["state"] == "applied"
    assert registered["version"] == 1 and registered["proposal"] is None and registered["link"] is None
    stale = receiver.received[10].doc
    assert stale["proposal"]["id"] == late.id and stale["proposal"]["state"] == "stale"
    policy = receiver.received[11].doc
    assert policy["target"] == NS and "FULL" in policy["detail"] and "FULL" in policy["text"]
    assert {r.headers["x-schema-explorer-event"] for r in receiver.received} == set(receiver.events())
    last = reg.webhooks.list()[0].last_delivery
    assert last is not None and (last.outcome, last.event, last.attempts) == ("delivered", "policy.changed", 1)


def test_globs_select_the_events(reg: Registry, receiver: Receiver) -> None:
    with Receiver() as everything:
        reg.webhooks.add(receiver.url, events=["proposal.a*"], actor=OPS)
        reg.webhooks.add(everything.url, events=["schema.*", "proposal.created"], actor=OPS)
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        reg.proposals.apply(made.id, actor=ALICE)
        settled()
        assert receiver.events() == ["proposal.approved", "proposal.applied"]
        assert everything.events() == ["proposal.created", "schema.registered"]
    assert "x-schema-explorer-signature" not in receiver.received[0].headers  # no secret: unsigned


def test_a_receiver_that_fails_twice_gets_it_once_it_recovers(reg: Registry, receiver: Receiver) -> None:
    reg.webhooks.add(receiver.url, events=["proposal.created"], secret=SECRET, actor=OPS)
    receiver.statuses = [500, 503]
    reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    settled()
    assert receiver.events() == ["proposal.created"]
    assert receiver.received[0].signed_with(SECRET)
    last = reg.webhooks.list()[0].last_delivery
    assert last is not None and (last.outcome, last.attempts, last.status) == ("delivered", 3, 200)


def test_a_receiver_that_never_answers_neither_slows_nor_fails_the_write(reg: Registry, receiver: Receiver) -> None:
    reg.webhooks.add(receiver.url, events=["proposal.*"], actor=OPS)
    receiver.release.clear()  # the receiver holds every answer until the test releases it
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    assert receiver.arrived.wait(60)  # the delivery is under way...
    assert receiver.received == []  # ...and unanswered, yet the write has returned and is stored
    assert reg.proposals.get(made.id).title == "Add a note"
    assert reg.proposals.approve(made.id, actor=BOB).state.value == "approved"
    receiver.release.set()
    assert [r.doc["event"] for r in receiver.wait_for(2)][:2] == ["proposal.created", "proposal.approved"]


def test_a_write_undone_notifies_nobody_and_a_batch_notifies_after_its_commit(
    reg: Registry, receiver: Receiver
) -> None:
    reg.webhooks.add(receiver.url, events=["proposal.created"], actor=OPS)
    with pytest.raises(RuntimeError), reg.batch():
        reg.proposals.propose_schema(TOPIC, avro("gone"), title="Undone", actor=ALICE)
        raise RuntimeError("the batch fails")
    with reg.batch():
        reg.proposals.propose_schema(TOPIC, avro("kept"), title="Kept", actor=ALICE)
        assert DELIVERIES.wait_idle(0)  # nothing handed over before the commit
    settled()
    assert [r.doc["proposal"]["title"] for r in receiver.received] == ["Kept"]


def test_a_failed_delivery_is_recorded_without_the_secret(
    reg: Registry, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(DELIVERIES, "_backoff", 0.0)
    with Receiver() as gone:
        url = gone.url + "/T000/B000/" + SECRET
    # the receiver is closed: every attempt fails to connect
    reg.webhooks.add(url, events=["proposal.created"], secret=SECRET, actor=OPS)
    failed = DELIVERIES.counts["failed"]
    with caplog.at_level(logging.DEBUG):
        reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
        settled()
    assert DELIVERIES.counts["failed"] == failed + 1  # what /metrics shows as outcome="failed"
    (hook,) = reg.webhooks.list()
    assert hook.last_delivery is not None
    assert (hook.last_delivery.outcome, hook.last_delivery.attempts) == ("failed", 5)
    assert "could not reach the receiver" in hook.last_delivery.reason
    assert "not delivered after 5 attempt(s)" in caplog.text
    assert SECRET not in caplog.text and SECRET not in hook.last_delivery.reason
    assert SECRET not in json.dumps([to_json(e) for e in reg.audit_trail()])


def test_a_4xx_fails_at_once(reg: Registry, receiver: Receiver) -> None:
    reg.webhooks.add(receiver.url, events=["proposal.created"], actor=OPS)
    receiver.statuses = [404]
    reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    settled()
    last = reg.webhooks.list()[0].last_delivery
    assert last is not None and (last.outcome, last.attempts, last.status) == ("failed", 1, 404)
    assert last.reason == "the receiver answered HTTP 404" and receiver.received == []


def test_the_secret_is_never_read_back(reg: Registry) -> None:
    made = reg.webhooks.add("https://chat.example.com/hooks/abc", events=["proposal.*"], secret=SECRET, actor=OPS)
    plain = reg.webhooks.add("http://chat.example.com/b", events=["*"], actor=OPS)
    assert (made.has_secret, plain.has_secret) == (True, False)
    listed = reg.webhooks.list()
    assert [h.id for h in listed] == [1, 2] and SECRET not in repr(listed) and SECRET not in json.dumps(to_json(listed))
    assert SECRET not in repr(made)
    assert "/hooks/abc" not in reg.audit_trail(limit=1)[0].detail  # the URL's path can be a credential too
    reg.webhooks.remove(1, actor=OPS)
    assert [h.id for h in reg.webhooks.list()] == [2]
    assert reg.webhooks.add("http://chat.example.com/c", actor=OPS).id == 3  # ids are never reused


@pytest.mark.parametrize(
    ("url", "events", "secret", "error"),
    [
        ("ftp://example.com/x", ["*"], None, "only http:// and https://"),
        ("file:///etc/passwd", ["*"], None, "only http:// and https://"),
        ("https://user:pw@example.com/x", ["*"], None, "no user or password"),
        ("https://example.com/x", ["proposal.aproved"], None, "selects no event"),
        ("https://example.com/x", "proposal.*", None, "a list of names"),
        ("https://example.com/x", [], None, "1 to 20"),
        ("https://example.com/x", ["*"], " spaced ", "printable characters"),
    ],
)
def test_bad_webhooks_are_refused_with_nothing_stored(
    reg: Registry, url: str, events: object, secret: str | None, error: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=error):
        reg.webhooks.add(url, events=events, secret=secret, actor=OPS)  # type: ignore[arg-type]
    assert reg.webhooks.list() == []


def test_only_an_admin_manages_webhooks(reg: Registry) -> None:
    for person in (ALICE, Actor("victor", Role.VIEWER)):
        with pytest.raises(PermissionDeniedError, match="managing webhooks needs the admin role"):
            reg.webhooks.add("https://example.com/x", actor=person)
    made = reg.webhooks.add("https://example.com/x", actor=OPS)
    with pytest.raises(PermissionDeniedError):
        reg.webhooks.remove(made.id, actor=ALICE)
    with pytest.raises(ReadOnlyError):
        reg.read_only().webhooks.add("https://example.com/y", actor=OPS)
    with pytest.raises(ReadOnlyError):
        reg.read_only().webhooks.remove(made.id, actor=OPS)
    assert [h.id for h in reg.read_only().webhooks.list()] == [made.id]


@pytest.mark.postgres
def test_on_postgresql_the_receiver_is_told_after_the_commit_and_the_delivery_recorded(
    postgres_server: str, receiver: Receiver
) -> None:
    import postgres

    with Registry.open(postgres.fresh_database(postgres_server), create=True) as pg:
        pg.create_tenant("acme")
        pg.create_namespace(NS)
        pg.webhooks.add(receiver.url, events=["schema.registered", "policy.changed"], secret=SECRET, actor=OPS)
        with pg.batch():
            pg.register(TOPIC, avro(), user="ops")
            pg.set_namespace_policy(NS, compatibility="FULL", user="ops")
        settled()
        assert receiver.events() == ["schema.registered", "policy.changed"]
        assert all(r.signed_with(SECRET) for r in receiver.received)
        last = pg.webhooks.list()[0].last_delivery
        assert last is not None and (last.outcome, last.event) == ("delivered", "policy.changed")


def test_a_delivery_ending_after_the_registry_closed_is_sent_but_not_recorded(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(DELIVERIES, "close_grace", 0.0)  # close at once, while the notice is still out
    path = tmp_path / "gone.db"
    reg = Registry.open(path, create=True)
    reg.create_tenant("acme")
    reg.create_namespace(NS)
    reg.webhooks.add(receiver.url, events=["policy.changed"], actor=OPS)
    receiver.release.clear()
    reg.set_namespace_policy(NS, compatibility="FULL", user="ops")
    assert receiver.arrived.wait(60)
    reg.close()
    for leftover in tmp_path.iterdir():  # the registry is deleted while its notice is still out
        leftover.unlink()
    receiver.release.set()
    settled()
    assert receiver.events() == ["policy.changed"]
    assert list(tmp_path.iterdir()) == []  # recording the outcome did not make the file again


def test_closing_a_registry_lets_its_notices_go_out_and_be_recorded(tmp_path: Path, receiver: Receiver) -> None:
    """What a CLI command does: write, close, exit; the outcome is still in `webhooks list` afterwards."""
    path = tmp_path / "r.db"
    with Registry.open(path, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.webhooks.add(receiver.url, events=["policy.changed"], actor=OPS)
        receiver.statuses = [500]  # the first attempt fails: the retry comes after a backoff
        reg.set_namespace_policy(NS, compatibility="FULL", user="ops")
    with Registry.open(path) as reg:
        last = reg.webhooks.list()[0].last_delivery
    assert last is not None and (last.outcome, last.attempts) == ("delivered", 2)
