"""Against the simulated cluster: listings and the search index fold what Pulsar folds (partitions shown as their
partitioned topic, the brokers' system topics hidden unless asked for), a topic's own strategy is read only where
the broker lists topic policies, and an older broker's 404 for a schema read the role may not make says so."""

from __future__ import annotations

import pytest

from cluster_sim import ADMIN_TOKEN, READER_TOKEN, SimulatedCluster
from registry import CACHE_ENV_VAR, AuthError, IndexState, NotFoundError, Registry, TopicPolicy, TopicQuery
from registry.remote._handle import RemoteRegistry
from serving import seeded

PARTITIONED = "persistent://acme/orders/order-created"
SYSTEM = [
    "persistent://acme/orders/__change_events",
    "persistent://acme/orders/__transaction_buffer_snapshot",
    "persistent://acme/orders/order-created-audit__transaction_pending_ack",
    "persistent://pulsar/system/transaction_coordinator_assign-partition-0",
]


def _open(cluster: SimulatedCluster, **options: object) -> RemoteRegistry:
    return RemoteRegistry(cluster.urls[0], verify=str(cluster.certs.ca), **options)  # type: ignore[arg-type]


def _everything(reg: Registry | RemoteRegistry) -> list[str]:
    return sorted(t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns))


def _with_topic_policies(reg: Registry) -> set[str]:
    """The namespaces where some topic has a policy of its own: the brokers list `__change_events` there."""
    namespaces = [ns for tenant in reg.tenants() for ns in reg.namespaces(tenant)]
    return {ns for ns in namespaces if any(reg.topic_policy(t) != TopicPolicy() for t in reg.topics(ns))}


def _events_topics(reg: Registry) -> set[str]:
    return {f"persistent://{ns}/__change_events" for ns in _with_topic_policies(reg)}


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The sample data, plus Pulsar's own tenant and system namespace, as the brokers serve it."""
    reg = Registry.open(seeded(tmp_path_factory.mktemp("listing") / "registry.db", keep_clients=False))
    reg.create_tenant("pulsar")
    reg.create_namespace("pulsar/system")
    return reg


@pytest.fixture(scope="module")
def folded(make_cluster, direct: Registry) -> SimulatedCluster:
    return make_cluster(registry=direct)


def test_partitions_show_as_their_partitioned_topic_and_system_topics_only_when_asked(folded, direct):
    with _open(folded) as reg:
        plain = _everything(reg)
    assert "pulsar" in direct.tenants() and not any(t.startswith("persistent://pulsar/") for t in plain)

    folded.partitioned[PARTITIONED] = 3
    folded.system_topics[:] = SYSTEM
    try:
        with _open(folded) as reg:
            assert _everything(reg) == plain  # the partitions fold into the topic; system topics stay hidden
            assert reg.namespaces("pulsar") == []
            page = reg.search_topics(TopicQuery(), limit=500)
            assert [row.topic for row in page.items if row.topic.startswith(PARTITIONED)] == [PARTITIONED]
            row = next(row for row in page.items if row.topic == PARTITIONED)
            assert row.latest_version == direct.topic_summary(PARTITIONED).latest_version  # the base's schema
            assert sorted(row.topic for row in page.items) == plain
        with _open(folded, system_topics=True) as reg:
            shown = _everything(reg)
            assert reg.namespaces("pulsar") == ["pulsar/system"]
            found = sorted(row.topic for row in reg.search_topics(TopicQuery(), limit=500).items)
        system = {"persistent://pulsar/system/transaction_coordinator_assign", *SYSTEM[:3], *_events_topics(direct)}
        assert shown == found == sorted({*plain, *system})
    finally:
        folded.partitioned.clear()
        folded.system_topics.clear()


def test_the_cli_lists_system_topics_only_with_system_topics(folded, capsys):
    from cli.main import main

    folded.system_topics[:] = SYSTEM[:1]
    try:
        # the CLI connects by URL with the cluster's CA through a client.conf
        conf = folded.certs.folder / "client.conf"
        conf.write_text(f"webServiceUrl={folded.urls[0]}\ntlsTrustCertsFilePath={folded.certs.ca}\n")
        assert main(["search", "--client-conf", str(conf), "name:__change_events", "--limit", "5"]) == 0
        hidden = capsys.readouterr().out
        assert main(["search", "--client-conf", str(conf), "--system-topics", "name:__change_events"]) == 0
        shown = capsys.readouterr().out
    finally:
        folded.system_topics.clear()
    assert "__change_events" not in hidden and SYSTEM[0] in shown
    assert main(["search", "--db", "x.db", "--system-topics", "orders"]) != 0
    assert "--system-topics only applies to a broker" in capsys.readouterr().err


def test_a_topics_own_strategy_is_read_only_where_the_broker_lists_topic_policies(make_cluster, tmp_path, monkeypatch):
    direct = Registry.open(seeded(tmp_path / "registry.db", keep_clients=False))
    cluster = make_cluster(registry=direct)

    def index(folder: str) -> tuple[int, RemoteRegistry]:
        monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / folder))  # a fresh cache: a first visit
        before = cluster.topic_strategy_reads
        reg = _open(cluster)
        reg.search_topics(limit=1)
        status = reg.broker_index.status()
        assert status is not None and status.state is IndexState.DONE and status.unreadable == 0
        return cluster.topic_strategy_reads - before, reg

    with_policies = _with_topic_policies(direct)
    reads, reg = index("first")
    reg.close()
    if not with_policies:  # the broker lists `__change_events` nowhere: it says nothing, every topic is asked
        assert reads == len(_everything(direct))
    topic = "persistent://acme/orders/order-cancelled"
    direct.set_topic_policy(topic, compatibility="ALWAYS_COMPATIBLE")
    with_policies.add("acme/orders")
    reads, reg = index("second")
    try:
        assert reads == sum(len(direct.topics(ns)) for ns in with_policies) < len(_everything(direct))
        row = next(
            r for r in reg.search_topics(TopicQuery(namespace="acme/orders"), limit=100).items if r.topic == topic
        )
        assert row == reg.topic_summary(topic) and row.strategy.value == "ALWAYS_COMPATIBLE"
    finally:
        reg.close()
        direct.close()


def test_an_older_brokers_404_for_a_schema_read_the_role_may_not_make_says_so(make_cluster):
    cluster = make_cluster("token")
    with _open(cluster, token=ADMIN_TOKEN) as admin:
        assert admin.history(PARTITIONED)  # the superuser reads it
    with _open(cluster, token=READER_TOKEN) as reader:
        with pytest.raises(AuthError):
            reader.history(PARTITIONED)  # today's lines: 401
        cluster.older_line = True
        try:
            with pytest.raises(NotFoundError) as e:
                reader.history(PARTITIONED)
        finally:
            cluster.older_line = False
    message = str(e.value)
    assert "404 Not Found" in message and "credentials may not read" in message and "\n" not in message
    assert READER_TOKEN not in message
