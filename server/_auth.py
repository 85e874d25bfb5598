"""Bearer tokens with three roles, checked on every route.

Tokens file (`serve --tokens PATH`) or environment variable `SCHEMA_EXPLORER_TOKENS`, UTF-8 JSON. Each token
has a name (what the audit trail records) and a role:

    {"ci-gate": {"role": "producer", "token": "<token>"}, "ops": {"role": "admin", "token": "<token>"}}

The first format, `{"<token>": "<role>"}`, still loads; its tokens are named by position ("token #2").
Roles nest: viewer (every read), producer (+ register and check schemas), admin (+ delete schemas, policies,
tenants, namespaces, topics).

Token names are people: two names that are one person once compared (`alice`, `Alice`, Cyrillic `аlice`:
registry/_identity.py) are refused, and so is `anonymous`, what a server without tokens calls everyone.

A token must be printable ASCII without spaces (HTTP headers carry it) and hold at least 128 bits, estimated
as its length times the bits of the smallest usual alphabet that holds it (digits 3.3, hex 4, anything else
6: a word-like token is not credited with more than base64). `schema-explorer token new` prints a 256-bit one.

Tokens are kept only as HMAC-SHA256 digests under a key drawn when they load, compared in constant time, never
logged or echoed: no digest is stored anywhere, so the key never needs to outlive the process. Error messages
about the file name entries by name or position, never by value.

The gate (server/_gate.py) authenticates every API request before its body is read: no or an unknown token
→ 401 "Authentication required" with `WWW-Authenticate: Bearer` (Pulsar's AuthenticationFilter). The routes
then check the role and refuse as the Pulsar check the route stands for does (401 for topic operations,
tenant admin and super-user checks; 403 for namespace and topic policy operations, pulsar-semantics.md
§7.1). The explorer API, which Pulsar lacks, answers 403.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import math
import os
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Depends, Request

from registry import Role
from registry._errors import ERROR_HEADER
from registry._identity import name_clash, person_key
from registry.proposals._permissions import Step

from ._errors import ApiError, error_responses

TOKENS_ENV = "SCHEMA_EXPLORER_TOKENS"
MIN_TOKEN_BITS = 128
MAX_NAME_CHARS = 64


class TokenError(ValueError):
    """The tokens file or variable is unusable; the message never contains a token."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What a token grants: its name (for the audit trail) and its role."""

    name: str
    role: Role

    @property
    def caller(self) -> str:
        """How the audit trail names whoever used the token."""
        return f"{self.name} ({self.role})"


class Tokens:
    """Keyed token digests → grants. Lookup compares against every digest in constant time."""

    def __init__(self, grants: Mapping[str, Grant]) -> None:
        self._key = secrets.token_bytes(32)
        self._grants = [(self._digest(token), grant) for token, grant in grants.items()]

    def __len__(self) -> int:
        return len(self._grants)

    def grant_of(self, token: str) -> Grant | None:
        try:
            wanted = self._digest(token)
        except UnicodeEncodeError:  # a header value is latin-1 text: a lone surrogate cannot come from one
            return None
        found = None
        for digest, grant in self._grants:
            if hmac.compare_digest(digest, wanted):
                found = grant
        return found

    def role_of(self, token: str) -> Role | None:
        grant = self.grant_of(token)
        return grant.role if grant else None

    def may_approve(self, name: str) -> bool:
        """Whether the person `name` (in any spelling, registry/_identity.py) holds a token that may approve: a
        producer's or an admin's. A name without a token here can approve nothing through this server."""
        key = person_key(name)
        return any(person_key(g.name) == key and g.role.at_least(Role.PRODUCER) for _, g in self._grants)

    def _digest(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode("utf-8"), hashlib.sha256).digest()


# Who is calling, for the audit trail: set by every route's permission check, read by the writes.
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="anonymous")


def new_token() -> str:
    """A 256-bit token in base64url (43 characters)."""
    return secrets.token_urlsafe(32)


def token_bits(token: str) -> float:
    """The estimated strength of a token: its length times the bits per character of its alphabet."""
    chars = set(token)
    per_char = math.log2(10) if chars <= set(string.digits) else 4.0 if chars <= set(string.hexdigits) else 6.0
    return len(token) * per_char


_TOKEN_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))  # printable ASCII, no space


