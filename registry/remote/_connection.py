"""How to reach a cluster, parsed once: its admin URL, its credentials and its TLS settings.

People connect as pulsar-admin does, from Pulsar's `client.conf` (`webServiceUrl`, `authPlugin`, `authParams`,
`tlsTrustCertsFilePath`, `tlsAllowInsecureConnection`, `tlsEnableHostnameVerification`; PulsarAdminTool), or
from a pulsarctl context (`~/.config/pulsar/config`: `contexts.NAME.admin-service-url` and `auth-info.NAME`).
The auth plugins understood are Pulsar's own client ones:

* AuthenticationToken: `token:<jwt>`, `file:///path` (the file's text), or the bare token;
* AuthenticationBasic: `{"userId": ..., "password": ...}`, sent as `Authorization: Basic`;
* AuthenticationTls: `tlsCertFile:/path,tlsKeyFile:/path` (or the JSON form): a client certificate (mTLS);
* AuthenticationOAuth2 (ClientCredentialsFlow): `{"type": "client_credentials", "issuerUrl": ...,
  "privateKey": "file:///key.json", "audience": ..., "scope": ...}`, the key file holding `client_id` and
  `client_secret` (_oauth2.py fetches and refreshes the token).

Others (AuthenticationSasl for Kerberos, AuthenticationAthenz, key-store TLS) are refused in one line. No secret
appears in a repr, an error or a file name: `identity()` is a digest, what the index cache is keyed by.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._errors import AuthError, StorageError

CLIENT_CONF_ENV: Final = "PULSAR_CLIENT_CONF"
PULSARCTL_CONFIG: Final = Path("~/.config/pulsar/config")
_PLUGIN_PREFIX: Final = "org.apache.pulsar.client.impl.auth."
_UNSUPPORTED: Final = {
    "AuthenticationSasl": "Kerberos (SASL)",
    "AuthenticationAthenz": "Athenz",
    "AuthenticationKeyStoreTls": "key-store TLS",
}


@dataclass(frozen=True, slots=True)
class TokenAuth:
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class BasicAuth:
    user: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class OAuth2Auth:
    issuer_url: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str = ""
    scope: str = ""


Auth = TokenAuth | BasicAuth | OAuth2Auth


@dataclass(frozen=True, slots=True)
class TlsSettings:
    trust_certs_file: Path | None = None  # the CA bundle trusted for the brokers and the OAuth2 issuer
    allow_insecure: bool = False  # no certificate check at all (a warning says so)
    verify_hostname: bool = True
    cert_file: Path | None = None  # mTLS: the client certificate and its key
    key_file: Path | None = None

    def context(self) -> ssl.SSLContext:
        """The client TLS context these settings describe; a missing or unreadable file named in one line."""
        for what, path in (("trust store", self.trust_certs_file), ("client certificate", self.cert_file)):
            if path is not None and not path.is_file():
                raise StorageError(f"the {what} {path} does not exist")
        try:
            if self.allow_insecure:
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            else:
                trust = str(self.trust_certs_file) if self.trust_certs_file else None
                context = ssl.create_default_context(cafile=trust)
                context.check_hostname = self.verify_hostname
            if self.cert_file is not None:
                context.load_cert_chain(str(self.cert_file), str(self.key_file) if self.key_file else None)
        except (ssl.SSLError, OSError) as exc:
            raise StorageError(f"cannot load the TLS files ({type(exc).__name__}: {exc})") from None
        return context


@dataclass(frozen=True, slots=True)
class Connection:
    """One cluster's admin URL, credentials and TLS settings; `source` says where they were read."""

    url: str
    auth: Auth | None = None
    tls: TlsSettings = TlsSettings()
    source: str = "the arguments"

    def identity(self) -> str:
        """A digest naming who connects where (the index cache's key): a cache is never shared between roles,
        and no secret can be read back from it."""
        auth = self.auth
        who: tuple[str, ...]
        if isinstance(auth, TokenAuth):
            who = ("token", auth.token)
        elif isinstance(auth, BasicAuth):
            who = ("basic", auth.user, auth.password)
        elif isinstance(auth, OAuth2Auth):
            who = ("oauth2", auth.issuer_url, auth.client_id, auth.audience, auth.scope)
        else:
            who = ("anonymous",)
        if self.tls.cert_file is not None:
            who = (*who, "mtls", str(self.tls.cert_file))
        return hashlib.sha256("\0".join((self.url, *who)).encode()).hexdigest()

    def summary(self) -> ConnectionSummary:
        """What may be shown of this connection: where, and the auth method by name (never its secret)."""
        auth = self.auth
        methods = []
        if isinstance(auth, TokenAuth):
            methods.append("token")
        elif isinstance(auth, BasicAuth):
            methods.append("Basic")
        elif isinstance(auth, OAuth2Auth):
            methods.append("OAuth2 client credentials")
        if self.tls.cert_file is not None:
            methods.append("mTLS client certificate")
        return ConnectionSummary(self.url, " + ".join(methods) or "none", self.source, self.insecure_warning)

    @property
    def insecure_warning(self) -> str | None:
        if not self.tls.allow_insecure:
            return None
        return f"TLS certificates are NOT checked for {self.url} ({self.source}: tlsAllowInsecureConnection)"


