"""GET /explorer/v1/audit: the registry's audit trail (who changed what, when, and whether it went through).

Pulsar keeps no such trail; this reads the core's `Registry.audit_trail` (registry/_audit.py), newest first.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from registry import AuditAction, AuditOutcome, Role

from . import _auth as auth
from ._deps import Reg

router = APIRouter(prefix="/explorer/v1", tags=["explorer"])
READ = auth.explorer(Role.VIEWER, "reading the audit trail")


class AuditEntry(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: int = Field(description="when, in milliseconds since the epoch")
    user: str = Field(description="who: the name the writer gave (empty when none)")
    action: AuditAction
    target: str = Field(description='a topic ("persistent://t/n/x"), a namespace ("t/n") or a tenant ("t")')
    detail: str = Field(description="what changed, or why it was refused")
    outcome: AuditOutcome


class AuditTrail(BaseModel):
    target: str | None = Field(description="the target asked for; null for the whole registry")
    entries: list[AuditEntry]


@router.get("/audit", **READ.route_options(400, 412))
def audit_trail(
    registry: Reg,
    target: Annotated[
        str | None,
        Query(
            description="a topic, or a namespace or tenant with everything inside it (default: everything)",
            examples=["acme/orders"],
            max_length=1000,
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="at most this many entries")] = 200,
) -> AuditTrail:
    """Write attempts (registrations, deletes, policy changes, creations), refusals included, newest first."""
    entries = registry.audit_trail(target, limit=limit)
    return AuditTrail(target=target, entries=[AuditEntry.model_validate(e) for e in entries])
