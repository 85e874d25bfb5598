"""What the REST shell's routes share: the app's registry, its writer, the caller's name and a JSON answer.

Kept out of the route modules (server/_admin.py, _explorer.py, _policy_writes.py, _audit_routes.py,
_proposals.py, _webhooks.py) so each imports these from here and none imports another for its plumbing. The
writer (server/_writer.py: one thread, group commit) lives on `app.state.writer`, set by `create_app`: each app
has its own, and no module holds one, so an app's /metrics reads its own writer's queue and batches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request, Response

from registry import Actor, Role, SchemaRegistry

from . import _auth as auth
from ._writer import GroupWriter

T = TypeVar("T")


async def registry_of(request: Request) -> SchemaRegistry:
    registry: SchemaRegistry = request.app.state.registry
    return registry


Reg = Annotated[SchemaRegistry, Depends(registry_of)]


def writer_of(state: Any) -> GroupWriter:
    """The app's writer, from its `app.state` (where `create_app` put it)."""
    writer: GroupWriter = state.writer
    return writer


async def written(request: Request, call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`call(*args, **kwargs)` on the app's writer thread, answered once its batch has committed in the app's
    registry; its exception, if any, is raised here. Every write of the server goes through here.

    The call names who makes it, so the audit trail does: `user=caller()` for a facade write, `actor=` for a
    proposal step or a webhook change (`actor_of`)."""
    state = request.app.state
    return await writer_of(state).write(state.registry, call, *args, **kwargs)


def caller() -> str:
    """Who is calling, as the route's permission check found it (server/_auth.py `CALLER`): a facade write's
    `user`."""
    return auth.CALLER.get()


def actor_of(request: Request) -> Actor:
    """The person the token names, with its role (a proposal step's or a webhook change's `actor`); without
    tokens, `anonymous` with every right."""
    if request.app.state.tokens is None:
        return Actor("anonymous", Role.ADMIN)
    grant: auth.Grant = request.scope["state"][auth.GRANT_KEY]
    return Actor(grant.name, grant.role)


def json_answer(body: bytes) -> Response:
    """A 200 with JSON bytes serialised once (no response-model validation of an already valid answer)."""
    return Response(content=body, media_type="application/json")
