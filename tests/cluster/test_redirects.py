"""Against the simulated cluster: the remote client follows a broker's 307 to the topic's owner as pulsar-admin
does (method, body and credentials kept), to the cluster's own brokers only, at most 5 hops, a loop named."""

from __future__ import annotations

import pytest

from cluster_sim import ADMIN_TOKEN
from registry import Registry, SchemaInfo, SchemaType, StorageError, TopicQuery
from registry.remote._handle import RemoteRegistry

ORDER = "persistent://acme/orders/order-created"


def _open(cluster, broker: int = 0, **options) -> RemoteRegistry:
    return RemoteRegistry(cluster.urls[broker], verify=str(cluster.certs.ca), **options)


def _foreign(cluster, broker: int) -> str:
    """A sample topic that `broker` does not own."""
    with _open(cluster, broker) as reg:
        topics = [t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns)]
    return next(t for t in topics if cluster.owner(t) != broker)


def _versions(reg: Registry | RemoteRegistry, topic: str) -> list[tuple[int, str, object]]:
    return [(v.version, str(v.info.type), v.info.schema) for v in reg.history(topic)]


def test_every_topic_reads_through_any_broker_and_search_lists_exactly_the_clusters_topics(cluster):
    before = cluster.redirects
    with _open(cluster, 1) as reg:
        topics = sorted(t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns))
        assert {cluster.owner(t) for t in topics} == {0, 1, 2}
        histories = {t: _versions(reg, t) for t in topics}
        found = reg.search_topics(TopicQuery(), limit=500)
    assert cluster.redirects > before
    assert sorted(row.topic for row in found.items) == topics
    with Registry.open(cluster.certs.folder.parent / "registry.db") as direct:
        assert histories == {t: _versions(direct, t) for t in topics}


def test_a_write_to_a_topic_another_broker_owns_keeps_its_method_body_and_token(make_cluster):
    sim = make_cluster("token")
    topic = "persistent://acme/orders/redirected-write"
    broker = next(n for n in range(3) if sim.owner(topic) != n)
    info = SchemaInfo(type=SchemaType.JSON, schema='{"type":"record","name":"R","fields":[]}')
    with _open(sim, broker, token=ADMIN_TOKEN) as reg:
        registered = reg.register(topic, info)
        assert reg.get(topic).version == registered.version
    with _open(sim, sim.owner(topic), token=ADMIN_TOKEN) as owner:
        assert owner.get(topic).info.schema == info.schema


def test_a_redirect_loop_is_named_in_one_line(cluster):
    topic = _foreign(cluster, 0)
    with _open(cluster, 0) as reg:
        cluster.redirect_loop = True
        try:
            with pytest.raises(
                StorageError, match=r"^redirect loop on GET /admin/v2/schemas/.*127\.0\.0\.1:\d+ → "
            ) as e:
                reg.get(topic)
        finally:
            cluster.redirect_loop = False
    assert "\n" not in str(e.value)


def test_a_redirect_outside_the_cluster_is_refused_and_the_credentials_stay_home(make_cluster):
    sim = make_cluster("token")
    sim.redirect_elsewhere = "https://127.0.0.9:9"  # no broker listed there, and nothing listening
    with _open(sim, 0, token=ADMIN_TOKEN) as reg:
        with pytest.raises(StorageError, match=r"to https://127\.0\.0\.9:9, which is not a broker of this cluster"):
            reg.get(ORDER)
    with _open(sim, 0, token=ADMIN_TOKEN) as reg:
        sim.redirect_elsewhere = sim.urls[1].replace("https://", "http://")  # a downgrade to plain HTTP
        try:
            with pytest.raises(StorageError, match="not a broker of this cluster"):
                reg.get(ORDER)
        finally:
            sim.redirect_elsewhere = None
