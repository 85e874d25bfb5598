"""Group commit (server/_writer.py): writes queued while the writer thread is busy commit together, each
caller hears its own outcome only after that commit, and a failed commit fails every write of the batch.

Each test holds the writer thread with a write that waits, queues requests behind it one by one through the
real app over a real SQLite file, then lets it go: the queued writes are then one batch. The storage's change
token (bumped once per committed transaction that changed something) counts the commits."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from registry import AuditOutcome, Registry, SchemaInfo, SchemaType
from server import create_app, parse_tokens
from server._writer import GroupWriter
from serving import LOCAL

pytestmark = pytest.mark.timeout(60)
Send = Callable[[httpx.AsyncClient], Awaitable[Any]]
TOKENS = ("producer-token-a-0123456789abcdef", "producer-token-b-0123456789abcdef")


def _record(fields: int) -> dict[str, str]:
    """A Pulsar POST body: an Avro record with `fields` optional fields (each one more is FULL-compatible)."""
    optional = [{"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(fields)]
    schema = {"type": "record", "name": "Event", "fields": [{"name": "id", "type": "long"}, *optional]}
    return {"type": "AVRO", "schema": json.dumps(schema)}


def _topic(name: str) -> str:
    return f"persistent://t/ns/{name}"


def _post(name: str, body: dict[str, str], token: str | None = None) -> Send:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return lambda client: client.post(f"/admin/v2/schemas/t/ns/{name}/schema", json=body, headers=headers)


def _version(answer: httpx.Response) -> int:
    assert answer.status_code == 200, answer.text
    version: int = answer.json()["version"]["version"]  # Pulsar's PostSchemaResponse
    return version


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(4000):  # a guard against hanging, not a timing assertion
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the writer did not get there")


async def _in_one_batch(app: FastAPI, sends: list[Send]) -> list[Any]:
    """Hold the writer thread, queue `sends` behind it in this order, then release it. Their outcomes (a
    response, or the exception a write raised), in order."""
    registry: Registry = app.state.registry
    writer: GroupWriter = app.state.writer
    entered, release = threading.Event(), threading.Event()

    def hold(*, user: str) -> None:
        entered.set()
        release.wait(30)

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=LOCAL) as client:
        holder = asyncio.ensure_future(writer.write(registry, hold, user="holder"))
        await _until(entered.is_set)
        pending = []
        for queued, send in enumerate(sends, start=1):
            pending.append(asyncio.ensure_future(send(client)))
            await _until(lambda: writer.queued() == queued)  # noqa: B023 (awaited here, in this iteration)
        release.set()
        await holder
        return await asyncio.gather(*pending, return_exceptions=True)


@contextmanager
def _counting(app: FastAPI) -> Iterator[dict[str, int]]:
    """The app's registry file's commits and its writer's batches made inside the block."""
    registry: Registry = app.state.registry
    writer: GroupWriter = app.state.writer
    token, batches = registry.change_token(), writer.batches
    counts: dict[str, int] = {}
    yield counts
    counts.update(commits=registry.change_token() - token, batches=writer.batches - batches)


@pytest.fixture
def registry(db_dir: Path) -> Iterator[Registry]:
    """A registry file with namespace t/ns, opened strictly like `serve` does."""
    with Registry.open(db_dir / "r.db", create=True) as reg:
        reg.create_namespace("t/ns")
    with Registry.open(db_dir / "r.db", auto_create=False) as reg:
        yield reg


def test_queued_registrations_commit_together_each_with_its_version_and_caller(registry: Registry) -> None:
    app = create_app(registry, tokens=parse_tokens(json.dumps(dict.fromkeys(TOKENS, "producer")), "test"))
    sends = [_post(f"topic-{i}", _record(0), token=TOKENS[i % 2]) for i in range(20)]
    with _counting(app) as counts:
        answers = asyncio.run(_in_one_batch(app, sends))
    assert [_version(a) for a in answers] == [0] * 20
    assert counts == {"commits": 1, "batches": 2}, "the holder's batch, then one for all 20"
    for i in range(20):
        assert len(registry.history(_topic(f"topic-{i}"))) == 1
        (entry,) = registry.audit_trail(_topic(f"topic-{i}"))
        assert (entry.outcome, entry.user) == (AuditOutcome.OK, f"token #{i % 2 + 1} (producer)")


