"""The real thing (issue 36): Debian's Prometheus scrapes a live `serve` on loopback, and its HTTP API gives, for
a known sequence of requests, the counts a Pulsar broker would have recorded (SchemaRegistryServiceImpl), and
the two alert rules Pulsar documents load and evaluate unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import needs
from serving import free_port, served

pytestmark = [pytest.mark.server, pytest.mark.prometheus, pytest.mark.slow]

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
V1 = '{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}'
V2 = '{"type":"record","name":"A","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}'
BAD = '{"type":"record","name":"A","fields":[{"name":"a","type":"string"}]}'
WAIT_S = 60.0  # a bound on polling Prometheus, never a fixed sleep

RULES = """groups:
  - name: pulsar-schema-registry
    rules:
      - alert: SchemaPutsFailing
        expr: rate(pulsar_schema_put_ops_failed_total[5m]) > 0
      - alert: IncompatibleSchemas
        expr: increase(pulsar_schema_incompatible_total[5m]) > 0
"""


def _require_prometheus() -> None:
    needs.require("prometheus")
    if not os.access(PROMETHEUS, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail(f"{PROMETHEUS} is missing: .ci/run installs Debian's prometheus package when run as root")
        pytest.skip("Debian's prometheus is not installed (apt-get install -y prometheus); CI installs it")


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(Prometheus' URL, its config file to fill), started once the test wrote the config."""
    _require_prometheus()
    port = free_port()
    yield f"http://127.0.0.1:{port}", tmp_path


def _start(config_dir: Path, port: int, target: str) -> subprocess.Popen[bytes]:
    (config_dir / "rules.yml").write_text(RULES)
    (config_dir / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "rule_files:\n  - rules.yml\n"
        "scrape_configs:\n"
        "  - job_name: schema-explorer\n"
        "    metrics_path: /metrics\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    log = (config_dir / "prometheus.log").open("wb")
    return subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config_dir / 'prometheus.yml'}",
            f"--storage.tsdb.path={config_dir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        cwd=config_dir,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def _query(url: str, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
    answer = httpx.get(f"{url}/api/v1/query", params={"query": expr}, timeout=5.0).json()
    assert answer["status"] == "success", answer
    return {
        tuple(sorted((k, v) for k, v in r["metric"].items() if k not in ("instance", "job", "__name__"))): float(
            r["value"][1]
        )
        for r in answer["data"]["result"]
    }


def _until(check: object, what: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(
                f"Prometheus did not show {what} within {WAIT_S:g} s; its log: {log.read_text()[-2000:]}"
            )
        time.sleep(0.5)


def test_prometheus_counts_the_sequence_as_pulsar_would(
    prometheus: tuple[str, Path], seeded_file: Path, tmp_path: Path
) -> None:
    url, config_dir = prometheus
    db = tmp_path / "registry.db"
    shutil.copyfile(seeded_file, db)
    with served(db, log_dir=tmp_path) as server:
        target = server.removeprefix("http://")
        child = _start(config_dir, int(url.rsplit(":", 1)[1]), target)
        log = config_dir / "prometheus.log"
        try:
            _until(lambda: _ready(url), "its API", log)
            _until(lambda: _query(url, 'up{job="schema-explorer"}') == {(): 1.0}, "the target up", log)
            base = f"{server}/admin/v2/schemas/acme/orders"
            body = {"type": "AVRO", "properties": {}}
            statuses = [
                httpx.post(f"{base}/metrics-test/schema", json={**body, "schema": V1}).status_code,  # first: put
                httpx.post(f"{base}/metrics-test/schema", json={**body, "schema": V1}).status_code,  # duplicate
                httpx.post(f"{base}/metrics-test/schema", json={**body, "schema": V2}).status_code,  # compatible
                httpx.post(f"{base}/metrics-test/schema", json={**body, "schema": BAD}).status_code,  # refused
                httpx.get(f"{base}/no-such-schema/schema").status_code,  # a successful get
                httpx.post(f"{base}/metrics-test/compatibility", json={**body, "schema": BAD}).status_code,
                httpx.delete(f"{base}/metrics-test/schema").status_code,
            ]
            assert statuses == [200, 200, 200, 409, 404, 500, 200]
            ns = (("namespace", "acme/orders"),)
            expected = {
                "pulsar_schema_compatible_total": 1.0,
                "pulsar_schema_incompatible_total": 2.0,
                "pulsar_schema_put_ops_latency_count": 2.0,
                "pulsar_schema_get_ops_latency_count": 4.0,
                "pulsar_schema_del_ops_latency_count": 1.0,
            }

            def counted() -> bool:
                return all(_query(url, name).get(ns) == count for name, count in expected.items())

            _until(counted, f"the counts {expected}", log)
            proposed = httpx.post(
                f"{server}/explorer/v1/proposals",
                json={"topic": "persistent://acme/orders/metrics-test", "title": "t", "schema": {**body, "schema": V2}},
            )
            assert proposed.status_code == 201, proposed.text
            _until(
                lambda: (
                    _query(url, 'schema_explorer_proposals{state=~"open|applied"}')
                    == {(("state", "open"),): 1.0, (("state", "applied"),): 0.0}
                ),
                "one open proposal",
                log,
            )
            assert _query(url, "pulsar_schema_put_ops_failed_total") == {}  # never failed: no series, as Pulsar
            assert _query(url, "pulsar_schema_get_ops_failed_total") == {}
            otel = _query(url, "pulsar_broker_operation_schema_registry_compatibility_check_count_total")
            assert otel == {
                (("pulsar_namespace", "acme/orders"), ("pulsar_schema_registry_compatibility_check_response", r)): n
                for r, n in (("compatible", 1.0), ("incompatible", 2.0))
            }
            durations = _query(url, "pulsar_broker_request_schema_registry_duration_seconds_count")
            by_request = {dict(k)["pulsar_schema_registry_request"]: v for k, v in durations.items()}
            assert by_request == {"put": 2.0, "get": 4.0, "delete": 1.0}

            # increase() needs the counter seen before it moved: one more refusal, now that Prometheus has
            # scraped the series, moves it from a scraped value (a new series' first value is no increase).
            assert httpx.post(f"{base}/order-created/compatibility", json={**body, "schema": BAD}).status_code == 500

            def alerting() -> bool:
                rules = httpx.get(f"{url}/api/v1/rules", timeout=5.0).json()["data"]["groups"][0]["rules"]
                state = {r["name"]: (r["health"], r["state"]) for r in rules}
                return state == {"SchemaPutsFailing": ("ok", "inactive"), "IncompatibleSchemas": ("ok", "firing")}

            _until(alerting, "the incompatible alert firing and the put alert inactive", log)
        finally:
            child.terminate()
            child.wait(timeout=30)


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/-/ready", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False
