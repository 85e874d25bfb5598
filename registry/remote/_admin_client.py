"""HTTP to one Pulsar admin v2 endpoint (a broker's web service or `schema-explorer serve`): auth, timeouts,
retries of idempotent reads, a per-call snapshot of GETs, and status codes mapped to the core's errors
(pulsar-semantics.md §7). The remote backend and the remote facade both speak through an `AdminClient`."""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import re
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx

from .._errors import (
    ERROR_HEADER,
    AuthError,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    NamespaceNotFoundError,
    NotFoundError,
    PartitionPolicyError,
    PolicyError,
    SchemaNotFoundError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
    TopicPoliciesDisabledError,
    error_named,
)
from .._model import (
    SchemaInfo,
)
from .._names import TopicName
from ._connection import BasicAuth, Connection, OAuth2Auth, TlsSettings, TokenAuth
from ._oauth2 import ClientCredentials
from ._pacing import MAX_WAIT_S, PACED_STATUS, Concurrency, backoff, retry_after
from ._redirects import REDIRECT_STATUS, ClusterBrokers, next_hop

DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_ATTEMPTS: Final = 3
_BACKOFF = 0.2  # seconds before the 2nd attempt of an idempotent read; doubled each time
RETRIED_STATUS: Final = frozenset({500, 502, 504})  # 503 and 429 are paced (_pacing.py)
ADMIN = "/admin/v2"
Params = Mapping[str, str] | Sequence[tuple[str, str]]


def retry_delay(attempt: int) -> float:
    """Seconds before attempt `attempt + 2` of an idempotent read."""
    return float(_BACKOFF * 2**attempt)


class InsecureConnectionWarning(UserWarning):
    """A connection whose TLS certificates are not checked (tlsAllowInsecureConnection)."""


