"""A read-only registry handle: every read answered by the handle it wraps, every write refused before it is sent.

It implements the whole `SchemaRegistry` contract by hand, member by member, so a type checker sees exactly what
it offers and a write member added to the contract later is abstract here until someone decides what it does
(the class cannot be made until then). Nothing reaches the wrapped handle's storage or connection except
through its public reads.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from ._audit import AuditEntry
from ._catalog import IndexStatus, TopicPage, TopicQuery, TopicSummary
from ._changes import SchemaDiff
from ._errors import ReadOnlyError
from ._handle import SchemaRegistry
from ._model import (
    BrokerConfig,
    ClientRecord,
    CompatibilityResult,
    CompatibilityStrategy,
    ConnectedClient,
    EffectivePolicy,
    NamespacePolicy,
    Registration,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._pulsar_version import PulsarLine
from .explain._preview import PolicyPreview
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._rules import UNSET
from .proposals._handle import Proposals
from .proposals._model import Actor, Comment, Proposal, ProposalReview, ProposalState, ReviewRules
from .proposals._revisions import RevisionDiff
from .webhooks._model import Webhook


def _refused(what: str) -> NoReturn:
    raise ReadOnlyError(f"this registry handle is read-only: {what} is refused and nothing was written")


class ReadOnlyRegistry(SchemaRegistry):
    """What `handle.read_only()` and `registry.open(..., read_only=True)` return: answers like the handle it
    wraps, refuses every write with ReadOnlyError. Checks, diffs, what-if, previews and the search index's
    refresh are reads: they change nothing in the registry."""

    __slots__ = ("_inner",)

    def __init__(self, inner: SchemaRegistry) -> None:
        self._inner = inner

    def __repr__(self) -> str:
        return f"ReadOnlyRegistry({self._inner!r})"

    # --- which Pulsar, which backend -------------------------------------------------------------------------

    @property
    def pulsar_line(self) -> PulsarLine:
        return self._inner.pulsar_line

    @property
    def pulsar_version(self) -> str:
        return self._inner.pulsar_version

    @property
    def pulsar_version_source(self) -> str:
        return self._inner.pulsar_version_source

    @property
    def broker(self) -> BrokerConfig:
        return self._inner.broker

    @property
    def location(self) -> str:
        return self._inner.location

    @property
    def is_read_only(self) -> bool:
        return True

    def read_only(self) -> SchemaRegistry:
        return self

    @property
    def requests_sent(self) -> int:
        return self._inner.requests_sent

    @property
    def records_clients(self) -> bool:
        return self._inner.records_clients

    def close(self) -> None:
        self._inner.close()

    # --- writes: refused --------------------------------------------------------------------------------------

    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        _refused("register")

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        _refused("delete")

    def set_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: Any = UNSET,
        auto_update_strategy: Any = UNSET,
        allow_auto_update: Any = UNSET,
        allow_auto_update_with_replicator: Any = UNSET,
        validation_enforced: Any = UNSET,
        expected: NamespacePolicy | None = None,
        user: str = "",
    ) -> NamespacePolicy:
        _refused("set_namespace_policy")

    def set_topic_policy(
        self,
        topic: str,
        *,
        compatibility: Any = UNSET,
        validation_enforced: Any = UNSET,
        expected: TopicPolicy | None = None,
        user: str = "",
    ) -> TopicPolicy:
        _refused("set_topic_policy")

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        _refused("create_tenant")

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        _refused("create_namespace")

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        _refused("create_topic")

    def add_webhook(
        self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor
    ) -> Webhook:
        _refused("add_webhook")

    def remove_webhook(self, webhook_id: int, *, actor: Actor) -> Webhook:
        _refused("remove_webhook")

    # --- reads: answered by the wrapped handle ----------------------------------------------------------------

    @property
    def proposals(self) -> ReadOnlyProposals:
        return ReadOnlyProposals(self._inner.proposals)

    def webhooks(self) -> list[Webhook]:
        return self._inner.webhooks()

    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        return self._inner.check(topic, info, strategy)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        return self._inner.get(topic, version)

    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        return self._inner.find_version(topic, info)

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        return self._inner.audit_trail(target, limit=limit)

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        return self._inner.history(topic, include_deleted=include_deleted)

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        return self._inner.namespace_policy(namespace)

    def topic_policy(self, topic: str) -> TopicPolicy:
        return self._inner.topic_policy(topic)

    def effective_policy(self, topic: str) -> EffectivePolicy:
        return self._inner.effective_policy(topic)

    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        return self._inner.clients(topic)

    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        return self._inner.connected_clients(topic)

    def tenants(self) -> list[str]:
        return self._inner.tenants()

    def namespaces(self, tenant: str) -> list[str]:
        return self._inner.namespaces(tenant)

    def topics(self, namespace: str) -> list[str]:
        return self._inner.topics(namespace)

    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        return self._inner.diff(topic, old, new)

    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        return self._inner.what_if(topic, info)

    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        return self._inner.upgrade_plan(topic, target)

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        return self._inner.policy_impact(namespace, strategy)

    def preview_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: Any = UNSET,
        auto_update_strategy: Any = UNSET,
        allow_auto_update: Any = UNSET,
        allow_auto_update_with_replicator: Any = UNSET,
        validation_enforced: Any = UNSET,
    ) -> PolicyPreview:
        return self._inner.preview_namespace_policy(
            namespace,
            compatibility=compatibility,
            auto_update_strategy=auto_update_strategy,
            allow_auto_update=allow_auto_update,
            allow_auto_update_with_replicator=allow_auto_update_with_replicator,
            validation_enforced=validation_enforced,
        )

    def preview_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET
    ) -> PolicyPreview:
        return self._inner.preview_topic_policy(
            topic, compatibility=compatibility, validation_enforced=validation_enforced
        )

    def change_token(self) -> int:
        return self._inner.change_token()

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        return self._inner.search_topics(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        return self._inner.topic_summary(topic)

    def index_status(self) -> IndexStatus | None:
        return self._inner.index_status()

    def refresh_index(self) -> IndexStatus | None:
        return self._inner.refresh_index()

    def cancel_index(self) -> IndexStatus | None:
        return self._inner.cancel_index()


class ReadOnlyProposals(Proposals):
    """The proposals of a read-only handle: the reads answered by the wrapped handle's, every step refused."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Proposals) -> None:
        self._inner = inner

    def propose_schema(
        self, topic: str, info: SchemaInfo, *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        _refused("proposals.propose_schema")

    def propose_policy(
        self, target: str, changes: Mapping[str, Any], *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        _refused("proposals.propose_policy")

    def get(self, proposal_id: int) -> Proposal:
        return self._inner.get(proposal_id)

    def list(
        self,
        *,
        state: ProposalState | str | None = None,
        namespace: str | None = None,
        topic: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Proposal]:
        return self._inner.list(state=state, namespace=namespace, topic=topic, limit=limit)

    def counts(self) -> dict[ProposalState, int]:
        return self._inner.counts()

    def review(self, proposal_id: int) -> ProposalReview:
        return self._inner.review(proposal_id)

    def diff(
        self, proposal_id: int, *, from_revision: int | None = None, to_revision: int | None = None
    ) -> RevisionDiff:
        return self._inner.diff(proposal_id, from_revision=from_revision, to_revision=to_revision)

    def revise(
        self,
        proposal_id: int,
        *,
        schema: SchemaInfo | None = None,
        policy: Mapping[str, Any] | None = None,
        actor: Actor,
    ) -> Proposal:
        _refused("proposals.revise")

    def rebase(self, proposal_id: int, *, actor: Actor) -> Proposal:
        _refused("proposals.rebase")

    def comment(self, proposal_id: int, text: str, *, path: str = "", actor: Actor) -> Comment:
        _refused("proposals.comment")

    def approve(self, proposal_id: int, *, actor: Actor, revision: int | None = None) -> Proposal:
        _refused("proposals.approve")

    def reject(self, proposal_id: int, reason: str, *, actor: Actor) -> Proposal:
        _refused("proposals.reject")

    def withdraw(self, proposal_id: int, *, actor: Actor) -> Proposal:
        _refused("proposals.withdraw")

    def apply(
        self, proposal_id: int, *, actor: Actor, override_reason: str | None = None, revision: int | None = None
    ) -> Proposal:
        _refused("proposals.apply")

    def rules(self, namespace: str) -> ReviewRules:
        return self._inner.rules(namespace)

    def set_rules(self, namespace: str, rules: ReviewRules, *, actor: Actor) -> ReviewRules:
        _refused("proposals.set_rules")
