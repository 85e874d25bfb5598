"""Schema change proposals on the explorer API (/explorer/v1/proposals): a team reviews a change in the tool and
exactly what was approved is applied. One core call per route (registry/proposals/); this module only says who
is asking.

The person is the one the token names, with the token's role: viewers read and comment, producers also propose,
revise, approve, reject and apply schema proposals, admins also apply policy proposals, apply without the
approvals (with a written reason) and set review rules. The core decides each of these, so the answers here are
the embedded registry's, errors included (403 not allowed or approvals missing, 409 stale or a state that does
not allow the step, 404 no such proposal). Without tokens (loopback only) every request is one person,
`anonymous`, an admin: an author never approves their own proposal, so such a server applies with an override
reason or with `required_approvals` 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Path, Query, Request, Response

from registry import Actor, InvalidArgumentError, NamespaceName, ReviewRules, Role, TopicName, to_json
from registry import Proposal as CoreProposal
from registry._model import RECORDS_CLIENTS_HEADER
from registry.policy._changes import policy_change
from registry.proposals._permissions import Step
from registry.proposals._rules import require_satisfiable

from . import _auth as auth
from ._deps import Reg, actor_of, written
from ._proposals_wire import (
    AppliedProposal,
    ApplyRequest,
    ApproveRequest,
    Comment,
    CommentRequest,
    Proposal,
    ProposalCounts,
    ProposalList,
    ProposalWithReview,
    ProposeRequest,
    RejectRequest,
    ReviseRequest,
    RevisionDiff,
    RulesRequest,
    StateFilter,
    proposal_json,
)
from ._proposals_wire import ReviewRules as ReviewRulesWire

router = APIRouter(prefix="/explorer/v1", tags=["proposals"])
ONE = "/proposals/{proposal_id}"
RULES = "/namespaces/{tenant}/{namespace}/review-rules"
# A role too low is the core's PermissionDeniedError here too, so a remote registry raises what an embedded one
# raises for the same person.
READ = auth.explorer(Role.VIEWER, "reading proposals")
COMMENT = auth.explorer(Step.COMMENT.role, "commenting")
WRITE = replace(auth.explorer(Step.PROPOSE.role, "proposing and reviewing"), error="PermissionDeniedError")
ADMIN = replace(auth.explorer(Step.EDIT_RULES.role, "setting review rules"), error="PermissionDeniedError")
T = TypeVar("T")
EXPORT_MAX = 1_000_000  # a snapshot export asks for every proposal


async def _written(request: Request, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A proposal step through the server's writer (server/_deps.py `written`); after it, whatever its outcome (a
    refused approve or apply still marks a stale proposal), the counts /metrics shows are read again
    (server/_proposal_tally.py)."""
    try:
        return await written(request, call, *args, **kwargs)
    finally:
        request.app.state.proposal_tally.changed()


# SQLite keeps ids as signed 64-bit INTEGERs: an id outside 1..2^63-1 names no proposal. Checked with the path,
# so the storage is never asked (a larger one made sqlite3 raise OverflowError: a 500 and a dropped connection);
# server/_errors.py answers a path id that does not fit 404, as for any proposal that does not exist.
MAX_PROPOSAL_ID = 2**63 - 1
ProposalId = Annotated[int, Path(ge=1, le=MAX_PROPOSAL_ID, description="the proposal's id, from 1")]


@router.post("/proposals", status_code=201, **WRITE.route_options(403, 404, 412, 422))
async def propose(request: Request, body: ProposeRequest, registry: Reg) -> Proposal:
    """Propose a schema for a topic (`topic`, `schema`) or a policy change (`namespace` or `topic`, `policy`),
    pinned to the latest version or the stored policy. Nothing changes until it is applied."""
    actor = actor_of(request)
    if body.policy is not None:
        if body.schema_ is not None or (body.topic is None) == (body.namespace is None):
            raise InvalidArgumentError("a policy proposal names one target, `namespace` or `topic`, and no schema")
        target = body.namespace if body.namespace is not None else str(body.topic)
        made = await _written(
            request,
            registry.proposals.propose_policy,
            target,
            policy_change(target, body.policy),
            title=body.title,
            description=body.description,
            actor=actor,
        )
    else:
        if body.schema_ is None or body.topic is None or body.namespace is not None:
            raise InvalidArgumentError("a schema proposal names its `topic` and the `schema` (or give a `policy`)")
        made = await _written(
            request,
            registry.proposals.propose_schema,
            body.topic,
            body.schema_.to_info(),
            title=body.title,
            description=body.description,
            actor=actor,
        )
    return Proposal.of(made)


