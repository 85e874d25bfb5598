"""Schema change proposals of `schema-explorer serve`, as a remote registry reaches them (/explorer/v1/proposals).

The server keeps the proposals and decides every step with the same core; the person is the one its token names
(the `actor` a caller passes is for an embedded registry, and is not sent). Answers are `to_json` of the core's
values, read back with `from_json`, so a remote proposal is the very value the embedded facade returns. A plain
broker keeps no proposals: asking one is NotSupportedError, before any request.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from .._errors import InvalidArgumentError, NotSupportedError, StorageError
from .._model import SchemaInfo
from .._names import NamespaceName
from .._schema_data import checked_info
from .._wire import from_json, to_json
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange, checked_change
from ..proposals._handle import Proposals
from ..proposals._model import Actor, Comment, Proposal, ProposalReview, ProposalState, ReviewRules
from ..proposals._revisions import RevisionDiff
from ._admin_client import AdminClient, clip, payload, raise_for
from ._explorer_api import EXPLORER

T = TypeVar("T")
W = TypeVar("W")
PROPOSALS = f"{EXPLORER}/proposals"


class ProposalsApi:
    """One method per proposals route."""

    def __init__(self, client: AdminClient) -> None:
        self.client = client

    def propose_schema(self, topic: str, info: SchemaInfo, title: str, description: str) -> Proposal:
        body = {"topic": topic, "schema": payload(info), "title": title, "description": description}
        return self._write(Proposal, "POST", PROPOSALS, body, f"proposing a schema for {topic}")

    def propose_policy(self, target: str, changes: Mapping[str, object], title: str, description: str) -> Proposal:
        where = "namespace" if "://" not in target and target.count("/") == 1 else "topic"
        body = {where: target, "policy": to_json(dict(changes)), "title": title, "description": description}
        return self._write(Proposal, "POST", PROPOSALS, body, f"proposing a policy change of {target}")

    def proposal(self, proposal_id: int) -> Proposal:
        doc = self._read(f"{PROPOSALS}/{_id(proposal_id)}", [], f"reading proposal #{proposal_id}")
        doc.pop("review", None)
        return self._decoded(Proposal, _core(doc), f"reading proposal #{proposal_id}")

    def review(self, proposal_id: int) -> ProposalReview:
        doc = self._read(f"{PROPOSALS}/{_id(proposal_id)}", [], f"reviewing proposal #{proposal_id}")
        return self._decoded(ProposalReview, doc.get("review"), f"reviewing proposal #{proposal_id}")

    def diff(self, proposal_id: int, from_revision: int | None, to_revision: int | None) -> RevisionDiff:
        sides = (("from", from_revision), ("to", to_revision))
        params = [(k, str(v)) for k, v in sides if v is not None]
        what = f"comparing revisions of proposal #{proposal_id}"
        return self._decoded(RevisionDiff, self._read(f"{PROPOSALS}/{_id(proposal_id)}/diff", params, what), what)

    def proposals(
        self, state: ProposalState | str | None, namespace: str | None, topic: str | None, limit: int
    ) -> list[Proposal]:
        filters = (("state", state), ("namespace", namespace), ("topic", topic), ("limit", limit))
        params = [(k, str(v)) for k, v in filters if v is not None]
        doc = self._read(PROPOSALS, params, "listing proposals")
        found = doc.get("proposals")
        items = [_core(item) for item in found] if isinstance(found, list) else found
        return self._decoded(list[Proposal], items, "listing proposals")

    def counts(self) -> dict[ProposalState, int]:
        doc = self._read(f"{EXPLORER}/proposal-counts", [], "counting proposals")
        return self._decoded(dict[ProposalState, int], doc.get("counts"), "counting proposals")

    def revise(self, proposal_id: int, schema: SchemaInfo | None, policy: Mapping[str, object] | None) -> Proposal:
        body: dict[str, Any] = {}
        if schema is not None:
            body["schema"] = payload(schema)
        if policy is not None:
            body["policy"] = to_json(dict(policy))
        return self._step(proposal_id, "revisions", body, "revising")

    def rebase(self, proposal_id: int) -> Proposal:
        return self._step(proposal_id, "rebase", {}, "rebasing")

    def comment(self, proposal_id: int, text: str, path: str) -> Comment:
        path_ = f"{PROPOSALS}/{_id(proposal_id)}/comments"
        return self._write(Comment, "POST", path_, {"text": text, "path": path}, f"commenting on #{proposal_id}")

    def approve(self, proposal_id: int, revision: int | None) -> Proposal:
        return self._step(proposal_id, "approve", _revision(revision), "approving")

    def reject(self, proposal_id: int, reason: str) -> Proposal:
        return self._step(proposal_id, "reject", {"reason": reason}, "rejecting")

    def withdraw(self, proposal_id: int) -> Proposal:
        return self._step(proposal_id, "withdraw", {}, "withdrawing")

    def apply(self, proposal_id: int, override_reason: str | None, revision: int | None) -> Proposal:
        return self._step(proposal_id, "apply", {"override_reason": override_reason, **_revision(revision)}, "applying")

    def rules(self, namespace: str) -> ReviewRules:
        doc = self._read(_rules_path(namespace), [], f"reading the review rules of {namespace}")
        return self._decoded(ReviewRules, doc, f"reading the review rules of {namespace}")

    def set_rules(self, namespace: str, rules: ReviewRules) -> ReviewRules:
        return self._write(
            ReviewRules, "PUT", _rules_path(namespace), to_json(rules), f"setting the review rules of {namespace}"
        )

    # --- transport ----------------------------------------------------------------------------------------

    def _step(self, proposal_id: int, step: str, body: Mapping[str, Any], what: str) -> Proposal:
        path = f"{PROPOSALS}/{_id(proposal_id)}/{step}"
        return self._write(Proposal, "POST", path, body, f"{what} proposal #{proposal_id}")

    def _read(self, path: str, params: Sequence[tuple[str, str]], what: str) -> dict[str, Any]:
        response = self.client.get(path, params)
        raise_for(response, what, url=self.client.url)
        return self._object(response, what)

    def _write(self, kind: type[T], method: str, path: str, body: Mapping[str, Any], what: str) -> T:
        response = self.client.write(method, path, body=dict(body))
        raise_for(response, what, url=self.client.url)
        doc = self._object(response, what)
        return self._decoded(kind, _core(doc) if kind is Proposal else doc, what)

    def _object(self, response: httpx.Response, what: str) -> dict[str, Any]:
        doc = self.client.json(response, what)
        if not isinstance(doc, dict):
            raise StorageError(f"{what}: {self.client.url} answered {clip(response.text)!r}, not a JSON object")
        return doc

    def _decoded(self, kind: type[T], doc: Any, what: str) -> T:
        try:
            return from_json(kind, doc)
        except InvalidArgumentError as exc:
            raise StorageError(
                f"{what}: {self.client.url} answered in a form this client does not read ({exc}); is the server "
                "a different release of schema-explorer?"
            ) from None


# What the server puts on top of a proposal's core JSON, for clients that read it as it is (the current
# revision's number and base, and the version an apply stored): the core's value has them already.
_ON_TOP = ("revision", "base_version", "version")


def _core(doc: Any) -> Any:
    """A proposal's JSON as the server answers it, without what the server puts on top of the core's."""
    if not isinstance(doc, dict):
        return doc
    return {key: value for key, value in doc.items() if key not in _ON_TOP}


def _revision(revision: int | None) -> dict[str, int]:
    """The body field naming the revision reviewed (checked by the server inside its write)."""
    if revision is None:
        return {}
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise InvalidArgumentError(f"a revision is a whole number from 1, not {revision!r}")
    return {"revision": revision}


def _id(proposal_id: int) -> str:
    if isinstance(proposal_id, bool) or not isinstance(proposal_id, int) or proposal_id < 1:
        raise InvalidArgumentError(f"a proposal id is a whole number from 1, not {proposal_id!r}")
    return str(proposal_id)


def _rules_path(namespace: str) -> str:
    ns = NamespaceName.parse(namespace)
    return f"{EXPLORER}/namespaces/{quote(ns.tenant, safe='')}/{quote(ns.namespace, safe='')}/review-rules"


class RemoteProposals(Proposals):
    """The proposals of a remote registry (`RemoteRegistry.proposals`): answered by `serve`, refused at once
    for a plain broker."""

    __slots__ = ("_api", "_url", "_wrote")

    def __init__(self, api: ProposalsApi | None, url: str, wrote: Callable[[], None]) -> None:
        """`api` None: a plain broker; `wrote` tells the handle a step changed the server (its caches key on
        its own writes too)."""
        self._api = api
        self._url = url
        self._wrote = wrote

    def _proposals(self) -> ProposalsApi:
        if self._api is None:
            raise NotSupportedError(
                f"{self._url} is a Pulsar broker, which keeps no proposals: propose and review in "
                "schema-explorer serve, or in an embedded registry"
            )
        return self._api

    def propose_schema(
        self, topic: str, info: SchemaInfo, *, title: str, description: str = "", actor: Actor
    ) -> Proposal:
        return self._after_write(self._proposals().propose_schema(topic, checked_info(info), title, description))

    def propose_policy(
        self,
        target: str,
        change: NamespacePolicyChange | TopicPolicyChange,
        *,
        title: str,
        description: str = "",
        actor: Actor,
    ) -> Proposal:
        mapping = checked_change(target, change).as_mapping()
        return self._after_write(self._proposals().propose_policy(target, mapping, title, description))

    def get(self, proposal_id: int) -> Proposal:
        return self._proposals().proposal(proposal_id)

    def list(
        self,
        *,
        state: ProposalState | str | None = None,
        namespace: str | None = None,
        topic: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Proposal]:
        return self._proposals().proposals(state, namespace, topic, limit)

    def counts(self) -> dict[ProposalState, int]:
        return self._proposals().counts()

    def review(self, proposal_id: int) -> ProposalReview:
        return self._proposals().review(proposal_id)

    def diff(
        self, proposal_id: int, *, from_revision: int | None = None, to_revision: int | None = None
    ) -> RevisionDiff:
        return self._proposals().diff(proposal_id, from_revision, to_revision)

    def revise(
        self,
        proposal_id: int,
        *,
        schema: SchemaInfo | None = None,
        policy: NamespacePolicyChange | TopicPolicyChange | None = None,
        actor: Actor,
    ) -> Proposal:
        checked = None if schema is None else checked_info(schema)
        mapping = None if policy is None else policy.as_mapping()
        return self._after_write(self._proposals().revise(proposal_id, checked, mapping))

    def rebase(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._after_write(self._proposals().rebase(proposal_id))

    def comment(self, proposal_id: int, text: str, *, path: str = "", actor: Actor) -> Comment:
        return self._after_write(self._proposals().comment(proposal_id, text, path))

    def approve(self, proposal_id: int, *, actor: Actor, revision: int | None = None) -> Proposal:
        return self._after_write(self._proposals().approve(proposal_id, revision))

    def reject(self, proposal_id: int, reason: str, *, actor: Actor) -> Proposal:
        return self._after_write(self._proposals().reject(proposal_id, reason))

    def withdraw(self, proposal_id: int, *, actor: Actor) -> Proposal:
        return self._after_write(self._proposals().withdraw(proposal_id))

    def apply(
        self, proposal_id: int, *, actor: Actor, override_reason: str | None = None, revision: int | None = None
    ) -> Proposal:
        return self._after_write(self._proposals().apply(proposal_id, override_reason, revision))

    def rules(self, namespace: str) -> ReviewRules:
        return self._proposals().rules(namespace)

    def set_rules(self, namespace: str, rules: ReviewRules, *, actor: Actor) -> ReviewRules:
        return self._after_write(self._proposals().set_rules(namespace, rules))

    def _after_write(self, answer: W) -> W:
        """A proposal step changed the server: this handle's caches key on its own writes too."""
        self._wrote()
        return answer
