"""The review of a proposal's current revision, computed by the core from the registry as it is now (what the
app, REST and the CLI show alike), and frozen into the proposal when it is applied.

A schema proposal is judged as a registration would be (`what_if`: the strategy in force and all 8, admission,
advisories, the upgrade order) and diffed against its base. Each problem under the strategy in force is marked
**introduced** by the proposal, or **already there**: a transitive strategy checks the candidate against every
live version, and where the base itself already fails against an older version, the candidate failing there
too is not this change's doing (buf users asked for "only the violations this change introduces").
"""

from __future__ import annotations

from collections.abc import Sequence

from .._changes import CANDIDATE
from .._history import data_of, trim
from .._model import CompatibilityResult, CompatibilityStrategy, Problem, SchemaVersion
from .._names import NamespaceName, TopicName
from .._schema_data import to_schema_data
from .._state import RegistryState
from ..explain._answers import what_if
from ..explain._diff import diff_schemas
from ..explain._preview import preview_namespace, preview_topic
from ._model import Proposal, ProposalKind, ProposalReview, ReviewedProblem

ProblemKey = tuple[int | None, str, str, str]


def review(state: RegistryState, proposal: Proposal) -> ProposalReview:
    """The review of `proposal`'s current revision against `state` (inside the facade's call: its Pulsar line)."""
    if proposal.kind is ProposalKind.POLICY:
        return _policy_review(state, proposal)
    return _schema_review(state, proposal)


def _schema_review(state: RegistryState, proposal: Proposal) -> ProposalReview:
    name = TopicName.parse(proposal.target)
    revision = proposal.revision
    assert revision.schema is not None
    entries = state.history(name)
    live = trim(entries)
    latest = live[-1].version if live else None
    base = revision.base_version
    answer = what_if(state, name, revision.schema)
    strategy = answer.effective.value
    base_entry = next((e for e in live if e.version == base), None)
    before_base = [e for e in live if base is not None and e.version < base]
    already = {s: _problem_keys(state, before_base, base_entry, s) for s in answer.by_strategy}
    problems = tuple(
        ReviewedProblem(problem=p, introduced=_key(p) not in already[strategy]) for p in answer.result.problems
    )
    blocking = {
        s: any(_key(p) not in already[s] for p in verdict.problems) for s, verdict in answer.by_strategy.items()
    }
    diff = None
    if base_entry is not None:
        candidate = to_schema_data(revision.schema)
        diff = diff_schemas(str(name.base), (base_entry.version, data_of(base_entry)), (CANDIDATE, candidate))
    return ProposalReview(
        line=state.line.name,
        stale=latest != base,
        latest_version=latest,
        changed_since=tuple(e.version for e in entries if e.version > (-1 if base is None else base)),
        strategy=strategy,
        what_if=answer,
        diff=diff,
        problems=problems,
        blocking=blocking,
    )


def _problem_keys(
    state: RegistryState, before: Sequence[SchemaVersion], base: SchemaVersion | None, strategy: CompatibilityStrategy
) -> set[ProblemKey]:
    """The problems the base itself has against the versions before it under `strategy` (only a transitive
    strategy looks back that far): what a candidate's check finds there is already there."""
    if base is None or not strategy.is_transitive or not before:
        return set()
    verdict: CompatibilityResult = state.judge(list(before), data_of(base), strategy)
    return {_key(p) for p in verdict.problems}


def _key(problem: Problem) -> ProblemKey:
    """A problem as both checks name it: pointers differ between the base and the candidate (a field added
    before it shifts its index); the message names the field itself."""
    return (problem.version, str(problem.code), str(problem.direction), problem.message)


def _policy_review(state: RegistryState, proposal: Proposal) -> ProposalReview:
    revision = proposal.revision
    changes = dict(revision.policy or {})
    if proposal.target == proposal.namespace:  # a namespace's policies (else a topic's own)
        preview = preview_namespace(state, NamespaceName.parse(proposal.target), **changes)
    else:
        preview = preview_topic(state, proposal.target, **changes)
    return ProposalReview(
        line=state.line.name,
        stale=preview.before != revision.base_policy,
        latest_version=None,
        changed_since=(),
        preview=preview,
    )
