"""What the app and `ui` may show of a client.conf or pulsarctl context (issue 42): the cluster's URL and the
auth method by name, never the token, password, client secret or key; and the context names to pick from,
the current one first, without reading any credential out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry import StorageError
from registry.remote._connection import describe_connection, pulsarctl_contexts

PLUGIN = "org.apache.pulsar.client.impl.auth."
SECRETS = ("tok-secret", "pw-secret", "client-secret-x")


def conf(folder: Path, plugin: str, params: str, **extra: str) -> Path:
    path = folder / f"{plugin}.conf"
    lines = {"webServiceUrl": "https://broker:8443", "authPlugin": PLUGIN + plugin, "authParams": params} | extra
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    return path


def test_each_auth_method_is_named_never_its_secret(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"client_id": "c", "client_secret": "client-secret-x"}))
    oauth = json.dumps({"type": "client_credentials", "issuerUrl": "https://issuer", "privateKey": f"file://{key}"})
    cases = {
        "token": conf(tmp_path, "AuthenticationToken", "token:tok-secret"),
        "Basic": conf(tmp_path, "AuthenticationBasic", json.dumps({"userId": "u", "password": "pw-secret"})),
        "OAuth2 client credentials": conf(tmp_path, "oauth2.AuthenticationOAuth2", oauth),
        "mTLS client certificate": conf(tmp_path, "AuthenticationTls", "tlsCertFile:/c.pem,tlsKeyFile:/k.pem"),
    }
    for method, path in cases.items():
        found = describe_connection(client_conf=path)
        assert (found.url, found.auth, found.insecure_warning) == ("https://broker:8443", method, None)
        assert not any(secret in repr(found) for secret in SECRETS)
    insecure = conf(tmp_path, "AuthenticationDisabled", "", tlsAllowInsecureConnection="true")
    found = describe_connection(client_conf=insecure)
    assert found.auth == "none" and found.insecure_warning is not None and "NOT checked" in found.insecure_warning


def test_contexts_are_listed_current_first_and_a_bad_name_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "current-context: prod\ncontexts:\n  dev: {admin-service-url: 'http://d:8080'}\n"
        "  prod: {admin-service-url: 'https://p:8443'}\n  alpha: {admin-service-url: 'http://a:8080'}\n"
        "auth-info:\n  prod: {token: tok-secret}\n"
    )
    assert pulsarctl_contexts(config) == ("prod", "alpha", "dev")
    with pytest.raises(StorageError, match="cannot read the pulsarctl config"):
        pulsarctl_contexts(tmp_path / "missing")
    with pytest.raises(StorageError, match="name a client.conf or a context"):
        describe_connection()