@router.get("/proposals", **READ.route_options(412))
def list_proposals(
    registry: Reg,
    state: StateFilter | None = None,
    namespace: Annotated[str | None, Query(description='"tenant/namespace"')] = None,
    topic: Annotated[str | None, Query(description="a topic's full name")] = None,
    limit: Annotated[int, Query(ge=1, le=EXPORT_MAX)] = 500,
) -> ProposalList:
    """Proposals, newest first."""
    found = registry.proposals.list(
        state=state,
        namespace=None if namespace is None else str(NamespaceName.parse(namespace)),
        topic=None if topic is None else str(TopicName.parse(topic).base),
        limit=limit,
    )
    return ProposalList(proposals=[Proposal.of(p) for p in found])


@router.get("/proposal-counts", **READ.route_options())
def proposal_counts(registry: Reg, response: Response) -> ProposalCounts:
    """How many proposals are in each state (every state named, 0 included). A remote registry asks this first
    to find the explorer API; the header tells it whether this server records clients (the gateway does not)."""
    response.headers[RECORDS_CLIENTS_HEADER] = "true" if registry.records_clients else "false"
    return ProposalCounts(counts={str(state): n for state, n in registry.proposals.counts().items()})


@router.get(ONE, **READ.route_options(404))
def show_proposal(proposal_id: ProposalId, registry: Reg) -> ProposalWithReview:
    """The proposal with its revisions, approvals and comments, and the review of its current revision computed
    now: the verdict under the strategy in force and all 8, each problem introduced or already there,
    advisories, admission, the upgrade order, the Pulsar line, and whether it is stale."""
    proposal = registry.proposals.get(proposal_id)
    review = registry.proposals.review(proposal.id)
    return ProposalWithReview.model_validate({**proposal_json(proposal), "review": to_json(review)})


@router.get(ONE + "/diff", **READ.route_options(400, 404))
def revision_diff(
    proposal_id: ProposalId,
    registry: Reg,
    from_: Annotated[int | None, Query(alias="from", ge=1, description="a revision (default: the one before)")] = None,
    to: Annotated[int | None, Query(ge=1, description="a revision (default: the current one)")] = None,
) -> RevisionDiff:
    """What changed between two revisions of the proposal: a schema proposal's semantic and textual diff (both
    sides candidates), a policy proposal's values set differently. Defaults: the previous and the current
    revision, what a reviewer who saw the previous one needs after a revise or rebase. 400 names a revision the
    proposal does not have."""
    return RevisionDiff.of(registry.proposals.diff(proposal_id, from_revision=from_, to_revision=to))


@router.post(ONE + "/revisions", **WRITE.route_options(403, 404, 409, 422))
async def revise(request: Request, proposal_id: ProposalId, body: ReviseRequest, registry: Reg) -> Proposal:
    """A new revision (the author): its approvals are cleared."""
    schema = None if body.schema_ is None else body.schema_.to_info()
    asked = body.policy

    def revise_it(actor: Actor) -> CoreProposal:
        # The policy values are a change of the proposal's own target: its level says which fields there are.
        policy = None if asked is None else policy_change(registry.proposals.get(proposal_id).target, asked)
        return registry.proposals.revise(proposal_id, schema=schema, policy=policy, actor=actor)

    done = await _written(request, revise_it, actor_of(request))
    return Proposal.of(done)


@router.post(ONE + "/rebase", **WRITE.route_options(403, 404, 409, 422))
async def rebase(request: Request, proposal_id: ProposalId, registry: Reg) -> Proposal:
    """A new revision against the latest version (what a stale proposal needs): the change from its base replayed
    on it, so what was stored since stays. 409 when both changed the same field differently, naming each such
    field; nothing is written then."""
    done = await _written(request, registry.proposals.rebase, proposal_id, actor=actor_of(request))
    return Proposal.of(done)


