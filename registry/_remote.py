"""The facade over a remote Pulsar admin v2 endpoint: this project's server or a real broker's web service.

Reads (histories, listings, policies, broker defaults) come over HTTP through a read-only storage adapter, so
every explanation, diff, what-if, upgrade plan and policy impact is computed by the same core logic as the
embedded registry. Writes (register, delete, policies, creation) go to the server, whose verdict stands; its
status codes map back to the errors the embedded facade raises, and refusals are explained locally from the
fetched history (pulsar-semantics.md §7).

What the admin API cannot show, and how this module answers instead:
* recorded producers and consumers: Pulsar has no such resource, so `clients()` is empty and `connect_*`
  refuse (use `what_if(...).producer` / `.consumer` for a dry run);
* versions before the last soft delete: GET /schemas lists only the live ones, so `history(include_deleted=True)`
  shows the live versions and the last tombstone (its number is known), not what came before it;
* who registered a version: GetSchemaResponse has no user, so `SchemaVersion.user` is "".
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

import httpx

from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._catalog import TopicPage, TopicQuery, TopicSummary
from ._changes import SchemaDiff
from ._errors import (
    AuthError,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    NamespaceNotFoundError,
    NotFoundError,
    PartitionPolicyError,
    PoisonedHistoryError,
    PolicyError,
    RegistryError,
    SchemaNotFoundError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
    TopicPoliciesDisabledError,
)
from ._model import (
    Admission,
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    EffectivePolicy,
    NamespacePolicy,
    Problem,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._policy_preview import PolicyPreview
from ._pulsar_version import profile, profile_for_broker
from ._registry import (
    UNSET,
    Registry,
    _bool,
    _info,
    _optional_bool,
    _version_number,
)
from ._schema_data import to_schema_data
from ._types import SchemaData, SchemaType
from ._upgrade import UpgradePlan
from ._whatif import PolicyImpact, WhatIf

S = CompatibilityStrategy

DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_ATTEMPTS: Final = 3
_BACKOFF = 0.2  # seconds before the 2nd attempt of an idempotent read; doubled each time
_RETRIED_STATUS = frozenset({500, 502, 503, 504})
_ADMIN = "/admin/v2"
# ServiceConfiguration field names, as GET /brokers/configuration/runtime reports them (§2.3).
_BROKER_KEYS: Final[Mapping[str, str]] = {
    "schemaCompatibilityStrategy": "compatibility",
    "systemTopicSchemaCompatibilityStrategy": "system_topic_compatibility",
    "isAllowAutoUpdateSchemaEnabled": "allow_auto_update",
    "isSchemaValidationEnforced": "validation_enforced",
    "topicLevelPoliciesEnabled": "topic_level_policies_enabled",
}
_NO_CLIENTS = (
    "Pulsar's admin API has no call that records a {role}; ask what_if(topic, info).{role} for a dry run of "
    "the broker's admission check instead"
)


# --- HTTP ---------------------------------------------------------------------------------------------------


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
    ) -> None:
        self.url = normalise_url(url)
        if token is not None and (not token.strip() or not token.isprintable()):
            raise AuthError("the token is empty or contains control characters; pass the bearer token text")
        if attempts < 1:
            raise InvalidArgumentError(f"attempts must be at least 1, got {attempts}")
        headers = {"Accept": "application/json", "User-Agent": "pulsar-schema-explorer"}
        if token:
            headers["Authorization"] = f"Bearer {token.strip()}"
        self._attempts = attempts
        self._timeout = timeout
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, verify=verify)
        self._local = threading.local()

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

    def get(self, path: str, params: Mapping[str, str] | None = None) -> httpx.Response:
        """An idempotent read, retried with backoff on connection failures and 5xx answers."""
        cache: dict[tuple[str, str], httpx.Response] | None = getattr(self._local, "cache", None)
        key = (path, json.dumps(dict(params or {}), sort_keys=True))
        if cache is not None and key in cache:
            return cache[key]
        response = self._send("GET", path, params=params, retry_status=True)
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
        params: Mapping[str, str] | None = None,
        body: Any = None,
        retry_status: bool,
    ) -> httpx.Response:
        content = None if body is None and method in ("GET", "DELETE") else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if content is not None else None
        for attempt in range(self._attempts):
            last = attempt == self._attempts - 1
            try:
                response = self._http.request(method, path, params=params, content=content, headers=headers)
            except httpx.ConnectError as exc:
                if last:
                    raise self._unreachable(exc) from None
            except httpx.TimeoutException as exc:
                # A write that timed out may have arrived: never resend it.
                if last or not retry_status:
                    raise StorageError(
                        f"no answer from {self.url} within {self._timeout:g} s ({method} {path}): {exc or 'timed out'}"
                    ) from None
            except httpx.TransportError as exc:
                if last or not retry_status:
                    raise StorageError(f"{method} {self.url}{path} failed: {type(exc).__name__}: {exc}") from None
            else:
                if not (retry_status and response.status_code in _RETRIED_STATUS) or last:
                    return response
            time.sleep(_BACKOFF * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _unreachable(self, exc: httpx.ConnectError) -> StorageError:
        text = str(exc) or type(exc).__name__
        if "SSL" in text or "certificate" in text.lower() or "TLS" in text:
            return StorageError(
                f"TLS handshake with {self.url} failed: {text}. Check the certificate, or use http:// if the "
                "broker's web service is not on TLS"
            )
        return StorageError(
            f"cannot reach the Pulsar admin endpoint {self.url}: {text}. Is the broker's web service (usually "
            "port 8080) or `schema-explorer serve` running there?"
        )

    def close(self) -> None:
        self._http.close()

    # answers ---------------------------------------------------------------------------------------------

    def json(self, response: httpx.Response, what: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise StorageError(
                f"{what}: {self.url} answered HTTP {response.status_code} with something that is not JSON "
                f"({_preview(response.text)!r})"
            ) from None


def normalise_url(url: str) -> str:
    """The endpoint's root, without a trailing slash or /admin/v2 (people paste either)."""
    text = url.strip()
    if any(c.isspace() for c in text):
        raise StorageError(f"invalid URL {url!r}: it contains a space")
    try:
        parsed = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise StorageError(f"invalid URL {url!r}: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise StorageError(f"invalid URL {url!r}: expected http(s)://host[:port]")
    text = text.rstrip("/")
    if text.endswith(_ADMIN):
        text = text[: -len(_ADMIN)]
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
        return _preview(text, 300)
    return response.reason_phrase or f"HTTP {response.status_code}"


def _is_html(response: httpx.Response) -> bool:
    return "html" in response.headers.get("content-type", "") or response.text.lstrip()[:15].lower().startswith(
        ("<!doctype", "<html")
    )


def _preview(text: str, limit: int = 120) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


def raise_for(response: httpx.Response, what: str, *, url: str) -> None:
    """Map an error answer to the embedded facade's error classes (§7.1 status codes)."""
    status = response.status_code
    if status < 400:
        return
    reason = reason_of(response)
    message = f"{reason} ({what}: HTTP {status} from {url})"
    if status in (401, 403):
        # Pulsar's convention is inverted (§7.1): either code can mean "no token" or "not allowed".
        raise AuthError(f"{message}; pass a token with the right role (--token, or token=...)")
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


def _schemas_path(schema_id: str) -> str:
    return f"{_ADMIN}/schemas/{_quote_path(schema_id)}"


def _topic_path(topic: TopicName) -> str:
    return f"{_ADMIN}/{topic.domain}/{topic.tenant}/{topic.namespace}/{quote(topic.local_name, safe='')}"


def _quote_path(path: str) -> str:
    return "/".join(quote(part, safe="") for part in path.split("/"))


class RemoteStorage:
    """The `Storage` protocol's reads over admin v2 GETs; its writes are refused (RemoteRegistry overrides
    every writing facade call to send the matching admin request instead)."""

    def __init__(self, client: AdminClient, broker: BrokerConfig) -> None:
        self.client = client
        self.broker = broker

    # histories -------------------------------------------------------------------------------------------

    def history(self, schema_id: str) -> list[SchemaVersion]:
        """The live versions (GET /schemas), preceded by the last tombstone when its number is known (§3.2)."""
        response = self.client.get(f"{_schemas_path(schema_id)}/schemas")
        if response.status_code == 404 and reason_of(response) != "Not Found":
            live: list[SchemaVersion] = []  # no schema, or no such namespace: the embedded registry says []
        else:
            raise_for(response, f"reading the schemas of {schema_id}", url=self.client.url)
            body = self.client.json(response, f"reading the schemas of {schema_id}")
            entries = body.get("getSchemaResponses") if isinstance(body, dict) else None
            if not isinstance(entries, list):
                raise StorageError(
                    f"reading the schemas of {schema_id}: {self.client.url} answered without "
                    f"'getSchemaResponses' ({_preview(response.text)!r}); is it a Pulsar admin endpoint?"
                )
            live = sorted((from_schema_response(schema_id, e) for e in entries), key=lambda e: e.version)
        if live:
            first = live[0].version
            return ([tombstone(schema_id, first - 1)] if first > 0 else []) + live
        latest = self._latest_index_version(schema_id)
        return [] if latest is None else [tombstone(schema_id, latest)]

    def _latest_index_version(self, schema_id: str) -> int | None:
        """GET /metadata: the storage index, tombstones included; None when there is no history (204) or
        the endpoint does not offer it."""
        response = self.client.get(f"{_schemas_path(schema_id)}/metadata")
        if response.status_code != 200:
            if response.status_code in (401, 403):
                raise_for(response, f"reading the schema metadata of {schema_id}", url=self.client.url)
            return None
        try:
            body = response.json()
        except ValueError:
            return None
        versions = [
            item.get("version")
            for item in ([body.get("info")] + list(body.get("index") or []) if isinstance(body, dict) else [])
            if isinstance(item, dict)
        ]
        numbers = [v for v in versions if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
        return max(numbers) if numbers else None

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        raise _read_only("append a schema version")

    def drop(self, schema_id: str) -> bool:
        raise _read_only("drop a schema history")

    # tenants, namespaces, topics -------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        return sorted(self._string_list(f"{_ADMIN}/tenants", "listing tenants"))

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        raise _read_only("create a tenant")

    def namespaces(self, tenant: str) -> list[str]:
        return sorted(self._string_list(f"{_ADMIN}/namespaces/{quote(tenant, safe='')}", f"listing {tenant}"))

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        """The namespace's `Policies` (GET /namespaces/t/ns, exact); else the §7.2 schema GETs one by one."""
        path = f"{_ADMIN}/namespaces/{_quote_path(namespace)}"
        response = self.client.get(path)
        what = f"reading the policies of {namespace}"
        if response.status_code == 200:
            body = self.client.json(response, what)
            if isinstance(body, dict) and _POLICY_KEYS & body.keys():
                return policy_from_policies(body)
        elif response.status_code in (401, 403):
            raise_for(response, what, url=self.client.url)
        elif response.status_code == 404 and "does not exist" in reason_of(response).lower():
            return None
        return self._namespace_policy_by_field(path, namespace)

    def _namespace_policy_by_field(self, path: str, namespace: str) -> NamespacePolicy | None:
        what = f"reading the policies of {namespace}"
        strategy = self.client.get(f"{path}/schemaCompatibilityStrategy")
        if strategy.status_code == 404:
            return None
        raise_for(strategy, what, url=self.client.url)
        auto = self.client.get(f"{path}/schemaAutoUpdateCompatibilityStrategy")
        allow = self.client.get(f"{path}/isAllowAutoUpdateSchema")
        enforced = self.client.get(f"{path}/schemaValidationEnforced")
        for response in (auto, allow, enforced):
            raise_for(response, what, url=self.client.url)
        compatibility = _json_or_none(strategy)
        auto_value = _json_or_none(auto)
        # This GET answers the broker default when the namespace has no value (§7.2): read that as unset.
        allow_value = _json_or_none(allow)
        return NamespacePolicy(
            compatibility=_strategy(compatibility) if compatibility else S.UNDEFINED,
            auto_update_strategy=_auto_update(auto_value),
            allow_auto_update=None
            if not isinstance(allow_value, bool) or allow_value == self.broker.allow_auto_update
            else allow_value,
            validation_enforced=_json_or_none(enforced) is True,
        )

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        raise _read_only("write namespace policies")

    def topics(self, namespace: str) -> list[str]:
        """Persistent and non-persistent topics of a namespace, partitions folded into their base topic."""
        ns = _quote_path(namespace)
        names = self._string_list(f"{_ADMIN}/persistent/{ns}", f"listing the topics of {namespace}")
        for extra in (f"{_ADMIN}/persistent/{ns}/partitioned", f"{_ADMIN}/non-persistent/{ns}"):
            response = self.client.get(extra)
            if response.status_code == 200:
                names += _strings(self.client.json(response, f"listing the topics of {namespace}"))
        bases = set()
        for name in names:
            try:
                bases.add(str(TopicName.parse(name).base))
            except InvalidNameError:
                continue  # a name this registry cannot address; leave it out rather than fail the listing
        return sorted(bases)

    def has_topic(self, topic: str) -> bool:
        name = TopicName.parse(topic)
        try:
            return str(name.base) in self.topics(str(name.namespace_name))
        except NamespaceNotFoundError:
            return False

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        raise _read_only("create a topic")

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        """§7.3 GETs; None when the topic has no policy, does not exist, or topic policies are disabled."""
        name = TopicName.parse(topic)
        path = _topic_path(name)
        what = f"reading the topic policies of {name}"
        strategy = self.client.get(f"{path}/schemaCompatibilityStrategy")
        if strategy.status_code in (404, 405, 412):
            return None
        raise_for(strategy, what, url=self.client.url)
        raw = self.client.get(f"{path}/schemaValidationEnforced")
        raise_for(raw, what, url=self.client.url)
        enforced = _json_or_none(raw)
        validation: bool | None = True if enforced is True else None
        if enforced is False:
            # Unset answers false too; the applied value tells them apart (topic value, else ns OR broker).
            applied = self.client.get(f"{path}/schemaValidationEnforced", {"applied": "true"})
            raise_for(applied, what, url=self.client.url)
            validation = False if _json_or_none(applied) is False and self._namespace_enforces(name) else None
        value = _json_or_none(strategy)
        compatibility = _strategy(value) if value else None
        policy = TopicPolicy(
            compatibility=None if compatibility is S.UNDEFINED else compatibility, validation_enforced=validation
        )
        return None if policy == TopicPolicy() else policy

    def _namespace_enforces(self, name: TopicName) -> bool:
        policy = self.namespace_policy(str(name.namespace_name))
        return bool(policy and policy.validation_enforced) or self.broker.validation_enforced

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        raise _read_only("write topic policies")

    # clients ---------------------------------------------------------------------------------------------

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        return []  # Pulsar's admin API records no producer/consumer schemas (module docstring)

    def put_client(self, client: ClientRecord) -> None:
        raise _read_only("record a client")

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        return 0

    def setting(self, key: str) -> str | None:
        return None  # the broker keeps no settings of ours; its version is read by RemoteRegistry

    def put_setting(self, key: str, value: str) -> None:
        raise StorageError(
            "a remote registry answers as the broker's own Pulsar version: open it with pulsar_version=... to "
            "answer as another line"
        )

    def close(self) -> None:
        self.client.close()

    # helpers ---------------------------------------------------------------------------------------------

    def _string_list(self, path: str, what: str) -> list[str]:
        response = self.client.get(path)
        raise_for(response, what, url=self.client.url)
        return _strings(self.client.json(response, what), what=what, url=self.client.url)


_POLICY_KEYS = frozenset(
    {
        "schema_compatibility_strategy",
        "schema_auto_update_compatibility_strategy",
        "is_allow_auto_update_schema",
        "schema_validation_enforced",
    }
)


def policy_from_policies(body: Mapping[str, Any]) -> NamespacePolicy:
    """The schema fields of Pulsar's `Policies` JSON (§2.2); absent fields keep their defaults."""
    compatibility = body.get("schema_compatibility_strategy")
    allow = body.get("is_allow_auto_update_schema")
    replicator = body.get("is_allow_auto_update_schema_with_replicator")
    return NamespacePolicy(
        compatibility=_strategy(compatibility) if compatibility else S.UNDEFINED,
        auto_update_strategy=_auto_update(body.get("schema_auto_update_compatibility_strategy")),
        allow_auto_update=allow if isinstance(allow, bool) else None,
        allow_auto_update_with_replicator=replicator if isinstance(replicator, bool) else True,
        validation_enforced=body.get("schema_validation_enforced") is True,
    )


def _strategy(value: Any) -> CompatibilityStrategy:
    try:
        return CompatibilityStrategy.parse(str(value))
    except PolicyError:
        return S.UNDEFINED  # Pulsar's mapper reads unknown enum values as null (§7.2)


def _auto_update(value: Any) -> AutoUpdateStrategy | None:
    if not value:
        return None
    try:
        return AutoUpdateStrategy.parse(str(value))
    except PolicyError:
        return None


def _json_or_none(response: httpx.Response) -> Any:
    """The JSON value of a 200, or None for 204 / an empty body."""
    if response.status_code == 204 or not response.content.strip():
        return None
    try:
        return response.json()
    except ValueError:
        return response.text.strip().strip('"') or None


def _strings(body: Any, *, what: str = "listing", url: str = "") -> list[str]:
    if not isinstance(body, list) or not all(isinstance(item, str) for item in body):
        raise StorageError(
            f"{what}: {url or 'the server'} answered {_preview(json.dumps(body))!r}, not a list of names"
        )
    return list(body)


def _read_only(action: str) -> StorageError:
    return StorageError(
        f"internal error: the remote storage adapter cannot {action}; the facade sends it to the server"
    )


def from_schema_response(schema_id: str, body: Any) -> SchemaVersion:
    """GetSchemaResponse (§7.1) → SchemaVersion; KEY_VALUE `data` is packed back into its stored layout (§5)."""
    if not isinstance(body, dict):
        raise StorageError(f"schema of {schema_id}: expected a JSON object, got {_preview(json.dumps(body))!r}")
    try:
        kind = SchemaType.parse(str(body.get("type", "NONE")))
        version = body["version"]
        if isinstance(version, dict):
            version = version.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise KeyError("version")
    except (KeyError, InvalidSchemaError) as exc:
        raise StorageError(
            f"schema of {schema_id}: malformed GetSchemaResponse ({exc}): {_preview(json.dumps(body))!r}"
        ) from None
    text = body.get("data") or ""
    properties = {str(k): str(v) for k, v in (body.get("properties") or {}).items()}
    if kind is SchemaType.KEY_VALUE:
        try:
            data = to_schema_data(SchemaInfo(type=kind, schema=text, properties=properties), validate=False).data
        except InvalidSchemaError:
            data = str(text).encode("utf-8")
    else:
        data = str(text).encode("utf-8")
    timestamp = body.get("timestamp")
    return SchemaVersion(
        topic=schema_id,
        version=version,
        type=kind,
        data=data,
        properties=properties,
        timestamp=timestamp if isinstance(timestamp, int) else 0,
    )


def tombstone(schema_id: str, version: int) -> SchemaVersion:
    """A soft delete whose number is known from the live list or the index; its time and user are not."""
    return SchemaVersion(
        topic=schema_id, version=version, type=SchemaType.NONE, data=b"", properties={}, timestamp=0, deleted=True
    )


def fetch_broker_version(client: AdminClient) -> str | None:
    """What GET /brokers/version says (`4.0.7`, or the profile name a `schema-explorer serve` answers as), or
    None when the broker does not say (an old broker, a token without the right)."""
    try:
        response = client.get(f"{_ADMIN}/brokers/version")
    except RegistryError:
        return None
    if response.status_code != 200:
        return None
    text = response.text.strip().strip('"').strip()
    return text or None


def fetch_broker_config(client: AdminClient) -> BrokerConfig:
    """The broker's schema settings from GET /brokers/configuration/runtime; Pulsar's defaults for any the
    broker does not report (or when the call is not allowed, e.g. a non-superuser token)."""
    response = client.get(f"{_ADMIN}/brokers/configuration/runtime")
    if response.status_code != 200:
        return BrokerConfig()
    try:
        body = response.json()
    except ValueError:
        return BrokerConfig()
    if not isinstance(body, dict):
        return BrokerConfig()
    settings: dict[str, Any] = {}
    for key, field_name in _BROKER_KEYS.items():
        raw = body.get(key)
        if raw is None:
            continue
        text = str(raw).strip()
        if field_name in ("compatibility", "system_topic_compatibility"):
            with contextlib.suppress(PolicyError):
                settings[field_name] = CompatibilityStrategy.parse(text)
        elif text.lower() in ("true", "false"):
            settings[field_name] = text.lower() == "true"
    return BrokerConfig(**settings)


# --- the facade ---------------------------------------------------------------------------------------------


_AUDIT_PAGE_MAX: Final = 10_000  # the server's bound on one audit answer


class RemoteRegistry(Registry):
    """`Registry.open("http://host:port")`: the facade over a Pulsar admin v2 endpoint (module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        verify: bool | str = True,
        pulsar_version: str | None = None,
    ) -> None:
        client = AdminClient(url, token=token, timeout=timeout, attempts=attempts, verify=verify)
        try:
            probe(client)
            config = broker or fetch_broker_config(client)
            reported = fetch_broker_version(client)
            if pulsar_version:
                chosen = profile(pulsar_version)
                source = f"asked (the broker reports {reported})" if reported else "asked"
            elif reported:
                try:
                    chosen = profile_for_broker(reported)
                    source = f"the broker reports {reported}"
                except InvalidArgumentError:
                    chosen = profile(None)
                    source = f"the broker reports {reported[:40]!r}, which is no Pulsar version: the default profile"
            else:
                chosen = profile(None)
                source = "the broker does not report its version: the default profile"
        except BaseException:
            client.close()
            raise
        self._client = client
        self._remote = RemoteStorage(client, config)
        # auto_create is the server's business remotely: it decides whether a write may create a namespace.
        super().__init__(
            self._remote, broker=config, auto_create=auto_create, location=client.url, pulsar_version=chosen.name
        )
        self._profile_source = source

    def __repr__(self) -> str:
        return f"RemoteRegistry({self._client.url!r})"

    def __enter__(self) -> RemoteRegistry:
        return self

    # --- schemas: the server decides ----------------------------------------------------------------------

    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> int:
        """POST /schema. `user` is ignored: the server records the caller's role."""
        name = TopicName.parse(topic)
        info = _info(info)
        response = self._write("POST", f"{_schemas_path(name.schema_id)}/schema", body=payload(info))
        if response.status_code < 400:
            return _version_of(self._client.json(response, f"registering a schema on {name}"), f"register on {name}")
        self._explain_refusal(name, info, response)
        raise AssertionError("unreachable")  # pragma: no cover

    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        """POST /compatibility under the topic's effective strategy, explained locally. Pulsar's API cannot
        check under another strategy, so an explicit `strategy` is checked locally against the fetched history."""
        name = TopicName.parse(topic)
        info = _info(info)
        chosen = None if strategy is None else CompatibilityStrategy.parse(strategy)
        with self._client.snapshot():
            if chosen not in (None, S.UNDEFINED):
                return super().check(topic, info, chosen)
            response = self._client.ask(f"{_schemas_path(name.schema_id)}/compatibility", payload(info))
            what = f"checking a schema against {name}"
            if response.status_code == 422:
                self._local_data(info)  # the same message as the embedded registry
                raise_for(response, what, url=self._client.url)
            if response.status_code in (401, 403, 404):
                raise_for(response, what, url=self._client.url)
            if response.status_code < 400:
                body = self._client.json(response, what)
                server_strategy = (
                    _strategy(body.get("schemaCompatibilityStrategy")) if isinstance(body, dict) else S.UNDEFINED
                )
                used = server_strategy if server_strategy is not S.UNDEFINED else self._admin_strategy(name).value
                compatible = not isinstance(body, dict) or body.get("compatibility") is not False
                return self._agree(name, info, used, compatible, reason_of(response))
            # An incompatible candidate is an HTTP 500 (or 409) with the checker's message (§7.1).
            reason = reason_of(response)
            if "unexpected error occurred" in reason:
                raise_for(response, what, url=self._client.url)
            return self._agree(name, info, self._admin_strategy(name).value, False, reason)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        """GET /schema or /schema/{version} (§3.6)."""
        name = TopicName.parse(topic)
        wanted = None if version is None else _version_number(version, negative=True)
        path = f"{_schemas_path(name.schema_id)}/schema" + ("" if wanted is None else f"/{wanted}")
        response = self._client.get(path)
        if response.status_code == 404 and "namespace" not in reason_of(response).lower():
            if wanted is None:
                raise SchemaNotFoundError(f"Schema not found: topic {name} has no schema")
            raise SchemaNotFoundError(f"Schema not found: topic {name} has no live version {wanted}")
        raise_for(response, f"reading the schema of {name}", url=self._client.url)
        return from_schema_response(name.schema_id, self._client.json(response, f"reading the schema of {name}"))

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        with self._client.snapshot():
            return super().history(topic, include_deleted=include_deleted)

    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        """POST /version: the first live version with identical bytes, or None (-1 on the wire)."""
        name = TopicName.parse(topic)
        info = _info(info)
        response = self._client.ask(f"{_schemas_path(name.schema_id)}/version", payload(info))
        raise_for(response, f"looking up a schema version of {name}", url=self._client.url)
        version = _version_of(self._client.json(response, f"looking up a version of {name}"), f"version of {name}")
        return None if version < 0 else version

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """DELETE /schema[?force=true]: the tombstone's version, or None when forced (-1 on the wire)."""
        name = TopicName.parse(topic)
        response = self._write(
            "DELETE", f"{_schemas_path(name.schema_id)}/schema", params={"force": "true" if force else "false"}
        )
        raise_for(response, f"deleting the schema of {name}", url=self._client.url)
        if force:
            return None
        body = self._client.json(response, f"deleting the schema of {name}")
        version = _version_of(body, f"delete on {name}")
        return None if version < 0 else version

    # --- policies: validated like the embedded facade, then sent (§7.2, §7.3) ------------------------------

    def set_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: Any = UNSET,
        auto_update_strategy: Any = UNSET,
        allow_auto_update: Any = UNSET,
        allow_auto_update_with_replicator: Any = UNSET,
        validation_enforced: Any = UNSET,
        user: str = "",
    ) -> NamespacePolicy:
        """One admin call per changed field (Pulsar has no call for several at once, so this is not atomic).
        `user` is ignored here and below: the server knows the caller from the token."""
        ns = NamespaceName.parse(namespace)
        calls: list[tuple[str, str, Any, dict[str, str] | None]] = []
        base = f"{_ADMIN}/namespaces/{ns.tenant}/{ns.namespace}"
        if compatibility is not UNSET:
            strategy = S.UNDEFINED if compatibility is None else CompatibilityStrategy.parse(compatibility)
            calls.append(("PUT", f"{base}/schemaCompatibilityStrategy", str(strategy), None))
        if auto_update_strategy is not UNSET:
            auto = None if auto_update_strategy is None else AutoUpdateStrategy.parse(auto_update_strategy)
            calls.append(
                ("PUT", f"{base}/schemaAutoUpdateCompatibilityStrategy", None if auto is None else str(auto), None)
            )
        if allow_auto_update is None:
            # Pulsar reads a null body as false for this flag: sending it would set false, not clear it.
            raise PolicyError(
                f"the admin API of {self._client.url} cannot clear isAllowAutoUpdateSchema of {ns} (a null body "
                "sets false); set allow_auto_update=True or False instead"
            )
        allow = UNSET if allow_auto_update is UNSET else _bool("allow_auto_update", allow_auto_update)
        replicator = (
            UNSET
            if allow_auto_update_with_replicator is UNSET
            else _bool("allow_auto_update_with_replicator", allow_auto_update_with_replicator)
        )
        if allow is True and replicator is False:
            raise PolicyError("allow_auto_update=True cannot be combined with allow_auto_update_with_replicator=False")
        if allow is not UNSET or replicator is not UNSET:
            if allow is UNSET:
                # The call carries both flags; an unset namespace value is sent as the broker default in force
                # (a null would be read as false).
                current = self.namespace_policy(str(ns)).allow_auto_update
                allow = self.broker.allow_auto_update if current is None else current
            params = None if replicator is UNSET else {"allowAutoUpdateSchemaWithReplicator": str(replicator).lower()}
            calls.append(("POST", f"{base}/isAllowAutoUpdateSchema", allow, params))
        if validation_enforced is not UNSET:
            enforced = _bool("validation_enforced", validation_enforced)
            calls.append(("POST", f"{base}/schemaValidationEnforced", enforced, None))
        for method, path, body, params in calls:
            response = self._write(method, path, body=body, params=params)
            if body is None and response.status_code == 400:
                field = path.rsplit("/", 1)[-1]
                raise PolicyError(
                    f"{self._client.url} refused to clear {field} of {ns} (Pulsar clears it with a JSON null body): "
                    f"{reason_of(response)}; set a value instead"
                )
            raise_for(response, f"setting a schema policy of {ns}", url=self._client.url)
        return self.namespace_policy(str(ns))

    def set_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET, user: str = ""
    ) -> TopicPolicy:
        """§7.3: PUT/DELETE schemaCompatibilityStrategy, POST/DELETE schemaValidationEnforced."""
        name = self._policy_topic(topic)
        path = _topic_path(name)
        calls: list[tuple[str, str, Any]] = []
        if compatibility is not UNSET:
            strategy = None if compatibility is None else CompatibilityStrategy.parse(compatibility)
            if strategy in (None, S.UNDEFINED):
                calls.append(("DELETE", f"{path}/schemaCompatibilityStrategy", None))
            else:
                calls.append(("PUT", f"{path}/schemaCompatibilityStrategy", str(strategy)))
        if validation_enforced is not UNSET:
            enforced = _optional_bool("validation_enforced", validation_enforced)
            if enforced is None:
                calls.append(("DELETE", f"{path}/schemaValidationEnforced", None))
            else:
                calls.append(("POST", f"{path}/schemaValidationEnforced", enforced))
        for method, call_path, body in calls:
            response = self._write(method, call_path, body=body)
            if response.status_code == 405 and call_path.endswith("/schemaValidationEnforced"):
                raise PolicyError(
                    f"{self._client.url} cannot remove the schemaValidationEnforced policy of {name} (Pulsar's "
                    "admin API only sets it); set it to true or false instead"
                )
            raise_for(response, f"setting a topic policy of {name}", url=self._client.url)
        return self.topic_policy(str(name))

    # --- creation -----------------------------------------------------------------------------------------

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        """PUT /tenants/{tenant}, allowed on every cluster the endpoint knows; False when it existed."""
        name = parse_tenant(tenant)
        clusters: list[str] = []
        response = self._client.get(f"{_ADMIN}/clusters")
        if response.status_code == 200:
            with contextlib.suppress(StorageError):
                clusters = _strings(self._client.json(response, "listing clusters"))
        body = {"adminRoles": [], "allowedClusters": clusters}
        return self._create(f"{_ADMIN}/tenants/{name}", body, f"creating tenant {name}")

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        ns = NamespaceName.parse(namespace)
        return self._create(f"{_ADMIN}/namespaces/{ns.tenant}/{ns.namespace}", None, f"creating namespace {ns}")

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        name = TopicName.parse(topic).base
        return self._create(_topic_path(name), None, f"creating topic {name}")

    def _create(self, path: str, body: Any, what: str) -> bool:
        response = self._write("PUT", path, body=body)
        if response.status_code == 409:
            return False
        raise_for(response, what, url=self._client.url)
        return True

    # --- clients: not in Pulsar's admin API ---------------------------------------------------------------

    def connect_producer(
        self, topic: str, info: SchemaInfo | None, *, name: str, replicator: bool = False, user: str = ""
    ) -> Admission:
        raise StorageError(
            f"cannot record producer {name!r} on {self._client.url}: " + _NO_CLIENTS.format(role="producer")
        )

    def connect_consumer(
        self, topic: str, info: SchemaInfo | None, *, subscription: str, name: str = "", user: str = ""
    ) -> Admission:
        raise StorageError(
            f"cannot record consumer {name or subscription!r} on {self._client.url}: "
            + _NO_CLIENTS.format(role="consumer")
        )

    def disconnect(self, topic: str, *, name: str, role: ClientRole | str | None = None) -> int:
        TopicName.parse(topic)
        return 0

    # --- reads computed locally: one snapshot per call ----------------------------------------------------

    def effective_policy(self, topic: str) -> EffectivePolicy:
        with self._client.snapshot():
            return super().effective_policy(topic)

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        with self._client.snapshot():
            return super().namespace_policy(namespace)

    def topic_policy(self, topic: str) -> TopicPolicy:
        with self._client.snapshot():
            return super().topic_policy(topic)

    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        with self._client.snapshot():
            return super().diff(topic, old, new)

    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        with self._client.snapshot():
            return super().what_if(topic, info)

    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        with self._client.snapshot():
            return super().upgrade_plan(topic, target)

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        with self._client.snapshot():
            return super().policy_impact(namespace, strategy)

    def preview_namespace_policy(self, namespace: str, **values: Any) -> PolicyPreview:
        with self._client.snapshot():
            return super().preview_namespace_policy(namespace, **values)

    def preview_topic_policy(self, topic: str, **values: Any) -> PolicyPreview:
        with self._client.snapshot():
            return super().preview_topic_policy(topic, **values)

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        """The server's trail (`GET /explorer/v1/audit`, `schema-explorer serve` only): at most its newest
        10,000 entries per call; [] from a real broker, which keeps none."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number >= 1, got {limit!r}")
        params = {"limit": str(min(limit, _AUDIT_PAGE_MAX))} | ({} if target is None else {"target": target})
        response = self._client.get("/explorer/v1/audit", params)
        if response.status_code == 404:  # a real broker: no such route
            return []
        raise_for(response, "reading the audit trail", url=self._client.url)
        body = self._client.json(response, "reading the audit trail")
        try:
            return [
                AuditEntry(
                    at=int(e["at"]),
                    user=str(e["user"]),
                    action=AuditAction(e["action"]),
                    target=str(e["target"]),
                    detail=str(e["detail"]),
                    outcome=AuditOutcome(e["outcome"]),
                )
                for e in body["entries"]
            ]
        except (KeyError, TypeError, ValueError):
            raise StorageError(
                f"reading the audit trail: {self._client.url} answered with an unexpected body "
                f"({_preview(response.text)!r})"
            ) from None

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        with self._client.snapshot():
            return super().search_topics(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        with self._client.snapshot():
            return super().topic_summary(topic)

    def namespaces(self, tenant: str) -> list[str]:
        with self._client.snapshot():
            return super().namespaces(tenant)

    def topics(self, namespace: str) -> list[str]:
        with self._client.snapshot():
            return super().topics(namespace)

    # --- internals ----------------------------------------------------------------------------------------

    def _write(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """Every write goes here, so this handle's catalog cache (keyed on change_token) sees its own writes."""
        self._own_writes += 1
        return self._client.write(method, path, body=body, params=params)

    def _local_data(self, info: SchemaInfo) -> SchemaData:
        return to_schema_data(info)

    def _explain_refusal(self, name: TopicName, info: SchemaInfo, response: httpx.Response) -> None:
        """Raise the embedded facade's error for a refused POST /schema, explained from the fetched history."""
        status = response.status_code
        reason = reason_of(response)
        what = f"registering a schema on {name}"
        if status == 422:
            self._local_data(info)
            raise_for(response, what, url=self._client.url)
        if status == 409 or status >= 500:
            # The embedded order (§3.3): dedup first, which names a poisoned history or an invalid default
            # (Pulsar's HTTP 500, §4.8), then the strategy's verdict. When the local side cannot tell (the
            # history cannot be read, or a check this core does not know), the server's words stand.
            result: CompatibilityResult | None = None
            with self._client.snapshot():
                try:
                    live = self._live(name)
                    data = self._local_data(info)
                except RegistryError:
                    live, data = None, None
                if live is not None and data is not None:
                    self._dedup(name, live, data)
                if status == 409:
                    result = self._local_verdict(name, info, reason)
            if result is not None:
                raise IncompatibleSchemaError(f"Incompatible schema for {name}: {result.message}", result)
        raise_for(response, what, url=self._client.url)

    def _agree(
        self, name: TopicName, info: SchemaInfo, strategy: CompatibilityStrategy, compatible: bool, reason: str
    ) -> CompatibilityResult:
        """The server's verdict, with the local explanation when both agree."""
        if not compatible:
            return self._local_verdict(name, info, reason, strategy)
        try:
            local = self._check(self._live(name), self._local_data(info), strategy)
        except (InvalidSchemaError, PoisonedHistoryError):
            return CompatibilityResult(compatible=True, strategy=strategy)
        if local.compatible:
            return local
        return CompatibilityResult(
            compatible=True, strategy=strategy, checked_versions=local.checked_versions, advisories=local.advisories
        )

    def _local_verdict(
        self, name: TopicName, info: SchemaInfo, reason: str, strategy: CompatibilityStrategy | None = None
    ) -> CompatibilityResult:
        """An incompatible verdict: the local problems, or the server's own words when the core disagrees."""
        local = None
        live: list[SchemaVersion] = []
        try:
            live = self._live(name)
            strategy = strategy or self._admin_strategy(name).value
            local = self._check(live, self._local_data(info), strategy)
        except RegistryError:
            pass
        if local is not None and not local.compatible:
            return local
        problem = Problem(
            code=RuleCode.STRATEGY_FORBIDS_CHANGE,
            direction=Direction.NONE,
            version=live[-1].version if live else None,
            message=f"the server refused the schema: {reason}",
            hint="the server's rules differ from Pulsar's defaults here (a broker setting or plug-in); "
            "ask its operators",
        )
        checked = local.checked_versions if local is not None else tuple(e.version for e in live[-1:])
        return CompatibilityResult(
            compatible=False,
            strategy=strategy or self.broker.compatibility,
            checked_versions=checked,
            problems=(problem,),
        )


