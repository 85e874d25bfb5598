"""The audit trail (facade and explorer API), backup and restore through the CLI, and the server's limits."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import httpx
import pytest
import storm
from fastapi.testclient import TestClient

from cli.main import main
from registry import Registry, SchemaInfo, SchemaType, export_snapshot, seed_sample_data
from registry._limits import limited
from schemas import S1, S2
from server import create_app, parse_tokens
from server._limits import ServerLimits
from serving import LOCAL

pytestmark = pytest.mark.timeout(120)
TOPIC = "persistent://t/ns/x"
ADMIN = "admin-token-secret-01-0123456789abcdef"


# --- audit trail ------------------------------------------------------------------------------------------------


def test_every_kind_of_write_is_audited_with_who_when_what_and_outcome() -> None:
    reg = Registry.in_memory()
    started = int(time.time() * 1000) - 1
    reg.create_tenant("t", user="ann")
    reg.create_namespace("t/ns", user="ann")
    reg.set_namespace_policy("t/ns", compatibility="FULL", user="bob")
    reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1), user="cat")
    reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1), user="cat")
    with pytest.raises(Exception, match="Incompatible"):
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema='{"type":"string"}'), user="dan")
    reg.set_topic_policy(TOPIC, compatibility="NONE" if False else "BACKWARD", user="eve")
    reg.delete(TOPIC, user="fay")
    trail = list(reversed(reg.audit_trail("t")))
    seen = [(e.user, str(e.action), str(e.outcome)) for e in trail]
    assert seen == [
        ("ann", "create_tenant", "ok"),
        ("ann", "create_namespace", "ok"),
        ("bob", "set_namespace_policy", "ok"),
        ("cat", "register", "ok"),
        ("cat", "register", "unchanged"),
        ("dan", "register", "refused"),
        ("eve", "set_topic_policy", "ok"),
        ("fay", "delete", "ok"),
    ]
    assert all(e.at >= started for e in trail)
    assert "compatibility: UNDEFINED → FULL" in trail[2].detail
    assert "version 0" in trail[3].detail and "Incompatible" in trail[5].detail


def test_the_audit_trail_through_the_explorer_api() -> None:
    reg = Registry.in_memory()
    reg.create_namespace("t/ns", user="ann")
    reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1), user="cat")
    reg.create_namespace("u/other", user="zed")
    client = TestClient(create_app(reg), base_url=LOCAL)
    body = client.get("/explorer/v1/audit", params={"target": "t/ns"}).json()
    assert body["target"] == "t/ns"
    assert [(e["user"], e["action"], e["target"]) for e in body["entries"]] == [
        ("cat", "register", TOPIC),
        ("ann", "create_namespace", "t/ns"),
    ]
    assert {"at", "detail", "outcome"} <= set(body["entries"][0])
    assert len(client.get("/explorer/v1/audit", params={"limit": 1}).json()["entries"]) == 1
    assert client.get("/explorer/v1/audit", params={"target": "bad name"}).status_code == 412


def test_the_audit_route_needs_a_token_when_the_server_has_them() -> None:
    tokens = parse_tokens(json.dumps({ADMIN: "admin", "viewer-token-secret-1-0123456789abcdef": "viewer"}), "test")
    client = TestClient(create_app(Registry.in_memory(), tokens=tokens), base_url=LOCAL)
    assert client.get("/explorer/v1/audit").status_code == 401
    ok = client.get("/explorer/v1/audit", headers={"Authorization": "Bearer viewer-token-secret-1-0123456789abcdef"})
    assert ok.status_code == 200


def test_writes_through_the_server_record_the_callers_role_never_the_token() -> None:
    tokens = parse_tokens(json.dumps({ADMIN: "admin"}), "test")
    reg = Registry.in_memory()
    reg.create_namespace("t/ns")
    client = TestClient(create_app(reg, tokens=tokens), base_url=LOCAL)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    assert client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S1}, headers=auth).is_success
    assert client.put("/admin/v2/namespaces/t/ns/schemaCompatibilityStrategy", json="FORWARD", headers=auth).is_success
    users = {entry.user for entry in reg.audit_trail("t/ns") if entry.action != "create_namespace"}  # made above
    assert len(users) == 1 and users.pop() == "token #1 (admin)"
    assert all(ADMIN not in entry.user for entry in reg.audit_trail())


def test_writes_without_tokens_are_audited_as_anonymous() -> None:
    reg = Registry.in_memory()
    reg.create_namespace("t/ns")
    client = TestClient(create_app(reg), base_url=LOCAL)
    assert client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S1}).is_success
    assert reg.audit_trail(TOPIC)[0].user == "anonymous"


# --- backup and restore -------------------------------------------------------------------------------------------


def _full_registry(path: Path) -> None:
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
        info = SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"owner": "ops", "ünï": "cødé"})
        reg.register(TOPIC, info, user="ann")
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S2), user="bob")
        reg.delete(TOPIC, user="cat")  # a tombstone
        reg.register(TOPIC, SchemaInfo(type=SchemaType.BYTES, schema=b"\x00\xff"), user="dan")  # binary data
        reg.set_topic_policy(TOPIC, compatibility="FORWARD", validation_enforced=True, user="eve")
        reg.set_namespace_policy("t/ns", allow_auto_update=False, user="eve")
        reg.connect_consumer(TOPIC, None, subscription="audit")
        with pytest.raises(Exception, match="Incompatible|not"):
            reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1), user="fay")  # a refusal, audited


def _facts(path: Path) -> list[object]:
    with Registry.open(path, create=True) as reg:
        facts: list[object] = [reg.tenants(), reg.clients(), reg.audit_trail(limit=100_000)]
        for tenant in reg.tenants():
            for ns in reg.namespaces(tenant):
                facts += [ns, reg.namespace_policy(ns)]
                for topic in reg.topics(ns):
                    facts += [topic, reg.topic_policy(topic), reg.history(topic, include_deleted=True)]
        return facts


def test_export_import_round_trips_to_an_identical_registry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original, restored = tmp_path / "a.db", tmp_path / "b.db"
    _full_registry(original)
    assert main(["export", "--db", str(original), str(tmp_path / "a.jsonl")]) == 0
    assert main(["import", "--db", str(restored), str(tmp_path / "a.jsonl")]) == 0
    assert main(["export", "--db", str(restored), str(tmp_path / "b.jsonl")]) == 0
    first, second = (tmp_path / "a.jsonl").read_bytes(), (tmp_path / "b.jsonl").read_bytes()
    assert first == second
    kinds = {json.loads(line)["kind"] for line in first.splitlines()}
    assert kinds == {"snapshot", "tenant", "namespace", "topic", "version", "client", "audit", "end"}
    assert b'"deleted":true' in first and b"schema_base64" in first and "cødé".encode() in first
    assert _facts(original) == _facts(restored)
    assert "audit entries" in capsys.readouterr().out


def test_import_never_touches_an_existing_registry_on_a_bad_snapshot(tmp_path: Path) -> None:
    good = tmp_path / "a.jsonl"
    _full_registry(tmp_path / "a.db")
    assert main(["export", "--db", str(tmp_path / "a.db"), str(good)]) == 0
    lines = good.read_text().splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join([*lines[:-3], "{not json", *lines[-3:]]) + "\n")
    assert main(["import", "--db", str(tmp_path / "new.db"), str(tmp_path / "bad.jsonl")]) == 1  # refused whole
    assert not (tmp_path / "new.db").exists()
    assert main(["import", "--db", str(tmp_path / "a.db"), str(good)]) == 2  # not empty: refused


@pytest.mark.server
def test_export_over_rest_reads_what_the_file_holds(workdir: Path) -> None:
    db = workdir / "r.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("t/ns")
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1))
    server = storm.Server(db, workdir / "serve.log").start()
    try:
        assert main(["export", "--url", server.url, "--no-audit", str(workdir / "remote.jsonl")]) == 0
    finally:
        server.stop()
    versions = [json.loads(x) for x in (workdir / "remote.jsonl").read_text().splitlines() if '"version"' in x]
    assert [(v["topic"], v["version"]) for v in versions if v["kind"] == "version"] == [("t/ns/x", 0)]


# --- limits -----------------------------------------------------------------------------------------------------------


def _client(**limits: float) -> TestClient:
    reg = Registry.in_memory()
    reg.create_namespace("t/ns")
    app = create_app(reg)
    app.state.limits = ServerLimits(**limits)  # type: ignore[arg-type]
    return TestClient(app, base_url=LOCAL)


def test_server_limit_defaults() -> None:
    assert ServerLimits() == ServerLimits(
        max_body_bytes=4 * 1024 * 1024, max_header_bytes=16 * 1024, request_timeout_s=30
    )
    env = {"SCHEMA_EXPLORER_MAX_BODY_BYTES": "1_000", "SCHEMA_EXPLORER_REQUEST_TIMEOUT_S": "2.5"}
    assert ServerLimits.from_env(env) == ServerLimits(max_body_bytes=1000, request_timeout_s=2.5)
    with pytest.raises(ValueError, match="SCHEMA_EXPLORER_MAX_BODY_BYTES"):
        ServerLimits.from_env({"SCHEMA_EXPLORER_MAX_BODY_BYTES": "big"})
    with pytest.raises(ValueError, match="> 0"):
        ServerLimits(request_timeout_s=0)


def test_body_limit_is_configurable() -> None:
    client = _client(max_body_bytes=300)
    small = client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "STRING", "schema": ""})
    big = client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": "x" * 400})
    assert small.status_code == 200
    assert big.status_code == 413 and "limit of 300 bytes" in big.json()["reason"]


def test_header_limit_is_configurable() -> None:
    response = _client(max_header_bytes=2000).get("/admin/v2/tenants", headers={"x-pad": "a" * 3000})
    assert response.status_code == 431 and "limit of 2,000 bytes" in response.json()["reason"]


def test_schema_size_and_depth_limits_are_configurable_and_answer_413_and_422() -> None:
    client = _client()
    with limited(max_schema_bytes=100, max_depth=3):
        large = client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S1 + " " * 100})
        deep = client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": '[[[["int"]]]]'})
    assert large.status_code == 413 and "limit of 100 bytes" in large.json()["reason"]
    assert deep.status_code == 422 and "nested more than 3 levels" in deep.json()["reason"]


def test_a_slow_request_times_out_with_503_and_the_server_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Routes that run in a thread (what-if, diffs, checks) are timed; the answer is a 503 at the deadline. A
    read answered on the event loop cannot be interrupted by a timer, so it is not a case here. The slow call
    waits until the test has its answer: had the server waited for the call, it would answer only after the
    call's own 60 s, with a 200."""
    client = _client(request_timeout_s=0.2)
    original = Registry.what_if
    answered = threading.Event()
    monkeypatch.setattr(Registry, "what_if", lambda self, *a: answered.wait(60) and original(self, *a))
    what_if = "/explorer/v1/topics/t/ns/x/what-if"
    try:
        slow = client.post(what_if, json={"type": "AVRO", "schema": S1})
    finally:
        answered.set()
    assert slow.status_code == 503 and "within 0.2 s" in slow.json()["reason"]
    monkeypatch.setattr(Registry, "what_if", original)
    assert client.post(what_if, json={"type": "AVRO", "schema": S1}).status_code == 200