@dataclass(frozen=True, slots=True)
class ConnectionSummary:
    """A connection as a page or a log may show it: no field can hold a secret."""

    url: str
    auth: str  # the method by name: "token", "Basic", "OAuth2 client credentials", "mTLS client certificate", "none"
    source: str  # where it was read: "client.conf PATH" or "context NAME (FILE)"
    insecure_warning: str | None  # set when certificates are not checked


def describe_connection(
    *, client_conf: str | os.PathLike[str] | None = None, context: str | None = None
) -> ConnectionSummary:
    """Read a client.conf or pulsarctl context (as `registry.open` would, without connecting) and say what may
    be shown of it; a missing file, an unknown context or an unsupported auth plugin raises the same one-line
    StorageError that opening it would."""
    if (client_conf is None) == (context is None):
        raise StorageError("name a client.conf or a context, one of them")
    found = from_client_conf(client_conf) if client_conf is not None else from_context(context)
    return found.summary()


# --- Pulsar's client.conf ------------------------------------------------------------------------------------


def read_properties(path: Path) -> dict[str, str]:
    """A Java .properties file, as Pulsar reads client.conf: `key=value` or `key: value`, `#`/`!` comments,
    a trailing backslash continuing a line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    values: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key, value = (line[:cut], line[cut + 1 :]) if cut >= 0 else (line, "")
        values[key.strip()] = value.strip()
    return values


def from_client_conf(path: str | os.PathLike[str] | None, *, url: str | None = None) -> Connection:
    """The connection a client.conf describes (`path`, else $PULSAR_CLIENT_CONF); `url` overrides its
    webServiceUrl as pulsar-admin's --admin-url does."""
    chosen = path if path is not None else os.environ.get(CLIENT_CONF_ENV)
    if not chosen:
        raise StorageError(f"no client.conf named: pass its path, or set ${CLIENT_CONF_ENV}")
    file = Path(chosen).expanduser()
    conf = read_properties(file)
    source = f"client.conf {file}"
    where = url or conf.get("webServiceUrl", "")
    if not where:
        raise StorageError(f"{source} has no webServiceUrl")
    tls = TlsSettings(
        trust_certs_file=_path(conf.get("tlsTrustCertsFilePath")),
        allow_insecure=_flag(conf, "tlsAllowInsecureConnection", False, source),
        verify_hostname=_flag(conf, "tlsEnableHostnameVerification", True, source),
        cert_file=_path(conf.get("tlsCertificateFilePath")),
        key_file=_path(conf.get("tlsKeyFilePath")),
    )
    auth, tls = _plugin(conf.get("authPlugin", ""), conf.get("authParams", ""), tls, source)
    return Connection(url=where, auth=auth, tls=tls, source=source)


def _flag(conf: dict[str, str], key: str, default: bool, source: str) -> bool:
    value = conf.get(key, "").strip().lower()
    if not value:
        return default
    if value not in ("true", "false"):
        raise StorageError(f"{source}: {key} must be true or false, not {value!r}")
    return value == "true"


def _path(value: str | None) -> Path | None:
    if not value:
        return None
    return Path(value.removeprefix("file://")).expanduser()


def _plugin(plugin: str, params: str, tls: TlsSettings, source: str) -> tuple[Auth | None, TlsSettings]:
    name = plugin.strip().removeprefix(_PLUGIN_PREFIX).removeprefix("oauth2.")
    if not name or name == "AuthenticationDisabled":
        return None, tls
    if name == "AuthenticationToken":
        return TokenAuth(_token(params, source)), tls
    if name == "AuthenticationBasic":
        body = _json(params, source)
        return BasicAuth(str(body.get("userId", "")), str(body.get("password", ""))), tls
    if name == "AuthenticationTls":
        found = _pairs(params, source)
        cert, key = _path(found.get("tlsCertFile")), _path(found.get("tlsKeyFile"))
        if cert is None or key is None:
            raise StorageError(f"{source}: AuthenticationTls needs tlsCertFile and tlsKeyFile in authParams")
        return None, TlsSettings(tls.trust_certs_file, tls.allow_insecure, tls.verify_hostname, cert, key)
    if name == "AuthenticationOAuth2":
        body = _json(params, source)
        if body.get("type", "client_credentials") != "client_credentials":
            raise StorageError(f"{source}: only the OAuth2 client_credentials flow is supported")
        return _oauth2(str(body.get("issuerUrl", "")), str(body.get("privateKey", "")), body, source), tls
    for short, what in _UNSUPPORTED.items():
        if name.endswith(short):
            raise StorageError(f"{source}: the {what} auth plugin ({plugin}) is not supported; use a token, OAuth2")
    raise StorageError(f"{source}: unknown authPlugin {plugin!r} (supported: Token, OAuth2, Basic, Tls)")


