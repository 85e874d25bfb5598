"""Connect as pulsar-admin does, against the simulated cluster: a client.conf per auth plugin (token inline and
file://, Basic, mTLS, OAuth2 client credentials), a pulsarctl context, the TLS settings, and errors that name
their cause in one line and never a secret."""

from __future__ import annotations

import contextlib
import json
import socket
import warnings
from pathlib import Path

import pytest

import registry
from cli.main import main
from cluster_sim import ADMIN_TOKEN, BASIC_USER, OAUTH_AUDIENCE, OAUTH_CLIENT, Pacing, SimulatedCluster
from registry import AuthError, StorageError, TopicQuery
from registry.remote._admin_client import InsecureConnectionWarning

PLUGIN = "org.apache.pulsar.client.impl.auth."
SECRETS = (ADMIN_TOKEN, BASIC_USER[1], OAUTH_CLIENT[1], "BEGIN")


def client_conf(sim: SimulatedCluster, folder: Path, *, broker: int = 0, **extra: str) -> Path:
    """A client.conf for `sim`'s auth mode, as a pulsar-admin user writes it."""
    lines = {"webServiceUrl": sim.urls[broker], "tlsTrustCertsFilePath": str(sim.certs.ca)}
    if sim.auth == "token":
        lines |= {"authPlugin": PLUGIN + "AuthenticationToken", "authParams": f"token:{ADMIN_TOKEN}"}
    elif sim.auth == "basic":
        params = json.dumps({"userId": BASIC_USER[0], "password": BASIC_USER[1]})
        lines |= {"authPlugin": PLUGIN + "AuthenticationBasic", "authParams": params}
    elif sim.auth == "mtls":
        params = f"tlsCertFile:{sim.certs.client_cert},tlsKeyFile:{sim.certs.client_key}"
        lines |= {"authPlugin": PLUGIN + "AuthenticationTls", "authParams": params}
    elif sim.auth == "oauth2":
        key = folder / "key.json"
        key.write_text(json.dumps({"client_id": OAUTH_CLIENT[0], "client_secret": OAUTH_CLIENT[1]}))
        params = {"type": "client_credentials", "issuerUrl": sim.issuer_url, "privateKey": f"file://{key}"}
        lines |= {"authPlugin": PLUGIN + "oauth2.AuthenticationOAuth2", "authParams": json.dumps(params)}
        lines["authParams"] = json.dumps({**params, "audience": OAUTH_AUDIENCE})
    lines |= extra
    path = folder / "client.conf"
    path.write_text("# written by the test\n" + "".join(f"{k}={v}\n" for k, v in lines.items()))
    return path


@pytest.fixture(scope="module")
def by_auth(make_cluster):
    """One cluster per auth mode for the module, made on first use."""
    made: dict[str, SimulatedCluster] = {}
    return lambda auth: made[auth] if auth in made else made.setdefault(auth, make_cluster(auth))


def _topics(reg) -> list[str]:
    return sorted(t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns))


@pytest.mark.parametrize("auth", ["token", "basic", "mtls", "oauth2"])
def test_each_auth_plugin_indexes_and_searches_exactly_the_clusters_topics_through_redirects(by_auth, tmp_path, auth):
    sim = by_auth(auth)
    with registry.open(client_conf=client_conf(sim, tmp_path)) as reg:
        topics = _topics(reg)
        found = reg.search_topics(TopicQuery(), limit=500)
        status = reg.broker_index.status()
        foreign = next(t for t in topics if sim.owner(t) != 0 and t.startswith("persistent://acme/"))
        assert reg.get(foreign).version >= 0
    assert sorted(row.topic for row in found.items) == topics
    assert sim.redirects > 0 and sim.unauthenticated == 0
    for secret in SECRETS:  # neither the status, nor the cache file's name, nor the handle's repr
        assert secret not in repr(status) and secret not in repr(reg)


@pytest.mark.parametrize("auth", ["token", "basic", "mtls", "oauth2"])
def test_the_index_command_reads_every_topic_through_redirects_refreshes_and_429s(by_auth, tmp_path, auth, capsys):
    sim = by_auth(auth)
    conf = client_conf(sim, tmp_path, broker=1)
    with registry.open(client_conf=conf) as reg:
        topics = _topics(reg)
    refused, redirects = sim.refused, sim.redirects
    sim.pacing = Pacing(per_second=60, burst=3)
    sim.token_lifetime_s, sim.token_grace_s = 0, 600  # OAuth2: every request renews its token first
    try:
        assert main(["index", "--client-conf", str(conf)]) == 0
        assert main(["search", "--client-conf", str(conf), "--limit", "500", "--json"]) == 0
    finally:
        sim.pacing, sim.token_lifetime_s, sim.token_grace_s = None, 300, 0.0
    out, err = capsys.readouterr()
    page = json.loads(out[out.index("{") :])
    assert sorted(row["topic"] for row in page["items"]) == topics
    assert sim.refused > refused and sim.redirects > redirects and sim.unauthenticated == 0
    assert not any(secret in out + err for secret in SECRETS)


def test_a_token_file_and_pulsar_client_conf_work_from_the_command_line(make_cluster, tmp_path, monkeypatch, capsys):
    sim = make_cluster("token")
    token_file = tmp_path / "token.jwt"
    token_file.write_text(ADMIN_TOKEN + "\n")
    conf = client_conf(sim, tmp_path, broker=2, authParams=f"file://{token_file}")
    monkeypatch.setenv("PULSAR_CLIENT_CONF", str(conf))
    assert main(["search", "name:order-created", "--client-conf"]) == 0
    out, err = capsys.readouterr()
    assert "order-created" in out and ADMIN_TOKEN not in out + err


