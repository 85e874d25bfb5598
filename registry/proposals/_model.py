"""The values of a schema change proposal: a candidate (a schema for one topic, or a policy change) that a team
reviews, comments on and approves in the tool, and that is applied exactly as approved (registry/proposals/).

A proposal pins its **base** when it is made: the topic's latest live version (None for a new topic), or the
stored policy a policy change is made against. Editing pushes a new **revision**; approvals belong to one
revision, so a new revision clears them. Applying registers exactly the approved revision, only while the base
is still the latest (a compare-and-set); otherwise the proposal becomes stale and can be rebased.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._changes import SchemaDiff
from .._model import CompatibilityStrategy, NamespacePolicy, Problem, SchemaInfo, TopicPolicy
from ..explain._preview import PolicyPreview, describe_changes
from ..explain._whatif import WhatIf
from ..policy._rules import changed_namespace_policy, changed_topic_policy


class Role(enum.StrEnum):
    """What a person may do (a token's role over REST; a roles file, or the defaults, in the app): each role may
    do what the ones before it may. Viewers read and comment; producers also register schemas, propose and
    approve; admins also change policies, delete, and apply a proposal without its approvals, with a reason."""

    VIEWER = "viewer"
    PRODUCER = "producer"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def at_least(self, other: Role) -> bool:
        return self.rank >= other.rank

    # Roles compare by what they may do, never as the strings they are (admin < producer < viewer by letters).
    def __lt__(self, other: object) -> bool:
        return self.rank < other.rank if isinstance(other, Role) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self.rank <= other.rank if isinstance(other, Role) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self.rank > other.rank if isinstance(other, Role) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return self.rank >= other.rank if isinstance(other, Role) else NotImplemented


_RANKS = {Role.VIEWER: 1, Role.PRODUCER: 2, Role.ADMIN: 3}


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks: the name the audit trail and the proposal record, and the role that decides what they may do."""

    name: str
    role: Role


class ProposalKind(enum.StrEnum):
    """What a proposal changes."""

    SCHEMA = "schema"  # a candidate schema for one topic
    POLICY = "policy"  # a change of a namespace's or a topic's schema policies


class ProposalState(enum.StrEnum):
    """Where a proposal stands. Open until enough approvals (then approved); applied, rejected and withdrawn are
    final; stale when its base is no longer the latest (a rebase opens it again)."""

    OPEN = "open"
    APPROVED = "approved"
    APPLIED = "applied"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"
    STALE = "stale"

    @property
    def final(self) -> bool:
        return self in (ProposalState.APPLIED, ProposalState.REJECTED, ProposalState.WITHDRAWN)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewRules:
    """A namespace's review rules, an explorer setting stored with the registry (never a Pulsar policy):
    how many approvals a proposal needs (0 to 5), who may give them (empty: anyone who may write, except
    the author, who never may), and whether every change there must go through a proposal (`require_proposals`:
    direct schema and policy writes are refused, an admin's too; rules stored before it existed read as False)."""

    required_approvals: int = 1
    reviewers: tuple[str, ...] = ()
    require_proposals: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """One version of the candidate: a schema (schema proposals) or the policy values to set (policy proposals:
    field name → value, as `set_namespace_policy` / `set_topic_policy` take them; None clears a value), with
    the base it was made against."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("sha256", "summary")

    number: int
    author: str
    at: int  # ms since the epoch
    base_version: int | None  # schema proposals: the latest live version when made (None: no live schema)
    schema: SchemaInfo | None = None
    policy: Mapping[str, Any] | None = None
    # policy proposals: the stored policy when made (TopicPolicy first: its JSON never reads as a NamespacePolicy's)
    base_policy: TopicPolicy | NamespacePolicy | None = None

    @property
    def sha256(self) -> str:
        """The SHA-256 of the candidate schema's text (policy proposals: of the policy change, as JSON)."""
        if self.schema is not None:
            text = self.schema.schema
            data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        else:
            data = json.dumps(dict(self.policy or {}), sort_keys=True, default=str).encode()
        return hashlib.sha256(data).hexdigest()

    @property
    def summary(self) -> str:
        """What this revision changes, in one line, from its own candidate and base (never from the title,
        which stays as its author wrote it, so a rebase from BACKWARD to FULL reads "FULL → ..." here):
        "AVRO schema against version 13", or each policy value that changes, "compatibility: FULL → NONE"."""
        if self.schema is not None:
            base = "a topic without a live schema" if self.base_version is None else f"version {self.base_version}"
            return f"{self.schema.type} schema against {base}"
        values = dict(self.policy or {})
        before = self.base_policy
        if isinstance(before, TopicPolicy):
            after: TopicPolicy | NamespacePolicy = changed_topic_policy(before, **values)
        else:
            before = before or NamespacePolicy()
            after = changed_namespace_policy(before, **values)
        return "; ".join(describe_changes(before, after)) or "no change to the policy stored when proposed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    revision: int
    user: str
    at: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Comment:
    """A comment on a proposal, optionally on one field path of its diff. The text is shown as text, always."""

    id: int
    user: str
    at: int
    text: str
    revision: int
    path: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewedProblem:
    """A problem of the candidate under the strategy in force, and whether the proposal introduces it: a
    transitive check also fails on versions that already disagree with the base, which this change did not
    cause (`introduced` False: already there)."""

    problem: Problem
    introduced: bool


# Strategies that refuse every change by definition: left out of what a proposal "introduces".
REFUSES_EVERY_CHANGE = frozenset({CompatibilityStrategy.ALWAYS_INCOMPATIBLE})


@dataclass(frozen=True, slots=True, kw_only=True)
class ProposalReview:
    """What the core says of a proposal's current revision: computed again each time it is shown, frozen into
    the proposal when it is applied. Identical in the app, over REST and in the CLI.

    Schema proposals: `what_if` holds Pulsar's verdict under the strategy in force and under all 8, advisories,
    producer and consumer admission and the upgrade order over the recorded clients, and the diff against the
    latest version; `problems` the in-force verdict's problems marked introduced or already there; `blocking`
    per strategy, whether the candidate introduces a refusal there. Policy proposals: `preview`, the topics
    whose latest change would be refused and the clients that could no longer connect."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = (
        "compatible",
        "introduced_problems",
        "introduced_refusals",
        "judged_strategies",
    )

    line: str  # the Pulsar line it was judged as
    stale: bool  # the base is no longer the latest
    latest_version: int | None  # schema proposals: the topic's latest live version now
    changed_since: tuple[int, ...]  # versions stored after the base
    strategy: CompatibilityStrategy | None = None  # schema proposals: the strategy in force (admin)
    what_if: WhatIf | None = None
    diff: SchemaDiff | None = None  # against the base (None: a new topic, or the base is gone)
    problems: tuple[ReviewedProblem, ...] = ()
    blocking: Mapping[CompatibilityStrategy, bool] | None = None
    preview: PolicyPreview | None = None

    @property
    def compatible(self) -> bool:
        """Whether Pulsar would accept the candidate now (schema proposals), or the policy can be saved."""
        if self.what_if is not None:
            return self.what_if.result.compatible
        return True

    @property
    def introduced_problems(self) -> int:
        return sum(1 for p in self.problems if p.introduced)

    @property
    def introduced_refusals(self) -> tuple[CompatibilityStrategy, ...]:
        """The strategies under which this change itself would be refused (`blocking`), ALWAYS_INCOMPATIBLE
        left out: it refuses every change to a topic with a schema by definition, so it says nothing about
        this one (a compatible change would otherwise always count as "introduces a refusal under 1")."""
        return tuple(s for s, refused in (self.blocking or {}).items() if refused and s not in REFUSES_EVERY_CHANGE)

    @property
    def judged_strategies(self) -> int:
        """How many strategies `introduced_refusals` is counted out of (the 8, ALWAYS_INCOMPATIBLE left out)."""
        return sum(1 for s in (self.blocking or {}) if s not in REFUSES_EVERY_CHANGE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """A proposed change and its review history. `target` is the topic (schema proposals, and topic policies)
    or the namespace (namespace policies)."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("approvers",)

    id: int
    kind: ProposalKind
    target: str
    namespace: str
    title: str
    description: str
    author: str
    created_at: int
    updated_at: int
    state: ProposalState
    revisions: tuple[Revision, ...]
    approvals: tuple[Approval, ...] = ()  # of the current revision only
    comments: tuple[Comment, ...] = ()
    reason: str = ""  # why rejected, or why applied without its approvals (an admin's override)
    applied_by: str = ""
    applied_version: int | None = None  # schema proposals: the version the apply stored or found
    applied_review: ProposalReview | None = None  # the review as it was at apply, frozen
    # the namespace's review rules at apply, frozen: an applied proposal is never judged by later rules (None:
    # applied by a release that did not keep them)
    applied_rules: ReviewRules | None = None
    # "applied, but another write interleaved (version N)": a broker's apply read back another write than its own
    applied_note: str = ""

    @property
    def revision(self) -> Revision:
        """The current revision: the one approvals are for and an apply registers."""
        return self.revisions[-1]

    @property
    def base_version(self) -> int | None:
        return self.revision.base_version

    @property
    def approvers(self) -> tuple[str, ...]:
        return tuple(a.user for a in self.approvals)

    def __repr__(self) -> str:
        return f"Proposal(#{self.id}, {self.kind}, {self.target!r}, {self.state}, revision={self.revision.number})"
