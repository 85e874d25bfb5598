"""A read-only registry handle: every read answered by the handle it wraps, every write refused before it is sent.

`ReadOnlyRegistry` is a `ForwardingRegistry` (_forwarding.py) that overrides the writes, and hands out proposals
and webhooks that forward their reads and refuse their steps. A member added to the contract is abstract on
ForwardingRegistry until someone writes how it forwards, and tests/unit/test_read_only.py fails until it is
placed as a read or a write (a write then overridden here).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import NoReturn

from ._errors import ReadOnlyError
from ._forwarding import ForwardingRegistry
from ._handle import SchemaRegistry
from ._model import (
    Registration,
    SchemaInfo,
)
from .policy._changes import NamespacePolicyChange, P, PolicyChange, TopicPolicyChange
from .proposals._handle import Proposals
from .proposals._model import Actor, Comment, Proposal, ProposalReview, ProposalState, ReviewRules
from .proposals._revisions import RevisionDiff
from .webhooks._handle import Webhooks
from .webhooks._model import Webhook


def _refused(what: str) -> NoReturn:
    raise ReadOnlyError(f"this registry handle is read-only: {what} is refused and nothing was written")


class ReadOnlyRegistry(ForwardingRegistry):
    """What `handle.read_only()` and `registry.open(..., read_only=True)` return: answers like the handle it
    wraps (ForwardingRegistry), refuses every write with ReadOnlyError. Checks, diffs, what-if, previews and the
    search index's refresh are reads: they change nothing in the registry."""

    __slots__ = ()

    @property
    def is_read_only(self) -> bool:
        return True

    def read_only(self) -> SchemaRegistry:
        return self

    # --- writes: refused --------------------------------------------------------------------------------------

    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        _refused("register")

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        _refused("delete")

    def set_policy(self, target: str, change: PolicyChange[P], *, expected: P | None = None, user: str = "") -> P:
        _refused("set_policy")

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        _refused("create_tenant")

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        _refused("create_namespace")

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        _refused("create_topic")

    @property
    def proposals(self) -> ReadOnlyProposals:
        return ReadOnlyProposals(self._inner.proposals)

    @property
    def webhooks(self) -> ReadOnlyWebhooks:
        return ReadOnlyWebhooks(self._inner.webhooks)


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
        self,
        target: str,
        change: NamespacePolicyChange | TopicPolicyChange,
        *,
        title: str,
        description: str = "",
        actor: Actor,
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
        policy: NamespacePolicyChange | TopicPolicyChange | None = None,
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


class ReadOnlyWebhooks(Webhooks):
    """The webhooks of a read-only handle: listed by the wrapped handle's, never added or removed."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Webhooks) -> None:
        self._inner = inner

    def list(self) -> builtins.list[Webhook]:
        return self._inner.list()

    def add(self, url: str, *, events: Sequence[str] = ("*",), secret: str | None = None, actor: Actor) -> Webhook:
        _refused("webhooks.add")

    def remove(self, webhook_id: int, *, actor: Actor) -> Webhook:
        _refused("webhooks.remove")