def probe(client: AdminClient) -> None:
    """GET /admin/v2/tenants must answer a JSON list: anything else is not a Pulsar admin endpoint."""
    response = client.get(f"{_ADMIN}/tenants")
    if response.status_code in (401, 403):
        raise_for(response, "listing tenants", url=client.url)
    hint = "point the URL at a broker's web service (e.g. http://broker:8080) or at `schema-explorer serve`"
    if response.status_code != 200 or _is_html(response):
        kind = "an HTML page" if _is_html(response) else f"{_preview(reason_of(response))!r}"
        raise StorageError(
            f"{client.url} is not a Pulsar admin endpoint: GET {_ADMIN}/tenants answered HTTP "
            f"{response.status_code} with {kind}; {hint}"
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, list):
        raise StorageError(
            f"{client.url} is not a Pulsar admin endpoint: GET {_ADMIN}/tenants answered "
            f"{_preview(response.text)!r}, not a list of tenants; {hint}"
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


def _version_of(body: Any, what: str) -> int:
    """`{"version": n}` or PostSchemaResponse's `{"version": {"version": n}}` (§7.1)."""
    value = body.get("version") if isinstance(body, dict) else body
    if isinstance(value, dict):
        value = value.get("version")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise StorageError(f"{what}: the server answered {_preview(json.dumps(body))!r} without a version number")


__all__ = ["AdminClient", "RemoteRegistry", "RemoteStorage", "fetch_broker_config", "normalise_url"]