def _token(params: str, source: str) -> str:
    text = params.strip()
    if text.startswith("{"):
        text = str(_json(text, source).get("token", ""))
    if text.startswith("file:"):
        file = Path(text.removeprefix("file:").removeprefix("//")).expanduser()
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise StorageError(f"{source}: cannot read the token file {file}: {exc.strerror or exc}") from None
    token = text.removeprefix("token:").strip()
    if not token:
        raise AuthError(f"{source}: the token is empty")
    return token


def _json(params: str, source: str) -> dict[str, Any]:
    try:
        body = json.loads(params)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise StorageError(f"{source}: authParams must be a JSON object for this plugin")  # never quoted: secrets
    return body


def _pairs(params: str, source: str) -> dict[str, str]:
    if params.strip().startswith("{"):
        return {k: str(v) for k, v in _json(params, source).items()}
    return dict(part.split(":", 1) for part in params.split(",") if ":" in part)


def _oauth2(issuer: str, key: str, body: dict[str, Any], source: str) -> OAuth2Auth:
    """Pulsar's KeyFile: `privateKey` names a JSON file (file://, or data:application/json;base64,) holding
    client_id and client_secret (and maybe issuer_url)."""
    if key.startswith("data:"):
        try:
            text = base64.b64decode(key.split(",", 1)[1]).decode("utf-8")
        except (IndexError, ValueError):
            raise StorageError(f"{source}: the OAuth2 privateKey data: URL is not base64 JSON") from None
    else:
        file = _path(key)
        if file is None:
            raise StorageError(f"{source}: OAuth2 needs privateKey (the key file with client_id, client_secret)")
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise StorageError(f"{source}: cannot read the OAuth2 key file {file}: {exc.strerror or exc}") from None
    found = _json(text, f"{source} (OAuth2 key file)")
    issuer = issuer or str(found.get("issuer_url", ""))
    client_id = str(found.get("client_id") or body.get("client_id") or "")
    secret = str(found.get("client_secret", ""))
    if not issuer or not client_id or not secret:
        raise StorageError(f"{source}: OAuth2 needs issuerUrl and a key file with client_id and client_secret")
    audience, scope = str(body.get("audience", "")), str(body.get("scope", ""))
    return OAuth2Auth(issuer.rstrip("/"), client_id, secret, audience, scope)


# --- pulsarctl's contexts ------------------------------------------------------------------------------------


def pulsarctl_contexts(config: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The context names in pulsarctl's config (default ~/.config/pulsar/config), its current-context first:
    what a person picks from. Names only: the credentials stay in the file."""
    _file, document = _pulsarctl_config(config)
    names = sorted(str(name) for name in (document.get("contexts") or {}))
    current = str(document.get("current-context") or "")
    return tuple(sorted(names, key=lambda name: name != current))


def _pulsarctl_config(config: str | os.PathLike[str] | None) -> tuple[Path, dict[str, Any]]:
    import yaml

    file = Path(config if config is not None else PULSARCTL_CONFIG).expanduser()
    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StorageError(f"cannot read the pulsarctl config {file}: {exc.strerror or exc}") from None
    except yaml.YAMLError:
        raise StorageError(f"the pulsarctl config {file} is not YAML") from None
    return file, loaded if isinstance(loaded, dict) else {}


def from_context(
    name: str | None, *, config: str | os.PathLike[str] | None = None, url: str | None = None
) -> Connection:
    """pulsarctl's context `name` (its current-context when None) from `config` (default
    ~/.config/pulsar/config): `contexts.NAME.admin-service-url` and `auth-info.NAME` (token, tokenFile,
    tls_trust_certs_file_path, tls_allow_insecure_connection, issuer_endpoint, client_id, audience, scope,
    key_file)."""
    file, document = _pulsarctl_config(config)
    chosen = name or str(document.get("current-context") or "")
    contexts = document.get("contexts") or {}
    if not chosen or chosen not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise StorageError(f"no context {chosen!r} in {file} (contexts: {known})")
    context = contexts[chosen] or {}
    info = (document.get("auth-info") or {}).get(chosen) or {}
    source = f"context {chosen} ({file})"
    url = url or str(context.get("admin-service-url") or "")
    if not url:
        raise StorageError(f"{source} has no admin-service-url")
    tls = TlsSettings(
        trust_certs_file=_path(info.get("tls_trust_certs_file_path")),
        allow_insecure=str(info.get("tls_allow_insecure_connection", False)).lower() == "true",
        verify_hostname=str(info.get("tls_enable_hostname_verification", True)).lower() != "false",
        cert_file=_path(info.get("tls_cert_file")),
        key_file=_path(info.get("tls_key_file")),
    )
    auth: Auth | None = None
    if info.get("token"):
        auth = TokenAuth(str(info["token"]))
    elif info.get("tokenFile"):
        auth = TokenAuth(_token(f"file:{info['tokenFile']}", source))
    elif info.get("issuer_endpoint"):
        body = {
            "audience": info.get("audience", ""),
            "scope": info.get("scopes", info.get("scope", "")),
            "client_id": info.get("client_id", ""),
        }
        auth = _oauth2(str(info["issuer_endpoint"]), str(info.get("key_file", "")), body, source)
    return Connection(url=url, auth=auth, tls=tls, source=source)
