"""`schema-explorer audit ... --client-conf FILE` and `--context NAME` (issue 42): the audits reach a cluster as
every other command does, against the simulated TLS cluster with OAuth2 client credentials (tests/cluster_sim.py),
through its redirects, and answer as over the registry file the cluster serves. Each executor reads the file
itself (pipeline/_registry_source.py): no client secret or access token is in the settings given to Spark, on
stdout or stderr, or in any file the audit writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cli.main import main
from cluster_sim import OAUTH_AUDIENCE, OAUTH_CLIENT, SimulatedCluster, simulated_cluster
from registry import Registry
from serving import seeded

pytestmark = pytest.mark.cluster  # TLS brokers and an issuer on loopback

PLUGIN = "org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2"


@pytest.fixture(scope="module")
def oauth_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SimulatedCluster, Path]]:
    """(cluster, the registry file it serves): three brokers demanding OAuth2 access tokens, and their issuer."""
    folder = tmp_path_factory.mktemp("cluster-oauth2")
    db = seeded(folder / "registry.db", keep_clients=False)
    with Registry.open(db) as reg, simulated_cluster(reg, folder / "certs", auth="oauth2") as sim:
        yield sim, db


@pytest.fixture
def spark_settings(cli_spark: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """The settings each audit asked its SparkSession for (the run's one session is handed back)."""
    import pipeline._spark

    asked: list[dict[str, str]] = []
    shared = pipeline._spark.spark_session  # cli_spark's stand-in, which hands back the run's session

    def recorded(*args: Any, **kwargs: Any) -> Any:
        asked.append(dict(kwargs.get("extra") or {}))
        return shared(*args, **kwargs)

    monkeypatch.setattr("pipeline._spark.spark_session", recorded)
    return asked


def _key_file(folder: Path) -> Path:
    key = folder / "key.json"
    key.write_text(json.dumps({"client_id": OAUTH_CLIENT[0], "client_secret": OAUTH_CLIENT[1]}))
    return key


def _written(folder: Path) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in sorted(folder.rglob("*")) if p.is_file())


def _table(folder: Path, name: str) -> list[str]:
    return sorted(map(str, pq.read_table(folder / name).to_pylist()))


def test_audits_by_client_conf_and_by_context_answer_as_over_the_file_and_pass_no_secret(
    oauth_cluster: tuple[SimulatedCluster, Path],
    spark_settings: list[dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sim, db = oauth_cluster
    key = _key_file(tmp_path)
    params = {"type": "client_credentials", "issuerUrl": sim.issuer_url, "privateKey": f"file://{key}"}
    conf = tmp_path / "client.conf"
    conf.write_text(
        f"webServiceUrl={sim.urls[0]}\ntlsTrustCertsFilePath={sim.certs.ca}\nauthPlugin={PLUGIN}\n"
        f"authParams={json.dumps({**params, 'audience': OAUTH_AUDIENCE})}\n"
    )
    home = tmp_path / "home"  # the driver's home; the executors are told the config file's path instead
    (home / ".config" / "pulsar").mkdir(parents=True)
    (home / ".config" / "pulsar" / "config").write_text(
        f"auth-info:\n  sim:\n    issuer_endpoint: {sim.issuer_url}\n    client_id: {OAUTH_CLIENT[0]}\n"
        f"    audience: {OAUTH_AUDIENCE}\n    key_file: file://{key}\n    tls_trust_certs_file_path: {sim.certs.ca}\n"
        f"contexts:\n  sim:\n    admin-service-url: {sim.urls[1]}\ncurrent-context: sim\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SCHEMA_EXPLORER_TOKEN", "stray-token")  # for --url only: not passed on with these
    issued = sim.tokens_issued
    for name, source in (
        ("conf", ["--client-conf", str(conf)]),
        ("context", ["--context", "sim"]),
        ("db", ["--db", str(db)]),
    ):
        assert main(["audit", "compat-matrix", *source, "--out", str(tmp_path / name)]) == 0, name
    assert len(_table(tmp_path / "db", "compat_topics")) == 47
    for name in ("conf", "context"):
        for table in ("compat_matrix", "compat_topics"):
            assert _table(tmp_path / name, table) == _table(tmp_path / "db", table), (name, table)
    assert sim.tokens_issued > issued + 2  # the executors fetched their own tokens, beside each driver's
    assert sim.redirects > 0  # topics other brokers own were read there
    printed = capsys.readouterr()
    secrets = [OAUTH_CLIENT[1], *sim._access_tokens, "stray-token"]
    for secret in secrets:
        assert secret not in printed.out + printed.err
        assert all(secret not in value for settings in spark_settings[:2] for value in settings.values())
        for name in ("conf", "context"):
            assert secret not in _written(tmp_path / name), name
    assert spark_settings[:2] == [{}, {}]  # a client.conf or context adds nothing to Spark's settings


def test_a_token_with_a_client_conf_is_refused_before_spark_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no pulsarctl config there
    conf = tmp_path / "client.conf"
    conf.write_text("webServiceUrl=https://127.0.0.1:1\n")
    assert (
        main(["audit", "compat-matrix", "--client-conf", str(conf), "--token", "t", "--out", str(tmp_path / "o")]) == 2
    )
    assert "--token only applies with --url" in capsys.readouterr().err
    assert main(["audit", "compat-matrix", "--context", "nowhere", "--out", str(tmp_path / "o")]) == 2
    assert f"cannot read the pulsarctl config {tmp_path}" in capsys.readouterr().err  # the driver's home
    assert not (tmp_path / "o").exists()
