"""A Pulsar cluster played on loopback for the remote client's tests (issue 42): three brokers over TLS, each
answering the admin v2 API from `server.create_app(..., admin_only=True)` over ONE shared registry, wrapped in
what a real cluster adds in front of that API: topic ownership with redirects, a request rate limit, and the
authentication providers. An OAuth2 issuer with short-lived tokens stands beside them.

Everything runs in-process: one thread with one asyncio loop serves every broker (uvicorn) and the issuer, so a
test toggles a mode (`cluster.pacing`, `cluster.redirect_loop`, `cluster.revoke_tokens()`) by assignment.
Certificates come from `trustme`: one CA signs each broker's certificate (naming only its own 127.0.0.x
address, so connecting by another name fails hostname verification), the issuer's, and an mTLS client's.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import ssl
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlencode

import trustme
import uvicorn

import needs
from registry import Registry

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

CLUSTER: Final = "sim"
AUTH_MODES: Final = ("none", "token", "basic", "mtls", "oauth2")
ADMIN_TOKEN: Final = "sim-superuser-token"  # the token mode's superuser token (a stand-in for a signed JWT)
READER_TOKEN: Final = "sim-reader-token"  # a role that may list, but is no tenant admin: no schema reads
BASIC_USER: Final = ("sim-admin", "sim-password")
OAUTH_CLIENT: Final = ("sim-client", "sim-client-secret")
OAUTH_AUDIENCE: Final = "urn:sim:pulsar"


@dataclass(frozen=True, slots=True)
class Pacing:
    """Pulsar's broker-side HTTP rate limit (org.apache.pulsar.broker.web.RateLimitingFilter, enabled by
    `httpRequestsLimitEnabled`, `httpRequestsMaxPerSecond` permits a second): a request over the limit is
    answered `429 Too Many Requests`, without Retry-After. `retry_after` adds one (as proxies in front of a
    broker do); `status=503` plays a proxy shedding load instead."""

    per_second: float
    burst: float = 1.0
    retry_after: str | None = None
    status: int = 429
    topic_calls_only: bool = False  # only topic-scoped calls are limited (tests: the listing gets through)


@dataclass(slots=True)
class _Bucket:
    allowance: float
    when: float


@dataclass(frozen=True, slots=True)
class Certificates:
    """PEM files written by trustme: the CA, a certificate per broker and for the issuer, an mTLS client's."""

    folder: Path
    ca: Path
    brokers: tuple[Path, ...]
    issuer: Path
    client_cert: Path
    client_key: Path
    untrusted_ca: Path  # another CA, trusting nothing here: what a wrong trust store looks like


def make_certificates(folder: Path, hosts: tuple[str, ...], issuer_host: str) -> Certificates:
    folder.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    trustme.CA().cert_pem.write_to_path(str(folder / "other-ca.pem"))
    brokers = []
    for n, host in enumerate(hosts):
        path = folder / f"broker-{n}.pem"
        ca.issue_cert(host).private_key_and_cert_chain_pem.write_to_path(str(path))
        brokers.append(path)
    ca.issue_cert(issuer_host).private_key_and_cert_chain_pem.write_to_path(str(folder / "issuer.pem"))
    client = ca.issue_cert("client.sim", common_name="sim-admin")
    client.cert_chain_pems[0].write_to_path(str(folder / "client-cert.pem"))
    client.private_key_pem.write_to_path(str(folder / "client-key.pem"))
    return Certificates(
        folder=folder,
        ca=folder / "ca.pem",
        brokers=tuple(brokers),
        issuer=folder / "issuer.pem",
        client_cert=folder / "client-cert.pem",
        client_key=folder / "client-key.pem",
        untrusted_ca=folder / "other-ca.pem",
    )


