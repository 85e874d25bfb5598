"""The audit trail: who changed what in the registry, when, and whether it went through.

Every write through the facade (register, delete, policy changes, creations) appends one entry, refusals
included with their reason, so a team can answer "who loosened this namespace's strategy, and when?".
Pulsar keeps no such trail; this is the explorer's own record, stored beside the registry.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AuditAction(enum.StrEnum):
    """What a write asked for, as its audit line records it."""

    REGISTER = "register"
    DELETE = "delete"
    SET_NAMESPACE_POLICY = "set_namespace_policy"
    SET_TOPIC_POLICY = "set_topic_policy"
    CREATE_TENANT = "create_tenant"
    CREATE_NAMESPACE = "create_namespace"
    CREATE_TOPIC = "create_topic"
    SET_PULSAR_VERSION = "set_pulsar_version"
    PROPOSE = "propose"
    REVISE_PROPOSAL = "revise_proposal"
    COMMENT_PROPOSAL = "comment_proposal"
    APPROVE_PROPOSAL = "approve_proposal"
    REJECT_PROPOSAL = "reject_proposal"
    WITHDRAW_PROPOSAL = "withdraw_proposal"
    APPLY_PROPOSAL = "apply_proposal"
    SET_REVIEW_RULES = "set_review_rules"
    ADD_WEBHOOK = "add_webhook"
    REMOVE_WEBHOOK = "remove_webhook"


class AuditOutcome(enum.StrEnum):
    """How the registry answered a write."""

    OK = "ok"  # the write happened
    UNCHANGED = "unchanged"  # accepted but nothing new stored (a duplicate schema, an existing name)
    REFUSED = "refused"  # the registry refused it; `detail` says why


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """One write attempt. `target` is a topic ("persistent://t/n/x"), a namespace ("t/n") or a tenant ("t")."""

    at: int  # ms since the epoch
    user: str
    action: AuditAction
    target: str
    detail: str = ""
    outcome: AuditOutcome = AuditOutcome.OK

    @property
    def tenant(self) -> str:
        return scope_of(self.target)[0]

    @property
    def namespace(self) -> str:
        """ "tenant/namespace" of a topic or namespace target; "" for a tenant."""
        return scope_of(self.target)[1]


def scope_of(target: str) -> tuple[str, str]:
    """(tenant, "tenant/namespace" or "") of an audit target, without validating it (refusals keep bad names)."""
    parts = target.split("://", 1)[-1].split("/")
    tenant = parts[0]
    namespace = "/".join(parts[:2]) if len(parts) >= 2 else ""
    return tenant, namespace


def is_within(entry: AuditEntry, target: str) -> bool:
    """Does `entry` concern `target`: the same target, or a topic or namespace inside it."""
    return entry.target == target or entry.namespace == target or (entry.tenant == target and "/" not in target)
