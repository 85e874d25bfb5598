"""Security: a viewer can change nothing through any route; tokens never reach the log; CORS is closed by
default; every answer carries security headers; user text is inert in the app's and notebooks' HTML."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import httpx
import pytest
import storm
from fastapi.testclient import TestClient

from registry import Actor, Registry, Role, SchemaInfo, SchemaType, export_snapshot
from registry.views.notebook import history
from schemas import S1
from server import create_app, parse_tokens
from serving import LOCAL

pytestmark = pytest.mark.timeout(120)
TOKENS = {
    "viewer": "viewer-token-secret-1-0123456789abcdef",
    "producer": "producer-token-secret-1-0123456789abcdef",
    "admin": "admin-token-secret-01-0123456789abcdef",
}
TOKENS_JSON = json.dumps({token: role for role, token in TOKENS.items()})
VALUES = {"tenant": "t", "namespace": "ns", "topic": "x", "version": "0", "proposal_id": "1", "webhook_id": "1"}
BODY = {"type": "AVRO", "schema": S1}
BODIES = {"schemaCompatibilityStrategy": "ALWAYS_COMPATIBLE", "schemaAutoUpdateCompatibilityStrategy": "Full",
          "isAllowAutoUpdateSchema": False, "schemaValidationEnforced": True}  # fmt: skip
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _state(reg: Registry) -> str:
    out = io.StringIO()
    export_snapshot(reg, out)  # audit trail included: a refused-by-auth request must not even be recorded
    return out.getvalue()


def _writes() -> list[tuple[str, str]]:
    paths = create_app(Registry.in_memory()).openapi()["paths"]
    return [(m.upper(), p) for p, ops in paths.items() for m in ops if m.upper() != "GET"]


def test_a_viewer_can_change_nothing_through_any_route(tmp_path: Path) -> None:
    reg = Registry.open(tmp_path / "r.db", create=True)
    reg.create_namespace("t/ns")
    reg.register("persistent://t/ns/x", SchemaInfo(type=SchemaType.AVRO, schema=S1))
    alice = Actor("alice", Role.PRODUCER)
    reg.proposals.propose_schema(
        "persistent://t/ns/x", SchemaInfo(type=SchemaType.AVRO, schema=S1), title="t", actor=alice
    )
    client = TestClient(create_app(reg, tokens=parse_tokens(TOKENS_JSON, "test")), base_url=LOCAL)
    before = _state(reg)
    viewer = {"Authorization": f"Bearer {TOKENS['viewer']}"}
    changed = []
    for method, path in _writes():
        url = re.sub(r"\{(\w+)\}", lambda m: VALUES[m[1]], path)
        body = BODIES.get(path.rsplit("/", 1)[-1], BODY)
        status = client.request(method, url, json=body, headers=viewer).status_code
        if path.endswith(("/compatibility", "/version", "/what-if", "/upgrade-plan", "/diff")):
            continue  # reads with a body (a viewer may or may not run them); they write nothing either way
        if path.endswith("/comments"):
            continue  # the one thing a viewer may write: a comment on a proposal (checked in test_proposals)
        if status not in (401, 403):
            changed.append((method, path, status))
    assert changed == []
    assert _state(reg) == before
    assert len(_writes()) >= 15
    reg.close()


@pytest.mark.server
def test_tokens_never_reach_the_server_log(workdir: Path) -> None:
    db = workdir / "r.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("t/ns")
    log = workdir / "serve.log"
    server = storm.Server(db, log, env={"SCHEMA_EXPLORER_TOKENS": TOKENS_JSON}, access_log=True).start()
    wrong = "wrong-token-secret-99"
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            for token in (*TOKENS.values(), wrong):
                headers = {"Authorization": f"Bearer {token}"}
                client.get("/admin/v2/tenants", headers=headers)
                client.post("/admin/v2/schemas/t/ns/x/schema", json=BODY, headers=headers)
                client.put("/admin/v2/namespaces/t/ns/schemaCompatibilityStrategy", json="FULL", headers=headers)
                client.get("/admin/v2/schemas/t/ns/x/schema/abc", headers=headers)
    finally:
        server.stop()
    text = log.read_text(errors="replace")
    assert "GET /admin/v2/tenants" in text, "the access log was on"
    for token in (*TOKENS.values(), wrong):
        assert token not in text


@pytest.mark.server
def test_cors_is_closed_on_a_live_server(workdir: Path) -> None:
    db = workdir / "r.db"
    Registry.open(db, create=True).close()
    server = storm.Server(db, workdir / "serve.log").start()
    try:
        evil = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        preflight = httpx.options(f"{server.url}/admin/v2/tenants", headers=evil)
        plain = httpx.get(f"{server.url}/admin/v2/tenants", headers={"Origin": "https://evil.example"})
    finally:
        server.stop()
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in plain.headers


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/admin/v2/tenants", None, 200),
        ("GET", "/admin/v2/schemas/t/ns/none/schema", None, 404),
        ("GET", "/admin/v2/schemas/t/ns/x/schema/abc", None, 400),
        ("POST", "/admin/v2/schemas/t/ns/x/schema", {"type": "AVRO", "schema": "nope"}, 422),
        ("POST", "/admin/v2/schemas/t/ns/x/schema", {"type": "AVRO", "schema": "x" * (5 * 1024 * 1024)}, 413),
        ("PATCH", "/admin/v2/tenants", None, 405),
        ("GET", "/explorer/v1/audit", None, 200),
        ("GET", "/openapi.json", None, 200),
        ("GET", "/docs", None, 200),
    ],
    ids=["a read", "a 404", "a 400", "a 422", "a 413", "a 405", "the audit trail", "openapi", "docs"],
)
def test_security_headers_on_every_kind_of_answer(method: str, path: str, body: object, status: int) -> None:
    reg = Registry.in_memory()
    reg.create_namespace("t/ns")
    client = TestClient(create_app(reg), base_url=LOCAL)
    response = client.request(method, path, json=body)
    assert response.status_code == status
    headers = response.headers
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    if path.startswith(("/admin", "/explorer")):
        assert headers["content-security-policy"].startswith("default-src 'none'")
        assert headers["cache-control"] == "no-store"


def test_user_text_is_inert_in_notebook_html() -> None:
    reg = Registry.in_memory()
    doc = json.dumps({"type": "record", "name": "R", "doc": XSS, "fields": [{"name": "a", "type": "int", "doc": XSS}]})
    reg.register("t/n/x", SchemaInfo(type=SchemaType.AVRO, schema=doc, properties={"owner": XSS}))
    html = history(reg, "t/n/x")._repr_html_()
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html or "&lt;script" in html


def test_user_text_is_inert_in_app_messages() -> None:
    from app.render import code_span, error_message, escape_markdown

    text = escape_markdown(error_message(ValueError(XSS + " :red[boom] $x$")))
    assert "<" not in text.replace("\\<", "") and ":red\\[" in text and "\\$" in text
    assert "`" not in code_span("a`b")[1:-1]
