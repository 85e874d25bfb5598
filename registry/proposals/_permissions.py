"""What a person may do, decided in one place: every step (a direct write, a proposal step, an edit of the review
rules) is allowed or refused by `allowed_steps` from the person's role, the target namespace's review rules and,
for a proposal's steps, the proposal's state. The core's own steps raise its refusals (`_rules.py`, the
registry's direct writes), and the shells (the app's buttons, the server's role checks, the CLI) only ask it, so
a button is never offered that the core would refuse, and the server refuses what the role does not allow
whatever a client shows.

Roles nest (viewer < producer < admin). A viewer reads and comments; a producer also registers schemas,
proposes, revises their own proposals and reviews others'; an admin also deletes, sets policies, edits review
rules and webhooks, and applies a proposal without its approvals with a written reason. A namespace whose rules say
`require_proposals` refuses every direct schema or policy write there, an admin's too: the change goes through
a proposal (and, for an admin in a hurry, the override).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .._errors import (
    ApprovalsMissingError,
    PermissionDeniedError,
    ProposalError,
    ProposalsRequiredError,
    ReadOnlyError,
    RegistryError,
    StaleProposalError,
)
from .._identity import among, same_person
from ._model import Actor, Approval, Proposal, ProposalKind, ProposalState, ReviewRules, Role


class Step(enum.StrEnum):
    """Everything a person may be allowed to do that writes."""

    REGISTER = "register"
    DELETE = "delete"
    SET_POLICY = "set_policy"
    PROPOSE = "propose"
    COMMENT = "comment"
    APPROVE = "approve"
    REJECT = "reject"
    WITHDRAW = "withdraw"
    REVISE = "revise"  # an edit or a rebase: a new revision
    APPLY = "apply"
    OVERRIDE = "override"  # apply without the approvals, with a written reason
    EDIT_RULES = "edit_rules"
    ADMINISTER = "administer"  # create tenants, namespaces, topics, or a registry: no schema or policy changes
    MANAGE_WEBHOOKS = "manage_webhooks"  # add, list or remove the registry's webhooks (registry/webhooks/)

    @property
    def role(self) -> Role:
        """The least role the step needs (the server's route checks ask this too)."""
        return STEP_ROLES[self]

    @property
    def doing(self) -> str:
        """The step as a refusal names it ("registering a schema needs the producer role")."""
        return _DOING[self]

    @property
    def done(self) -> str:
        """The step's past participle ("it cannot be approved any more")."""
        return _DONE.get(self, self.value)


_DOING = {
    Step.REGISTER: "registering a schema",
    Step.DELETE: "deleting a schema",
    Step.SET_POLICY: "setting a policy",
    Step.PROPOSE: "proposing",
    Step.COMMENT: "commenting",
    Step.APPROVE: "approving",
    Step.REJECT: "rejecting",
    Step.WITHDRAW: "withdrawing",
    Step.REVISE: "revising",
    Step.APPLY: "applying",
    Step.OVERRIDE: "applying without the approvals",
    Step.EDIT_RULES: "setting review rules",
    Step.ADMINISTER: "creating tenants, namespaces, topics or registries",
    Step.MANAGE_WEBHOOKS: "managing webhooks",
}
_DONE = {
    Step.APPROVE: "approved",
    Step.REJECT: "rejected",
    Step.WITHDRAW: "withdrawn",
    Step.REVISE: "revised",
    Step.APPLY: "applied",
    Step.OVERRIDE: "applied",
}


# The least role each step needs; the server's route checks read the same table (server/_auth.py).
STEP_ROLES: Mapping[Step, Role] = MappingProxyType(
    {
        Step.REGISTER: Role.PRODUCER,
        Step.DELETE: Role.ADMIN,
        Step.SET_POLICY: Role.ADMIN,
        Step.PROPOSE: Role.PRODUCER,
        Step.COMMENT: Role.VIEWER,
        Step.APPROVE: Role.PRODUCER,
        Step.REJECT: Role.PRODUCER,
        Step.WITHDRAW: Role.VIEWER,  # the author's own, or an admin's
        Step.REVISE: Role.PRODUCER,
        Step.APPLY: Role.PRODUCER,  # a policy proposal needs what setting the policy needs: an admin
        Step.OVERRIDE: Role.ADMIN,
        Step.EDIT_RULES: Role.ADMIN,
        Step.ADMINISTER: Role.ADMIN,
        Step.MANAGE_WEBHOOKS: Role.ADMIN,
    }
)
DIRECT_WRITES = (Step.REGISTER, Step.DELETE, Step.SET_POLICY)  # what `require_proposals` refuses
PROPOSAL_STEPS = (Step.COMMENT, Step.APPROVE, Step.REJECT, Step.WITHDRAW, Step.REVISE, Step.APPLY, Step.OVERRIDE)


def apply_role(kind: ProposalKind) -> Role:
    """The role the direct change needs: registering a schema is a producer's, changing a policy an admin's."""
    return (Step.REGISTER if kind is ProposalKind.SCHEMA else Step.SET_POLICY).role


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a step is refused, and the error the core raises for it. `done`: nothing to refuse, the step was
    already taken (approving twice counts once)."""

    reason: str
    error: type[RegistryError] = PermissionDeniedError
    done: bool = False

    def __str__(self) -> str:
        return self.reason

    def exception(self) -> RegistryError:
        return self.error(self.reason)


@dataclass(frozen=True, slots=True)
class AllowedSteps:
    """Each step → None (allowed) or its refusal, for one person, one target and (for the proposal steps) one
    proposal, as `allowed_steps` decided them."""

    refusals: Mapping[Step, Refusal | None]

    def allows(self, step: Step) -> bool:
        return self.refusals[step] is None

    def refusal(self, step: Step) -> Refusal | None:
        return self.refusals[step]

    def reason(self, step: Step) -> str | None:
        """Why `step` is refused, in words; None when it is allowed."""
        found = self.refusals[step]
        return None if found is None else found.reason

    def require(self, step: Step) -> None:
        """Raise the core's error for `step` when it is refused."""
        found = self.refusals[step]
        if found is not None:
            raise found.exception()


def allowed_steps(
    actor: Actor | None,
    rules: ReviewRules,
    proposal: Proposal | None = None,
    *,
    namespace: str = "",
    stale: bool = False,
    read_only: bool = False,
) -> AllowedSteps:
    """What `actor` may do in `namespace`, whose review rules are `rules`, and to `proposal` if one is given
    (its namespace's rules; without one its steps are refused: there is none). `stale`: a review computed now
    found the proposal's base no longer the latest, though the stored state may still say open. `read_only`:
    the handle cannot write at all. No person (`actor` None) may write anything."""
    where = namespace or (proposal.namespace if proposal is not None else "this namespace")
    refusals: dict[Step, Refusal | None] = {}
    for step in Step:
        refusals[step] = _session(actor, read_only) or _decided(step, actor, rules, where, proposal, stale)
    return AllowedSteps(MappingProxyType(refusals))


def proposals_required(namespace: str, rules: ReviewRules, step: Step) -> Refusal | None:
    """The refusal `require_proposals` gives a direct write (whoever asks), or None when the rules allow it."""
    if not rules.require_proposals or step not in DIRECT_WRITES:
        return None
    apply = "; once approved, `schema-explorer proposals apply ID` applies it"
    how = {
        Step.REGISTER: "Propose the schema instead (`schema-explorer propose --topic T --file F --title ...`, REST "
        f"POST /explorer/v1/proposals or the app's Propose…){apply}",
        Step.SET_POLICY: "Propose the change instead (`schema-explorer propose --namespace NS --compatibility ... "
        f"--title ...`, or --topic T; REST POST /explorer/v1/proposals or the app's Propose…){apply}",
        Step.DELETE: "A delete cannot be proposed: an admin turns the rule off for it (a review-rules edit, "
        "audited), then deletes",
    }[step]
    return Refusal(
        f"the review rules of {namespace} require proposals (require_proposals): a direct write here is refused. {how}",
        ProposalsRequiredError,
    )


def _session(actor: Actor | None, read_only: bool) -> Refusal | None:
    if read_only:
        return Refusal("this session is read-only: nothing can be written", ReadOnlyError)
    if actor is None:
        return Refusal("nobody is named: a write could not say who made it")
    return None


def _role(actor: Actor, role: Role, what: str) -> Refusal | None:
    if actor.role.at_least(role):
        return None
    return Refusal(f"{what} needs the {role} role; {actor.name} is a {actor.role}")


def _decided(
    step: Step, actor: Actor | None, rules: ReviewRules, namespace: str, proposal: Proposal | None, stale: bool
) -> Refusal | None:
    assert actor is not None  # _session refused first
    if step in PROPOSAL_STEPS:
        if proposal is None:
            return Refusal(f"there is no proposal to {step}", ProposalError)
        return _proposal_step(step, actor, rules, proposal, stale)
    return _role(actor, step.role, step.doing) or proposals_required(namespace, rules, step)


def _proposal_step(step: Step, actor: Actor, rules: ReviewRules, proposal: Proposal, stale: bool) -> Refusal | None:
    if step is Step.COMMENT:  # the discussion goes on after the fact, on a final proposal too
        return None
    if proposal.state.final:
        return Refusal(f"proposal #{proposal.id} is {proposal.state}: it cannot be {step.done} any more", ProposalError)
    is_stale = stale or proposal.state is ProposalState.STALE
    mine = same_person(actor.name, proposal.author)  # one person in any spelling (registry/_identity.py)
    if step is Step.APPROVE:
        if is_stale:
            return Refusal(f"proposal #{proposal.id} is stale: rebase it before it can be approved", StaleProposalError)
        refusal = may_review(proposal, rules, actor)
        if refusal is None and any(
            same_person(a.user, actor.name) and a.revision == proposal.revision.number for a in proposal.approvals
        ):
            return Refusal(
                f"{actor.name} approved revision {proposal.revision.number} already (it counts once)",
                ProposalError,
                done=True,
            )
        return None if refusal is None else Refusal(refusal)
    if step is Step.REJECT:
        if mine:
            return Refusal(f"{actor.name} wrote proposal #{proposal.id}: withdraw it instead")
        refusal = may_review(proposal, rules, actor)
        return None if refusal is None or actor.role is Role.ADMIN else Refusal(refusal)  # an admin rejects any
    if step in (Step.WITHDRAW, Step.REVISE):
        role = _role(actor, step.role, step.doing)
        if role is not None:
            return role
        if not mine and actor.role is not Role.ADMIN:
            verb = "may withdraw" if step is Step.WITHDRAW else "revises"
            return Refusal(f"only the author ({proposal.author}) or an admin {verb} #{proposal.id}")
        return None
    return _apply_refusal(step, actor, rules, proposal, is_stale)


def _apply_refusal(step: Step, actor: Actor, rules: ReviewRules, proposal: Proposal, stale: bool) -> Refusal | None:
    """APPLY (with the approvals) or OVERRIDE (an admin without them, with a reason)."""
    if stale:
        return Refusal(f"proposal #{proposal.id} is stale: rebase it and have it reviewed again", ProposalError)
    role = _role(actor, apply_role(proposal.kind), f"applying a {proposal.kind} proposal")
    if role is not None:
        return role
    counted = len(counted_approvals(proposal, rules))
    enough = counted >= rules.required_approvals
    missing = f"proposal #{proposal.id} has {counted} of the {rules.required_approvals} approvals"
    if step is Step.APPLY:
        if enough:
            return None
        hint = "; an admin may apply it anyway with a written reason" if actor.role is Role.ADMIN else ""
        return Refusal(f"{missing} {proposal.namespace} asks for{hint}", ApprovalsMissingError)
    if enough:
        return Refusal(f"proposal #{proposal.id} has its approvals: apply it without an override", ProposalError)
    if actor.role is not Role.ADMIN:
        return Refusal(f"{missing}: only an admin may apply it without them (with a reason)")
    return None


def may_review(proposal: Proposal, rules: ReviewRules, actor: Actor) -> str | None:
    """Why `actor` may not approve or reject `proposal` as a reviewer, or None when they may. Neither the author
    nor whoever wrote the current revision (an admin who revised someone's proposal) reviews it."""
    if same_person(actor.name, proposal.author):
        return f"{actor.name} wrote proposal #{proposal.id}: an author never reviews their own proposal"
    if same_person(actor.name, proposal.revision.author):
        return (
            f"{actor.name} wrote revision {proposal.revision.number} of proposal #{proposal.id}: "
            "nobody approves their own revision"
        )
    if not actor.role.at_least(Role.PRODUCER):
        return f"reviewing needs the producer role; {actor.name} is a {actor.role}"
    if rules.reviewers and not among(actor.name, rules.reviewers):
        return f"{actor.name} is not one of the reviewers of {proposal.namespace} ({', '.join(rules.reviewers)})"
    return None


def counted_approvals(proposal: Proposal, rules: ReviewRules) -> tuple[Approval, ...]:
    """The approvals of the current revision that count under the rules as they are now (none from the author
    or from whoever wrote the current revision)."""
    return tuple(
        a
        for a in proposal.approvals
        if a.revision == proposal.revision.number
        and not among(a.user, (proposal.author, proposal.revision.author))
        and (not rules.reviewers or among(a.user, rules.reviewers))
    )