@dataclass
class SimulatedCluster:
    """What the tests read and steer. `urls[i]` is broker i's web service (https://127.0.0.{i+1}:port)."""

    auth: str
    certs: Certificates
    urls: list[str] = field(default_factory=list)
    issuer_url: str = ""
    pacing: Pacing | None = None
    redirect_loop: bool = False  # every broker redirects topic calls to the next one: a misconfigured cluster
    redirect_elsewhere: str | None = None  # a base URL outside the cluster every topic call is redirected to
    token_lifetime_s: int = 300  # the `expires_in` the issuer tells
    token_grace_s: float = 0.0  # how much longer than told the brokers accept a token (tests: a token due at once)
    partitioned: dict[str, int] = field(default_factory=dict)  # a registry topic → its partitions, as listed
    system_topics: list[str] = field(default_factory=list)  # the brokers' own topics, listed beside the registry's
    older_line: bool = False  # a schema read the role may not make answers 404 "Not Found", as before
    registry: Registry | None = None  # what the brokers serve (the listings read its topic policies)
    requests: list[int] = field(default_factory=list)  # per broker, every request that arrived
    redirects: int = 0
    topic_strategy_reads: int = 0  # GET .../schemaCompatibilityStrategy of a topic, answered by its owner
    refused: int = 0  # answered by the rate limit
    early: int = 0  # requests that came back to a broker before the Retry-After it gave had passed
    unauthenticated: int = 0  # answered 401
    tokens_issued: int = 0
    _access_tokens: dict[str, float] = field(default_factory=dict)  # access token → expiry (monotonic)
    _buckets: dict[int, _Bucket] = field(default_factory=dict)
    _quiet_until: dict[int, float] = field(default_factory=dict)  # per broker: the end of its last Retry-After
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def hosts(self) -> list[str]:
        return [url.removeprefix("https://") for url in self.urls]

    def owner(self, topic: str) -> int:
        """The broker owning `topic`. Pulsar maps a topic to a namespace bundle by a hash of its name
        (NamespaceBundleFactory.getBundle) and each bundle to one broker; here the hash picks the broker."""
        return zlib.crc32(topic.encode()) % len(self.urls)

    def revoke_tokens(self) -> None:
        """Every access token issued so far stops working, as on expiry: the next request answers 401."""
        with self._lock:
            self._access_tokens.clear()

    # the issuer -------------------------------------------------------------------------------------------

    def issue(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The OAuth2 token endpoint's client-credentials grant (RFC 6749 §4.4), as Pulsar's
        ClientCredentialsFlow calls it: grant_type, client_id, client_secret, audience (and scope)."""
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        if (form.get("client_id"), form.get("client_secret")) != OAUTH_CLIENT:
            return 401, {"error": "invalid_client"}
        if form.get("audience") != OAUTH_AUDIENCE:
            return 400, {"error": "invalid_request", "error_description": "unknown audience"}
        token = "sim-access-" + secrets.token_hex(16)
        with self._lock:
            self._access_tokens[token] = time.monotonic() + self.token_lifetime_s + self.token_grace_s
            self.tokens_issued += 1
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": self.token_lifetime_s}

    # what a broker adds in front of the admin API ----------------------------------------------------------

    def paced(self, broker: int) -> bool:
        """True when the rate limit lets this request through (a token bucket per broker, like Guava's
        RateLimiter inside RateLimitingFilter)."""
        pacing = self.pacing
        if pacing is None:
            return True
        now = time.monotonic()
        with self._lock:
            if now < self._quiet_until.get(broker, 0.0):
                self.early += 1
            bucket = self._buckets.setdefault(broker, _Bucket(pacing.burst, now))
            bucket.allowance = min(pacing.burst, bucket.allowance + (now - bucket.when) * pacing.per_second)
            bucket.when = now
            if bucket.allowance >= 1:
                bucket.allowance -= 1
                return True
            self.refused += 1
            if pacing.retry_after and pacing.retry_after.isdigit():
                self._quiet_until[broker] = now + int(pacing.retry_after)
            return False

    def authenticated(self, headers: dict[str, str]) -> bool:
        """The broker's authentication providers: AuthenticationProviderToken (`Authorization: Bearer`),
        AuthenticationProviderBasic (`Authorization: Basic`), OAuth2 access tokens checked as the token
        provider checks a JWT (here: issued by the sim's issuer and not expired). mTLS is refused at the
        handshake (`tlsRequireTrustedClientCertOnConnect`), so a request that arrived is authenticated."""
        given = headers.get("authorization", "")
        if self.auth in ("none", "mtls"):
            return True
        if self.auth == "token":
            return given in (f"Bearer {ADMIN_TOKEN}", f"Bearer {READER_TOKEN}")
        if self.auth == "basic":
            expected = base64.b64encode(":".join(BASIC_USER).encode()).decode()
            return given == f"Basic {expected}"
        with self._lock:
            expiry = self._access_tokens.get(given.removeprefix("Bearer "))
        return expiry is not None and expiry > time.monotonic()


def _topic_of(path: str) -> str | None:
    """The topic a topic-scoped admin path names; None for tenant, namespace and listing paths."""
    parts = path.removeprefix("/admin/v2/").split("/")
    if parts[0] == "schemas" and len(parts) >= 4:
        return "persistent://" + "/".join(unquote(p) for p in parts[1:4])
    if parts[0] in ("persistent", "non-persistent") and len(parts) >= 4:
        if len(parts) == 4 and parts[3] == "partitioned":
            return None  # the namespace's partitioned-topic listing
        return f"{parts[0]}://" + "/".join(unquote(p) for p in parts[1:4])
    return None


async def _answer(send: Send, status: int, body: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head + (headers or [])})
    await send({"type": "http.response.body", "body": data})


def broker_app(cluster: SimulatedCluster, index: int, admin: App) -> App:
    """Broker `index`: the rate limit, then authentication, then ownership, then the admin API."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await admin(scope, receive, send)
            return
        with cluster._lock:
            cluster.requests[index] += 1
        topic = _topic_of(scope.get("raw_path", scope["path"].encode()).decode())
        if (topic is not None or not (cluster.pacing and cluster.pacing.topic_calls_only)) and not cluster.paced(index):
            pacing = cluster.pacing
            extra = [(b"retry-after", pacing.retry_after.encode())] if pacing and pacing.retry_after else []
            await _answer(send, pacing.status if pacing else 429, {"reason": "Too Many Requests"}, extra)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if not cluster.authenticated(headers):
            with cluster._lock:
                cluster.unauthenticated += 1
            await _answer(send, 401, {"reason": "Authentication required"})
            return
        path: str = scope["path"]
        if path == "/admin/v2/clusters":
            await _answer(send, 200, [CLUSTER])
            return
        if path == f"/admin/v2/brokers/{CLUSTER}":  # BrokersBase.getActiveBrokers: the brokers' host:port
            await _answer(send, 200, cluster.hosts)
            return
        if topic is not None:
            owner = (index + 1) % len(cluster.urls) if cluster.redirect_loop else cluster.owner(topic)
            if owner != index or cluster.redirect_elsewhere:
                await _redirect(cluster, scope, send, owner)
                return
        if path.startswith("/admin/v2/schemas/") and headers.get("authorization") == f"Bearer {READER_TOKEN}":
            # PulsarWebResource.validateAdminAccessForTenant refuses a role that is not the tenant's admin
            # (401); SchemasResourceBase.validateDestinationAndAdminOperation of older lines turned that into
            # `404 {"reason": "Not Found"}`, hiding whether the topic exists.
            if cluster.older_line:
                await _answer(send, 404, {"reason": "Not Found"})
            else:
                await _answer(send, 401, {"reason": "Don't have permission to administrate resources on this tenant"})
            return
        if topic is not None and path.endswith("/schemaCompatibilityStrategy") and scope["method"] == "GET":
            with cluster._lock:
                cluster.topic_strategy_reads += 1
        listing = _listing_of(path) if scope["method"] == "GET" else None
        if listing is not None:
            names = await _listed(cluster, admin, scope, receive, listing)
            await _answer(send, 200, names)
            return
        await admin(scope, receive, send)

    return app


def _listing_of(path: str) -> tuple[str, str, bool] | None:
    """(domain, tenant/namespace, partitioned) for a namespace's topic listing path; None for any other."""
    parts = path.removeprefix("/admin/v2/").split("/")
    if parts[0] not in ("persistent", "non-persistent") or len(parts) not in (3, 4):
        return None
    if len(parts) == 4 and parts[3] != "partitioned":
        return None
    return parts[0], f"{unquote(parts[1])}/{unquote(parts[2])}", len(parts) == 4


async def _listed(
    cluster: SimulatedCluster,
    admin: App,
    scope: Scope,
    receive: Receive,
    listing: tuple[str, str, bool],
) -> list[str]:
    """A namespace's topic listing as a broker answers it (PersistentTopics.getList / getPartitionedTopicList):
    a partitioned topic is listed as its partitions (`x-partition-N`, one managed ledger each) and, in the
    partitioned listing, as `x`; `__change_events` is there once a topic policy was written
    (SystemTopicBasedTopicPoliciesService keeps them in that topic); system topics only with
    `includeSystemTopic=true` (NamespaceService.isSystemServiceNamespace, SystemTopicNames.isSystemTopic)."""
    from registry import TopicPolicy
    from registry._names import TopicName
    from registry.remote._listing import is_system

    domain, namespace, partitioned = listing
    prefix = f"{domain}://{namespace}/"
    bases = sorted(t for t in cluster.partitioned if t.startswith(prefix))
    if partitioned:
        names = bases
    else:
        status, body = await _captured(admin, scope, receive)
        names = [n for n in (json.loads(body) if status == 200 else []) if n not in cluster.partitioned]
        names += [f"{base}-partition-{n}" for base in bases for n in range(cluster.partitioned[base])]
        names += [t for t in cluster.system_topics if t.startswith(prefix)]
        registry = cluster.registry
        if domain == "persistent" and registry is not None:
            own = await asyncio.to_thread(
                lambda: any(registry.topic_policy(t) != TopicPolicy() for t in registry.topics(namespace))
            )
            if own:
                names.append(f"{prefix}__change_events")
    query = dict(parse_qsl(scope.get("query_string", b"").decode()))
    if query.get("includeSystemTopic") != "true":
        names = [n for n in names if not is_system(TopicName.parse(n))]
    return sorted(set(names))


async def _captured(app: App, scope: Scope, receive: Receive) -> tuple[int, bytes]:
    """The status and body `app` answers `scope` with."""
    status, body = 0, b""

    async def send(message: Message) -> None:
        nonlocal status, body
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body += message.get("body", b"")

    await app(scope, receive, send)
    return status, body


async def _redirect(cluster: SimulatedCluster, scope: Scope, send: Send, owner: int) -> None:
    """PulsarWebResource.validateTopicOwnership: a broker that does not own the topic answers `307 Temporary
    Redirect` to the owner's web service, the request URI kept with `authoritative` replaced."""
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode()) if k != "authoritative"]
    query.append(("authoritative", "true"))
    raw = scope.get("raw_path", scope["path"].encode()).decode()
    base = cluster.redirect_elsewhere or cluster.urls[owner]
    location = f"{base}{raw}?{urlencode(query)}"
    with cluster._lock:
        cluster.redirects += 1
    await send({"type": "http.response.start", "status": 307, "headers": [(b"location", location.encode())]})
    await send({"type": "http.response.body", "body": b""})


