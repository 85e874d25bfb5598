"""What changed between two revisions of a proposal: a reviewer who approved revision 1 sees what revision 2
changes, not only the whole change against the base again (after a rebase, the base itself moved too).

Schema revisions are compared with the registry's own semantic diff (explain/_diff.py), both sides candidates;
policy revisions by the values they set.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._changes import CANDIDATE, SchemaDiff
from .._errors import InvalidArgumentError
from .._schema_data import to_schema_data
from ..explain._diff import diff_schemas
from ._model import Proposal, ProposalKind, Revision


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionDiff:
    """From one revision of a proposal to another: each side's number and base, and what changed (`diff` for a
    schema proposal, both sides "candidate"; `policy_fields`, the policy values set differently, for a policy
    proposal)."""

    proposal_id: int
    from_revision: int
    to_revision: int
    from_base: int | None
    to_base: int | None
    diff: SchemaDiff | None = None
    policy_fields: tuple[str, ...] = ()


def revision_diff(proposal: Proposal, from_revision: int | None, to_revision: int | None) -> RevisionDiff:
    """The diff from `from_revision` to `to_revision` (None: the one before `to_revision`, and the current one);
    InvalidArgumentError naming a revision the proposal does not have."""
    to = _revision(proposal, to_revision, proposal.revision.number, "to")
    before = _revision(proposal, from_revision, max(to.number - 1, 1), "from")
    if proposal.kind is ProposalKind.SCHEMA:
        assert before.schema is not None and to.schema is not None
        old, new = to_schema_data(before.schema, validate=False), to_schema_data(to.schema, validate=False)
        return RevisionDiff(
            proposal_id=proposal.id,
            from_revision=before.number,
            to_revision=to.number,
            from_base=before.base_version,
            to_base=to.base_version,
            diff=diff_schemas(proposal.target, (CANDIDATE, old), (CANDIDATE, new)),
        )
    was, now = dict(before.policy or {}), dict(to.policy or {})
    changed = tuple(sorted(k for k in {*was, *now} if was.get(k, _UNSET) != now.get(k, _UNSET)))
    return RevisionDiff(
        proposal_id=proposal.id,
        from_revision=before.number,
        to_revision=to.number,
        from_base=before.base_version,
        to_base=to.base_version,
        policy_fields=changed,
    )


_UNSET = object()


def _revision(proposal: Proposal, number: int | None, default: int, which: str) -> Revision:
    if number is None:
        number = default
    if isinstance(number, bool) or not isinstance(number, int):
        raise InvalidArgumentError(f"the {which} revision is a whole number from 1, not {number!r}")
    found = next((r for r in proposal.revisions if r.number == number), None)
    if found is None:
        have = len(proposal.revisions)
        raise InvalidArgumentError(
            f"proposal #{proposal.id} has no revision {number} (it has revision{'s 1 to' if have > 1 else ''} {have})"
        )
    return found
