"""One table from RegistryError subclasses to HTTP status codes, and the `{"reason": ...}` error body.

Pulsar's RestException answers `{"reason": "<message>"}`; where Pulsar answers with no body (409/422 of POST
/schema, pulsar-semantics.md §7.1) we send the same body too, so every error names what was wrong.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from registry import (
    ApprovalsMissingError,
    AuthError,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    NotFoundError,
    NotSupportedError,
    PartitionPolicyError,
    PermissionDeniedError,
    PoisonedHistoryError,
    PolicyChangedError,
    PolicyError,
    ProposalError,
    ProposalNotFoundError,
    RegistryError,
    StorageError,
    TopicPoliciesDisabledError,
)
from registry._errors import ERROR_HEADER

from ._logs import shown
from ._request_id import CONTEXT, new_request_id

log = logging.getLogger("server")

# Looked up along the exception's MRO, so the most specific class wins.
STATUS: Mapping[type[RegistryError], int] = {
    NotFoundError: 404,  # schema, topic, namespace or tenant: Pulsar's 404s
    InvalidSchemaError: 422,  # InvalidSchemaDataException (§3.7); also unknown type names, where Pulsar answers 500
    IncompatibleSchemaError: 409,
    # Pulsar fails every later put on a poisoned history with an internal error (HTTP 500, §4.8), a bug: we
    # refuse with 409 (the stored history conflicts with the request) and name the version and field.
    PoisonedHistoryError: 409,
    InvalidNameError: 412,  # Pulsar: "Topic name is not valid" / "Namespace name is not valid"
    PolicyError: 400,
    PartitionPolicyError: 412,  # PersistentTopicsBase.preValidation: PRECONDITION_FAILED
    TopicPoliciesDisabledError: 405,  # AdminResource.checkTopicLevelPolicyEnable: METHOD_NOT_ALLOWED
    InvalidVersionError: 400,  # Pulsar answers 500 (NumberFormatException) for a non-numeric version
    InvalidArgumentError: 400,
    AuthError: 401,
    # Schema change proposals (explorer API): who may not (403), missing approvals (403), a step the proposal's
    # state does not allow or a base that moved (409), a policy saved against a stale preview (409).
    PermissionDeniedError: 403,
    ApprovalsMissingError: 403,
    ProposalError: 409,
    PolicyChangedError: 409,
    NotSupportedError: 501,
    StorageError: 503,  # the file is locked, corrupt or too contended: try again
    RegistryError: 400,
}


# A deliberate difference (issue 21): Jackson reads an unknown enum name in the body of a strategy PUT as
# null (READ_UNKNOWN_ENUM_VALUES_AS_NULL in Pulsar's ObjectMapperFactory), so Pulsar clears the policy and
# answers 204 to a typo. We refuse it and keep the stored value.
STRATEGY_PUT_DIFFERENCE = (
    "a deliberate difference: Pulsar reads an unknown or lower-case strategy name as no value, clears the "
    "stored strategy and answers 204; this server refuses it and keeps the stored value"
)


DESCRIPTIONS: Mapping[int, str] = {
    400: "Invalid request: a body, path or query value the route cannot use",
    401: "Authentication required, or (Pulsar's convention) the token's role may not do this",
    403: "The token's role may not do this",
    404: "Tenant, namespace, topic or schema not found",
    405: "Topic policies are disabled on this broker (topicLevelPoliciesEnabled=false)",
    409: "Refused: incompatible schema, or the resource already exists",
    412: "Invalid tenant, namespace or topic name, or a topic policy asked of one partition",
    422: "Invalid schema data",
}


def error_responses(*codes: int, **described: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error codes, all with the `{"reason": ...}` body; `described` maps
    "e500" style keys to a route-specific description."""
    from ._admin_wire import ErrorBody

    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        text = described.get(f"e{code}", DESCRIPTIONS.get(code, "Error"))
        out[code] = {"model": ErrorBody, "description": text}
    return out


