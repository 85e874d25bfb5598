"""The remote backend: the `Storage` protocol's reads over admin v2 GETs (histories, listings, policies,
broker settings), so every explanation the shared facade computes works over a broker as over a file. Its
writes are refused: `RemoteRegistry` sends each write as the matching admin request instead.

What the admin API cannot show, and how this backend answers instead:
* recorded producers and consumers: Pulsar has no such resource, so `clients()` is empty from a broker; from
  `schema-explorer serve` they come from its explorer API (GET /explorer/v1/clients);
* versions before the last soft delete: GET /schemas lists only the live ones, so a history shows the live
  versions and the last tombstone (its number is known), not what came before it;
* who registered a version: GetSchemaResponse has no user, so `SchemaVersion.user` is "".
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

import httpx

from .._errors import (
    InvalidSchemaError,
    NamespaceNotFoundError,
    NotFoundError,
    PolicyError,
    RegistryError,
    StorageError,
)
from .._model import (
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityStrategy,
    ConnectedClient,
    NamespacePolicy,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from .._names import TopicName
from .._schema_data import to_schema_data
from .._types import SchemaType
from ._admin_client import ADMIN, AdminClient, clip, quote_path, raise_for, reason_of, schemas_path, topic_path
from ._async_reader import AsyncReader
from ._explorer_api import ExplorerApi
from ._listing import TopicListing, fold, shown_namespace

# ServiceConfiguration field names, as GET /brokers/configuration/runtime reports them (§2.3).
_BROKER_KEYS: Final[Mapping[str, str]] = {
    "schemaCompatibilityStrategy": "compatibility",
    "systemTopicSchemaCompatibilityStrategy": "system_topic_compatibility",
    "isAllowAutoUpdateSchemaEnabled": "allow_auto_update",
    "isSchemaValidationEnforced": "validation_enforced",
    "topicLevelPoliciesEnabled": "topic_level_policies_enabled",
}


class RemoteStorage:
    """The `Storage` protocol's reads over admin v2 GETs; its writes are refused (RemoteRegistry sends each
    write as the matching admin request instead)."""

    def __init__(
        self,
        client: AdminClient,
        broker: BrokerConfig,
        explorer: ExplorerApi | None = None,
        *,
        include_system: bool = False,
    ) -> None:
        self.client = client
        self.broker = broker
        self.explorer = explorer
        self.include_system = include_system  # list the broker's system topics too (_listing.py)

    def async_reader(self, in_flight: int) -> AsyncReader:
        """Reads for the broker index from an event loop, over this storage's connection."""
        return AsyncReader(self.client, in_flight)

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """One facade call's reads: each resource fetched once (`AdminClient.snapshot`)."""
        return self.client.snapshot()

    # histories -------------------------------------------------------------------------------------------

    def history(self, schema_id: str) -> list[SchemaVersion]:
        """The live versions (GET /schemas), preceded by the last tombstone when its number is known (§3.2)."""
        live = self.live_versions(schema_id, self.client.get(f"{schemas_path(schema_id)}/schemas"))
        if live:
            return with_tombstone(schema_id, live)
        return self.deleted_history(schema_id, self.client.get(f"{schemas_path(schema_id)}/metadata"))

    async def history_async(self, reader: AsyncReader, schema_id: str) -> list[SchemaVersion]:
        """`history` over the index's asyncio reader: the same requests and answers."""
        live = self.live_versions(schema_id, await reader.get(f"{schemas_path(schema_id)}/schemas"))
        if live:
            return with_tombstone(schema_id, live)
        return self.deleted_history(schema_id, await reader.get(f"{schemas_path(schema_id)}/metadata"))

    def live_versions(self, schema_id: str, response: httpx.Response) -> list[SchemaVersion]:
        """The answer to GET /schemas, oldest first. Older lines answer a read the credentials may not make
        with `404 {"reason": "Not Found"}` (SchemasResourceBase.validateDestinationAndAdminOperation turns the
        401 into it), which reads like a missing topic: the error says it may be the role."""
        what = f"reading the schemas of {schema_id}"
        if response.status_code == 404 and reason_of(response) != "Not Found":
            return []  # no schema, or no such namespace: the embedded registry says []
        if response.status_code == 404 and _json_or_none(response) == {"reason": "Not Found"}:
            raise NotFoundError(
                f"{what}: {self.client.url} answered 404 Not Found, which older brokers also answer when "
                "the credentials may not read the topic's schemas (the role needs the tenant's admin "
                "permission there); check the role before concluding the topic is missing"
            )
        raise_for(response, what, url=self.client.url)
        body = self.client.json(response, what)
        entries = body.get("getSchemaResponses") if isinstance(body, dict) else None
        if not isinstance(entries, list):
            raise StorageError(
                f"{what}: {self.client.url} answered without 'getSchemaResponses' ({clip(response.text)!r}); is it "
                "a Pulsar admin endpoint?"
            )
        return sorted((from_schema_response(schema_id, e) for e in entries), key=lambda e: e.version)

    def deleted_history(self, schema_id: str, metadata: httpx.Response) -> list[SchemaVersion]:
        """A topic without live versions: its last tombstone when GET /metadata names one, else []."""
        latest = self._latest_index_version(schema_id, metadata)
        return [] if latest is None else [tombstone(schema_id, latest)]

    def _latest_index_version(self, schema_id: str, response: httpx.Response) -> int | None:
        """GET /metadata: the storage index, tombstones included; None when there is no history (204) or
        the endpoint does not offer it."""
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
        return sorted(self._string_list(f"{ADMIN}/tenants", "listing tenants"))

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        raise _read_only("create a tenant")

    def namespaces(self, tenant: str) -> list[str]:
        listed = self._string_list(f"{ADMIN}/namespaces/{quote(tenant, safe='')}", f"listing {tenant}")
        return sorted(ns for ns in listed if shown_namespace(ns, include_system=self.include_system))

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        """The namespace's `Policies` (GET /namespaces/t/ns, exact); else the §7.2 schema GETs one by one."""
        path = f"{ADMIN}/namespaces/{quote_path(namespace)}"
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
            compatibility=wire_strategy(compatibility) if compatibility else S.UNDEFINED,
            auto_update_strategy=_auto_update(auto_value),
            allow_auto_update=None
            if not isinstance(allow_value, bool) or allow_value == self.broker.allow_auto_update
            else allow_value,
            validation_enforced=_json_or_none(enforced) is True,
        )

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        raise _read_only("write namespace policies")

    def topics(self, namespace: str) -> list[str]:
        """Persistent and non-persistent topics of a namespace, folded as Pulsar folds them (_listing.py)."""
        return list(self.topic_listing(namespace, include_system=self.include_system).topics)

    def topic_listing(self, namespace: str, *, include_system: bool) -> TopicListing:
        """The three topic listings of a namespace, system topics asked for (includeSystemTopic) and folded."""
        ns = quote_path(namespace)
        what = f"listing the topics of {namespace}"
        names = self._string_list(f"{ADMIN}/persistent/{ns}", what, _WITH_SYSTEM)
        for extra in (f"{ADMIN}/persistent/{ns}/partitioned", f"{ADMIN}/non-persistent/{ns}"):
            response = self.client.get(extra, _WITH_SYSTEM)
            if response.status_code == 200:
                names += string_list(self.client.json(response, what))
        return fold(names, include_system=include_system)

    def has_topic(self, topic: str) -> bool:
        name = TopicName.parse(topic)
        try:
            return str(name.base) in self.topic_listing(str(name.namespace_name), include_system=True).topics
        except NamespaceNotFoundError:
            return False

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        raise _read_only("create a topic")

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        """§7.3 GETs; None when the topic has no policy, does not exist, or topic policies are disabled."""
        name = TopicName.parse(topic)
        path = topic_path(name)
        what = f"reading the topic policies of {name}"
        strategy = self._strategy_response(name)
        if strategy is None:
            return None
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
        compatibility = wire_strategy(value) if value else None
        policy = TopicPolicy(
            compatibility=None if compatibility is S.UNDEFINED else compatibility, validation_enforced=validation
        )
        return None if policy == TopicPolicy() else policy

    def topic_compatibility(self, topic: str) -> CompatibilityStrategy | None:
        """The topic's own compatibility strategy (one GET; what the search index reads), None when unset."""
        response = self._strategy_response(TopicName.parse(topic))
        value = None if response is None else _json_or_none(response)
        strategy = wire_strategy(value) if value else None
        return None if strategy is S.UNDEFINED else strategy

    async def topic_compatibility_async(self, reader: AsyncReader, topic: str) -> CompatibilityStrategy | None:
        """`topic_compatibility` over the index's asyncio reader."""
        name = TopicName.parse(topic)
        response = self._strategy_answer(name, await reader.get(f"{topic_path(name)}/schemaCompatibilityStrategy"))
        value = None if response is None else _json_or_none(response)
        strategy = wire_strategy(value) if value else None
        return None if strategy is S.UNDEFINED else strategy

    def _strategy_response(self, name: TopicName) -> httpx.Response | None:
        return self._strategy_answer(name, self.client.get(f"{topic_path(name)}/schemaCompatibilityStrategy"))

    def _strategy_answer(self, name: TopicName, response: httpx.Response) -> httpx.Response | None:
        """GET .../schemaCompatibilityStrategy; None when the topic has no policies to read (no such topic,
        or topic policies disabled: 404, 405, 412)."""
        if response.status_code in (404, 405, 412):
            return None
        raise_for(response, f"reading the topic policies of {name}", url=self.client.url)
        return response

    def _namespace_enforces(self, name: TopicName) -> bool:
        policy = self.namespace_policy(str(name.namespace_name))
        return bool(policy and policy.validation_enforced) or self.broker.validation_enforced

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        raise _read_only("write topic policies")

    # clients ---------------------------------------------------------------------------------------------

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        """From the explorer API when the server has one; a broker records no client schemas (module docstring)."""
        if self.explorer is None or topics == []:
            return []
        return self.explorer.clients(topics)

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

    def _string_list(self, path: str, what: str, params: Mapping[str, str] | None = None) -> list[str]:
        response = self.client.get(path, params)
        raise_for(response, what, url=self.client.url)
        return string_list(self.client.json(response, what), what=what, url=self.client.url)