def test_oauth2_caches_its_token_renews_it_before_expiry_and_answers_a_401_with_one_refresh(make_cluster, tmp_path):
    sim = make_cluster("oauth2")
    with registry.open(client_conf=client_conf(sim, tmp_path)) as reg:
        _topics(reg)
        assert sim.tokens_issued == 1  # one token for every request so far
        sim.revoke_tokens()  # the broker now refuses it: 401, one refresh, the same request again
        assert reg.tenants()
        assert sim.tokens_issued == 2 and sim.unauthenticated == 1
        sim.token_lifetime_s, sim.token_grace_s = 0, 600  # told "due at once": renewed before each use
        sim.revoke_tokens()
        reg.tenants()  # 401, then a token that is due at once
        issued, refused = sim.tokens_issued, sim.unauthenticated
        reg.tenants(), reg.tenants()
        assert sim.tokens_issued == issued + 2 and sim.unauthenticated == refused


def test_a_pulsarctl_context_connects(make_cluster, tmp_path, monkeypatch):
    sim = make_cluster("token")
    home = tmp_path / "home"
    (home / ".config" / "pulsar").mkdir(parents=True)
    (home / ".config" / "pulsar" / "config").write_text(
        "auth-info:\n"
        f"  sim:\n    token: {ADMIN_TOKEN}\n    tls_trust_certs_file_path: {sim.certs.ca}\n"
        f"contexts:\n  sim:\n    admin-service-url: {sim.urls[1]}\n"
        "current-context: sim\n"
    )
    monkeypatch.setenv("HOME", str(home))
    with registry.open(context="sim") as reg:
        assert "acme" in reg.tenants()
    with pytest.raises(StorageError, match=r"no context 'prod' in .*config \(contexts: sim\)"):
        registry.open(context="prod")


def test_insecure_mode_warns_and_hostname_verification_is_on_unless_turned_off(cluster, tmp_path):
    by_name = cluster.urls[0].replace("127.0.0.1", "localhost")  # the certificate names 127.0.0.1 only
    conf = client_conf(cluster, tmp_path, webServiceUrl=by_name)
    with pytest.raises(StorageError, match=r"^TLS: the certificate of https://localhost:\d+ does not name its host"):
        registry.open(client_conf=conf)
    with registry.open(
        client_conf=client_conf(cluster, tmp_path, webServiceUrl=by_name, tlsEnableHostnameVerification="false")
    ) as reg:
        assert "acme" in reg.tenants()
    insecure = client_conf(cluster, tmp_path, tlsTrustCertsFilePath="", tlsAllowInsecureConnection="true")
    with pytest.warns(InsecureConnectionWarning, match="NOT checked"), registry.open(client_conf=insecure) as reg:
        assert "acme" in reg.tenants()


def _one_line_error(conf: Path, kind: type[Exception] = StorageError) -> str:
    with warnings.catch_warnings(), pytest.raises(kind) as e:
        registry.open(client_conf=conf)
    text = str(e.value)
    assert "\n" not in text and not any(secret in text for secret in SECRETS)
    return text


def test_connection_errors_name_their_cause_in_one_line_without_secrets(make_cluster, cluster, tmp_path):
    untrusted = client_conf(cluster, tmp_path, tlsTrustCertsFilePath=str(cluster.certs.untrusted_ca))
    assert "is not trusted" in _one_line_error(untrusted)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert ": connection refused." in _one_line_error(
        client_conf(cluster, tmp_path, webServiceUrl=f"https://127.0.0.1:{port}")
    )
    mtls = make_cluster("mtls")
    assert "client certificate" in _one_line_error(client_conf(mtls, tmp_path, authPlugin=""))
    token = make_cluster("token")
    wrong = client_conf(token, tmp_path, authParams="token:not-the-token")
    assert "HTTP 401" in _one_line_error(wrong, AuthError)
    oauth = make_cluster("oauth2")
    conf = client_conf(oauth, tmp_path)
    (tmp_path / "key.json").write_text(json.dumps({"client_id": OAUTH_CLIENT[0], "client_secret": "wrong-secret"}))
    assert "refused client 'sim-client': invalid_client" in _one_line_error(conf, AuthError)


@pytest.mark.parametrize(("plugin", "named"), [("AuthenticationSasl", "Kerberos"), ("AuthenticationAthenz", "Athenz")])
def test_unsupported_plugins_are_named_in_one_line(cluster, tmp_path, plugin, named):
    conf = client_conf(cluster, tmp_path, authPlugin=PLUGIN + plugin, authParams='{"a":"b"}')
    assert f"the {named}" in _one_line_error(conf)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "x", "--client-conf"], "reads $PULSAR_CLIENT_CONF, which is not set"),
        (["search", "x", "--client-conf", "c.conf", "--token", "t"], "--token only applies with --url"),
        (["search", "x", "--context", "dev", "--url", "http://b:8080"], "not allowed with argument"),
        (["ui", "--context", "dev", "--token", "t"], "--token only applies with --url"),
        (["search", "x", "--client-conf", "missing.conf"], "cannot read missing.conf"),
    ],
)
def test_connection_options_refuse_what_they_cannot_use_in_one_line(monkeypatch, tmp_path, capsys, argv, message):
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.chdir(tmp_path)
    with contextlib.suppress(SystemExit):  # argparse's own usage errors exit 2
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and not list(tmp_path.iterdir())
