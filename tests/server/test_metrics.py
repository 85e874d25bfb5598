"""GET /metrics (issue 36): Pulsar's schema registry families counted where a broker counts them
(SchemaRegistryServiceImpl), our own families with bounded labels, and who may scrape."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from registry import (
    Actor,
    CompatibilityStrategy,
    ForwardingStorage,
    MemoryStorage,
    ProposalState,
    Registry,
    Role,
    SchemaInfo,
    SchemaType,
    StorageBackend,
    StorageError,
)
from server import StorageTimer, create_app, parse_tokens
from server._proposal_tally import ProposalTally
from serving import LOCAL

TOKEN = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
TOKENS = '{"dashboards": {"role": "viewer", "token": "' + TOKEN + '"}}'
V1 = '{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}'
V2 = '{"type":"record","name":"A","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}'
BAD = '{"type":"record","name":"A","fields":[{"name":"a","type":"string"}]}'
SCHEMAS = "/admin/v2/schemas/t/ns"
T = TypeVar("T")


class CountingStorage(ForwardingStorage):
    """Notes the name of every storage call."""

    def __init__(self, inner: StorageBackend, calls: list[str]) -> None:
        super().__init__(inner)
        self.calls = calls

    def around(self, operation: str, call: Callable[[], T]) -> T:
        self.calls.append(operation)
        return call()


def payload(schema: str) -> dict[str, object]:
    return {"type": "AVRO", "schema": schema, "properties": {}}


@pytest.fixture
def make_client(db_dir: Path) -> Iterator[Callable[..., TestClient]]:
    opened: list[Registry] = []

    def factory(*, strategy: CompatibilityStrategy | None = None, pulsar: str | None = None, **options: object):
        path = db_dir / f"m{len(opened)}.db"
        with Registry.open(path, create=True, pulsar_version=pulsar) as reg:
            reg.create_namespace("t/ns")
            if strategy is not None:
                reg.set_namespace_policy("t/ns", compatibility=strategy)
        reg = Registry.open(path, auto_create=False)
        opened.append(reg)
        return TestClient(create_app(reg, **options), base_url=LOCAL)  # type: ignore[arg-type]

    yield factory
    for reg in opened:
        reg.close()


def samples(
    client: TestClient, headers: dict[str, str] | None = None
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    answer = client.get("/metrics", headers=headers or {})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def otel_duration_count(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], request: str, response: str = "success"
) -> float:
    return value(
        found,
        "pulsar_broker_request_schema_registry_duration_seconds_count",
        pulsar_namespace="t/ns",
        pulsar_schema_registry_request=request,
        pulsar_schema_registry_response=response,
    )


def test_the_known_sequence_counts_as_a_broker_counts(make_client: Callable[..., TestClient]) -> None:
    client = make_client(metrics_public=True)  # FULL, the broker default: checks read the latest
    assert client.post(f"{SCHEMAS}/x/schema", json=payload(V1)).status_code == 200  # first: a put, no check
    assert client.post(f"{SCHEMAS}/x/schema", json=payload(V1)).status_code == 200  # duplicate: nothing
    assert client.post(f"{SCHEMAS}/x/schema", json=payload(V2)).status_code == 200  # get, compatible, put
    assert client.post(f"{SCHEMAS}/x/schema", json=payload(BAD)).status_code == 409  # get, incompatible
    assert client.get(f"{SCHEMAS}/missing/schema").status_code == 404  # a successful get
    assert client.post(f"{SCHEMAS}/x/compatibility", json=payload(BAD)).status_code == 500  # get, incompatible
    assert client.delete(f"{SCHEMAS}/x/schema").status_code == 200  # a delete
    found = samples(client)
    ns = {"namespace": "t/ns"}
    assert value(found, "pulsar_schema_compatible_total", **ns) == 1
    assert value(found, "pulsar_schema_incompatible_total", **ns) == 2
    assert value(found, "pulsar_schema_put_ops_failed_total", **ns) == 0
    assert value(found, "pulsar_schema_get_ops_failed_total", **ns) == 0
    assert value(found, "pulsar_schema_put_ops_latency_count", **ns) == 2
    assert value(found, "pulsar_schema_get_ops_latency_count", **ns) == 4
    assert value(found, "pulsar_schema_del_ops_latency_count", **ns) == 1
    assert otel_duration_count(found, "put") == 2 and otel_duration_count(found, "get") == 4
    assert otel_duration_count(found, "delete") == 1
    checks = "pulsar_broker_operation_schema_registry_compatibility_check_count_total"
    response = "pulsar_schema_registry_compatibility_check_response"
    assert value(found, checks, pulsar_namespace="t/ns", **{response: "compatible"}) == 1
    assert value(found, checks, pulsar_namespace="t/ns", **{response: "incompatible"}) == 2
    assert value(found, "pulsar_schema_get_ops_latency", quantile="0.5", **ns) >= 0  # quantiles in ms
    requests = "schema_explorer_requests_total"
    route = "/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema"
    assert value(found, requests, route=route, method="POST", status="200") == 3
    assert value(found, requests, route=route, method="POST", status="409") == 1


def test_transitive_strategies_list_and_always_count(make_client: Callable[..., TestClient]) -> None:
    client = make_client(strategy=CompatibilityStrategy.BACKWARD_TRANSITIVE, metrics_public=True)
    assert client.post(f"{SCHEMAS}/y/compatibility", json=payload(V1)).status_code == 202  # empty history: counted
    client.post(f"{SCHEMAS}/y/schema", json=payload(V1))
    client.post(f"{SCHEMAS}/y/schema", json=payload(V2))  # compatible, no get (the list is in hand)
    found = samples(client)
    assert value(found, "pulsar_schema_compatible_total", namespace="t/ns") == 2
    assert otel_duration_count(found, "list") == 1 and otel_duration_count(found, "get") == 0
    assert otel_duration_count(found, "put") == 2


def test_always_compatible_reads_and_counts_no_check(make_client: Callable[..., TestClient]) -> None:
    client = make_client(strategy=CompatibilityStrategy.ALWAYS_COMPATIBLE, metrics_public=True)
    client.post(f"{SCHEMAS}/z/schema", json=payload(V1))
    client.post(f"{SCHEMAS}/z/schema", json=payload(BAD))
    assert client.post(f"{SCHEMAS}/z/compatibility", json=payload(V2)).status_code == 202
    found = samples(client)
    assert value(found, "pulsar_schema_compatible_total", namespace="t/ns") == 0
    assert value(found, "pulsar_schema_get_ops_latency_count", namespace="t/ns") == 0
    assert value(found, "pulsar_schema_put_ops_latency_count", namespace="t/ns") == 2


def test_reads_list_and_get_as_the_resource_does(make_client: Callable[..., TestClient]) -> None:
    client = make_client(metrics_public=True)
    client.post(f"{SCHEMAS}/r/schema", json=payload(V1))
    assert client.get(f"{SCHEMAS}/r/schema/0").status_code == 200  # a list, then a get
    assert client.get(f"{SCHEMAS}/r/schema/7").status_code == 404  # the same: a missing version is no failure
    assert client.get(f"{SCHEMAS}/r/schemas").status_code == 200  # a list
    assert client.post(f"{SCHEMAS}/r/version", json=payload(V1)).status_code == 200  # a list
    assert client.get(f"{SCHEMAS}/r/schema/abc").status_code == 400  # refused before the registry: nothing
    assert client.get("/admin/v2/schemas/t/nowhere/r/schema").status_code == 404  # no such namespace: nothing
    found = samples(client)
    assert otel_duration_count(found, "list") == 4 and otel_duration_count(found, "get") == 2
    assert value(found, "pulsar_schema_get_ops_latency_count", namespace="t/ns") == 6
    assert not any(dict(labels).get("namespace") == "t/nowhere" for _, labels in found)


def test_a_3_0_registry_has_no_opentelemetry_families(make_client: Callable[..., TestClient]) -> None:
    client = make_client(pulsar="3.0", metrics_public=True)
    client.post(f"{SCHEMAS}/x/schema", json=payload(V1))
    names = {name for name, _ in samples(client)}
    assert "pulsar_schema_put_ops_latency_count" in names
    assert not any(name.startswith("pulsar_broker_") for name in names)


def test_no_label_holds_a_topic_a_schema_or_a_token(make_client: Callable[..., TestClient]) -> None:
    client = make_client(tokens=parse_tokens(TOKENS, "test"))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    client.post(f"{SCHEMAS}/secret-topic-name/schema", json=payload(V1), headers=auth)
    client.get("/admin/v2/schemas/t/ns/another-topic/schema", headers={"Authorization": "Bearer nope-nope-nope"})
    client.get("/no/such/route/at-all", headers=auth)
    text = client.get("/metrics", headers=auth).text
    for secret in ("secret-topic-name", "another-topic", TOKEN, "nope-nope", '"int"', "at-all"):
        assert secret not in text
    assert 'route="unmatched"' in text
    assert "schema_explorer_auth_failures_total 1.0" in text


def test_scrapes_from_other_addresses_need_a_token(make_client: Callable[..., TestClient]) -> None:
    # Starlette's test client is not a loopback address: this is the other side of the rule.
    tokenless = make_client()
    refused = tokenless.get("/metrics")
    assert refused.status_code == 403 and "--metrics-public" in refused.json()["reason"]
    assert "x-request-id" in refused.headers
    secured = make_client(tokens=parse_tokens(TOKENS, "test"))
    assert secured.get("/metrics").status_code == 401
    assert secured.get("/metrics", headers={"Authorization": "Bearer wrong-wrong-wrong"}).status_code == 401
    answer = secured.get("/metrics", params={"name[]": "x", "debug": "1"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200  # unknown query parameters are ignored, as Prometheus' exporters do
    public = make_client(tokens=parse_tokens(TOKENS, "test"), metrics_public=True)
    assert public.get("/metrics").status_code == 200


def test_our_families_are_there(make_client: Callable[..., TestClient]) -> None:
    client = make_client(metrics_public=True)
    client.post(f"{SCHEMAS}/x/schema", json=payload(V1))
    client.get("/ready")
    names = {name for name, _ in samples(client)}
    for name in (
        "schema_explorer_requests_total",
        "schema_explorer_request_duration_seconds_bucket",
        "schema_explorer_cache_bytes",
        "schema_explorer_cache_budget_bytes",
        "schema_explorer_storage_operation_seconds_count",
        "schema_explorer_writer_queue_depth",
        "schema_explorer_open_connections",
        "schema_explorer_throttle_addresses",
        "schema_explorer_info",
        "process_cpu_seconds_total",
    ):
        assert name in names, name
    found = samples(client)
    assert value(found, "schema_explorer_storage_operation_seconds_count", kind="batch", backend="sqlite") >= 1
    assert value(found, "schema_explorer_storage_operation_seconds_count", kind="ready", backend="sqlite") == 1
    parts = {dict(labels)["part"] for name, labels in found if name == "schema_explorer_cache_bytes"}
    assert {"avro_parsed", "read_histories", "fast_reads", "protobuf_parsed"} <= parts


def test_every_storage_call_is_timed_by_its_protocol_member(db_dir: Path) -> None:
    """serve's way: the registry opened with the timer's wrap, the same timer given to the app."""
    timer = StorageTimer("sqlite")
    with Registry.open(db_dir / "timed.db", create=True, wrap=timer.wrap) as reg:
        reg.create_namespace("t/ns")
        client = TestClient(create_app(reg, storage_timer=timer, metrics_public=True), base_url=LOCAL)
        assert client.post(f"{SCHEMAS}/x/schema", json=payload(V1)).status_code == 200
        assert client.get(f"{SCHEMAS}/x/schema").status_code == 200
        found = samples(client)
    count = "schema_explorer_storage_operation_seconds_count"
    for operation in ("append_indexed", "dedup_scan", "history", "append_audit", "transaction"):
        assert value(found, count, kind=operation, backend="sqlite") >= 1, operation
    assert reg.cache_usage()[-1].part == "read_histories"  # the wrapper still shows the storage's read cache


def test_our_writer_writes_what_prometheus_client_writes() -> None:
    """The counters, histograms and summaries are written by server/_metric_types.py for speed: the same text
    prometheus-client's writer gives for the same families."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.registry import Collector

    from server._metric_types import render
    from server._pulsar_stats import PulsarSchemaStats

    stats = PulsarSchemaStats()
    stats.get('t/n"s\\1', 0.004)
    stats.put("t/ns", 0.02)
    stats.put("t/ns", 0.5, ok=False)
    stats.compatibility("t/ns", False)

    class Families(Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            return stats.families()

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families())
    assert render(stats.vectors()) == generate_latest(registry).decode()