@pytest.mark.server
def test_limits_from_the_environment_on_a_live_server(workdir: Path) -> None:
    db = workdir / "r.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("t/ns")
    env = {"SCHEMA_EXPLORER_MAX_BODY_BYTES": "2000", "SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH": "4"}
    server = storm.Server(db, workdir / "serve.log", env=env).start()
    try:
        post = f"{server.url}/admin/v2/schemas/t/ns/x/schema"
        big = httpx.post(post, json={"type": "AVRO", "schema": "x" * 3000})
        deep = httpx.post(post, json={"type": "AVRO", "schema": '{"type":"array","items":[[[["int"]]]]}'})
        fine = httpx.post(post, json={"type": "AVRO", "schema": S1})
    finally:
        server.stop()
    assert big.status_code == 413
    assert deep.status_code == 422 and "more than 4 levels" in deep.json()["reason"]
    assert fine.status_code == 200


def test_state_is_unchanged_by_refused_limits() -> None:
    reg = Registry.in_memory()
    reg.create_namespace("t/ns")
    before = io.StringIO()
    export_snapshot(reg, before, audit=False)
    client = TestClient(create_app(reg), base_url=LOCAL)
    client.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": "x" * (5 * 1024 * 1024)})
    after = io.StringIO()
    export_snapshot(reg, after, audit=False)
    assert before.getvalue() == after.getvalue()