S = CompatibilityStrategy
# Every listing asks for the system topics (PersistentTopics.getList's includeSystemTopic; older brokers list them
# anyway): whether a namespace has topic policies shows in its listing, and the fold is ours (_listing.py).
_WITH_SYSTEM: Final = {"includeSystemTopic": "true"}

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
        compatibility=wire_strategy(compatibility) if compatibility else S.UNDEFINED,
        auto_update_strategy=_auto_update(body.get("schema_auto_update_compatibility_strategy")),
        allow_auto_update=allow if isinstance(allow, bool) else None,
        allow_auto_update_with_replicator=replicator if isinstance(replicator, bool) else True,
        validation_enforced=body.get("schema_validation_enforced") is True,
    )


def wire_strategy(value: Any) -> CompatibilityStrategy:
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


def string_list(body: Any, *, what: str = "listing", url: str = "") -> list[str]:
    if not isinstance(body, list) or not all(isinstance(item, str) for item in body):
        raise StorageError(f"{what}: {url or 'the server'} answered {clip(json.dumps(body))!r}, not a list of names")
    return list(body)


def _read_only(action: str) -> StorageError:
    return StorageError(
        f"internal error: the remote storage adapter cannot {action}; the facade sends it to the server"
    )


def from_schema_response(schema_id: str, body: Any) -> SchemaVersion:
    """GetSchemaResponse (§7.1) → SchemaVersion; KEY_VALUE `data` is packed back into its stored layout (§5)."""
    if not isinstance(body, dict):
        raise StorageError(f"schema of {schema_id}: expected a JSON object, got {clip(json.dumps(body))!r}")
    try:
        kind = SchemaType.parse(str(body.get("type", "NONE")))
        version = body["version"]
        if isinstance(version, dict):
            version = version.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise KeyError("version")
    except (KeyError, InvalidSchemaError) as exc:
        raise StorageError(
            f"schema of {schema_id}: malformed GetSchemaResponse ({exc}): {clip(json.dumps(body))!r}"
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


def with_tombstone(schema_id: str, live: list[SchemaVersion]) -> list[SchemaVersion]:
    """Live versions, preceded by the tombstone their first number implies (§3.2)."""
    first = live[0].version
    return ([tombstone(schema_id, first - 1)] if first > 0 else []) + live


def tombstone(schema_id: str, version: int) -> SchemaVersion:
    """A soft delete whose number is known from the live list or the index; its time and user are not."""
    return SchemaVersion(
        topic=schema_id, version=version, type=SchemaType.NONE, data=b"", properties={}, timestamp=0, deleted=True
    )


def fetch_broker_version(client: AdminClient) -> str | None:
    """What GET /brokers/version says (`4.0.7`, or the line name a `schema-explorer serve` answers as), or
    None when the broker does not say (an old broker, a token without the right)."""
    try:
        response = client.get(f"{ADMIN}/brokers/version")
    except RegistryError:
        return None
    if response.status_code != 200:
        return None
    text = response.text.strip().strip('"').strip()
    return text or None


def fetch_broker_config(client: AdminClient) -> BrokerConfig:
    """The broker's schema settings from GET /brokers/configuration/runtime; Pulsar's defaults for any the
    broker does not report (or when the call is not allowed, e.g. a non-superuser token)."""
    response = client.get(f"{ADMIN}/brokers/configuration/runtime")
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


def connected_from_stats(topic: str, body: Any) -> list[ConnectedClient]:
    """The producers and consumers in a broker's TopicStats (GET .../stats or .../partitioned-stats):
    `publishers[].producerName`, `subscriptions.<name>.consumers[].consumerName`, with what else each says of
    the connection. Anything not shaped like TopicStats is a StorageError naming what came back."""
    if not isinstance(body, dict):
        raise StorageError(f"stats of {topic}: expected a JSON object, got {clip(json.dumps(body))!r}")
    publishers = body.get("publishers", [])
    subscriptions = body.get("subscriptions", {})
    if not isinstance(publishers, list) or not isinstance(subscriptions, dict):
        raise StorageError(
            f"stats of {topic}: no publishers list or subscriptions object in {clip(json.dumps(body))!r}"
        )
    found = [
        ConnectedClient(
            topic=topic,
            role=ClientRole.PRODUCER,
            name=_text(p.get("producerName")),
            address=_text(p.get("address")),
            client_version=_text(p.get("clientVersion")),
            connected_since=_text(p.get("connectedSince")),
        )
        for p in publishers
        if isinstance(p, dict)
    ]
    for subscription, stats in sorted(subscriptions.items()):
        if not isinstance(stats, dict):
            continue
        found += [
            ConnectedClient(
                topic=topic,
                role=ClientRole.CONSUMER,
                name=_text(c.get("consumerName")),
                subscription=str(subscription),
                subscription_type=_text(stats.get("type")),
                address=_text(c.get("address")),
                client_version=_text(c.get("clientVersion")),
                connected_since=_text(c.get("connectedSince")),
            )
            for c in stats.get("consumers") or []
            if isinstance(c, dict)
        ]
    return sorted(found, key=lambda c: c.order)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
