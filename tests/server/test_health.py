"""Liveness, readiness and request ids (issue 36): probes answered in front of the gate and the throttle; every
error answer carries the request's id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from registry import Registry
from server import create_app
from serving import LOCAL

TOKENS = '{"ops": {"role": "admin", "token": "a1b2c3d4e5f60718293a4b5c6d7e8f90"}}'


def test_health_answers_ok_as_pulsar_does(open_app: Callable[..., TestClient]) -> None:
    client = open_app()
    answer = client.get("/admin/v2/brokers/health", params={"topicVersion": "V2"})
    assert answer.status_code == 200
    assert answer.text == "ok"
    assert answer.headers["content-type"].startswith("text/plain")
    head = client.head("/admin/v2/brokers/health")
    assert head.status_code == 200 and head.content == b""


def test_ready_reads_the_storage(open_app: Callable[..., TestClient]) -> None:
    answer = open_app().get("/ready")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ready", "storage": "sqlite"}


def test_ready_is_503_naming_the_reason_but_not_the_file(db_dir: Path) -> None:
    path = db_dir / "gone.db"
    with Registry.open(path, create=True) as reg:
        reg.create_namespace("t/ns")
    reg = Registry.open(path, auto_create=False)
    try:
        client = TestClient(create_app(reg), base_url=LOCAL)
        assert client.get("/ready").status_code == 200
        path.unlink()
        answer = client.get("/ready")
        assert answer.status_code == 503
        reason = answer.json()["reason"]
        assert "sqlite storage failed to answer" in reason
        assert str(path) not in reason and "gone.db" not in reason
        assert answer.headers["x-request-id"] in reason
        assert answer.headers["retry-after"] == "1"
    finally:
        reg.close()


def test_probes_need_no_token_and_pass_the_throttle(open_app: Callable[..., TestClient]) -> None:
    client = open_app(tokens=TOKENS)
    for _ in range(11):  # past the burst: the address is throttled
        client.get("/admin/v2/tenants", headers={"Authorization": "Bearer wrong-token-wrong-token-wrong"})
    assert client.get("/admin/v2/tenants").status_code == 429
    assert client.get("/admin/v2/brokers/health").text == "ok"
    assert client.get("/ready").status_code == 200


def test_probes_keep_the_host_check_without_tokens(open_app: Callable[..., TestClient]) -> None:
    client = open_app()
    answer = client.get("/ready", headers={"Host": "evil.example"})
    assert answer.status_code == 421
    assert "x-request-id" in answer.headers


def test_every_error_answer_carries_a_request_id(open_app: Callable[..., TestClient]) -> None:
    client = open_app(tokens=TOKENS)
    refused = client.get("/admin/v2/tenants")  # the gate's 401, before routing
    assert refused.status_code == 401
    good = {"Authorization": "Bearer a1b2c3d4e5f60718293a4b5c6d7e8f90"}
    missing = client.get("/admin/v2/schemas/t/ns/nothing/schema", headers=good)  # a route's 404
    assert missing.status_code == 404
    ids = {refused.headers["x-request-id"], missing.headers["x-request-id"]}
    assert len(ids) == 2 and all(len(i) == 16 for i in ids)
    assert "x-request-id" not in client.get("/admin/v2/tenants", headers=good).headers  # answers that are not errors


def test_a_logged_failure_answers_with_the_request_id_of_its_line(open_app: Callable[..., TestClient]) -> None:
    client = open_app()
    answer = client.get("/admin/v2/schemas/t/ns/x/schema/99999999999999999999999")
    assert answer.status_code == 400  # not logged: a clear refusal, with an id all the same
    assert len(answer.headers["x-request-id"]) == 16
