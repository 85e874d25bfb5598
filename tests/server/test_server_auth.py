"""Bearer tokens: every route × every role × no token, Pulsar's 401/403 conventions, the tokens format."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from registry import Registry, Role
from schemas import S1
from server import create_app, load_tokens, parse_tokens
from server._auth import TokenError, token_bits
from serving import LOCAL

TOKENS = {
    "viewer": "viewer-token-1-0123456789abcdef",
    "producer": "producer-token-1-0123456789abcdef",
    "admin": "admin-token-01-0123456789abcdef",
}
TOKENS_JSON = json.dumps({token: role for role, token in TOKENS.items()})
ROLES = [Role.VIEWER, Role.PRODUCER, Role.ADMIN]
VALUES = {"tenant": "t", "namespace": "ns", "topic": "x", "version": "0", "proposal_id": "1", "webhook_id": "1"}
SCHEMA = {"type": "AVRO", "schema": S1}
# A body each route can use, by the end of its path.
BODIES: dict[str, object] = {
    "schema": SCHEMA,
    "compatibility": SCHEMA,
    "version": SCHEMA,
    "what-if": SCHEMA,
    "upgrade-plan": SCHEMA,
    "diff": {"candidate": SCHEMA},
    "schemaCompatibilityStrategy": "BACKWARD",
    "schemaAutoUpdateCompatibilityStrategy": "Full",
    "isAllowAutoUpdateSchema": True,
    "schemaValidationEnforced": True,
    "proposals": {"topic": "persistent://t/ns/x", "schema": SCHEMA, "title": "t"},
    "revisions": {"schema": SCHEMA},
    "comments": {"text": "a comment"},
    "reject": {"reason": "no"},
    "apply": {},
    "review-rules": {"required_approvals": 1, "reviewers": []},
}


def _routes() -> list[tuple[str, str, Role]]:
    """Every operation of the OpenAPI document, with the role it declares (a missing one fails here)."""
    paths = create_app(Registry.in_memory()).openapi()["paths"]
    return [
        (method.upper(), path, Role(operation["x-required-role"]))
        for path, operations in paths.items()
        for method, operation in operations.items()
    ]


ROUTES = _routes()


def test_every_api_route_declares_a_role() -> None:
    assert len(ROUTES) >= 45
    assert {role for *_, role in ROUTES} == set(ROLES)


@pytest.mark.parametrize(("method", "path", "needed"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_role_matrix(open_app: Callable[..., TestClient], method: str, path: str, needed: Role) -> None:
    client = open_app(tokens=TOKENS_JSON)
    admin = {"Authorization": f"Bearer {TOKENS['admin']}"}
    assert client.put("/admin/v2/persistent/t/ns/x", headers=admin).status_code == 204
    assert client.post("/admin/v2/schemas/t/ns/x/schema", json=SCHEMA, headers=admin).status_code == 200
    url = re.sub(r"\{(\w+)\}", lambda m: VALUES[m[1]], path)
    body = BODIES.get(path.rsplit("/", 1)[-1]) if method in ("POST", "PUT") else None
    params = {"from": "0", "strategy": "FULL"}

    def call(headers: dict[str, str]) -> tuple[int, str]:
        response = client.request(method, url, json=body, params=params, headers=headers)
        text = response.json().get("reason", "") if response.status_code in (401, 403) else ""
        return response.status_code, text

    for headers in ({}, {"Authorization": "Bearer not-a-known-token"}, {"Authorization": TOKENS["admin"]}):
        assert call(headers) == (401, "Authentication required"), headers
    for role in ROLES:
        status, reason = call({"Authorization": f"Bearer {TOKENS[role.value]}"})
        if role.at_least(needed):
            assert status not in (401, 403), (role, reason)
        else:
            assert status in (401, 403) and reason and reason != "Authentication required", role
            assert TOKENS[role.value] not in reason


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "reason"),
    [
        (
            "POST",
            "/admin/v2/schemas/t/ns/x/schema",
            SCHEMA,
            401,
            "Unauthorized to validateTopicOperation for operation [PRODUCE] on topic [persistent://t/ns/x]",
        ),
        (
            "DELETE",
            "/admin/v2/schemas/t/ns/x/schema",
            None,
            401,
            "Don't have permission to administrate resources on this tenant",
        ),
        (
            "PUT",
            "/admin/v2/namespaces/t/ns/schemaCompatibilityStrategy",
            "FULL",
            403,
            "Unauthorized to validateNamespacePolicyOperation for operation [WRITE] on namespace [t/ns] on policy "
            "[SCHEMA_COMPATIBILITY_STRATEGY]",
        ),
        (
            "PUT",
            "/admin/v2/persistent/t/ns/x/schemaCompatibilityStrategy",
            "FULL",
            403,
            "Unauthorized to validateTopicPolicyOperation for operation [WRITE] on topic [persistent://t/ns/x] on "
            "policy [SCHEMA_COMPATIBILITY_STRATEGY]",
        ),
        ("PUT", "/admin/v2/tenants/u", None, 401, "This operation requires super-user access"),
        ("POST", "/explorer/v1/topics/t/ns/x/what-if", SCHEMA, 403, "what-if needs the producer role"),
    ],
    ids=["topic operation", "tenant admin", "namespace policy", "topic policy", "super-user", "explorer"],
)
def test_viewer_refusals_use_pulsars_status_and_text(
    open_app: Callable[..., TestClient], method: str, path: str, body: object, status: int, reason: str
) -> None:
    client = open_app(tokens=TOKENS_JSON)
    response = client.request(method, path, json=body, headers={"Authorization": f"Bearer {TOKENS['viewer']}"})
    assert (response.status_code, response.json()) == (status, {"reason": reason})


def test_missing_token_says_bearer(open_app: Callable[..., TestClient]) -> None:
    response = open_app(tokens=TOKENS_JSON).get("/admin/v2/tenants")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_without_tokens_everything_is_allowed(client: TestClient) -> None:
    assert client.put("/admin/v2/tenants/u").status_code == 204


def test_docs_and_openapi_need_no_token(open_app: Callable[..., TestClient]) -> None:
    client = open_app(tokens=TOKENS_JSON)
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/docs").status_code == 200


def test_cors_is_closed_by_default(client: TestClient) -> None:
    preflight = client.options(
        "/admin/v2/tenants", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
    )
    assert "access-control-allow-origin" not in preflight.headers
    response = client.get("/admin/v2/tenants", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in response.headers


def test_cors_opens_to_listed_origins_only() -> None:
    app = create_app(Registry.in_memory(), cors_origins=["https://ok.example"])
    with TestClient(app, base_url=LOCAL) as client:
        ok = client.get("/admin/v2/tenants", headers={"Origin": "https://ok.example"})
        other = client.get("/admin/v2/tenants", headers={"Origin": "https://evil.example"})
    assert ok.headers["access-control-allow-origin"] == "https://ok.example"
    assert "access-control-allow-origin" not in other.headers


# --- the tokens format --------------------------------------------------------------------------------------


def test_tokens_from_a_file_and_from_the_environment(tmp_path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(TOKENS_JSON)
    from_file = load_tokens(path, {})
    from_env = load_tokens(None, {"SCHEMA_EXPLORER_TOKENS": TOKENS_JSON})
    for tokens in (from_file, from_env):
        assert tokens is not None and len(tokens) == 3
        assert tokens.role_of(TOKENS["producer"]) is Role.PRODUCER
        assert tokens.role_of("nope-nope-nope") is None
    assert load_tokens(None, {}) is None


STRONG = "0123456789abcdef0123456789abcdef"  # 32 hex characters: 128 bits
WORDY = "secret-token-secret-token-1"  # 27 characters of a wider alphabet, counted as 6 bits each: 162


def _named(first: str, second: str) -> str:
    """A tokens file naming two people, with STRONG and WORDY."""
    return json.dumps({first: {"role": "viewer", "token": STRONG}, second: {"role": "admin", "token": WORDY}})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (f"not json {STRONG}", "not valid JSON"),
        ("[]", "non-empty JSON object"),
        ("{}", "non-empty JSON object"),
        (f'{{"{STRONG}": "root"}}', "token #1 has role 'root'"),
        (f'{{"{STRONG}": "admin", "0123456789abcdef0123456789abcde": "viewer"}}', "token #2 is too weak (about 124"),
        (f'{{"{WORDY}": "admin", "secret-token-1": "viewer"}}', "token #2 is too weak"),
        (f'{{" {STRONG}": "admin"}}', "token #1 must be printable ASCII without spaces"),
        (f'{{"{STRONG}é": "admin"}}', "token #1 must be printable ASCII"),
        (f'{{"{STRONG}": "admin", "{STRONG}": "viewer"}}', "an entry appears twice"),
        (f'{{"ci": {{"role": "producer", "token": "{STRONG}"}}, "ops": {{"role": "admin", "token": "{STRONG}"}}}}',
         "token 'ops' holds the same token as 'ci'"),
        (f'{{"ci": {{"role": "producer", "token": "{STRONG}"}}, "{WORDY}": "admin"}}', "expected {"),
        (f'{{"ci": {{"role": "producer", "token": "{STRONG}", "note": "x"}}}}', "unknown keys ['note']"),
        ('{"ci": {"role": "producer"}}', "token 'ci' has no token"),
        (f'{{" ci": {{"role": "producer", "token": "{STRONG}"}}}}', "a token name must be"),
        (_named("alice", "Alice"), "the names 'alice' and 'Alice' are one person"),
        (_named("alice", "\u0430lice"), "the names 'alice' and '\u0430lice' are one person"),
        (_named("alic\u00e9", "alice\u0301"), "the names 'alic\u00e9' and 'alice\u0301' are one person"),
        (f'{{"Anonymous": {{"role": "viewer", "token": "{STRONG}"}}}}', "the name 'Anonymous' is reserved"),
        (_named("alice", "\u3164"), "the name '\u3164' shows nothing"),
    ],
    ids=["not json", "a list", "empty", "unknown role", "124 bits", "a word", "spaces", "non-ASCII", "duplicate",
         "same token twice", "mixed formats", "unknown key", "no token", "bad name", "two cases", "Cyrillic",
         "NFC and NFD", "anonymous", "a Hangul filler"],
)  # fmt: skip
def test_bad_tokens_are_refused_without_echoing_them(text: str, words: str) -> None:
    with pytest.raises(TokenError) as caught:
        parse_tokens(text, "tokens file 'x'")
    assert words in str(caught.value)
    for token in (STRONG, WORDY, "secret-token-1", STRONG[:-1]):
        assert token not in str(caught.value)


def test_named_tokens_give_their_name_to_the_audit_trail(open_app: Callable[..., TestClient]) -> None:
    named = {"ci-gate": {"role": "producer", "token": STRONG}, "ops": {"role": "admin", "token": WORDY}}
    client = open_app(tokens=json.dumps(named))
    ops, ci = {"Authorization": f"Bearer {WORDY}"}, {"Authorization": f"Bearer {STRONG}"}
    assert client.put("/admin/v2/persistent/t/ns/x", headers=ops).status_code == 204
    assert client.post("/admin/v2/schemas/t/ns/x/schema", json=SCHEMA, headers=ci).status_code == 200
    users = [e["user"] for e in client.get("/explorer/v1/audit", headers=ops).json()["entries"]]
    assert "ci-gate (producer)" in users and "ops (admin)" in users
    assert not any(STRONG[:8] in user or WORDY[:8] in user for user in users)


def test_tokens_are_kept_as_keyed_digests() -> None:
    one, two = parse_tokens(f'{{"{STRONG}": "admin"}}', "a"), parse_tokens(f'{{"{STRONG}": "admin"}}', "b")
    assert one.role_of(STRONG) is two.role_of(STRONG) is Role.ADMIN
    assert one._grants[0][0] != two._grants[0][0]  # a key of its own: a leaked digest says nothing elsewhere
    assert hashlib.sha256(STRONG.encode()).digest() not in (one._grants[0][0], two._grants[0][0])
    assert one.role_of(STRONG + "x") is None and one.role_of("\ud800") is None


def test_a_tokens_file_that_is_not_utf8_is_one_clear_error(tmp_path) -> None:
    path = tmp_path / "tokens.json"
    path.write_bytes(b'{"\xff' + STRONG.encode() + b'": "admin"}')
    with pytest.raises(TokenError, match=r"not UTF-8 text \(byte 0xff at offset 2\)"):
        load_tokens(path, {})
    with pytest.raises(TokenError, match="not UTF-8"):
        load_tokens(None, {"SCHEMA_EXPLORER_TOKENS": '{"\udcff": "admin"}'})


def test_token_new_prints_a_token_the_server_accepts() -> None:
    from cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["token", "new", "--name", "ci", "--role", "producer"]) == 0
    entry = json.loads(out.getvalue())
    assert entry["ci"]["role"] == "producer" and token_bits(entry["ci"]["token"]) >= 256
    assert parse_tokens(out.getvalue(), "new").role_of(entry["ci"]["token"]) is Role.PRODUCER


def test_token_new_refuses_the_reserved_name(capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    assert main(["token", "new", "--name", "Anonymous", "--role", "admin"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "the name 'Anonymous' is reserved" in captured.err


def test_unreadable_tokens_file_is_named(tmp_path) -> None:
    with pytest.raises(TokenError, match="cannot read tokens file"):
        load_tokens(tmp_path / "missing.json", {})


def test_tokens_json_example_in_help_parses() -> None:
    from cli.serve import TOKENS_HELP

    lines = TOKENS_HELP.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("{"))
    last = next(i for i in range(first, len(lines)) if lines[i].rstrip().endswith("}}"))
    example = "\n".join(lines[first : last + 1])
    assert len(parse_tokens(example, "help")) == len(json.loads(example)) == 2
