"""The JSON of schema change proposals on the explorer API: `registry.to_json` of the core's values, described
for OpenAPI and validated (a key either side lacks fails), and the request bodies of each step."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from registry import CompatibilityStrategy, ProposalKind, ProposalState, SchemaType

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


class Proposal(Wire):
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
    approvers: list[str]


class ProposalWithReview(Proposal):
    review: ProposalReview = Field(description="the review of the current revision, computed now")


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