class AdminClient:
    """httpx over one admin endpoint: auth, timeouts, retries of idempotent reads, errors named after the URL.

    Inside `snapshot()` every GET is answered once and then from memory, so one facade call (a what-if reads
    the same policies several times) sees one consistent picture and costs one round trip per resource.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        verify: bool | str = True,
        pace: Concurrency | None = None,
        connection: Connection | None = None,
    ) -> None:
        """`connection` (_connection.py) says how to authenticate and check TLS; without one, `token` and
        `verify` (True, a CA bundle's path, or False for no check) do."""
        if connection is None:
            tls = TlsSettings(
                trust_certs_file=Path(verify) if isinstance(verify, str) else None, allow_insecure=not verify
            )
            connection = Connection(url=url, auth=None if token is None else TokenAuth(token))
            connection = replace(connection, tls=tls)
        self.url = normalise_url(connection.url)
        self.identity = connection.identity()  # who connects where, as a digest (the index cache's key)
        if isinstance(connection.auth, TokenAuth):
            token = connection.auth.token
            if not token.strip() or not token.isprintable():
                raise AuthError("the token is empty or contains control characters; pass the bearer token text")
        if attempts < 1:
            raise InvalidArgumentError(f"attempts must be at least 1, got {attempts}")
        headers = {"Accept": "application/json", "User-Agent": "pulsar-schema-explorer"}
        if isinstance(connection.auth, TokenAuth):
            headers["Authorization"] = f"Bearer {connection.auth.token.strip()}"
        context = connection.tls.context()
        if connection.insecure_warning:
            warnings.warn(connection.insecure_warning, InsecureConnectionWarning, stacklevel=3)
        self._issuer: httpx.Client | None = None
        auth: httpx.Auth | None = None
        if isinstance(connection.auth, BasicAuth):
            auth = httpx.BasicAuth(connection.auth.user, connection.auth.password)
        elif isinstance(connection.auth, OAuth2Auth):
            self._issuer = httpx.Client(timeout=timeout, verify=context)  # the brokers' CA trusted for the issuer
            auth = ClientCredentials(connection.auth, self._issuer)
        self._attempts = attempts
        self._timeout = timeout
        self._client_cert_missing = self.url.startswith("https:") and connection.tls.cert_file is None
        self._headers, self._context, self._auth = headers, context, auth  # what an async twin reuses
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, verify=context, auth=auth)
        self._brokers = ClusterBrokers(self.url, self._list_brokers)
        self.pace = pace  # told of every refusal and acceptance, for a bulk reader's concurrency
        self._rng = random.Random()
        self._local = threading.local()
        self.sent = 0  # HTTP requests sent so far, retries included: what benchmarks and tests count
        self._sent_lock = threading.Lock()

    # snapshots -------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._local.cache = {}
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth
            if depth == 0:
                self._local.cache = None

    def forget(self) -> None:
        """After a write: later reads in the same snapshot must see it."""
        if getattr(self._local, "cache", None) is not None:
            self._local.cache = {}

    # requests --------------------------------------------------------------------------------------------

    def get(self, path: str, params: Params | None = None) -> httpx.Response:
        """An idempotent read, retried with backoff on connection failures and 5xx answers. `params` is a
        mapping, or (name, value) pairs where a name repeats (`type=AVRO&type=JSON`)."""
        cache: dict[tuple[str, str], httpx.Response] | None = getattr(self._local, "cache", None)
        pairs: list[tuple[str, str | int | float | bool | None]] = (
            sorted(params.items()) if isinstance(params, Mapping) else list(params or ())
        )
        key = (path, json.dumps(pairs))
        if cache is not None and key in cache:
            return cache[key]
        response = self._send("GET", path, params=httpx.QueryParams(pairs) if pairs else None, retry_status=True)
        if cache is not None:
            cache[key] = response
        return response

    def ask(self, path: str, body: Any) -> httpx.Response:
        """A POST that changes nothing (/compatibility, /version): retried like a read, never cached."""
        return self._send("POST", path, body=body, retry_status=True)

    def write(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """A write. Only retried when the connection was never made (the request cannot have arrived)."""
        self.forget()
        try:
            return self._send(method, path, params=params, body=body, retry_status=False)
        finally:
            self.forget()

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: httpx.QueryParams | Mapping[str, str] | None = None,
        body: Any = None,
        retry_status: bool,
    ) -> httpx.Response:
        content = None if body is None and method in ("GET", "DELETE") else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if content is not None else None
        for attempt in range(self._attempts):
            last = attempt == self._attempts - 1
            try:
                response = self._paced(method, path, params=params, content=content, headers=headers, read=retry_status)
            except httpx.TransportError as exc:
                error = self.failure(exc, method, path, last=last, retry_status=retry_status)
                if error is not None:
                    raise error from None
            else:
                if not (retry_status and response.status_code in RETRIED_STATUS) or last:
                    return response
            time.sleep(retry_delay(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def failure(
        self, exc: httpx.TransportError, method: str, path: str, *, last: bool, retry_status: bool
    ) -> StorageError | None:
        """What a failed attempt raises, or None when it is tried again: a connection never made is always
        retried; a timeout or a broken answer only for a read (a write may have arrived)."""
        if isinstance(exc, httpx.ConnectError):
            return self._unreachable(exc) if last else None
        if isinstance(exc, httpx.TimeoutException):
            if last or not retry_status:
                return StorageError(
                    f"no answer from {self.url} within {self._timeout:g} s ({method} {path}): {exc or 'timed out'}"
                )
            return None
        return self._broken(exc, method, path) if last or not retry_status else None

    @property
    def attempts(self) -> int:
        return self._attempts

    def counted(self, requests: int = 1) -> None:
        """`requests` more HTTP requests sent (by this client or its async twin)."""
        with self._sent_lock:
            self.sent += requests

    def async_http(self, in_flight: int) -> httpx.AsyncClient:
        """An asyncio httpx client with this client's URL, headers, TLS context, credentials and timeout, its
        pool sized for `in_flight` requests (the broker index's reader, _async_reader.py)."""
        limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
        return httpx.AsyncClient(
            base_url=self.url,
            headers=self._headers,
            timeout=self._timeout,
            verify=self._context,
            auth=self._auth,
            limits=limits,
        )

    @property
    def brokers(self) -> ClusterBrokers:
        return self._brokers

    def _paced(
        self,
        method: str,
        path: str,
        *,
        params: httpx.QueryParams | Mapping[str, str] | None,
        content: bytes | None,
        headers: dict[str, str] | None,
        read: bool,
    ) -> httpx.Response:
        """`_request`, sent again while the broker refuses for load (_pacing.py): a 429 always (refused before
        any resource ran), a 503 only for a read; at most MAX_WAIT_S of waiting in all."""
        waited = 0.0
        for attempt in itertools.count():
            response = self._request(method, path, params=params, content=content, headers=headers)
            delay = self.refusal(response, method, path, attempt=attempt, waited=waited, read=read)
            if delay is None:
                return response
            time.sleep(delay)
            waited += delay
        raise AssertionError("unreachable")  # pragma: no cover

    def refusal(
        self, response: httpx.Response, method: str, path: str, *, attempt: int, waited: float, read: bool
    ) -> float | None:
        """None when `response` is an answer (the pace told so); else the seconds to wait before sending again
        (the pace told of the refusal), or a StorageError when the wait would go past MAX_WAIT_S."""
        status = response.status_code
        if status not in PACED_STATUS or (status == 503 and not read):
            if self.pace is not None:
                self.pace.accepted()
            return None
        if self.pace is not None:
            self.pace.refused()
        asked = retry_after(response)
        delay = asked if asked is not None else backoff(attempt, self._rng)
        if waited + delay > MAX_WAIT_S:
            said = f"asks to wait {asked:g} s more" if asked is not None else "still refuses"
            why = "its request rate limit, httpRequestsMaxPerSecond" if status == 429 else "unavailable"
            raise StorageError(
                f"{self.url} refused {method} {path} with HTTP {status} {attempt + 1} times over {waited:.1f} s "
                f"and {said} ({why}); try again later"
            )
        return delay

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: httpx.QueryParams | Mapping[str, str] | None,
        content: bytes | None,
        headers: dict[str, str] | None,
    ) -> httpx.Response:
        """One request and the redirects it is answered with (_redirects.py): the same method, body and
        credentials, to the cluster's own brokers only."""
        self.counted()
        response = self._http.request(method, path, params=params, content=content, headers=headers)
        hops = [response.request.url]
        while response.status_code in REDIRECT_STATUS:
            target = next_hop(response, hops, self._brokers)
            self.counted()
            response = self._http.request(method, target, content=content, headers=headers)
            hops.append(target)
        return response

    def _list_brokers(self) -> list[str] | None:
        """The brokers of every cluster the user's host knows (`GET /admin/v2/brokers/{cluster}`, paced like
        any read); [] when refused (a non-superuser), None when it could not be asked now."""
        hosts: list[str] = []
        try:
            clusters = self._read_plain(f"{ADMIN}/clusters")
            if clusters.status_code in (401, 403, 404):
                return []
            names = clusters.json() if clusters.status_code == 200 else None
            if not isinstance(names, list):
                return None
            for name in names:
                listed = self._read_plain(f"{ADMIN}/brokers/{quote(str(name), safe='')}")
                body = listed.json() if listed.status_code == 200 else None
                if isinstance(body, list):
                    hosts.extend(entry for entry in body if isinstance(entry, str))
        except (httpx.HTTPError, ValueError, StorageError):
            return None
        return hosts

    def _read_plain(self, path: str) -> httpx.Response:
        return self._paced("GET", path, params=None, content=None, headers=None, read=True)

    def _broken(self, exc: httpx.TransportError, method: str, path: str) -> StorageError:
        if self._client_cert_missing and isinstance(exc, httpx.RemoteProtocolError) and "disconnect" in str(exc):
            # TLS 1.3: a broker requiring a client certificate closes the connection after the handshake
            return StorageError(
                f"TLS: {self.url} closed the connection without an answer: it may ask for a client certificate "
                "(AuthenticationTls tlsCertFile/tlsKeyFile)"
            )
        return StorageError(f"{method} {self.url}{path} failed: {type(exc).__name__}: {_clip_line(str(exc))}")

    def _unreachable(self, exc: httpx.ConnectError) -> StorageError:
        """One line naming the cause: the certificate, the host name, a client certificate asked, refused."""
        text = str(exc) or type(exc).__name__
        lowered = text.lower()
        if "hostname mismatch" in lowered or "ip address mismatch" in lowered or "doesn't match" in lowered:
            return StorageError(
                f"TLS: the certificate of {self.url} does not name its host (hostname verification; connect by a "
                "name the certificate lists, or set tlsEnableHostnameVerification=false)"
            )
        if "certificate_verify_failed" in lowered or "unknown ca" in lowered:
            return StorageError(
                f"TLS: the certificate of {self.url} is not trusted ({_clip_line(text)}); name its CA with "
                "tlsTrustCertsFilePath"
            )
        if "certificate required" in lowered or "certificate_required" in lowered or "handshake failure" in lowered:
            return StorageError(
                f"TLS: {self.url} refused the handshake: it asks for a client certificate (AuthenticationTls "
                "tlsCertFile/tlsKeyFile) or did not trust the one given"
            )
        if "SSL" in text or "TLS" in text:
            return StorageError(
                f"TLS handshake with {self.url} failed: {_clip_line(text)}. Check the certificate, or use http:// if "
                "the broker's web service is not on TLS"
            )
        if "refused" in lowered:
            return StorageError(
                f"cannot reach the Pulsar admin endpoint {self.url}: connection refused. Is the broker's web "
                "service (usually port 8080) or `schema-explorer serve` running there?"
            )
        return StorageError(
            f"cannot reach the Pulsar admin endpoint {self.url}: {_clip_line(text)}. Is the broker's web service "
            "(usually port 8080) or `schema-explorer serve` running there?"
        )

    def close(self) -> None:
        self._http.close()
        if self._issuer is not None:
            self._issuer.close()

    # answers ---------------------------------------------------------------------------------------------

    def json(self, response: httpx.Response, what: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise StorageError(
                f"{what}: {self.url} answered HTTP {response.status_code} with something that is not JSON "
                f"({clip(response.text)!r})"
            ) from None


def normalise_url(url: str) -> str:
    """The endpoint's root, without a trailing slash or /admin/v2 (people paste either)."""
    text = url.strip()
    if any(c.isspace() for c in text):
        raise StorageError(f"invalid URL {url!r}: it contains a space")
    if "@" in re.split(r"[/?#]", text.partition("://")[2], maxsplit=1)[0]:
        # never echoed: what comes before the @ may be a password, and this message reaches logs and screens
        raise StorageError(
            "an admin URL with a user name or password in it is refused (it would show in messages and logs): "
            "give the credential as a token, or by a client.conf or pulsarctl context (AuthenticationBasic)"
        )
    try:
        parsed = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise StorageError(f"invalid URL {url!r}: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise StorageError(f"invalid URL {url!r}: expected http(s)://host[:port]")
    text = text.rstrip("/")
    if text.endswith(ADMIN):
        text = text[: -len(ADMIN)]
    return text


def reason_of(response: httpx.Response) -> str:
    """Pulsar's error text: `{"reason": …}` (RestException), FastAPI's `detail`, else the reason phrase."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("reason", "detail", "message", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if value:
                return json.dumps(value)
    text = response.text.strip()
    if text and not _is_html(response):
        return clip(text, 300)
    return response.reason_phrase or f"HTTP {response.status_code}"


def _is_html(response: httpx.Response) -> bool:
    return "html" in response.headers.get("content-type", "") or response.text.lstrip()[:15].lower().startswith(
        ("<!doctype", "<html")
    )


def _clip_line(text: str) -> str:
    return clip(" ".join(text.split()), 200)


def clip(text: str, limit: int = 120) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


def raise_for(response: httpx.Response, what: str, *, url: str) -> None:
    """Map an error answer to the embedded facade's error classes (§7.1 status codes)."""
    status = response.status_code
    if status < 400:
        return
    reason = reason_of(response)
    message = f"{reason} ({what}: HTTP {status} from {url})"
    named = error_named(response.headers.get(ERROR_HEADER, ""))
    if status == 403 and named is not None and named is not AuthError:
        raise named(message)  # a decision of serve's (who may approve, missing approvals), not the token
    if status in (401, 403):
        # Pulsar's convention is inverted (§7.1): either code can mean "no token" or "not allowed".
        raise AuthError(
            f"{message}; pass credentials with the right role (--token, --client-conf or --context; token=..., "
            "client_conf=... or context=...)"
        )
    if named is not None and named is not StorageError:
        raise named(message)
    if status == 404:
        lowered = reason.lower()
        if "namespace" in lowered:
            raise NamespaceNotFoundError(message)
        if "tenant" in lowered:
            raise TenantNotFoundError(message)
        if "schema" in lowered:
            raise SchemaNotFoundError(message)
        if "topic" in lowered:
            raise TopicNotFoundError(message)
        raise NotFoundError(message)
    if status == 409:
        raise IncompatibleSchemaError(message)
    if status == 422:
        raise InvalidSchemaError(message)
    if status == 412 and "name" in reason.lower():
        raise InvalidNameError(message)
    if status == 412 and "partition" in reason.lower():
        raise PartitionPolicyError(message)
    if status == 405 and "disabled" in reason.lower():
        raise TopicPoliciesDisabledError(message)
    if status in (400, 405, 412):
        raise PolicyError(message)
    raise StorageError(message)


# --- storage adapter ----------------------------------------------------------------------------------------


def schemas_path(schema_id: str) -> str:
    return f"{ADMIN}/schemas/{quote_path(schema_id)}"


def topic_path(topic: TopicName) -> str:
    return f"{ADMIN}/{topic.domain}/{topic.tenant}/{topic.namespace}/{quote(topic.local_name, safe='')}"


def quote_path(path: str) -> str:
    return "/".join(quote(part, safe="") for part in path.split("/"))


def probe(client: AdminClient) -> None:
    """GET /admin/v2/tenants must answer a JSON list: anything else is not a Pulsar admin endpoint."""
    response = client.get(f"{ADMIN}/tenants")
    if response.status_code in (401, 403):
        raise_for(response, "listing tenants", url=client.url)
    hint = "point the URL at a broker's web service (e.g. http://broker:8080) or at `schema-explorer serve`"
    if response.status_code != 200 or _is_html(response):
        kind = "an HTML page" if _is_html(response) else f"{clip(reason_of(response))!r}"
        raise StorageError(
            f"{client.url} is not a Pulsar admin endpoint: GET {ADMIN}/tenants answered HTTP "
            f"{response.status_code} with {kind}; {hint}"
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, list):
        raise StorageError(
            f"{client.url} is not a Pulsar admin endpoint: GET {ADMIN}/tenants answered "
            f"{clip(response.text)!r}, not a list of tenants; {hint}"
        )


def payload(info: SchemaInfo) -> dict[str, Any]:
    """PostSchemaPayload (§7.1): the schema as text, exactly as pulsar-admin sends it."""
    if isinstance(info.schema, bytes):
        try:
            text = info.schema.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidSchemaError(
                f"{info.type} schema data is not UTF-8 text; Pulsar's admin API takes schemas as text"
            ) from None
    else:
        text = info.schema
    return {"type": str(info.type), "schema": text, "properties": dict(info.properties)}