def _proposal_counts(client: TestClient, wanted: dict[str, float]) -> dict[str, float]:
    """The `schema_explorer_proposals` samples once they show `wanted` (they are read beside the scrape, so a
    scrape right after a change may show the counts before it); the last ones seen when they never do."""
    seen: dict[str, float] = {}
    for _ in range(200):
        found = samples(client)
        seen = {dict(labels)["state"]: v for (name, labels), v in found.items() if name == "schema_explorer_proposals"}
        if seen == wanted:
            break
        time.sleep(0.05)
    return seen


def test_proposals_by_state_follow_the_proposals_without_the_scrape_reading_storage(db_dir: Path) -> None:
    calls: list[str] = []

    def counted(storage: StorageBackend) -> StorageBackend:
        return CountingStorage(storage, calls)

    zero = {state: 0.0 for state in ("open", "approved", "applied", "rejected", "withdrawn", "stale")}
    with Registry.open(db_dir / "p.db", create=True, wrap=counted) as reg:
        reg.create_namespace("t/ns")
        client = TestClient(create_app(reg, metrics_public=True), base_url=LOCAL)
        assert _proposal_counts(client, zero) == zero
        made = client.post(
            "/explorer/v1/proposals",
            json={"topic": "persistent://t/ns/x", "schema": payload(V1), "title": "first schema"},
        )
        assert made.status_code == 201, made.text
        assert _proposal_counts(client, {**zero, "open": 1}) == {**zero, "open": 1}
        pid = made.json()["id"]
        assert client.post(f"/explorer/v1/proposals/{pid}/withdraw").status_code == 200
        assert _proposal_counts(client, {**zero, "withdrawn": 1}) == {**zero, "withdrawn": 1}
        calls.clear()
        samples(client)  # the counts are fresh: the scrape itself reads nothing
        assert calls == []


