"""The topic catalog a facade browses and searches: built from one read of every topic and kept until the
backend changes (its change token moves: a write from any process), so a page of 100k topics answers in
milliseconds once built (registry/_catalog.py holds the catalog itself)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Protocol

from ._catalog import Catalog, CatalogStorage, TopicPage, TopicQuery, TopicSummary, read_fields
from ._errors import InvalidArgumentError, TopicNotFoundError
from ._history import trim
from ._model import ClientRole, CompatibilityStrategy, Effective, NamespacePolicy, TopicPolicy
from ._names import TopicName
from ._state import RegistryState
from ._types import SchemaType
from .policy._rules import admin_strategy
from .storage._base import ChangeTracking


class IndexedCatalog(CatalogStorage, ChangeTracking, Protocol):
    """A search index the catalog is built from instead of the backend (remote/_broker_index.py)."""


_UNTRACKED_TTL_S = 5  # how long a backend without change tracking may serve a cached catalog


class CatalogCache:
    """The catalog of one state's backend. `own_writes` counts the owning facade's writes: a backend that
    cannot tell its changes (a remote one) gets a token from the time and that count."""

    def __init__(
        self, state: RegistryState, own_writes: Callable[[], int], index: IndexedCatalog | None = None
    ) -> None:
        self._state = state
        self._own_writes = own_writes
        self._index = index  # a plain broker's search index: the catalog is built from it, keyed on its token
        self._cached: Catalog | None = None
        self._lock = threading.Lock()
        self._fields_memo: dict[tuple[str, int, int], tuple[tuple[str, ...], str]] = {}  # (id, version, hash)

    def change_token(self) -> int:
        """A number that changes whenever anything in the registry changes (see the facade's change_token)."""
        storage = self._state.storage
        if isinstance(storage, ChangeTracking):
            return storage.change_token()
        return int(time.monotonic() // _UNTRACKED_TTL_S) * 1_000_000 + self._own_writes()

    def search(self, query: TopicQuery | None, *, offset: int, limit: int) -> TopicPage:
        """One page of the topics matching `query` (all topics when None)."""
        check_page(offset, limit)
        return self.catalog().search(query or TopicQuery(), offset=offset, limit=limit)

    def summary(self, name: TopicName) -> TopicSummary:
        """The catalog row of one topic, read directly (TopicNotFoundError when it does not exist)."""
        storage = self._state.storage
        if not storage.has_topic(str(name.base)):
            raise TopicNotFoundError(f"Topic does not exist: {name.base}")
        counts = Counter((c.role, c.topic) for c in storage.clients([str(name.base)]))
        return self._summary(name, counts)

    def catalog(self) -> Catalog:
        """The cached catalog, rebuilt when the change token moved."""
        cached = self._cached
        if cached is not None and cached.token == self._catalog_token():
            return cached
        with self._lock:  # one rebuild at a time; the others then find it done
            token = self._catalog_token()
            cached = self._cached
            if cached is not None and cached.token == token:
                return cached
            storage = self._index or self._state.storage
            if isinstance(storage, CatalogStorage):
                catalog = Catalog.build(storage.catalog_source(), self._strategy_from, self._fields_of)
            else:
                catalog = Catalog(list(self._summaries()), token)
            self._cached = catalog
            return catalog

    def _catalog_token(self) -> int:
        return self._index.change_token() if self._index is not None else self.change_token()

    def _strategy_from(
        self, topic_policy: TopicPolicy | None, ns_policy: NamespacePolicy | None
    ) -> Effective[CompatibilityStrategy]:
        return admin_strategy(topic_policy, ns_policy, self._state.broker)

    def _fields_of(self, schema_id: str, version: int, kind: SchemaType, data: bytes) -> tuple[tuple[str, ...], str]:
        """Search fields of a version whose storage did not keep them, read once per version."""
        key = (schema_id, version, hash(data))
        found = self._fields_memo.get(key)
        if found is None:
            found = self._fields_memo[key] = read_fields(kind, data)
        return found

    def _summaries(self) -> Iterator[TopicSummary]:
        """Every topic's summary the slow way (one history read each): for backends without a catalog source."""
        storage = self._state.storage
        counts = Counter((c.role, c.topic) for c in storage.clients(None))
        for tenant in storage.tenants():
            for namespace in storage.namespaces(tenant):
                for topic in storage.topics(namespace):
                    yield self._summary(TopicName.parse(topic), counts)

    def _summary(self, name: TopicName, counts: Counter[tuple[ClientRole, str]]) -> TopicSummary:
        topic = str(name.base)
        history = self._state.history(name)
        live = trim(history)
        latest = live[-1] if live else None
        fields, error = read_fields(latest.type, latest.data) if latest is not None else ((), "")
        strategy = self._state.admin_strategy(name)
        return TopicSummary(
            topic=topic,
            tenant=name.tenant,
            namespace=str(name.namespace_name),
            schema_type=latest.type if latest else None,
            versions=len(live),
            latest_version=latest.version if latest else None,
            updated_at=latest.timestamp if latest else None,
            deleted=bool(history) and history[-1].deleted,
            strategy=strategy.value,
            strategy_source=strategy.source,
            producers=counts[(ClientRole.PRODUCER, topic)],
            consumers=counts[(ClientRole.CONSUMER, topic)],
            fields=fields,
            error=error,
        )


def check_page(offset: int, limit: int) -> None:
    """The bounds of a search page, the same for every facade (InvalidArgumentError naming both values)."""
    if isinstance(offset, bool) or isinstance(limit, bool) or offset < 0 or limit < 1:
        raise InvalidArgumentError(f"a page needs offset >= 0 and limit >= 1, got offset={offset}, limit={limit}")
