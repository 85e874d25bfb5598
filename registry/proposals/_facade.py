"""The proposal calls of an embedded registry (`Registry` inherits them): each hands over to its `ProposalDesk`
(registry/proposals/_desk.py), under the registry's memory bound and Pulsar line where a candidate is judged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._cache_budget import bounded
from .._model import SchemaInfo
from ._desk import ProposalDesk
from ._model import Actor, Comment, Proposal, ProposalReview, ProposalState, ReviewRules
from ._revisions import RevisionDiff


class EmbeddedProposals:
    """Schema change proposals over the registry's own storage."""

    _desk: ProposalDesk

    @bounded
    def propose_schema(
        self, topic: str, info: SchemaInfo, *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        return self._desk.propose_schema(topic, info, title, description, actor)

    def propose_policy(
        self, target: str, changes: Mapping[str, Any], *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        return self._desk.propose_policy(target, changes, title, description, actor)

    def proposal(self, proposal_id: int) -> Proposal:
        return self._desk.proposal(proposal_id)

    def proposals(
        self,
        *,
        state: ProposalState | str | None = None,
        namespace: str | None = None,
        topic: str | None = None,
        limit: int = 500,
    ) -> list[Proposal]:
        return self._desk.proposals(state, namespace, topic, limit)

    def proposal_counts(self) -> dict[ProposalState, int]:
        return self._desk.counts()

    @bounded
    def review_proposal(self, proposal_id: int) -> ProposalReview:
        return self._desk.review(proposal_id)

    def proposal_diff(
        self, proposal_id: int, *, from_revision: int | None = None, to_revision: int | None = None
    ) -> RevisionDiff:
        return self._desk.revision_diff(proposal_id, from_revision, to_revision)

    @bounded
    def revise_proposal(
        self,
        proposal_id: int,
        *,
        schema: SchemaInfo | None = None,
        policy: Mapping[str, Any] | None = None,
        actor: Actor,
    ) -> Proposal:
        return self._desk.revise(proposal_id, schema, policy, actor)

    @bounded
    def rebase_proposal(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._desk.rebase(proposal_id, actor)

    def comment_on_proposal(self, proposal_id: int, text: str, *, path: str = "", actor: Actor) -> Comment:
        return self._desk.comment(proposal_id, text, path, actor)

    def approve_proposal(self, proposal_id: int, *, actor: Actor, revision: int | None = None) -> Proposal:
        return self._desk.approve(proposal_id, actor, revision)

    def reject_proposal(self, proposal_id: int, reason: str, *, actor: Actor) -> Proposal:
        return self._desk.reject(proposal_id, reason, actor)

    def withdraw_proposal(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._desk.withdraw(proposal_id, actor)

    @bounded
    def apply_proposal(
        self, proposal_id: int, *, actor: Actor, override_reason: str | None = None, revision: int | None = None
    ) -> Proposal:
        return self._desk.apply(proposal_id, actor, override_reason, revision)

    def review_rules(self, namespace: str) -> ReviewRules:
        return self._desk.rules(namespace)

    def set_review_rules(self, namespace: str, rules: ReviewRules, *, actor: Actor) -> ReviewRules:
        return self._desk.set_rules(namespace, rules, actor)
