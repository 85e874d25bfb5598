"""Proposals and review rules as a storage keeps them: a proposal is one row (its id, what listings filter on,
and the whole proposal as JSON text, `to_json`'s form), review rules a registry setting per namespace.

A row that no longer reads back as a proposal is a StorageError naming its id, never a half-read proposal; a
storage of one's own without the proposal part (`ProposalStore`) refuses proposals in one clear line.
"""

from __future__ import annotations

import json
from dataclasses import replace

from .._errors import InvalidArgumentError, ProposalNotFoundError, StorageError
from .._wire import from_json, to_json
from ..storage._base import ProposalRow, ProposalStore, Storage
from ._model import Proposal, ProposalState, ReviewRules

_RULES_SETTING = "review_rules:"  # + namespace
ALL = 2**62  # a listing's limit that keeps every row (SQLite and PostgreSQL take a 64-bit LIMIT)


def store_of(storage: Storage) -> ProposalStore:
    if not isinstance(storage, ProposalStore):
        raise StorageError(
            f"this registry's storage ({type(storage).__name__}) keeps no proposals: it lacks proposal, proposals, "
            "proposal_counts and put_proposal (registry/storage/README.md)"
        )
    return storage


MAX_PROPOSAL_ID = 2**63 - 1
"""The largest id a storage can hold: a signed 64-bit integer, as every proposal id column is."""


def load(storage: Storage, proposal_id: int) -> Proposal:
    if isinstance(proposal_id, bool) or not isinstance(proposal_id, int) or proposal_id < 1:
        raise InvalidArgumentError(f"a proposal id is a whole number from 1, not {proposal_id!r}")
    if proposal_id > MAX_PROPOSAL_ID:  # no storage can hold it (SQLite's INTEGER, PostgreSQL's bigint)
        raise ProposalNotFoundError(f"no proposal #{proposal_id}")
    row = store_of(storage).proposal(proposal_id)
    if row is None:
        raise ProposalNotFoundError(f"no proposal #{proposal_id}")
    return _decoded(row)


def listing(
    storage: Storage, *, state: ProposalState | None, namespace: str | None, target: str | None, limit: int
) -> list[Proposal]:
    """The newest proposals first, at most `limit`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgumentError(f"limit is a whole number from 1, not {limit!r}")
    rows = store_of(storage).proposals(
        state=None if state is None else str(state), namespace=namespace, target=target, limit=limit
    )
    return [_decoded(row) for row in rows]


def counts(storage: Storage) -> dict[ProposalState, int]:
    """How many proposals are in each state, every state named (0 for those with none)."""
    found = store_of(storage).proposal_counts()
    try:
        named = {ProposalState(state): n for state, n in found.items()}
    except ValueError:
        unknown = sorted(set(found) - {str(s) for s in ProposalState})
        raise StorageError(f"proposals are stored in a state this release does not know: {unknown}") from None
    return {state: named.get(state, 0) for state in ProposalState}


def save(storage: Storage, proposal: Proposal) -> Proposal:
    """Store `proposal` (id 0: a new one, given its id) and return it as stored."""
    doc = to_json(proposal)
    doc.pop("id")
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    row = ProposalRow(
        id=proposal.id,
        namespace=proposal.namespace,
        target=proposal.target,
        state=str(proposal.state),
        updated_at=proposal.updated_at,
        doc=text,
    )
    made = store_of(storage).put_proposal(row)
    return proposal if made == proposal.id else replace(proposal, id=made)


def _decoded(row: ProposalRow) -> Proposal:
    try:
        doc = json.loads(row.doc)
        doc["id"] = row.id
        return from_json(Proposal, doc)
    except (ValueError, TypeError, InvalidArgumentError) as exc:
        raise StorageError(f"proposal #{row.id} as stored cannot be read back: {exc}") from None


def rules(storage: Storage, namespace: str) -> ReviewRules:
    """The namespace's review rules (the defaults: one approval, anyone may give it, when none were set)."""
    text = storage.setting(_RULES_SETTING + namespace)
    if text is None:
        return ReviewRules()
    try:
        return from_json(ReviewRules, json.loads(text))
    except (ValueError, InvalidArgumentError) as exc:
        raise StorageError(f"the review rules of {namespace} as stored cannot be read back: {exc}") from None


def put_rules(storage: Storage, namespace: str, found: ReviewRules) -> None:
    storage.put_setting(_RULES_SETTING + namespace, json.dumps(to_json(found), separators=(",", ":")))
