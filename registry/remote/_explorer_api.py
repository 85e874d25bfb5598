"""The explorer API of `schema-explorer serve` (/explorer/v1), as a remote registry calls it.

A broker's admin API answers one resource per request, so a search over a remote cluster would read every
topic's history and policies (about four requests a topic). `schema-explorer serve` answers the same
questions (search pages, summaries, recorded clients, diffs, what-if, upgrade plans, policy impact) in one
request each, computed by the same core over its own registry; their JSON is `registry.to_json` of the
core's values, read back here with `from_json`, so a remote answer is the very value the embedded facade
returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar
from urllib.parse import quote

import httpx

from .._catalog import TopicPage, TopicQuery, TopicSummary
from .._changes import SchemaDiff
from .._errors import InvalidArgumentError, StorageError
from .._model import RECORDS_CLIENTS_HEADER, ClientRecord, CompatibilityStrategy, SchemaInfo
from .._names import NamespaceName, TopicName
from .._wire import from_json
from ..explain._upgrade import UpgradePlan
from ..explain._whatif import PolicyImpact, WhatIf
from ._admin_client import AdminClient, clip, payload, raise_for

EXPLORER: Final = "/explorer/v1"
PAGE_MAX: Final = 500  # the server's bound on one search page (`limit`)
SEARCH_TEXT_MAX: Final = 200  # and on a search's text (`q`)
T = TypeVar("T")


def probe_explorer(client: AdminClient) -> bool | None:
    """None when the endpoint does not serve the explorer API (a broker answers 404 there, `serve --admin-only`
    too); else whether it records producers and consumers (`schema-explorer serve`: True; the review gateway,
    `serve --upstream`, in front of a plain broker: False). A server that refuses this token the explorer's viewer
    role counts as not offering it: the remote registry then reads the admin API, as from a broker. The proposal
    counts are asked, not a search: the gateway answers its first search only once its index of the broker is
    complete, and a probe that timed out would take the gateway for a plain broker."""
    response = client.get(f"{EXPLORER}/proposal-counts")
    if response.status_code != 200:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("counts"), dict):
        return None
    return str(response.headers.get(RECORDS_CLIENTS_HEADER, "true")) != "false"


class ExplorerApi:
    """One method per explorer route; every answer is decoded into the core's own value."""

    def __init__(self, client: AdminClient) -> None:
        self.client = client

    def search(self, query: TopicQuery, *, offset: int, limit: int) -> TopicPage:
        """GET /topics, in pages of at most PAGE_MAX joined into one when `limit` is larger."""
        params: list[tuple[str, str]] = [("q", query.text)] if query.text else []
        if query.tenant is not None:
            params.append(("tenant", query.tenant))
        if query.namespace is not None:
            params.append(("namespace", query.namespace))
        params += [("type", str(t)) for t in sorted(query.schema_types, key=str)]
        params += [("strategy", str(s)) for s in sorted(query.strategies, key=str)]
        for key, value in (("min_versions", query.min_versions), ("max_versions", query.max_versions)):
            if value is not None:
                params.append((key, str(value)))
        if query.has_clients is not None:
            params.append(("has_clients", str(query.has_clients).lower()))
        first: TopicPage | None = None
        items: list[TopicSummary] = []
        while True:
            start = offset + len(items)
            size = min(PAGE_MAX, limit - len(items))
            page = self._get(TopicPage, "/topics", [*params, ("offset", str(start)), ("limit", str(size))], "searching")
            first = first or page
            items += page.items
            if len(items) >= limit or not page.has_more or not page.items:
                break
        return TopicPage(
            items=tuple(items),
            total=first.total,
            offset=offset,
            limit=limit,
            by_type=first.by_type,
            by_strategy=first.by_strategy,
            by_namespace=first.by_namespace,
        )

    def summary(self, name: TopicName) -> TopicSummary:
        return self._get(TopicSummary, _topic(name), [("domain", name.domain)], f"reading the summary of {name}")

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        """GET /clients: every recorded client, one topic's, or (for several topics) those of each of their
        namespaces, kept for the topics asked."""
        what = "reading the recorded clients"
        if topics is None:
            return self._get(list[ClientRecord], "/clients", [], what)
        wanted = set(topics)
        if len(wanted) == 1:
            return self._get(list[ClientRecord], "/clients", [("topic", next(iter(wanted)))], what)
        found: list[ClientRecord] = []
        for namespace in sorted({str(TopicName.parse(t).namespace_name) for t in wanted}):
            every = self._get(list[ClientRecord], "/clients", [("namespace", namespace)], what)
            found += [c for c in every if c.topic in wanted]
        return found

    def diff(self, name: TopicName, old: int, new: int | SchemaInfo | None) -> SchemaDiff:
        what = f"diffing versions of {name}"
        if isinstance(new, SchemaInfo):
            body = {"old_version": old, "candidate": payload(new)}
            return self._post(SchemaDiff, f"{_topic(name)}/diff", body, what)
        params = [("old_version", str(old))] + ([] if new is None else [("new_version", str(new))])
        return self._get(SchemaDiff, f"{_topic(name)}/diff", params, what)

    def what_if(self, name: TopicName, info: SchemaInfo) -> WhatIf:
        return self._post(WhatIf, f"{_topic(name)}/what-if", payload(info), f"asking what-if on {name}")

    def upgrade_plan(self, name: TopicName, target: int | SchemaInfo | None) -> UpgradePlan:
        what = f"planning the upgrade of {name}"
        if isinstance(target, SchemaInfo):
            return self._post(UpgradePlan, f"{_topic(name)}/upgrade-plan", payload(target), what)
        params = [] if target is None else [("target", str(target))]
        return self._get(UpgradePlan, f"{_topic(name)}/upgrade-plan", params, what)

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy) -> PolicyImpact:
        tenant, local = namespace.split("/", 1)
        path = f"/namespaces/{quote(tenant, safe='')}/{quote(local, safe='')}/policy-impact"
        return self._get(PolicyImpact, path, [("strategy", str(strategy))], f"previewing {strategy} on {namespace}")

    # --- transport ----------------------------------------------------------------------------------------

    def _get(self, kind: type[T], path: str, params: Sequence[tuple[str, str]], what: str) -> T:
        response = self.client.get(EXPLORER + path, params)
        return self.answer(kind, response, what)

    def _post(self, kind: type[T], path: str, body: Mapping[str, Any], what: str) -> T:
        return self.answer(kind, self.client.ask(EXPLORER + path, body), what)

    def answer(self, kind: type[T], response: httpx.Response, what: str) -> T:
        """An explorer answer decoded into the core's value, or the embedded facade's error for a refusal."""
        raise_for(response, what, url=self.client.url)
        body = self.client.json(response, what)
        try:
            return from_json(kind, body)
        except InvalidArgumentError as exc:
            raise StorageError(
                f"{what}: {self.client.url} answered in a form this client does not read ({exc}); is the server "
                f"a different release of schema-explorer? ({clip(response.text)!r})"
            ) from None


def _topic(name: TopicName) -> str:
    return f"/topics/{quote(name.tenant, safe='')}/{quote(name.namespace, safe='')}/{quote(name.local_name, safe='')}"


def namespace_policy_path(namespace: NamespaceName) -> tuple[str, dict[str, str]]:
    """serve's route for a namespace's schema policies in one write (server/_policy_writes.py), and its query."""
    tenant, local = quote(namespace.tenant, safe=""), quote(namespace.namespace, safe="")
    return f"{EXPLORER}/namespaces/{tenant}/{local}/schema-policy", {}


def topic_policy_path(name: TopicName) -> tuple[str, dict[str, str]]:
    """The same for a topic's schema policies."""
    return f"{EXPLORER}{_topic(name)}/schema-policy", {"domain": name.domain}
