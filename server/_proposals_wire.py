"""The JSON of schema change proposals on the explorer API: `registry.to_json` of the core's values, described
for OpenAPI and validated (a key either side lacks fails), and the request bodies of each step."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from registry import CompatibilityStrategy, ProposalKind, ProposalState, SchemaType, to_json
from registry import Proposal as CoreProposal

from ._admin_wire import PostSchemaPayload
from ._explorer_wire import Problem, SchemaDiff, WhatIf, Wire


class SchemaInfoWire(Wire):
    type: SchemaType
    schema_: str = Field(alias="schema")
    properties: dict[str, str]
    name: str = Field(description="always empty: Pulsar's registry keeps no schema name")


class Revision(Wire):
    number: int = Field(description="1 for the proposal as made; each edit or rebase adds one")
    author: str
    at: int = Field(description="ms since the epoch")
    base_version: int | None = Field(description="the topic's latest live version when this revision was made")
    schema_: SchemaInfoWire | None = Field(alias="schema", description="the candidate (schema proposals)")
    policy: dict[str, Any] | None = Field(description="the policy values to set (policy proposals)")
    base_policy: dict[str, Any] | None = Field(description="the stored policy when this revision was made")
    sha256: str = Field(description="SHA-256 of the candidate schema's text (or of the policy change)")
    summary: str = Field(description="what this revision changes, from its candidate and base (not the title)")


class Approval(Wire):
    revision: int
    user: str
    at: int


class Comment(Wire):
    id: int
    user: str
    at: int
    text: str = Field(description="shown as text, always")
    revision: int = Field(description="the revision it was made on")
    path: str = Field(description="the field path of the diff it is about, or empty")


class ReviewedProblem(Wire):
    problem: Problem
    introduced: bool = Field(description="false: already there (the base fails the same way)")


class ProposalReview(Wire):
    line: str = Field(description="the Pulsar line it was judged as")
    stale: bool = Field(description="the base is no longer the latest: rebase before applying")
    latest_version: int | None
    changed_since: list[int] = Field(description="versions stored after the base")
    strategy: CompatibilityStrategy | None = Field(description="the strategy in force (schema proposals)")
    what_if: WhatIf | None = Field(description="the verdict under the strategy in force and all 8, and the rest")
    diff: SchemaDiff | None = Field(description="from the base to the candidate")
    problems: list[ReviewedProblem] = Field(description="problems under the strategy in force")
    blocking: dict[CompatibilityStrategy, bool] | None = Field(description="per strategy: an introduced refusal")
    preview: dict[str, Any] | None = Field(description="policy proposals: what the change would refuse")
    compatible: bool
    introduced_problems: int
    introduced_refusals: list[CompatibilityStrategy] = Field(
        description="strategies under which this change itself is refused; ALWAYS_INCOMPATIBLE, which refuses "
        "every change, left out"
    )
    judged_strategies: int = Field(description="how many strategies introduced_refusals counts out of")


class RevisionDiff(Wire):
    proposal_id: int
    from_revision: int
    to_revision: int
    from_base: int | None = Field(description="the base version the from revision was made against")
    to_base: int | None = Field(description="the base version the to revision was made against")
    diff: SchemaDiff | None = Field(description='schema proposals: from one revision to the other (both "candidate")')
    policy_fields: list[str] = Field(description="policy proposals: the values the two revisions set differently")


class Proposal(Wire):
    """`registry.to_json` of a proposal, plus two facts of its current revision at the top (`revision`,
    `base_version`), which a remote registry drops again when it reads the answer back."""

    id: int
    kind: ProposalKind
    target: str = Field(description="the topic, or the namespace of a namespace policy change")
    namespace: str
    title: str
    description: str
    author: str
    created_at: int
    updated_at: int
    state: ProposalState
    revisions: list[Revision]
    approvals: list[Approval] = Field(description="of the current revision")
    comments: list[Comment]
    reason: str = Field(description="why rejected, or why applied without its approvals")
    applied_by: str
    applied_version: int | None
    applied_review: ProposalReview | None = Field(description="the review at apply, frozen")
    applied_rules: ReviewRules | None = Field(
        description="the namespace's review rules at apply, frozen (null: not applied, or not kept by the release "
        "that applied it)"
    )
    applied_note: str = Field(
        default="", description='"applied, but another write interleaved (version N)": a broker\'s read-back saw one'
    )
    approvers: list[str]
    revision: int = Field(description="the current revision's number (the one approvals are for)")
    base_version: int | None = Field(
        description="the current revision's base: the topic's latest live version when it was made (null: none, "
        "or a policy proposal)"
    )

    @classmethod
    def of(cls, value: Any) -> Self:
        return cls.model_validate(proposal_json(value))


def proposal_json(proposal: CoreProposal) -> dict[str, Any]:
    """A proposal's JSON as the explorer API answers it: the core's, with `revision` and `base_version` on top."""
    return {**to_json(proposal), "revision": proposal.revision.number, "base_version": proposal.base_version}


class ProposalWithReview(Proposal):
    review: ProposalReview = Field(description="the review of the current revision, computed now")


class AppliedProposal(Proposal):
    version: int | None = Field(
        description="the version the apply stored or found (as `applied_version`; null for a policy proposal)"
    )


class ProposalList(BaseModel):
    proposals: list[Proposal]


class ProposalCounts(BaseModel):
    """How many proposals are in each state; every state is named."""

    counts: dict[str, int]


class ReviewRules(Wire):
    required_approvals: int = Field(ge=0, le=5, description="approvals a proposal needs before it is applied")
    reviewers: list[str] = Field(description="who may approve; empty: anyone who may write, except the author")
    require_proposals: bool = Field(
        description="direct schema and policy writes in the namespace are refused: changes go through proposals"
    )


# --- request bodies -------------------------------------------------------------------------------------------

# Numbers stay numbers: in pydantic's lax mode `{"revision": true}` would be read as revision 1 and
# `{"required_approvals": false}` as 0 (the OpenAPI fuzz test sent the latter and it was stored).
STRICT = ConfigDict(extra="forbid", strict=True)


class ProposeRequest(BaseModel):
    """A schema proposal (`topic` and `schema`) or a policy proposal (`namespace` or `topic`, and `policy`)."""

    model_config = ConfigDict(extra="forbid")

    topic: str | None = None
    namespace: str | None = None
    schema_: PostSchemaPayload | None = Field(default=None, alias="schema")
    policy: dict[str, Any] | None = Field(
        default=None,
        description="compatibility, allow_auto_update, validation_enforced, ...",
        examples=[{"compatibility": "FULL"}],
    )
    title: str
    description: str = ""


class ReviseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: PostSchemaPayload | None = Field(default=None, alias="schema")
    policy: dict[str, Any] | None = None


class CommentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    path: str = ""


class RejectRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str


REVISION = Field(
    default=None,
    ge=1,
    description="the revision reviewed: when the proposal has a newer one, 409 RevisionChangedError, nothing written",
)


class ApproveRequest(BaseModel):
    model_config = STRICT

    revision: int | None = REVISION


class ApplyRequest(BaseModel):
    model_config = STRICT

    override_reason: str | None = Field(default=None, description="an admin applying without the approvals")
    revision: int | None = REVISION


class RulesRequest(BaseModel):
    model_config = STRICT

    required_approvals: int
    reviewers: list[str] = []
    require_proposals: bool | None = Field(default=None, description="absent or null: as stored (default false)")


StateFilter = Literal["open", "approved", "applied", "rejected", "withdrawn", "stale"]
