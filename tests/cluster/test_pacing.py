"""Against the simulated cluster's rate limit (RateLimitingFilter's 429, a proxy's 503): the client waits as
told or backs off, a refused write lands once, the index slows while refused and speeds up after, and a run
that cannot finish says how far it got."""

from __future__ import annotations

import pytest

from cluster_sim import Pacing
from registry import INDEX_WORKERS, IndexState, SchemaInfo, SchemaType, StorageError, TopicQuery
from registry.remote._handle import RemoteRegistry


def _open(cluster, broker: int = 0) -> RemoteRegistry:
    return RemoteRegistry(cluster.urls[broker], verify=str(cluster.certs.ca))


def _owned_by(reg: RemoteRegistry, cluster, broker: int) -> list[str]:
    topics = [t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns)]
    return [t for t in topics if cluster.owner(t) == broker and t.startswith("persistent://acme/")]


@pytest.fixture
def paced(cluster):
    """Set `cluster.pacing` for one test; the limit is lifted after it."""
    yield lambda pacing: setattr(cluster, "pacing", pacing)
    cluster.pacing = None


def test_reads_refused_with_retry_after_come_back_no_sooner_and_succeed(cluster, paced):
    with _open(cluster) as reg:
        topics = _owned_by(reg, cluster, 0)[:3]
        refused, early = cluster.refused, cluster.early
        paced(Pacing(per_second=1, burst=1, retry_after="1"))
        versions = [reg.get(t).version for t in topics]
    assert len(versions) == 3
    assert cluster.refused > refused
    assert cluster.early == early  # the client waited as long as each 429 asked


def test_a_write_refused_for_load_is_sent_again_and_lands_once(cluster, paced):
    topic = "persistent://acme/orders/paced-write"
    info = SchemaInfo(type=SchemaType.JSON, schema='{"type":"record","name":"P","fields":[]}')
    with _open(cluster, cluster.owner(topic)) as reg:
        refused = cluster.refused
        paced(Pacing(per_second=5, burst=1))  # 429 without Retry-After: backoff with jitter
        reg.get(_owned_by(reg, cluster, cluster.owner(topic))[0])  # spends the burst
        registered = reg.register(topic, info)
        paced(None)
        assert [v.version for v in reg.history(topic)] == [registered.version]
    assert cluster.refused > refused


def test_a_proxys_503_is_retried_for_a_read_and_never_for_a_write(cluster, paced):
    topic = "persistent://acme/orders/shed-write"
    info = SchemaInfo(type=SchemaType.JSON, schema='{"type":"record","name":"S","fields":[]}')
    with _open(cluster, cluster.owner(topic)) as reg:
        read = _owned_by(reg, cluster, cluster.owner(topic))[0]
        paced(Pacing(per_second=5, burst=1, status=503))
        reg.get(read)
        assert reg.get(read).version >= 0  # refused once at least, then answered
        with pytest.raises(StorageError, match="503"):
            reg.register(topic, info)
        paced(None)
        assert reg.history(topic) == []


def test_the_index_slows_while_refused_lists_every_topic_then_speeds_up_again(cluster, paced):
    with _open(cluster, 2) as reg:
        everything = sorted(t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns))
        refused = cluster.refused
        paced(Pacing(per_second=40, burst=2))
        found = reg.search_topics(TopicQuery(), limit=500)
        pace = reg._client.pace  # the concurrency the index reads with (no public handle on it)
        assert pace is not None and pace.lowest < INDEX_WORKERS
        paced(None)
        low = pace.limit
        for _ in range(8):  # raised by one per `limit` answers accepted: a few refreshes of this small cluster
            reg.broker_index.refresh()
            assert reg._index is not None and reg._index.wait().state is IndexState.DONE
            assert pace.limit >= low
            if pace.limit == INDEX_WORKERS:
                break
        assert pace.limit == INDEX_WORKERS
    assert cluster.refused > refused
    assert sorted(row.topic for row in found.items) == everything


def test_a_broker_asking_too_long_a_wait_ends_the_run_saying_how_far_it_got(cluster, paced):
    with _open(cluster, 1) as reg:
        total = sum(len(reg.topics(ns)) for tenant in reg.tenants() for ns in reg.namespaces(tenant))
        paced(Pacing(per_second=0.001, burst=0, retry_after="100", topic_calls_only=True))
        with pytest.raises(StorageError) as e:
            reg.search_topics(TopicQuery(text="name:orders"))
    message = str(e.value)
    assert "asks to wait 100 s more" in message and "httpRequestsMaxPerSecond" in message
    assert f" of {total} topics; the cache keeps what was read" in message
    assert "\n" not in message
