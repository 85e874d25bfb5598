"""Schema change proposals: each step one audited write, in one transaction of the storage that keeps them.

The decisions are `_rules.py`'s and the review `_review.py`'s; this file reads the proposal inside the write's
transaction (which holds the storage's write lock: two reviewers approving at once are serialised, and neither
approval is lost), decides, stores, and writes the audit line. Applying goes through a target (`_targets.py`).
Embedded it is a compare-and-set, as appends are: inside the same transaction the topic's latest live version
must still be the base, else the proposal is marked stale (that mark commits) and StaleProposalError is raised,
with nothing registered. A broker's target reads the latest version again just before writing and refuses the
same way; what it cannot prevent (a write landing between that read and its own) it reads back and records.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from .._audit import AuditAction, AuditOutcome
from .._auditing import AuditNote, Auditor
from .._errors import (
    InvalidArgumentError,
    InvalidSchemaError,
    NamespaceNotFoundError,
    PolicyChangedError,
    StaleProposalError,
)
from .._model import NamespacePolicy, SchemaInfo, TopicPolicy
from .._names import NamespaceName, TopicName
from .._schema_data import checked_info, to_schema_data
from .._state import RegistryState
from ..policy._rules import changed_namespace_policy, changed_topic_policy, policy_topic
from ..storage._base import LocalStorage
from . import _records, _rules
from ._model import (
    Actor,
    Comment,
    Proposal,
    ProposalKind,
    ProposalReview,
    ProposalState,
    ReviewRules,
    Revision,
    Role,
)
from ._permissions import Step, allowed_steps
from ._rebase import rebased_schema
from ._review import review
from ._revisions import RevisionDiff, revision_diff
from ._targets import ApplyTarget

NAMESPACE_FIELDS = (
    "compatibility",
    "auto_update_strategy",
    "allow_auto_update",
    "allow_auto_update_with_replicator",
    "validation_enforced",
)
TOPIC_FIELDS = ("compatibility", "validation_enforced")


class ProposalDesk:
    """The proposals kept in `storage` (with their review rules and audit lines), reviewed against `state` and
    applied to `target`: an embedded registry's own storage for all three (Registry delegates its proposal calls
    here), or a workspace beside a broker (registry/remote/_workspace.py)."""

    def __init__(
        self,
        storage: LocalStorage,
        state: RegistryState,
        target: ApplyTarget,
        auditor: Auditor,
        clock: Callable[[], int],
    ) -> None:
        self._storage = storage
        self._state = state
        self._target = target
        self._auditor = auditor
        self._clock = clock

    # --- reads ------------------------------------------------------------------------------------------

    def proposal(self, proposal_id: int) -> Proposal:
        return _records.load(self._storage, proposal_id)

    def proposals(
        self, state: ProposalState | str | None, namespace: str | None, topic: str | None, limit: int
    ) -> list[Proposal]:
        wanted = None if state is None else _state_named(state)
        ns = None if namespace is None else str(NamespaceName.parse(namespace))
        target = None if topic is None else str(TopicName.parse(topic).base)
        return _records.listing(self._storage, state=wanted, namespace=ns, target=target, limit=limit)

    def counts(self) -> dict[ProposalState, int]:
        return _records.counts(self._storage)

    def review(self, proposal_id: int) -> ProposalReview:
        return review(self._state, self.proposal(proposal_id))

    def revision_diff(self, proposal_id: int, from_revision: int | None, to_revision: int | None) -> RevisionDiff:
        return revision_diff(self.proposal(proposal_id), from_revision, to_revision)

    def rules(self, namespace: str) -> ReviewRules:
        return _records.rules(self._storage, str(NamespaceName.parse(namespace)))

    # --- proposing ----------------------------------------------------------------------------------------

    def propose_schema(self, topic: str, info: SchemaInfo, title: str, description: str, actor: Actor) -> Proposal:
        with self._auditor.audited(AuditAction.PROPOSE, topic, _name(actor)) as note:
            actor = _rules.checked_actor(actor)
            note.input = info.schema if isinstance(info, SchemaInfo) else None
            name = TopicName.parse(topic)
            note.target = str(name.base)
            _rules.require_role(actor, Role.PRODUCER, "proposing a schema")
            self._state.require_namespace(name)
            info = _candidate(info)
            now = self._clock()
            proposal = _opened(
                ProposalKind.SCHEMA,
                str(name.base),
                str(name.namespace_name),
                title,
                description,
                actor,
                now,
                lambda: self._schema_revision(name, info, actor, now, 1),
            )
            made = self._stored(self._in_state(proposal))
            note.detail = f"proposal #{made.id}: {made.title!r}, {info.type} schema against {_base(made)}"
        return made

    def propose_policy(
        self, target: str, changes: Mapping[str, Any], title: str, description: str, actor: Actor
    ) -> Proposal:
        with self._auditor.audited(AuditAction.PROPOSE, target, _name(actor)) as note:
            actor = _rules.checked_actor(actor)
            scope, namespace = self._policy_target(target)
            note.target = scope
            _rules.require_role(actor, Role.PRODUCER, "proposing a policy change")
            now = self._clock()
            proposal = _opened(
                ProposalKind.POLICY,
                scope,
                namespace,
                title,
                description,
                actor,
                now,
                lambda: self._policy_revision(scope, namespace, changes, actor, now, 1),
            )
            made = self._stored(self._in_state(proposal))
            note.detail = f"proposal #{made.id}: {made.title!r}, {_changes_text(made.revision.policy)}"
        return made

    # --- reviewing ----------------------------------------------------------------------------------------

    def revise(
        self, proposal_id: int, schema: SchemaInfo | None, policy: Mapping[str, Any] | None, actor: Actor
    ) -> Proposal:
        with self._step(AuditAction.REVISE_PROPOSAL, proposal_id, actor) as (proposal, actor, note):
            now = self._clock()
            number = proposal.revision.number + 1
            if proposal.kind is ProposalKind.SCHEMA:
                if schema is None or policy is not None:
                    raise InvalidArgumentError(f"proposal #{proposal_id} proposes a schema: revise it with a schema")
                note.input = schema.schema if isinstance(schema, SchemaInfo) else None
                info = _candidate(schema)
                revision = self._schema_revision(TopicName.parse(proposal.target), info, actor, now, number)
            else:
                if policy is None or schema is not None:
                    raise InvalidArgumentError(f"proposal #{proposal_id} changes a policy: revise it with a policy")
                revision = self._policy_revision(proposal.target, proposal.namespace, policy, actor, now, number)
            revised = self._stored(_rules.revise(proposal, self._rules_of(proposal), actor, revision, now))
            note.detail = f"proposal #{proposal_id}: revision {number} against {_base(revised)}; approvals cleared"
        return revised

    def rebase(self, proposal_id: int, actor: Actor) -> Proposal:
        """A new revision against the latest version (or policy) as it is now: a schema proposal's change from
        its base replayed on the latest version (`_rebase.py`), so what others stored since stays; a policy
        proposal's changes against the policy stored now. A conflict is refused, with nothing written."""
        with self._step(AuditAction.REVISE_PROPOSAL, proposal_id, actor) as (proposal, actor, note):
            now = self._clock()
            number = proposal.revision.number + 1
            rules = self._rules_of(proposal)
            _rules.revise(proposal, rules, actor, proposal.revision, now)  # who may: asked before merging
            if proposal.kind is ProposalKind.SCHEMA:
                info = _candidate(rebased_schema(self._state, proposal))
                note.input = info.schema if isinstance(info.schema, str) else None
                revision = self._schema_revision(TopicName.parse(proposal.target), info, actor, now, number)
                merged = "" if revision.sha256 == proposal.revision.sha256 else " (its change replayed on it)"
            else:
                policy = proposal.revision.policy or {}
                revision = self._policy_revision(proposal.target, proposal.namespace, policy, actor, now, number)
                merged = ""
            revised = self._stored(_rules.revise(proposal, rules, actor, revision, now))
            note.detail = f"proposal #{proposal_id}: rebased, revision {number} against {_base(revised)}{merged}; "
            note.detail += "approvals cleared"
        return revised

    def comment(self, proposal_id: int, text: str, path: str, actor: Actor) -> Comment:
        with self._step(AuditAction.COMMENT_PROPOSAL, proposal_id, actor, role=Role.VIEWER) as (proposal, actor, note):
            commented, made = _rules.comment(proposal, actor, text, path, self._clock())
            self._stored(commented)
            where = f" on {made.path}" if made.path else ""
            note.detail = f"proposal #{proposal_id}: comment {made.id}{where} ({len(made.text)} characters)"
        return made

    def approve(self, proposal_id: int, actor: Actor, revision: int | None) -> Proposal:
        with self._step(AuditAction.APPROVE_PROPOSAL, proposal_id, actor, revision=revision) as (
            proposal,
            actor,
            note,
        ):
            rules = self._rules_of(proposal)
            if not proposal.state.final and self._base_moved(proposal):
                if proposal.state is not ProposalState.STALE:
                    self._stored(_rules.stale(proposal, self._clock()))  # the mark commits with the refusal
                raise StaleProposalError(
                    f"proposal #{proposal_id} is stale, nothing was approved: {_moved_text(proposal)}. Rebase it, "
                    "then approve the new revision"
                )
            approved = _rules.approve(proposal, rules, actor, self._clock())
            if approved is proposal:
                note.outcome = AuditOutcome.UNCHANGED
                note.detail = f"proposal #{proposal_id}: already approved by {actor.name} (counted once)"
                return proposal
            self._stored(approved)
            counted = len(_rules.counted_approvals(approved, rules))
            note.detail = (
                f"proposal #{proposal_id} revision {approved.revision.number}: approved "
                f"({counted} of {rules.required_approvals}); now {approved.state}"
            )
        return approved

    def reject(self, proposal_id: int, reason: str, actor: Actor) -> Proposal:
        with self._step(AuditAction.REJECT_PROPOSAL, proposal_id, actor) as (proposal, actor, note):
            rejected = self._stored(_rules.reject(proposal, self._rules_of(proposal), actor, reason, self._clock()))
            note.detail = f"proposal #{proposal_id}: rejected: {rejected.reason}"
        return rejected

    def withdraw(self, proposal_id: int, actor: Actor) -> Proposal:
        with self._step(AuditAction.WITHDRAW_PROPOSAL, proposal_id, actor, role=Role.VIEWER) as (proposal, actor, note):
            withdrawn = self._stored(_rules.withdraw(proposal, actor, self._clock()))
            note.detail = f"proposal #{proposal_id}: withdrawn"
        return withdrawn

    def set_rules(self, namespace: str, found: ReviewRules, actor: Actor) -> ReviewRules:
        with self._auditor.audited(AuditAction.SET_REVIEW_RULES, namespace, _name(actor)) as note:
            actor = _rules.checked_actor(actor)
            ns = NamespaceName.parse(namespace)
            note.target = str(ns)
            before = _records.rules(self._storage, str(ns))
            allowed_steps(actor, before, namespace=str(ns)).require(Step.EDIT_RULES)
            if self._target.namespace_policy(str(ns)) is None:
                raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
            checked = _rules.checked_rules(found.required_approvals, list(found.reviewers), found.require_proposals)
            _rules.require_satisfiable(checked, str(ns))
            _records.put_rules(self._storage, str(ns), checked)
            moved = self._restated(str(ns), checked)
            who = ", ".join(checked.reviewers) or "anyone who may write"
            required = "; direct writes refused (require_proposals)" if checked.require_proposals else ""
            note.detail = f"review rules: {checked.required_approvals} approval(s) from {who}{required}{moved}"
            note.outcome = AuditOutcome.OK if before != checked else AuditOutcome.UNCHANGED
        return checked

    def _restated(self, namespace: str, rules: ReviewRules) -> str:
        """The namespace's open and approved proposals stored again in the state the new rules give them, in
        the rules' own transaction: listings, the state filter, the counts and the server's gauge read the
        stored state, so it must never say "approved" where an apply would say the approvals are missing.
        Returns what moved, for the audit line ("" when nothing did)."""
        moved = []
        for state in (ProposalState.OPEN, ProposalState.APPROVED):
            for proposal in _records.listing(
                self._storage, state=state, namespace=namespace, target=None, limit=_records.ALL
            ):
                now = _rules.state_for(proposal, rules)
                if now is not proposal.state:
                    self._stored(replace(proposal, state=now))  # updated_at stays: nobody touched the proposal
                    moved.append(f"#{proposal.id} {proposal.state} → {now}")
        return f"; {', '.join(sorted(moved))}" if moved else ""

    # --- applying -------------------------------------------------------------------------------------------

    def apply(self, proposal_id: int, actor: Actor, override_reason: str | None, revision: int | None) -> Proposal:
        stale: Proposal | None = None
        with self._step(AuditAction.APPLY_PROPOSAL, proposal_id, actor, revision=revision) as (proposal, actor, note):
            reason = _rules.check_apply(proposal, self._rules_of(proposal), actor, override_reason)
            current = review(self._state, proposal)  # the review at apply, frozen into the proposal
            if current.stale:
                stale = self._stored(_rules.stale(proposal, self._clock()))
                raise StaleProposalError(_stale_text(stale, current))
            try:
                if proposal.kind is ProposalKind.SCHEMA:
                    applied = self._target.apply_schema(proposal, actor)
                else:
                    applied = self._target.apply_policy(proposal)
            except (StaleProposalError, PolicyChangedError):  # the base moved after the review (a broker)
                stale = self._stored(_rules.stale(proposal, self._clock()))
                raise StaleProposalError(_stale_text(stale, current)) from None
            note.version = applied.version if applied.stored else None
            rules = self._rules_of(proposal)
            done = _rules.applied(proposal, rules, actor, self._clock(), current, reason, applied.version)
            if applied.interleaved:
                done = replace(done, applied_note=f"applied, but another write interleaved ({applied.interleaved})")
            done = self._stored(done)
            note.detail = _applied_text(done, current, reason)
        return done

    # --- helpers ------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _step(
        self,
        action: AuditAction,
        proposal_id: int,
        actor: Actor,
        *,
        role: Role = Role.PRODUCER,
        revision: int | None = None,
    ) -> Iterator[tuple[Proposal, Actor, AuditNote]]:
        """One audited step on a stored proposal: the write opened, the person's role checked, the proposal read
        inside the write's transaction (so no other write changes it before this one commits) and, when the
        caller names the `revision` it reviewed, that revision still the current one."""
        with self._auditor.audited(action, f"proposal #{proposal_id}", _name(actor)) as note:
            checked = _rules.checked_actor(actor)
            _rules.require_role(checked, role, str(action).replace("_", " "))
            proposal = self.proposal(proposal_id)
            note.target = proposal.target
            _rules.require_revision(proposal, revision)
            yield proposal, checked, note

    def _base_moved(self, proposal: Proposal) -> bool:
        """Whether the proposal's base is no longer the latest: the topic's latest live version (schema
        proposals) or the stored policy (policy proposals) changed since its current revision was made. What
        the review's `stale` says, without judging the candidate."""
        revision = proposal.revision
        if proposal.kind is ProposalKind.SCHEMA:
            live = self._state.live(TopicName.parse(proposal.target))
            return (live[-1].version if live else None) != revision.base_version
        stored: NamespacePolicy | TopicPolicy
        if proposal.target == proposal.namespace:
            stored = self._target.namespace_policy(proposal.target) or NamespacePolicy()
        else:
            stored = self._target.topic_policy(proposal.target)
        return stored != revision.base_policy

    def _in_state(self, proposal: Proposal) -> Proposal:
        """A new proposal in the state its namespace's rules give it: approved at once where none are needed."""
        return replace(proposal, state=_rules.state_for(proposal, self._rules_of(proposal)))

    def _rules_of(self, proposal: Proposal) -> ReviewRules:
        return _records.rules(self._storage, proposal.namespace)

    def _stored(self, proposal: Proposal) -> Proposal:
        saved = _records.save(self._storage, proposal)
        self._auditor.touched(saved)  # the write's notices name the proposal as stored
        return saved

    def _schema_revision(self, name: TopicName, info: SchemaInfo, actor: Actor, now: int, number: int) -> Revision:
        live = self._state.live(name)
        return Revision(
            number=number, author=actor.name, at=now, base_version=live[-1].version if live else None, schema=info
        )

    def _policy_target(self, target: str) -> tuple[str, str]:
        """(the proposal's target, its namespace): a namespace "tenant/ns", or a topic's base name."""
        text = str(target).strip()
        if "://" not in text and text.count("/") == 1:
            ns = NamespaceName.parse(text)
            if self._target.namespace_policy(str(ns)) is None:
                raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
            return str(ns), str(ns)
        name = policy_topic(text, self._state.broker)
        self._state.require_namespace(name)
        return str(name.base), str(name.namespace_name)

    def _policy_revision(
        self, target: str, namespace: str, changes: Mapping[str, Any], actor: Actor, now: int, number: int
    ) -> Revision:
        """The change checked as saving checks it, its values as JSON text and booleans, against the policy
        stored now."""
        if not isinstance(changes, Mapping) or not changes:
            raise InvalidArgumentError("a policy proposal changes at least one value (a mapping of field to value)")
        allowed = NAMESPACE_FIELDS if target == namespace else TOPIC_FIELDS
        unknown = sorted(set(map(str, changes)) - set(allowed))
        if unknown:
            raise InvalidArgumentError(
                f"unknown policy field(s) {', '.join(unknown)}: choose from {', '.join(allowed)}"
            )
        base: NamespacePolicy | TopicPolicy
        if target == namespace:
            base = self._target.namespace_policy(namespace) or NamespacePolicy()
            changed_namespace_policy(base, **changes)  # refuses what saving would refuse
        else:
            base = self._target.topic_policy(target)
            changed_topic_policy(base, **changes)
        values = {str(k): v.value if isinstance(v, enum.Enum) else v for k, v in changes.items()}
        return Revision(number=number, author=actor.name, at=now, base_version=None, policy=values, base_policy=base)