def status_of(exc: RegistryError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


class ApiError(Exception):
    """An HTTP answer decided by the REST contract itself (auth refusals, Pulsar's 409s on existing names)."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = dict(headers or {})


def reason(status: int, text: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"reason": text}, status_code=status, headers=dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RegistryError, _registry_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    # Any other exception (a bug) is answered 500 by the outermost middleware (server/_observe.py), which
    # alone knows the request's id and whether an answer has begun.


async def _registry_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RegistryError)
    if isinstance(exc, StorageError):
        # A storage failure's text names files and SQLite's words: the log gets it, the client a request id.
        return _logged(request, 503, "The registry's storage is unavailable or too busy; try again", exc)
    return reason(status_of(exc), str(exc) or type(exc).__name__, {ERROR_HEADER: type(exc).__name__})


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return reason(exc.status, exc.reason, exc.headers)


# Path values that name a stored thing by a number: one that is not a whole number in the storage's range names
# nothing, so the answer is the 404 of a thing that does not exist (server/_proposals.py `ProposalId`).
NOT_FOUND_WHEN_INVALID: Mapping[str, tuple[type[NotFoundError], str]] = {
    "proposal_id": (ProposalNotFoundError, "no proposal #{}"),
}


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """A body, path or query value that does not fit the route: 400 naming each bad field (Pulsar's JAX-RS
    layer answers 400, or 500 for a body it cannot map); an id in the path that cannot name anything: 404."""
    assert isinstance(exc, RequestValidationError)
    for error in exc.errors():
        location = tuple(error.get("loc", ()))
        if len(location) == 2 and location[0] == "path" and location[1] in NOT_FOUND_WHEN_INVALID:
            missing, text = NOT_FOUND_WHEN_INVALID[location[1]]
            value = str(request.path_params.get(location[1], ""))
            given = value if len(value) <= 40 else value[:40] + "…"
            return reason(404, text.format(given), {ERROR_HEADER: missing.__name__})
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    text = "Invalid request: " + "; ".join(problems)
    if request.method == "PUT" and request.url.path.endswith("CompatibilityStrategy"):
        text += f" ({STRATEGY_PUT_DIFFERENCE})"
    return reason(400, text)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        # Each method is its own route, so Starlette's Allow names only the first route matched.
        headers["Allow"] = ", ".join(allowed_methods(request))
    return reason(exc.status_code, str(exc.detail), headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method the OpenAPI document lists for the paths matching this request."""
    app = request.app
    table: list[tuple[re.Pattern[str], list[str]]] | None = getattr(app.state, "allowed_methods", None)
    if table is None:
        table = [
            (re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(path)) + "$"), [m.upper() for m in ops])
            for path, ops in app.openapi()["paths"].items()
        ]
        app.state.allowed_methods = table
    return sorted({m for pattern, methods in table if pattern.match(request.url.path) for m in methods})


UNEXPECTED = "An unexpected error occurred in the server"


def failure_text(text: str, request_id: str) -> str:
    """What the client reads of a logged failure: what happened and the id to give the operator."""
    return f"{text} (request id {request_id}; the server's log has the details)"


def log_failure(request_id: str, method: str, path: str, exc: BaseException) -> None:
    """The error line of a failed request, with its id and traceback. The path only (query strings and headers
    may carry secrets), shown as a log value (server/_logs.py) since it comes from the request."""
    log.error("request %s: %s %s failed", request_id, method, shown(path), exc_info=exc)


def _logged(request: Request, status: int, text: str, exc: Exception) -> JSONResponse:
    """Log the error under the request's id and answer with that id only: exception texts and file paths stay
    in the server's log, where the operator can find them by the id the client shows."""
    context = CONTEXT.get()
    request_id = new_request_id() if context is None else context.request_id  # the request's own id (issue 36)
    if context is not None:
        context.logged_failure = True
    log_failure(request_id, request.method, request.url.path, exc)
    return reason(status, failure_text(text, request_id), {"X-Request-Id": request_id})