def _check_token(token: object, label: str, source: str) -> str:
    if not isinstance(token, str) or not token:
        raise TokenError(f"{source}: {label} has no token (a non-empty string)")
    if not set(token) <= _TOKEN_CHARS:
        raise TokenError(
            f"{source}: {label} must be printable ASCII without spaces (HTTP headers carry it); "
            "`schema-explorer token new` prints a good one"
        )
    bits = token_bits(token)
    if bits < MIN_TOKEN_BITS:
        raise TokenError(
            f"{source}: {label} is too weak (about {bits:.0f} bits, at least {MIN_TOKEN_BITS} needed: e.g. 32 hex "
            "or 22 base64 characters); `schema-explorer token new` prints a 256-bit one"
        )
    return token


def _role(role: object, label: str, source: str) -> Role:
    if not isinstance(role, str) or role.strip().lower() not in {r.value for r in Role}:
        shown = repr(role) if isinstance(role, str) and len(role) <= 20 else "an unknown value"
        raise TokenError(f"{source}: {label} has role {shown}; expected viewer, producer or admin")
    return Role(role.strip().lower())


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateTokenError
        seen[key] = value
    return seen


class _DuplicateTokenError(Exception):
    """A JSON object holds a key twice (json.loads would keep the last one silently)."""


def parse_tokens(text: str, source: str) -> Tokens:
    """Parse either tokens format (see the module's docstring); `source` names where it came from in errors."""
    try:
        raw = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateTokenError:
        # In the first format the key is a token: never echo it.
        raise TokenError(f"{source}: an entry appears twice; names (and tokens) must be unique") from None
    except ValueError as exc:
        raise TokenError(f"{source}: not valid JSON (line {getattr(exc, 'lineno', '?')})") from None
    example = '{"<name>": {"role": "viewer|producer|admin", "token": "<token>"}}'
    if not isinstance(raw, dict) or not raw:
        raise TokenError(f"{source}: expected a non-empty JSON object {example}")
    grants: dict[str, Grant] = {}
    if all(isinstance(value, dict) for value in raw.values()):
        for name, entry in raw.items():
            label = f"token {_shown_name(name, source)!r}"
            unknown = set(entry) - {"role", "token"}
            if unknown:
                raise TokenError(f"{source}: {label} has unknown keys {sorted(unknown)}; expected role and token")
            token = _check_token(entry.get("token"), label, source)
            if token in grants:
                raise TokenError(f"{source}: {label} holds the same token as {grants[token].name!r}")
            grants[token] = Grant(name, _role(entry.get("role"), label, source))
    elif all(isinstance(value, str) for value in raw.values()):
        for position, (token, role) in enumerate(raw.items(), start=1):
            label = f"token #{position}"
            grants[_check_token(token, label, source)] = Grant(label, _role(role, label, source))
    else:
        raise TokenError(f'{source}: expected {example} (or the first format, {{"<token>": "<role>"}})')
    clash = name_clash(grant.name for grant in grants.values())
    if clash is not None:  # one person under two spellings would approve their own proposal (registry/_identity.py)
        raise TokenError(f"{source}: {clash}")
    return Tokens(grants)


def _shown_name(name: str, source: str) -> str:
    if not name or name != name.strip() or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise TokenError(f"{source}: a token name must be 1-{MAX_NAME_CHARS} printable characters, no outer spaces")
    return name