def test_a_failed_count_drops_the_family_and_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(CountingStorage):
        def proposal_counts(self) -> dict[str, int]:
            raise StorageError("the database is gone")

    now = [0.0]
    with Registry(Broken(MemoryStorage(), [])) as reg:
        tally = ProposalTally(reg, max_age=10, clock=lambda: now[0])
        for _ in range(3):
            assert tally.counts() is None
            _settled(tally)
            now[0] += 11  # old again: every scrape starts a read, each fails the same way
        assert tally.reads == 3
    logged = [r for r in caplog.records if "counting proposals" in r.getMessage()]
    assert len(logged) == 1 and "the database is gone" in logged[0].getMessage()


def test_changes_while_a_read_runs_are_read_once_more() -> None:
    release = threading.Event()

    class Slow(CountingStorage):
        def proposal_counts(self) -> dict[str, int]:
            release.wait(10)
            return super().proposal_counts()

    with Registry(Slow(MemoryStorage(), [])) as reg:
        reg.create_namespace("t/ns")
        tally = ProposalTally(reg, max_age=3600)
        assert tally.counts() is None  # the first read starts, and waits
        reg.proposals.propose_schema(
            "persistent://t/ns/x", SchemaInfo(type=SchemaType.AVRO, schema=V1), title="t", actor=Actor("a", Role.ADMIN)
        )
        for _ in range(5):  # five changes while it waits: one more read after it, not five
            tally.changed()
        release.set()
        _settled(tally)
        assert tally.reads == 2
        assert tally.counts() == {**{state: 0 for state in ProposalState}, ProposalState.OPEN: 1}


def _settled(tally: ProposalTally) -> None:
    for _ in range(400):
        if not any(t.name == "proposal-tally" for t in threading.enumerate()):
            return
        time.sleep(0.01)
    raise AssertionError("the proposal count read never ended")