@router.post(ONE + "/comments", status_code=201, **COMMENT.route_options(404))
async def comment(request: Request, proposal_id: ProposalId, body: CommentRequest, registry: Reg) -> Comment:
    """A comment, optionally on one field path of the diff."""
    call = registry.proposals.comment
    made = await _written(request, call, proposal_id, body.text, path=body.path, actor=actor_of(request))
    return Comment.of(made)


@router.post(ONE + "/approve", **WRITE.route_options(403, 404, 409))
async def approve(
    request: Request, proposal_id: ProposalId, registry: Reg, body: Annotated[ApproveRequest | None, Body()] = None
) -> Proposal:
    """Approve the current revision (never the author's own; twice counts once); with `revision`, only while it
    is the current one."""
    revision = None if body is None else body.revision
    call = registry.proposals.approve
    done = await _written(request, call, proposal_id, actor=actor_of(request), revision=revision)
    return Proposal.of(done)


@router.post(ONE + "/reject", **WRITE.route_options(403, 404, 409))
async def reject(request: Request, proposal_id: ProposalId, body: RejectRequest, registry: Reg) -> Proposal:
    """Reject, with a reason."""
    call = registry.proposals.reject
    done = await _written(request, call, proposal_id, body.reason, actor=actor_of(request))
    return Proposal.of(done)


@router.post(ONE + "/withdraw", **WRITE.route_options(403, 404, 409))
async def withdraw(request: Request, proposal_id: ProposalId, registry: Reg) -> Proposal:
    """Withdraw (the author, or an admin)."""
    done = await _written(request, registry.proposals.withdraw, proposal_id, actor=actor_of(request))
    return Proposal.of(done)


@router.post(
    ONE + "/apply",
    **WRITE.route_options(
        403, 404, 409, 422, e403="not enough approvals, or a role too low", e409="stale, or refused by Pulsar"
    ),
)
async def apply(
    request: Request, response: Response, proposal_id: ProposalId, body: ApplyRequest, registry: Reg
) -> AppliedProposal:
    """Apply exactly the approved revision, only while its base is still the latest (else 409 and the proposal
    is stale). The registration is judged under the strategy in force now. The stored version is in `version`
    (also `applied_version`, and the `X-Registry-Version` header)."""
    call = registry.proposals.apply
    done = await _written(
        request,
        call,
        proposal_id,
        actor=actor_of(request),
        override_reason=body.override_reason,
        revision=body.revision,
    )
    if done.applied_version is not None:
        response.headers["X-Registry-Version"] = str(done.applied_version)
    return AppliedProposal.model_validate({**proposal_json(done), "version": done.applied_version})


@router.get(RULES, **READ.route_options(404, 412))
def review_rules(tenant: str, namespace: str, registry: Reg) -> ReviewRulesWire:
    """A namespace's review rules: an explorer setting, never a Pulsar policy."""
    return ReviewRulesWire.of(registry.proposals.rules(f"{tenant}/{namespace}"))


@router.put(RULES, **ADMIN.route_options(404, 412))
async def set_review_rules(
    request: Request, tenant: str, namespace: str, body: RulesRequest, registry: Reg
) -> ReviewRulesWire:
    """Set them (an admin): 0 to 5 approvals, who may give them (empty: anyone who may write), and whether direct
    schema and policy writes there are refused (`require_proposals`; absent: as it is, so a client that does not
    know it never turns it off)."""
    namespace_name = f"{tenant}/{namespace}"
    tokens: auth.Tokens | None = request.app.state.tokens

    def set_rules(actor: Actor) -> ReviewRules:
        # On the writer thread, so the value kept is the one stored when this write is made.
        required = body.require_proposals
        if required is None:
            required = registry.proposals.rules(namespace_name).require_proposals
        rules = ReviewRules(
            required_approvals=body.required_approvals, reviewers=tuple(body.reviewers), require_proposals=required
        )
        if tokens is not None:  # the server knows who may approve: reviewers named must be able to
            require_satisfiable(rules, namespace_name, tokens.may_approve)
        return registry.proposals.set_rules(namespace_name, rules, actor=actor)

    done = await _written(request, set_rules, actor_of(request))
    return ReviewRulesWire.of(done)
