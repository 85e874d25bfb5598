"""client.conf and pulsarctl contexts parsed into connection settings (registry/remote/_connection.py): the
forms Pulsar accepts, and no secret in a repr or an error."""

from __future__ import annotations

import base64
import json

import pytest

from registry import StorageError
from registry.remote._connection import BasicAuth, OAuth2Auth, TokenAuth, from_client_conf, from_context

P = "org.apache.pulsar.client.impl.auth."


def _conf(tmp_path, text: str):
    path = tmp_path / "client.conf"
    path.write_text(text)
    return path


def test_properties_forms_and_a_token_never_shown(tmp_path):
    conf = _conf(
        tmp_path,
        "! a comment\nwebServiceUrl: https://b.pulsar.svc:8443\nauthPlugin=" + P + "AuthenticationToken\n"
        "authParams=token:secret-\\\n  jwt\ntlsEnableHostnameVerification = false\n",
    )
    connection = from_client_conf(conf)
    assert connection.auth == TokenAuth("secret-jwt")
    assert not connection.tls.verify_hostname and connection.url == "https://b.pulsar.svc:8443"
    assert "secret" not in repr(connection) and "secret" not in connection.identity()
    override = from_client_conf(conf, url="https://other:8443")
    assert override.url == "https://other:8443" and override.identity() != connection.identity()


def test_oauth2_key_as_a_data_url_and_basic_auth(tmp_path):
    key = base64.b64encode(json.dumps({"client_id": "c", "client_secret": "s3cret"}).encode()).decode()
    params = json.dumps({"issuerUrl": "https://issuer/", "privateKey": f"data:application/json;base64,{key}"})
    conf = _conf(
        tmp_path, f"webServiceUrl=https://b:8443\nauthPlugin={P}oauth2.AuthenticationOAuth2\nauthParams={params}\n"
    )
    auth = from_client_conf(conf).auth
    assert auth == OAuth2Auth("https://issuer", "c", "s3cret") and "s3cret" not in repr(auth)
    basic = _conf(
        tmp_path,
        f'webServiceUrl=http://b:8080\nauthPlugin={P}AuthenticationBasic\nauthParams={{"userId":"u","password":"pw"}}\n',
    )
    assert from_client_conf(basic).auth == BasicAuth("u", "pw")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("tlsAllowInsecureConnection=yes", "must be true or false"),
        (f"authPlugin={P}AuthenticationBasic\nauthParams=user:hunter2", "must be a JSON object"),
        ("authPlugin=com.example.Custom", "unknown authPlugin"),
    ],
)
def test_bad_settings_are_named_without_quoting_secrets(tmp_path, line, message):
    with pytest.raises(StorageError, match=message) as e:
        from_client_conf(_conf(tmp_path, f"webServiceUrl=http://b:8080\n{line}\n"))
    assert "hunter2" not in str(e.value)


def test_a_context_with_a_token_file_and_the_current_context(tmp_path):
    (tmp_path / "t").write_text("tok\n")
    config = tmp_path / "config"
    config.write_text(
        f"auth-info:\n  dev:\n    tokenFile: {tmp_path / 't'}\ncontexts:\n  dev:\n    admin-service-url: http://b:8080\n"
        "current-context: dev\n"
    )
    connection = from_context(None, config=config)
    assert connection.auth == TokenAuth("tok") and connection.url == "http://b:8080"


@pytest.mark.parametrize(
    "url",
    ["http://ops:pw-secret@127.0.0.1:9", "https://pw-secret@broker.example:8443/admin/v2", "http://a:pw-secret@h?x=1"],
)
def test_an_admin_url_with_a_password_is_refused_without_showing_it(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A credential written into the URL would be echoed by every message that names the endpoint (refused,
    unreachable, TLS): refused before anything is sent, in the core and so in every shell, never quoting it."""
    import registry
    from cli.main import main

    with pytest.raises(StorageError, match="user name or password in it is refused") as refused:
        registry.open(url)
    assert "pw-secret" not in str(refused.value)
    assert main(["get", "--url", url, "--topic", "persistent://t/n/x"]) == 2
    err = capsys.readouterr().err
    assert "user name or password" in err and "pw-secret" not in err
