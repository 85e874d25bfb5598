"""What a remote registry asks the server instead of computing it (issue 22), as the base of RemoteRegistry.

`schema-explorer serve` answers search pages, topic summaries, diffs, what-if, upgrade plans and policy
impact in one request each through its explorer API, computed by the same core over its own registry; a
broker's admin API answers none of them, so the shared facade computes them from the histories and policies
it reads, and searches the handle's background index of the broker (remote/_broker_index.py: the first
search waits for a complete one, later ones answer from its cache). The server's answer is taken only while this handle
answers as the server's own Pulsar line and broker settings (`_ask_server`); anything the explorer routes do
not take (a candidate as the old side of a diff, a from-the-end version number, a non-persistent topic,
schema bytes that are not text) is computed locally as before.

Who is connected comes from the broker's topic stats either way: a plain broker answers them too.
"""

from __future__ import annotations

import contextlib

from .._cache_budget import bounded
from .._catalog import BrokerIndex, TopicPage, TopicQuery, TopicSummary
from .._catalog_cache import check_page
from .._changes import SchemaDiff
from .._errors import AuthError, TopicNotFoundError
from .._facade import BackedRegistry
from .._model import CompatibilityStrategy, ConnectedClient, SchemaInfo
from .._names import NamespaceName, TopicName
from .._schema_data import checked_info
from ..explain._upgrade import UpgradePlan
from ..explain._whatif import PolicyImpact, WhatIf
from ._admin_client import AdminClient, raise_for, reason_of, topic_path
from ._backend import connected_from_stats
from ._broker_index import CachedBrokerIndex, wait_ready
from ._explorer_api import SEARCH_TEXT_MAX, ExplorerApi

S = CompatibilityStrategy


class ServerAnswers(BackedRegistry):
    """The facade calls a remote endpoint can answer itself (module docstring); RemoteRegistry sets the three
    attributes below when it opens."""

    _client: AdminClient
    _explorer: ExplorerApi | None  # the explorer API, when the endpoint is `schema-explorer serve`
    _ask_server: bool  # the server answers as this handle does (same Pulsar line, same broker settings)
    _index: CachedBrokerIndex | None  # a plain broker's search index (None against `serve`: it searches itself)

    # --- a plain broker's search index -----------------------------------------------------------------------

    @property
    def broker_index(self) -> BrokerIndex | None:
        return self._index

    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        """GET .../stats, or .../partitioned-stats for a partitioned topic (a broker's stats have no schema
        versions: see `records_clients`)."""
        name = TopicName.parse(topic).base
        what = f"reading the stats of {name}"
        response = self._client.get(f"{topic_path(name)}/stats")
        if response.status_code == 404:
            partitioned = self._client.get(f"{topic_path(name)}/partitioned-stats")
            if partitioned.status_code == 200:
                response = partitioned
        if response.status_code == 404 and not _names_other_than_topic(reason_of(response)):
            raise TopicNotFoundError(f"Topic does not exist: {name} ({what}: HTTP 404 from {self._client.url})")
        raise_for(response, what, url=self._client.url)
        return connected_from_stats(str(name), self._client.json(response, what))

    # --- the explorer API: one request each ------------------------------------------------------------------
    # A token whose role the explorer route refuses (what-if needs a producer's) is no answer: the call is then
    # computed locally from the admin reads the token may make, as from a broker.

    def _asking(self) -> ExplorerApi | None:
        return self._explorer if self._ask_server else None

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        api = self._asking()
        wanted = query or TopicQuery()
        # The route bounds its text (SEARCH_TEXT_MAX); a longer one is searched here, as embedded, not refused.
        if api is not None and len(wanted.text) <= SEARCH_TEXT_MAX:
            check_page(offset, limit)
            with contextlib.suppress(AuthError):
                return api.search(wanted, offset=offset, limit=limit)
        if self._index is not None:
            check_page(offset, limit)
            wait_ready(self._index)  # the first search waits for a complete index; later ones answer from it
        return super().search_topics(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        name = TopicName.parse(topic)
        api = self._asking()
        if api is not None:
            with contextlib.suppress(AuthError):
                return api.summary(name)
        return super().topic_summary(topic)

    @bounded
    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        name = TopicName.parse(topic)
        api = self._asking()
        if api is not None and name.domain == "persistent" and isinstance(old, int) and _whole(old):
            candidate = checked_info(new) if isinstance(new, SchemaInfo) else None
            if new is None or _whole(new) or (candidate is not None and _textual(candidate)):
                with contextlib.suppress(AuthError):
                    return api.diff(name, old, candidate or new)
        return super().diff(topic, old, new)

    @bounded
    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        name = TopicName.parse(topic)
        info = checked_info(info)
        api = self._asking()
        if api is not None and name.domain == "persistent" and _textual(info):
            with contextlib.suppress(AuthError):
                return api.what_if(name, info)
        return super().what_if(topic, info)

    @bounded
    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        name = TopicName.parse(topic)
        if isinstance(target, SchemaInfo):
            target = checked_info(target)
        api = self._asking()
        askable = target is None or _whole(target) or (isinstance(target, SchemaInfo) and _textual(target))
        if api is not None and name.domain == "persistent" and askable:
            with contextlib.suppress(AuthError):
                return api.upgrade_plan(name, target)
        return super().upgrade_plan(topic, target)

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        ns = NamespaceName.parse(namespace)
        proposed = CompatibilityStrategy.parse(strategy)
        api = self._asking()
        if api is not None and proposed is not S.UNDEFINED:
            with contextlib.suppress(AuthError):
                return api.policy_impact(str(ns), proposed)
        return super().policy_impact(namespace, strategy)


def _whole(value: object) -> bool:
    """A version number the explorer routes take (they have no negative, from-the-end numbers)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _textual(info: SchemaInfo) -> bool:
    """The admin API carries schemas as text: a candidate of other bytes is explained locally."""
    return isinstance(info.schema, str) or _utf8(info.schema)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _names_other_than_topic(reason: str) -> bool:
    """A 404 about a namespace or tenant keeps its own error class (raise_for); any other is the topic."""
    lowered = reason.lower()
    return "namespace" in lowered or "tenant" in lowered
