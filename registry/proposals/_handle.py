"""`Proposals`: the small interface behind `SchemaRegistry.proposals`, every step of a schema change proposal.

A registry handle reaches its proposals as `reg.proposals`, so the handle's own contract (registry/_handle.py)
stays about schemas and policies, and a proposal store can be implemented on its own: the embedded one over the
registry's storage (`_facade.py`), the remote one over `schema-explorer serve`'s explorer API
(registry/remote/_proposals.py), the read-only one that forwards the reads and refuses the steps
(registry/_read_only.py). Every member is abstract and documented here: the contract.
"""

from __future__ import annotations

import abc
import builtins

from .._model import SchemaInfo
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange
from ._model import Actor, Comment, Proposal, ProposalReview, ProposalState, ReviewRules
from ._revisions import RevisionDiff


class Proposals(abc.ABC):
    """Schema change proposals of one registry: propose, review, revise, approve, reject, withdraw, apply."""

    __slots__ = ()

    # --- proposing ----------------------------------------------------------------------------------------

    @abc.abstractmethod
    def propose_schema(
        self, topic: str, info: SchemaInfo, *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        """A proposal to register `info` on `topic`, pinned to the topic's latest live version (its base; None
        for a topic without one). Needs a producer. Nothing is registered until the proposal is applied."""

    @abc.abstractmethod
    def propose_policy(
        self,
        target: str,
        change: NamespacePolicyChange | TopicPolicyChange,
        *,
        title: str,
        description: str = "",
        actor: Actor,
    ) -> Proposal:
        """A proposal to change a namespace's ("tenant/ns": a NamespacePolicyChange) or a topic's (a
        TopicPolicyChange) schema policies, pinned to the policy stored now. A change of the other level than the
        target's is InvalidArgumentError."""

    # --- reading ------------------------------------------------------------------------------------------

    @abc.abstractmethod
    def get(self, proposal_id: int) -> Proposal:
        """One proposal with its revisions, approvals and comments; ProposalNotFoundError when there is none."""

    @abc.abstractmethod
    def list(
        self,
        *,
        state: ProposalState | str | None = None,
        namespace: str | None = None,
        topic: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Proposal]:
        """Proposals, newest first (at most `limit`), filtered by state, namespace or topic."""

    @abc.abstractmethod
    def counts(self) -> dict[ProposalState, int]:
        """How many proposals are in each state, every state named (0 included): one read, for a listing's
        tabs and the server's `schema_explorer_proposals` gauge."""

    @abc.abstractmethod
    def review(self, proposal_id: int) -> ProposalReview:
        """The review of the proposal's current revision, computed now from the registry as it is: the verdict
        under the strategy in force and all 8, each problem introduced or already there, advisories, admission
        and the upgrade order (a policy proposal: its preview), and whether it is stale."""

    @abc.abstractmethod
    def diff(
        self, proposal_id: int, *, from_revision: int | None = None, to_revision: int | None = None
    ) -> RevisionDiff:
        """What changed between two revisions of a proposal (None: the one before `to_revision`, and the current
        one): a schema proposal's semantic and textual diff, a policy proposal's values set differently. A
        revision the proposal does not have is InvalidArgumentError."""

    # --- the steps ----------------------------------------------------------------------------------------

    @abc.abstractmethod
    def revise(
        self,
        proposal_id: int,
        *,
        schema: SchemaInfo | None = None,
        policy: NamespacePolicyChange | TopicPolicyChange | None = None,
        actor: Actor,
    ) -> Proposal:
        """A new revision (by its author): a schema proposal's `schema`, or a policy proposal's `policy` (of its
        target's level), pinned to the latest version or policy as it is now; its approvals are cleared."""

    @abc.abstractmethod
    def rebase(self, proposal_id: int, *, actor: Actor) -> Proposal:
        """A new revision against the latest version (or policy): what a stale proposal needs before it can be
        reviewed and applied again. A schema proposal's change from its base is replayed on the latest version
        (records, enums, unions and Protobuf messages field by field), so what others stored since stays; where
        both changed the same part differently, RebaseConflictError names it and nothing is written."""

    @abc.abstractmethod
    def comment(self, proposal_id: int, text: str, *, path: str = "", actor: Actor) -> Comment:
        """A comment (anyone who may read), optionally on one field path of the diff."""

    @abc.abstractmethod
    def approve(self, proposal_id: int, *, actor: Actor, revision: int | None = None) -> Proposal:
        """An approval of the current revision: a producer or admin among the namespace's reviewers, never the
        author; approving twice counts once. `revision`, the one the person reviewed: when the proposal has a
        newer one, RevisionChangedError and nothing is written (a screen or a script approves what it showed)."""

    @abc.abstractmethod
    def reject(self, proposal_id: int, reason: str, *, actor: Actor) -> Proposal:
        """Reject, with a reason (a reviewer, or an admin)."""

    @abc.abstractmethod
    def withdraw(self, proposal_id: int, *, actor: Actor) -> Proposal:
        """Withdraw (the author, or an admin)."""

    @abc.abstractmethod
    def apply(
        self, proposal_id: int, *, actor: Actor, override_reason: str | None = None, revision: int | None = None
    ) -> Proposal:
        """Apply exactly the approved revision (`revision`, when given, must still be the current one, as for
        `approve`), only while its base is still the latest (else the proposal becomes stale:
        StaleProposalError, nothing applied). Needs the role the direct change needs (a producer for a schema,
        an admin for a policy) on top of the approvals; an admin may apply without them only with
        `override_reason`. The registration is judged under the strategy in force at apply."""

    # --- a namespace's review rules -----------------------------------------------------------------------

    @abc.abstractmethod
    def rules(self, namespace: str) -> ReviewRules:
        """A namespace's review rules (an explorer setting, never a Pulsar policy; default: one approval)."""

    @abc.abstractmethod
    def set_rules(self, namespace: str, rules: ReviewRules, *, actor: Actor) -> ReviewRules:
        """Set them (an admin), `require_proposals` included."""