def test_writes_of_one_batch_keep_their_arrival_order(registry: Registry) -> None:
    app = create_app(registry)
    with _counting(app) as counts:
        answers = asyncio.run(_in_one_batch(app, [_post("ordered", _record(n)) for n in range(4)]))
    assert [_version(a) for a in answers] == [0, 1, 2, 3]
    assert [len(json.loads(v.schema)["fields"]) for v in registry.history(_topic("ordered"))] == [1, 2, 3, 4]
    assert counts["commits"] == 1


def test_a_refused_write_is_answered_alone_and_the_others_of_its_batch_land(registry: Registry) -> None:
    registry.register(_topic("taken"), SchemaInfo(SchemaType.AVRO, _record(0)["schema"]))
    app = create_app(registry)
    breaking = {
        "type": "AVRO",
        "schema": '{"type": "record", "name": "Event", "fields": [{"name": "id", "type": "string"}]}',
    }
    with _counting(app) as counts:
        before, refused, after = asyncio.run(
            _in_one_batch(app, [_post("a", _record(0)), _post("taken", breaking), _post("b", _record(0))])
        )
    assert (before.status_code, after.status_code) == (200, 200)
    assert refused.status_code == 409 and "incompatible" in refused.json()["reason"].lower()
    assert counts["commits"] == 1
    assert [len(registry.history(_topic(t))) for t in ("a", "taken", "b")] == [1, 1, 1]
    latest = registry.audit_trail(_topic("taken"))[0]
    assert latest.outcome is AuditOutcome.REFUSED and latest.detail.startswith(refused.json()["reason"] + " [input: ")


def test_a_write_that_fails_with_a_bug_undoes_only_itself(registry: Registry) -> None:
    """A non-RegistryError from a write runs out of its own savepoint: its caller gets it, the rest commit."""
    app = create_app(registry)

    def buggy(*, user: str) -> None:
        registry.register(_topic("buggy"), SchemaInfo(SchemaType.AVRO, _record(0)["schema"]), user=user)
        raise RuntimeError("a bug after the write")

    sends = [
        _post("a", _record(0)),
        lambda _: app.state.writer.write(registry, buggy, user="anonymous"),
        _post("b", _record(0)),
    ]
    with _counting(app) as counts:
        first, bug, last = asyncio.run(_in_one_batch(app, sends))
    assert (first.status_code, last.status_code) == (200, 200)
    assert isinstance(bug, RuntimeError) and str(bug) == "a bug after the write"
    assert registry.history(_topic("buggy")) == [] and registry.audit_trail(_topic("buggy")) == []
    assert [len(registry.history(_topic(t))) for t in ("a", "b")] == [1, 1]
    assert counts["commits"] == 1


def test_a_batch_whose_commit_fails_fails_every_write_and_keeps_none(registry: Registry) -> None:
    """The commit is made to fail inside SQLite: a trigger (added from another connection, as any process
    sharing the file could) aborts the change-token update that a changing transaction makes just before it
    commits. The storage then rolls the whole transaction back."""
    app = create_app(registry)
    other = sqlite3.connect(registry.location)
    other.execute(
        "CREATE TRIGGER refuse_commit BEFORE UPDATE ON meta WHEN NEW.key = 'changes' "
        "BEGIN SELECT RAISE(ABORT, 'the disk is full (simulated)'); END"
    )
    other.commit()
    sends = [_post(name, _record(0)) for name in ("a", "b", "c")]
    with _counting(app) as counts:
        answers = asyncio.run(_in_one_batch(app, sends))
    assert [a.status_code for a in answers] == [503] * 3
    for answer in answers:  # SQLite's words and the file's path stay in the log; the client gets a request id
        text = answer.json()["reason"]
        assert "disk is full" not in text and registry.location not in text
        assert f"request id {answer.headers['x-request-id']}" in text
    assert counts == {"commits": 0, "batches": 2}
    assert [registry.history(_topic(t)) for t in ("a", "b", "c")] == [[], [], []]
    assert [registry.audit_trail(_topic(t)) for t in ("a", "b", "c")] == [[], [], []], "they were in the batch"

    other.execute("DROP TRIGGER refuse_commit")
    other.commit()
    other.close()
    answers = asyncio.run(_in_one_batch(app, sends))
    assert [_version(a) for a in answers] == [0] * 3


def test_a_registry_without_transactions_takes_batches_too() -> None:
    registry = Registry.in_memory()
    registry.create_namespace("t/ns")
    answers = asyncio.run(_in_one_batch(create_app(registry), [_post("m", _record(n)) for n in range(3)]))
    assert [_version(a) for a in answers] == [0, 1, 2]
    assert [e.outcome for e in registry.audit_trail(_topic("m"))] == [AuditOutcome.OK] * 3
