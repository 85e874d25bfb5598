"""What a broker's topic listings show, folded as Pulsar folds them (issue 42).

* A partitioned topic is listed by `GET /persistent/t/ns` as its partitions (`x-partition-0`, …: each is a
  managed ledger) and by `GET /persistent/t/ns/partitioned` as `x`. Every partition's schema is the
  partitioned topic's (SchemasResourceBase.getSchemaId: `TopicName.getPartitionedTopicName()`, then
  `getSchemaName()`), so a partition is shown as its partitioned topic, once.
* System topics are the broker's own bookkeeping, hidden unless asked for (`include_system`): the whole
  `pulsar/system` namespace (NamespaceService.isSystemServiceNamespace: the transaction coordinator's topics),
  and in any namespace what SystemTopicNames.isSystemTopic names (`__change_events`, the transaction buffer's
  `__transaction_buffer_snapshot` and, since 3.0, its `_segments` / `_indexes`, and a subscription's
  `…__transaction_pending_ack` store). Since includeSystemTopic was added to the listings (PersistentTopics.
  getList), a broker hides them unless asked; the remote client always asks, so the fold happens here, the same
  for every broker line.
* `__change_events` is where SystemTopicBasedTopicPoliciesService writes topic policies. A namespace whose
  listing has no such topic has no topic policies: its topics' own strategies need not be read
  (`policy_events`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from .._errors import InvalidNameError
from .._names import TopicName

SYSTEM_NAMESPACE: Final = "pulsar/system"
POLICY_EVENTS: Final = "__change_events"  # SystemTopicNames.NAMESPACE_EVENTS_LOCAL_NAME
# SystemTopicNames.TRANSACTION_BUFFER_SNAPSHOT_SEGMENTS / _INDEXES (Pulsar 3.0's segmented snapshots); the
# older names are TopicName.is_system_topic's, which the rules use too.
_MORE_SYSTEM_NAMES: Final = frozenset(
    {"__transaction_buffer_snapshot_segments", "__transaction_buffer_snapshot_indexes"}
)


@dataclass(frozen=True, slots=True)
class TopicListing:
    """One namespace's topics as shown (partitions folded, system topics hidden unless asked), and whether the
    broker listed its topic-policy events topic."""

    topics: tuple[str, ...]
    policy_events: bool


def is_system(name: TopicName) -> bool:
    """A topic of the broker's own (module docstring)."""
    return name.is_system_topic or name.base_name in _MORE_SYSTEM_NAMES


def shown_namespace(namespace: str, *, include_system: bool) -> bool:
    return include_system or namespace != SYSTEM_NAMESPACE


def fold(names: Iterable[str], *, include_system: bool) -> TopicListing:
    """The listing's names, each partition as its partitioned topic, sorted; names this registry cannot
    address are left out rather than failing the listing."""
    shown: set[str] = set()
    events = False
    for text in names:
        try:
            name = TopicName.parse(text)
        except InvalidNameError:
            continue
        if name.base_name == POLICY_EVENTS:
            events = True
        if include_system or not is_system(name):
            shown.add(str(name.base))
    return TopicListing(topics=tuple(sorted(shown)), policy_events=events)