def load_tokens(path: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> Tokens | None:
    """Tokens from `path` if given, else from $SCHEMA_EXPLORER_TOKENS, else None (no authentication)."""
    if path is not None:
        file = Path(path).expanduser()
        source = f"tokens file {str(file)!r}"
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise TokenError(f"cannot read tokens file {str(file)!r}: {exc.strerror or exc}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TokenError(f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
        return parse_tokens(text, source)
    text = environ.get(TOKENS_ENV, "")
    if not text.strip():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # os.environ keeps undecodable bytes as lone surrogates
        raise TokenError(f"${TOKENS_ENV}: not UTF-8 text") from None
    return parse_tokens(text, f"${TOKENS_ENV}")


@dataclass(frozen=True, slots=True)
class Permission:
    """What a route needs, and how Pulsar words the refusal: `denial(path_params)` → reason text."""

    role: Role
    status: int
    denial: Callable[[Mapping[str, Any]], str]
    error: str = ""  # the core's error class the refusal stands for (X-Registry-Error), where there is one

    def route_options(self, *errors: int, empty: str = "", ok: type | None = None, **described: str) -> dict[str, Any]:
        """Keyword arguments for a route decorator: the check, the role in OpenAPI (x-required-role), and
        the documented answers: `errors` plus the auth refusals, and 204 described by `empty` if given.

        `ok` is the 200 body's model for routes that return serialised bytes (`response_model=None`): the
        answer is documented as before, without FastAPI validating it again."""
        # 400: any route's path, query or body values can fail validation.
        auth = (400, 401) if self.role is Role.VIEWER else (400, 401, self.status)
        responses = error_responses(*sorted({*errors, *auth}), **described)
        if empty:
            responses[204] = {"description": empty}
        options: dict[str, Any] = {
            "dependencies": [Depends(self._check)],
            "openapi_extra": {"x-required-role": self.role.value},
            "responses": responses,
        }
        if ok is not None:
            responses[200] = {"model": ok, "description": "Successful Response"}
            options["response_model"] = None
        return options

    async def _check(self, request: Request) -> None:
        """The role check: the gate (server/_gate.py) already authenticated the request before its body."""
        if request.app.state.tokens is None:
            return
        grant: Grant | None = request.scope.get("state", {}).get(GRANT_KEY)
        if grant is None:  # the gate did not run: never let an unauthenticated request through
            raise ApiError(401, "Authentication required", {"WWW-Authenticate": BEARER_CHALLENGE})
        if not grant.role.at_least(self.role):
            named = {ERROR_HEADER: self.error} if self.error else None
            raise ApiError(self.status, self.denial(request.path_params), named)
        CALLER.set(grant.caller)


GRANT_KEY = "grant"  # the request state's key for what the caller's token grants
BEARER_CHALLENGE = 'Bearer realm="schema-explorer"'


def bearer_grant(tokens: Tokens, header: str) -> Grant | None:
    """What the token in an `Authorization: Bearer <token>` header value grants, None when nothing."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return tokens.grant_of(token) if scheme.lower() == "bearer" and token else None


def _topic(params: Mapping[str, Any]) -> str:
    domain = params.get("domain", "persistent")
    return f"{domain}://{params.get('tenant')}/{params.get('namespace')}/{params.get('topic')}"


def topic_operation(operation: str, role: Role) -> Permission:
    """PulsarWebResource.validateTopicOperation: 401."""
    return Permission(
        role,
        401,
        lambda p: f"Unauthorized to validateTopicOperation for operation [{operation}] on topic [{_topic(p)}]",
    )


def tenant_admin(step: Step = Step.ADMINISTER) -> Permission:
    """validateAdminAccessForTenant: 401, for the core's `step`."""
    return Permission(step.role, 401, lambda p: "Don't have permission to administrate resources on this tenant")


def super_user() -> Permission:
    """validateSuperUserAccess: 401."""
    return Permission(Step.ADMINISTER.role, 401, lambda p: "This operation requires super-user access")


def namespace_policy(policy: str) -> Permission:
    """validateNamespacePolicyOperation (WRITE): 403. The role is the core's for setting a policy."""
    return Permission(
        Step.SET_POLICY.role,
        403,
        lambda p: (
            "Unauthorized to validateNamespacePolicyOperation for operation [WRITE] on namespace "
            f"[{p.get('tenant')}/{p.get('namespace')}] on policy [{policy}]"
        ),
    )


def namespace_operation(operation: str) -> Permission:
    """validateNamespaceOperation: 403."""
    return Permission(
        Step.ADMINISTER.role,
        403,
        lambda p: (
            f"Unauthorized to validateNamespaceOperation for operation [{operation}] on namespace "
            f"[{p.get('tenant')}/{p.get('namespace')}]"
        ),
    )


def topic_policy(policy: str) -> Permission:
    """validateTopicPolicyOperation (WRITE): 403. The role is the core's for setting a policy."""
    return Permission(
        Step.SET_POLICY.role,
        403,
        lambda p: (
            f"Unauthorized to validateTopicPolicyOperation for operation [WRITE] on topic [{_topic(p)}] "
            f"on policy [{policy}]"
        ),
    )


def explorer(role: Role, action: str) -> Permission:
    """The explorer API's own convention: 403 with the role needed."""
    return Permission(role, 403, lambda p: f"{action} needs the {role} role")


# Reads that every role may do (listing, policy reads, broker defaults).
READ = Permission(Role.VIEWER, 401, lambda p: "Don't have permission to read this resource")