def _candidate(info: SchemaInfo) -> SchemaInfo:
    """The candidate as a proposal keeps it: validated as registering would (a schema that cannot be stored is
    refused now, not at apply), its text as text, without the client-side name Pulsar does not store."""
    info = checked_info(info)
    to_schema_data(info)
    text = info.schema
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidSchemaError(f"the candidate schema is not UTF-8 text (byte {exc.start})") from None
    return SchemaInfo(type=info.type, schema=text, properties=dict(info.properties))


def _name(actor: object) -> str:
    return str(getattr(actor, "name", "") or "")


def _state_named(value: ProposalState | str) -> ProposalState:
    try:
        return ProposalState(str(value).strip().lower())
    except ValueError:
        known = ", ".join(s.value for s in ProposalState)
        raise InvalidArgumentError(f"unknown proposal state {value!r}: choose one of {known}") from None


def _base(proposal: Proposal) -> str:
    if proposal.kind is ProposalKind.POLICY:
        return "the policy as stored"
    base = proposal.base_version
    return "a topic without a live schema" if base is None else f"version {base}"


def _changes_text(policy: Mapping[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (policy or {}).items()) or "no change"


def _moved_text(proposal: Proposal) -> str:
    if proposal.kind is ProposalKind.POLICY:
        return "the policy was changed since it was proposed"
    return f"it was made against {_base(proposal)}, which is no longer the topic's latest live version"


def _stale_text(proposal: Proposal, current: ProposalReview) -> str:
    if proposal.kind is ProposalKind.POLICY:
        changed = "the policy was changed since it was proposed"
    else:
        since = ", ".join(map(str, current.changed_since)) or "a delete"
        changed = f"it was made against {_base(proposal)}, and since then: {since}"
    return f"proposal #{proposal.id} is stale, nothing was applied: {changed}. Rebase it and have it reviewed again"


def _applied_text(proposal: Proposal, current: ProposalReview, reason: str) -> str:
    revision = proposal.revision
    approvers = ", ".join(proposal.approvers) or "nobody"
    verdict = "compatible" if current.compatible else "incompatible"
    if current.strategy is not None:
        verdict += f" under {current.strategy}"
    what = (
        f"version {proposal.applied_version}"
        if proposal.kind is ProposalKind.SCHEMA
        else _changes_text(revision.policy)
    )
    override = f"; applied WITHOUT the approvals by {proposal.applied_by}: {reason}" if reason else ""
    # Every revision's author: whoever wrote what is applied is named, not only who proposed it first.
    authors = ", ".join(dict.fromkeys(r.author for r in proposal.revisions))
    interleaved = f"; {proposal.applied_note}" if proposal.applied_note else ""
    return (
        f"proposal #{proposal.id} revision {revision.number} by {authors}, approved by {approvers}: "
        f"{what}; verdict {verdict}; sha256 {revision.sha256}{override}{interleaved}"
    )


def _opened(
    kind: ProposalKind,
    target: str,
    namespace: str,
    title: str,
    description: str,
    actor: Actor,
    now: int,
    first: Callable[[], Revision],
) -> Proposal:
    """A new open proposal, before the storage numbers it. The texts are checked before the first revision is
    made (`first`), so a bad title is named before anything about the candidate."""
    return Proposal(
        id=0,
        kind=kind,
        target=target,
        namespace=namespace,
        title=_rules.checked_text(title, "the title", _rules.TITLE_MAX, required=True),
        description=_rules.checked_text(description, "the description", _rules.DESCRIPTION_MAX, required=False),
        author=actor.name,
        created_at=now,
        updated_at=now,
        state=ProposalState.OPEN,
        revisions=(first(),),
    )
