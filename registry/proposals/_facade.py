"""The proposals of an embedded registry (`Registry.proposals`): each call hands over to the registry's
`ProposalDesk` (registry/proposals/_desk.py), under the registry's memory bound and Pulsar line where a
candidate is judged."""

from __future__ import annotations

import builtins

from .._cache_budget import bounded
from .._model import SchemaInfo
from .._pulsar_version import PulsarLine
from .._state import RegistryState
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange, checked_change
from ._desk import ProposalDesk
from ._handle import Proposals
from ._model import Actor, Comment, Proposal, ProposalKind, ProposalReview, ProposalState, ReviewRules
from ._revisions import RevisionDiff


class EmbeddedProposals(Proposals):
    """Schema change proposals over the registry's own storage."""

    __slots__ = ("_desk", "_state")

    def __init__(self, desk: ProposalDesk, state: RegistryState) -> None:
        self._desk = desk
        self._state = state

    @property
    def pulsar_line(self) -> PulsarLine:
        """The line the registry answers as now (`bounded` judges candidates by it)."""
        return self._state.line

    @bounded
    def propose_schema(
        self, topic: str, info: SchemaInfo, *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        return self._desk.propose_schema(topic, info, title, description, actor)

    def propose_policy(
        self,
        target: str,
        change: NamespacePolicyChange | TopicPolicyChange,
        *,
        title: str,
        description: str = "",
        actor: Actor,
    ) -> Proposal:
        return self._desk.propose_policy(target, checked_change(target, change).as_mapping(), title, description, actor)

    def get(self, proposal_id: int) -> Proposal:
        return self._desk.proposal(proposal_id)

    def list(
        self,
        *,
        state: ProposalState | str | None = None,
        namespace: str | None = None,
        topic: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Proposal]:
        return self._desk.proposals(state, namespace, topic, limit)

    def counts(self) -> dict[ProposalState, int]:
        return self._desk.counts()

    @bounded
    def review(self, proposal_id: int) -> ProposalReview:
        return self._desk.review(proposal_id)

    def diff(
        self, proposal_id: int, *, from_revision: int | None = None, to_revision: int | None = None
    ) -> RevisionDiff:
        return self._desk.revision_diff(proposal_id, from_revision, to_revision)

    @bounded
    def revise(
        self,
        proposal_id: int,
        *,
        schema: SchemaInfo | None = None,
        policy: NamespacePolicyChange | TopicPolicyChange | None = None,
        actor: Actor,
    ) -> Proposal:
        if policy is not None:
            proposal = self._desk.proposal(proposal_id)
            if proposal.kind is ProposalKind.POLICY:
                checked_change(proposal.target, policy)
        return self._desk.revise(proposal_id, schema, None if policy is None else policy.as_mapping(), actor)

    @bounded
    def rebase(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._desk.rebase(proposal_id, actor)

    def comment(self, proposal_id: int, text: str, *, path: str = "", actor: Actor) -> Comment:
        return self._desk.comment(proposal_id, text, path, actor)

    def approve(self, proposal_id: int, *, actor: Actor, revision: int | None = None) -> Proposal:
        return self._desk.approve(proposal_id, actor, revision)

    def reject(self, proposal_id: int, reason: str, *, actor: Actor) -> Proposal:
        return self._desk.reject(proposal_id, reason, actor)

    def withdraw(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._desk.withdraw(proposal_id, actor)

    @bounded
    def apply(
        self, proposal_id: int, *, actor: Actor, override_reason: str | None = None, revision: int | None = None
    ) -> Proposal:
        return self._desk.apply(proposal_id, actor, override_reason, revision)

    def rules(self, namespace: str) -> ReviewRules:
        return self._desk.rules(namespace)

    def set_rules(self, namespace: str, rules: ReviewRules, *, actor: Actor) -> ReviewRules:
        return self._desk.set_rules(namespace, rules, actor)
