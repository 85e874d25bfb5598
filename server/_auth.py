"""Bearer tokens with three roles, checked on every route.

Tokens file (`serve --tokens PATH`) or environment variable `SCHEMA_EXPLORER_TOKENS`: one JSON object mapping
each token to its role, e.g. `{"9f2c…": "admin", "41aa…": "viewer"}`. Roles nest: viewer (every read),
producer (+ register and check schemas), admin (+ delete schemas, policies, tenants, namespaces, topics).

Refusals follow Pulsar's conventions (pulsar-semantics.md §7.1): no or unknown token → 401 "Authentication
required" (Pulsar's AuthenticationFilter); a known token without the role → the status and text of the
Pulsar check the route stands for (401 for topic operations, tenant admin and super-user checks; 403 for
namespace and topic policy operations). The explorer API, which Pulsar lacks, answers 403.

Tokens are kept as SHA-256 digests and never logged or echoed; error messages about the file name entries
by position, not by value.
"""

from __future__ import annotations

import contextvars
import enum
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Depends, Request

from ._errors import ApiError, error_responses

TOKENS_ENV = "SCHEMA_EXPLORER_TOKENS"


class Role(enum.IntEnum):
    VIEWER = 1
    PRODUCER = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


class TokenError(ValueError):
    """The tokens file or variable is unusable; the message never contains a token."""


class Tokens:
    """Token digests → roles. Lookup compares digests in constant time."""

    def __init__(self, roles: Mapping[str, Role]) -> None:
        self._roles = {_digest(token): role for token, role in roles.items()}

    def __len__(self) -> int:
        return len(self._roles)

    def role_of(self, token: str) -> Role | None:
        wanted = _digest(token)
        found = None
        for digest, role in self._roles.items():
            if hmac.compare_digest(digest, wanted):
                found = role
        return found


# Who is calling, for the audit trail: set by every route's permission check, read by the writes.
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="anonymous")


def caller_name(role: Role, token: str) -> str:
    """How the audit trail names a caller: the role and a short digest of the token (never the token)."""
    return f"{role.label} #{_digest(token).hex()[:8]}"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def parse_tokens(text: str, source: str) -> Tokens:
    """Parse the JSON object `{token: role}`; `source` names where it came from in error messages."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise TokenError(f"{source}: not valid JSON (line {getattr(exc, 'lineno', '?')})") from None
    if not isinstance(raw, dict) or not raw:
        raise TokenError(f'{source}: expected a non-empty JSON object {{"<token>": "viewer|producer|admin"}}')
    roles: dict[str, Role] = {}
    for position, (token, role) in enumerate(raw.items(), start=1):
        if not isinstance(token, str) or len(token) < 8 or token != token.strip() or not token.isprintable():
            raise TokenError(f"{source}: token #{position} must be at least 8 printable characters, no spaces")
        if not isinstance(role, str) or role.strip().upper() not in Role.__members__:
            raise TokenError(f"{source}: token #{position} has role {role!r}; expected viewer, producer or admin")
        roles[token] = Role[role.strip().upper()]
    return Tokens(roles)


def load_tokens(path: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> Tokens | None:
    """Tokens from `path` if given, else from $SCHEMA_EXPLORER_TOKENS, else None (no authentication)."""
    if path is not None:
        file = Path(path).expanduser()
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise TokenError(f"cannot read tokens file {str(file)!r}: {exc.strerror or exc}") from None
        return parse_tokens(text, f"tokens file {str(file)!r}")
    text = environ.get(TOKENS_ENV, "")
    if not text.strip():
        return None
    return parse_tokens(text, f"${TOKENS_ENV}")


@dataclass(frozen=True, slots=True)
class Permission:
    """What a route needs, and how Pulsar words the refusal: `denial(path_params)` → reason text."""

    role: Role
    status: int
    denial: Callable[[Mapping[str, Any]], str]

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
            "openapi_extra": {"x-required-role": self.role.label},
            "responses": responses,
        }
        if ok is not None:
            responses[200] = {"model": ok, "description": "Successful Response"}
            options["response_model"] = None
        return options

    async def _check(self, request: Request) -> None:
        tokens: Tokens | None = request.app.state.tokens
        if tokens is None:
            return
        header = request.headers.get("authorization", "")
        granted = bearer_role(tokens, header)
        if granted is None:
            raise ApiError(401, "Authentication required", {"WWW-Authenticate": 'Bearer realm="schema-explorer"'})
        if granted < self.role:
            raise ApiError(self.status, self.denial(request.path_params))
        CALLER.set(caller_name(granted, header.partition(" ")[2].strip()))


def bearer_role(tokens: Tokens, header: str) -> Role | None:
    """The role of the token in an `Authorization: Bearer <token>` header value, None when there is none."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return tokens.role_of(token) if scheme.lower() == "bearer" and token else None


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


def tenant_admin() -> Permission:
    """validateAdminAccessForTenant: 401."""
    return Permission(Role.ADMIN, 401, lambda p: "Don't have permission to administrate resources on this tenant")


def super_user() -> Permission:
    """validateSuperUserAccess: 401."""
    return Permission(Role.ADMIN, 401, lambda p: "This operation requires super-user access")


def namespace_policy(policy: str) -> Permission:
    """validateNamespacePolicyOperation (WRITE): 403."""
    return Permission(
        Role.ADMIN,
        403,
        lambda p: (
            "Unauthorized to validateNamespacePolicyOperation for operation [WRITE] on namespace "
            f"[{p.get('tenant')}/{p.get('namespace')}] on policy [{policy}]"
        ),
    )


def namespace_operation(operation: str) -> Permission:
    """validateNamespaceOperation: 403."""
    return Permission(
        Role.ADMIN,
        403,
        lambda p: (
            f"Unauthorized to validateNamespaceOperation for operation [{operation}] on namespace "
            f"[{p.get('tenant')}/{p.get('namespace')}]"
        ),
    )


def topic_policy(policy: str) -> Permission:
    """validateTopicPolicyOperation (WRITE): 403."""
    return Permission(
        Role.ADMIN,
        403,
        lambda p: (
            f"Unauthorized to validateTopicPolicyOperation for operation [WRITE] on topic [{_topic(p)}] "
            f"on policy [{policy}]"
        ),
    )


def explorer(role: Role, action: str) -> Permission:
    """The explorer API's own convention: 403 with the role needed."""
    return Permission(role, 403, lambda p: f"{action} needs the {role.label} role")


# Reads that every role may do (listing, policy reads, broker defaults).
READ = Permission(Role.VIEWER, 401, lambda p: "Don't have permission to read this resource")
