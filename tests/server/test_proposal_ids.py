"""A proposal id that cannot be stored names no proposal (issue 40): ids outside SQLite's INTEGER range, below 1
or not whole numbers answer 404 on every proposal route, as a proposal that does not exist, before the storage
is asked. An id of 2^63 used to reach SQLite, which raised OverflowError: a 500."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from fastapi.testclient import TestClient

from registry import ForwardingStorage, Registry, StorageBackend
from server import create_app
from serving import LOCAL

T = TypeVar("T")
SCHEMA = {"type": "AVRO", "schema": '{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}'}
# Every route under /explorer/v1/proposals/{proposal_id}, with a body it accepts.
ROUTES: list[tuple[str, str, dict[str, object] | None]] = [
    ("GET", "", None),
    ("POST", "/revisions", {"schema": SCHEMA}),
    ("POST", "/rebase", None),
    ("POST", "/comments", {"text": "why?"}),
    ("POST", "/approve", None),
    ("POST", "/reject", {"reason": "no"}),
    ("POST", "/withdraw", None),
    ("POST", "/apply", {}),
]
UNSTORABLE = [str(2**63), str(2**64 + 1), "9" * 40, "0", "-1", "abc", "1.5", "1e3"]


class CountingStorage(ForwardingStorage):
    """Notes the name of every storage call."""

    def __init__(self, inner: StorageBackend, calls: list[str]) -> None:
        super().__init__(inner)
        self.calls = calls

    def around(self, operation: str, call: Callable[[], T]) -> T:
        self.calls.append(operation)
        return call()


@pytest.fixture
def counted(db_dir: Path) -> Iterator[tuple[TestClient, list[str]]]:
    """An app without tokens over a registry with one open proposal (#1), and the storage calls it makes."""
    calls: list[str] = []
    path = db_dir / "ids.db"
    with Registry.open(path, create=True) as reg:
        reg.create_namespace("t/ns")
    with Registry.open(path, auto_create=False, wrap=lambda inner: CountingStorage(inner, calls)) as reg:
        client = TestClient(create_app(reg), base_url=LOCAL)
        made = client.post(
            "/explorer/v1/proposals", json={"topic": "persistent://t/ns/x", "schema": SCHEMA, "title": "A"}
        )
        assert made.status_code == 201 and made.json()["id"] == 1, made.text
        yield client, calls


@pytest.mark.parametrize(("method", "tail", "body"), ROUTES, ids=[f"{m} {t or '/'}" for m, t, _ in ROUTES])
def test_an_id_that_cannot_be_stored_is_404_before_the_storage(
    counted: tuple[TestClient, list[str]], method: str, tail: str, body: dict[str, object] | None
) -> None:
    client, calls = counted
    for proposal_id in UNSTORABLE:
        calls.clear()
        answer = client.request(method, f"/explorer/v1/proposals/{proposal_id}{tail}", json=body)
        assert answer.status_code == 404, (proposal_id, answer.status_code, answer.text)
        assert answer.headers["x-registry-error"] == "ProposalNotFoundError"
        assert answer.json()["reason"].startswith("no proposal #")
        assert not [call for call in calls if "proposal" in call], (proposal_id, calls)
    # The largest id SQLite stores is asked for, and does not exist either; the stored one still answers.
    answer = client.request(method, f"/explorer/v1/proposals/{2**63 - 1}{tail}", json=body)
    assert answer.status_code == 404 and answer.headers["x-registry-error"] == "ProposalNotFoundError"
    assert client.get("/explorer/v1/proposals/1").json()["id"] == 1


def test_the_openapi_document_gives_the_range() -> None:
    with Registry.in_memory() as reg:
        document = TestClient(create_app(reg), base_url=LOCAL).get("/openapi.json").json()
    parameter = document["paths"]["/explorer/v1/proposals/{proposal_id}"]["get"]["parameters"][0]
    schema = parameter["schema"]
    assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 1, 2**63 - 1)