def issuer_app(cluster: SimulatedCluster) -> App:
    """The OAuth2 issuer: discovery (`/.well-known/openid-configuration`, which Pulsar's FlowBase reads through
    DefaultMetadataResolver to find `token_endpoint`) and the token endpoint."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/.well-known/openid-configuration":
            await _answer(send, 200, {"issuer": cluster.issuer_url, "token_endpoint": f"{cluster.issuer_url}/token"})
            return
        if scope["path"] == "/token" and scope["method"] == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            status, answer = cluster.issue(dict(parse_qsl(body.decode())))
            await _answer(send, status, answer)
            return
        await _answer(send, 404, {"error": "not_found"})

    return app


BROKER_HOSTS: Final = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
ISSUER_HOST: Final = "127.0.0.4"


@contextmanager
def simulated_cluster(registry: Registry, folder: Path, *, auth: str = "none") -> Iterator[SimulatedCluster]:
    """Three TLS brokers and an issuer over `registry`, serving until the block ends."""
    from server import create_app

    needs.require("cluster")

    if auth not in AUTH_MODES:
        raise ValueError(f"auth must be one of {AUTH_MODES}, got {auth!r}")
    certs = make_certificates(folder, BROKER_HOSTS, ISSUER_HOST)
    cluster = SimulatedCluster(auth=auth, certs=certs, requests=[0] * len(BROKER_HOSTS), registry=registry)
    admin = create_app(registry, admin_only=True, allowed_hosts=BROKER_HOSTS)
    servers = []
    for n, host in enumerate(BROKER_HOSTS):
        config = uvicorn.Config(
            broker_app(cluster, n, admin),
            host=host,
            port=0,
            ssl_certfile=str(certs.brokers[n]),
            ssl_ca_certs=str(certs.ca) if auth == "mtls" else None,
            ssl_cert_reqs=ssl.CERT_REQUIRED if auth == "mtls" else ssl.CERT_NONE,
            log_level="warning",
            lifespan="off",
            access_log=False,
        )
        servers.append(uvicorn.Server(config))
    issuer_config = uvicorn.Config(
        issuer_app(cluster),
        host=ISSUER_HOST,
        port=0,
        ssl_certfile=str(certs.issuer),
        log_level="warning",
        lifespan="off",
        access_log=False,
    )
    servers.append(uvicorn.Server(issuer_config))
    loop = asyncio.new_event_loop()

    async def serve_all() -> None:
        await asyncio.gather(*(server.serve() for server in servers))

    thread = threading.Thread(target=loop.run_until_complete, args=(serve_all(),), daemon=True, name="cluster-sim")
    thread.start()
    try:
        for server in servers:
            while not server.started:  # readiness, not a fixed wait
                if not thread.is_alive():
                    raise RuntimeError("the simulated cluster stopped while starting")
                time.sleep(0.01)
        ports = [server.servers[0].sockets[0].getsockname()[1] for server in servers]
        cluster.urls = [f"https://{host}:{port}" for host, port in zip(BROKER_HOSTS, ports, strict=False)]
        cluster.issuer_url = f"https://{ISSUER_HOST}:{ports[-1]}"
        yield cluster
    finally:
        for server in servers:
            server.should_exit = True
        thread.join(timeout=10)
        loop.close()


def trusting(ca: Path) -> ssl.SSLContext:
    """A client TLS context trusting `ca` (hostname verification on)."""
    return ssl.create_default_context(cafile=str(ca))
