"""`registry.open("http://host:port")`: the facade over a remote Pulsar admin v2 endpoint, this project's server
or a real broker's web service.

Reads come through the remote backend (registry/remote/_backend.py), so every explanation, diff, what-if,
upgrade plan and policy impact is computed by the shared facade exactly as for the embedded registry. Writes
(register, delete, policies, creation) go to the server, whose verdict stands; its status codes map back to
the errors the embedded facade raises, and refusals are explained locally from the fetched history
(pulsar-semantics.md §7). Recording producers and consumers is not in Pulsar's admin API, so this facade has
no `connect_*`: `what_if(topic, info).producer` / `.consumer` is the dry run of the broker's admission check.

Two kinds of remote, one facade. A plain broker answers the admin API only: the facade computes every
answer from what it reads there, and searches an index of it built in the background and cached locally
(remote/_broker_index.py). `schema-explorer serve` also offers its explorer API: then the recorded
clients come from there (so upgrade plans, admission and policy previews see them), and search pages,
summaries, diffs, what-if, upgrade plans and policy impact are asked of the server in one request each
instead of reading every topic, when the server answers as the Pulsar line and broker settings this handle
answers as (it runs the same core, so its answer is the one this facade would compute).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import httpx

from .._audit import AuditAction, AuditEntry, AuditOutcome
from .._cache_budget import bounded
from .._catalog import INDEX_WORKERS
from .._errors import (
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidSchemaError,
    PoisonedHistoryError,
    PolicyError,
    RegistryError,
    SchemaNotFoundError,
    StorageError,
)
from .._history import version_number
from .._model import (
    JUDGED_HEADER,
    STORED_HEADER,
    BrokerConfig,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    NamespacePolicy,
    Problem,
    Registration,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from .._names import NamespaceName, TopicName
from .._pulsar_version import line_for_broker, pulsar_line
from .._schema_data import checked_info, to_schema_data
from .._state import RegistryState
from .._types import SchemaData
from .._wire import to_json
from ..policy._changes import NamespacePolicyChange, PolicyChange, TopicPolicyChange
from ..policy._rules import policy_topic, require_expected
from ..proposals._handle import Proposals
from ..webhooks._handle import Webhooks
from ._admin_client import (
    ADMIN,
    DEFAULT_ATTEMPTS,
    DEFAULT_TIMEOUT,
    AdminClient,
    clip,
    payload,
    probe,
    raise_for,
    reason_of,
    schemas_path,
    topic_path,
)
from ._backend import (
    RemoteStorage,
    fetch_broker_config,
    fetch_broker_version,
    from_schema_response,
    string_list,
    wire_strategy,
)
from ._broker_index import CachedBrokerIndex, cache_path
from ._connection import Connection
from ._direct import DirectWrites
from ._explorer_api import ExplorerApi, namespace_policy_path, probe_explorer, topic_policy_path
from ._pacing import Concurrency
from ._policy_calls import namespace_calls, topic_calls
from ._proposals import ProposalsApi, RemoteProposals
from ._webhooks import RemoteWebhooks
from ._workspace import WorkspaceSlot

S = CompatibilityStrategy

P = TypeVar("P", NamespacePolicy, TopicPolicy)
_AUDIT_PAGE_MAX: Final = 10_000  # the server's bound on one audit answer
_NO_CLIENTS = (
    "Pulsar's admin API has no call that records a client; ask what_if(topic, info).producer or .consumer for "
    "a dry run of the broker's admission check"
)
# What the embedded registry has and a broker's admin API cannot do, and what to use instead.
_EMBEDDED_ONLY: Final[Mapping[str, str]] = {
    "connect_producer": _NO_CLIENTS,
    "connect_consumer": _NO_CLIENTS,
    "disconnect": _NO_CLIENTS,
    "batch": "each admin call is its own write on the broker; there is no group commit over HTTP",
    "set_pulsar_version": "a remote registry answers as the broker's Pulsar version; open it with "
    "pulsar_version=... to answer as another line",
    "stored_pulsar_version": "a broker stores no line of ours; pulsar_version says the line it answers as",
    "in_memory": "use Registry.in_memory()",
    "open_file": "use Registry.open_file(path)",
}


class RemoteRegistry(DirectWrites):
    """`registry.open("http://host:port")`: the facade over a Pulsar admin v2 endpoint (module docstring)."""

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
        connection: Connection | None = None,
        system_topics: bool = False,
        workspace: str | os.PathLike[str] | None = None,
    ) -> None:
        """`system_topics`: list the broker's own topics too (pulsar/system, `__change_events`, transaction
        buffers: remote/_listing.py), hidden as Pulsar hides them otherwise. `workspace`: where a plain broker's
        proposals, review rules, audit trail and webhooks are kept (remote/_workspace.py; default: a per-user
        file for the cluster's URL); refused for `serve`, which keeps its own."""
        pace = Concurrency(INDEX_WORKERS)  # the index's requests in flight, lowered while the broker refuses
        client = AdminClient(
            url, token=token, timeout=timeout, attempts=attempts, verify=verify, pace=pace, connection=connection
        )
        try:
            probe(client)
            config = broker or fetch_broker_config(client)
            reported = fetch_broker_version(client)
            if pulsar_version:
                chosen = pulsar_line(pulsar_version)
                source = f"asked (the broker reports {reported})" if reported else "asked"
            elif reported:
                try:
                    chosen = line_for_broker(reported)
                    source = f"the broker reports {reported}"
                except InvalidArgumentError:
                    chosen = pulsar_line(None)
                    source = f"the broker reports {reported[:40]!r}, which is no Pulsar version: the default line"
            else:
                chosen = pulsar_line(None)
                source = "the broker does not report its version: the default line"
            records = probe_explorer(client)  # None: a plain broker
            explorer = None if records is None else ExplorerApi(client)
            if explorer is not None and workspace is not None:
                raise InvalidArgumentError(
                    f"{client.url} is schema-explorer serve, which keeps proposals, rules and the audit trail in "
                    "its own storage: open it without a workspace"
                )
        except BaseException:
            client.close()
            raise
        self._client = client
        self._explorer = explorer
        self._records_clients = bool(records)
        api = None if explorer is None else ProposalsApi(client)  # proposals and webhooks: serve keeps them
        # The server's answers are this handle's only when both answer as the same Pulsar line and settings.
        self._ask_server = (
            explorer is not None and broker is None and reported is not None and _same_line(reported, chosen.name)
        )
        # auto_create is the server's business remotely: it decides whether a write may create a namespace.
        storage = RemoteStorage(client, config, explorer, include_system=system_topics)
        state = RegistryState(storage, config, chosen, auto_create=auto_create)
        # A plain broker has no search: the handle builds its own index, cached per cluster URL and credentials.
        self._index = (
            None
            if explorer is not None
            else CachedBrokerIndex(
                storage,
                # a listing with system topics is another index: never answered from one without them
                cache_path(client.url, f"{client.identity}\0system-topics" if system_topics else client.identity),
                url=client.url,
                topic_policies=config.topic_level_policies_enabled,
                sent=lambda: client.sent,
                pace=pace,
            )
        )
        super().__init__(state, location=client.url, line_source=source, index=self._index)
        self._workspace: WorkspaceSlot | None = None  # None: `serve`, which keeps proposals itself
        if explorer is None:
            try:
                self._workspace = WorkspaceSlot(workspace, client.url, state, self)
            except BaseException:
                self.close()
                raise
        self._served_proposals = RemoteProposals(api, client.url, self._wrote)
        self._served_webhooks = RemoteWebhooks(api, client.url, self._wrote)

    @property
    def proposals(self) -> Proposals:
        return self._served_proposals if self._workspace is None else self._workspace.get().proposals

    @property
    def webhooks(self) -> Webhooks:
        return self._served_webhooks if self._workspace is None else self._workspace.get().webhooks

    @property
    def workspace(self) -> str | None:
        """Where a plain broker's proposals, rules, audit trail and webhooks are kept (shown without a
        password); None for `serve`, which keeps them itself."""
        return None if self._workspace is None else self._workspace.location

    def _wrote(self) -> None:
        """A write through this handle (a proposal step, a webhook added or removed): its caches key on its
        own writes too."""
        self._own_writes += 1

    @property
    def records_clients(self) -> bool:
        """True against `schema-explorer serve` (its explorer API has them); False for a plain broker and for the
        review gateway in front of one (`serve --upstream`, which says so)."""
        return self._records_clients

    @property
    def requests_sent(self) -> int:
        return self._client.sent

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        if getattr(self, "_workspace", None) is not None:
            assert self._workspace is not None
            self._workspace.close()
        self._client.close()

    def __getattr__(self, name: str) -> Any:
        """Only reached for a missing attribute: an embedded-only call is named as such, with what to do."""
        reason = _EMBEDDED_ONLY.get(name)
        if reason is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise AttributeError(f"RemoteRegistry has no {name}: {reason}")

    def __repr__(self) -> str:
        return f"RemoteRegistry({self._client.url!r})"

    # --- schemas: the server decides ----------------------------------------------------------------------

    def _send_register(self, topic: str, info: SchemaInfo) -> Registration:
        """POST /schema. `serve` records the caller its token names; a plain broker's workspace records the
        `user` of `register` (DirectWrites), or the proposal an apply is for.

        Pulsar answers a new version and a live duplicate alike (`{"version": N}`). `serve` says which in its
        STORED_HEADER; against a plain broker the latest version is read first, and the answer was stored when
        it is newer (an identical schema stored by someone else at that very moment also counts as stored)."""
        name = TopicName.parse(topic)
        info = checked_info(info)
        before = None if self._explorer is not None else self._latest_version(name)
        response = self._write("POST", f"{schemas_path(name.schema_id)}/schema", body=payload(info))
        if response.status_code < 400:
            body = self._client.json(response, f"registering a schema on {name}")
            version = _version_of(body, f"register on {name}")
            told = response.headers.get(STORED_HEADER)
            stored = told == "true" if told in ("true", "false") else before is None or version > before
            return Registration(version, stored, _judged_under(response.headers.get(JUDGED_HEADER)))
        self._explain_refusal(name, info, response)
        raise AssertionError("unreachable")  # pragma: no cover

    def _latest_version(self, name: TopicName) -> int | None:
        """The latest live version's number, None when the topic has no live schema."""
        try:
            return self.get(str(name)).version
        except SchemaNotFoundError:
            return None

    @bounded
    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        """POST /compatibility under the topic's effective strategy, explained locally. Pulsar's API cannot
        check under another strategy, so an explicit `strategy` is checked locally against the fetched history."""
        name = TopicName.parse(topic)
        info = checked_info(info)
        chosen = None if strategy is None else CompatibilityStrategy.parse(strategy)
        with self._client.snapshot():
            if chosen not in (None, S.UNDEFINED):
                self._state.require_namespace(name)
                return self._state.judge(self._state.live(name), to_schema_data(info), chosen)
            response = self._client.ask(f"{schemas_path(name.schema_id)}/compatibility", payload(info))
            what = f"checking a schema against {name}"
            if response.status_code == 422:
                self._local_data(info)  # the same message as the embedded registry
                raise_for(response, what, url=self._client.url)
            if response.status_code in (401, 403, 404):
                raise_for(response, what, url=self._client.url)
            if response.status_code < 400:
                body = self._client.json(response, what)
                server_strategy = (
                    wire_strategy(body.get("schemaCompatibilityStrategy")) if isinstance(body, dict) else S.UNDEFINED
                )
                used = server_strategy if server_strategy is not S.UNDEFINED else self._state.admin_strategy(name).value
                compatible = not isinstance(body, dict) or body.get("compatibility") is not False
                return self._agree(name, info, used, compatible, reason_of(response))
            # An incompatible candidate is an HTTP 500 (or 409) with the checker's message (§7.1).
            reason = reason_of(response)
            if "unexpected error occurred" in reason:
                raise_for(response, what, url=self._client.url)
            return self._agree(name, info, self._state.admin_strategy(name).value, False, reason)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        """GET /schema or /schema/{version} (§3.6)."""
        name = TopicName.parse(topic)
        wanted = None if version is None else version_number(version, negative=True)
        path = f"{schemas_path(name.schema_id)}/schema" + ("" if wanted is None else f"/{wanted}")
        response = self._client.get(path)
        if response.status_code == 404 and "namespace" not in reason_of(response).lower():
            if wanted is None:
                raise SchemaNotFoundError(f"Schema not found: topic {name} has no schema")
            raise SchemaNotFoundError(f"Schema not found: topic {name} has no live version {wanted}")
        raise_for(response, f"reading the schema of {name}", url=self._client.url)
        return from_schema_response(name.schema_id, self._client.json(response, f"reading the schema of {name}"))

    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        """POST /version: the first live version with identical bytes, or None (-1 on the wire)."""
        name = TopicName.parse(topic)
        info = checked_info(info)
        response = self._client.ask(f"{schemas_path(name.schema_id)}/version", payload(info))
        raise_for(response, f"looking up a schema version of {name}", url=self._client.url)
        version = _version_of(self._client.json(response, f"looking up a version of {name}"), f"version of {name}")
        return None if version < 0 else version

    def _send_delete(self, topic: str, force: bool) -> int | None:
        name = TopicName.parse(topic)
        response = self._write(
            "DELETE", f"{schemas_path(name.schema_id)}/schema", params={"force": "true" if force else "false"}
        )
        raise_for(response, f"deleting the schema of {name}", url=self._client.url)
        if force:
            return None
        body = self._client.json(response, f"deleting the schema of {name}")
        version = _version_of(body, f"delete on {name}")
        return None if version < 0 else version

    # --- policies: validated like the embedded facade, then sent (§7.2, §7.3) ------------------------------

    def _send_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None
    ) -> NamespacePolicy:
        """Over `serve`, one write of every changed field with `expected` compared in the same transaction, as
        embedded (server/_policy_writes.py). Over a broker, one admin call per changed field (Pulsar has no call
        for several at once, so this is not atomic) and `expected` is compared with the policy read just before
        the calls: Pulsar's admin API has no compare-and-set of policies, so a write landing between that read
        and the calls is not seen."""
        ns = NamespaceName.parse(namespace)
        if self._explorer is not None:  # serve: one write, compared atomically, as embedded
            return self._policy_write(NamespacePolicy, namespace_policy_path(ns), change, expected, str(ns))
        if expected is not None:
            require_expected(expected, self.namespace_policy(str(ns)), str(ns))

        def allow_in_force() -> bool:
            current = self.namespace_policy(str(ns)).allow_auto_update
            return self.broker.allow_auto_update if current is None else current

        for method, path, body, params in namespace_calls(ns, change, allow_in_force, self._client.url):
            response = self._write(method, path, body=body, params=params)
            if body is None and response.status_code == 400:
                raise PolicyError(
                    f"{self._client.url} refused to clear {path.rsplit('/', 1)[-1]} of {ns} (Pulsar clears it with a "
                    f"JSON null body): {reason_of(response)}; set a value instead"
                )
            raise_for(response, f"setting a schema policy of {ns}", url=self._client.url)
        return self.namespace_policy(str(ns))

    def _send_topic_policy(self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None) -> TopicPolicy:
        """§7.3: PUT/DELETE schemaCompatibilityStrategy, POST/DELETE schemaValidationEnforced. Over `serve` and
        over a broker as `set_namespace_policy` says (atomic over `serve`, read-then-write over a broker)."""
        name = policy_topic(topic, self.broker)
        if self._explorer is not None:  # serve: one write, compared atomically, as embedded
            return self._policy_write(TopicPolicy, topic_policy_path(name), change, expected, str(name))
        if expected is not None:
            require_expected(expected, self.topic_policy(str(name)), str(name))
        for method, path, body, params in topic_calls(name, change):
            response = self._write(method, path, body=body, params=params)
            if response.status_code == 405 and path.endswith("/schemaValidationEnforced"):
                raise PolicyError(
                    f"{self._client.url} cannot remove the schemaValidationEnforced policy of {name} (Pulsar's "
                    "admin API only sets it); set it to true or false instead"
                )
            raise_for(response, f"setting a topic policy of {name}", url=self._client.url)
        return self.topic_policy(str(name))

    # --- creation -----------------------------------------------------------------------------------------

    def _send_create(self, kind: str, name: str) -> bool:
        body: Any = None
        if kind == "tenant":  # allowed on every cluster the endpoint knows
            clusters: list[str] = []
            response = self._client.get(f"{ADMIN}/clusters")
            if response.status_code == 200:
                with contextlib.suppress(StorageError):
                    clusters = string_list(self._client.json(response, "listing clusters"))
            body = {"adminRoles": [], "allowedClusters": clusters}
            path = f"{ADMIN}/tenants/{name}"
        elif kind == "namespace":
            path = f"{ADMIN}/namespaces/{name}"
        else:
            path = topic_path(TopicName.parse(name))
        response = self._write("PUT", path, body=body)
        if response.status_code == 409:
            return False
        raise_for(response, f"creating {kind} {name}", url=self._client.url)
        return True

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        """The server's trail (`GET /explorer/v1/audit`, `schema-explorer serve` only): at most its newest
        10,000 entries per call; a plain broker's workspace's, of the writes made through the explorer."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number >= 1, got {limit!r}")
        if self._workspace is not None:
            return self._workspace.audit_trail(target, limit)
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
                f"({clip(response.text)!r})"
            ) from None

    # --- internals ----------------------------------------------------------------------------------------

    def _policy_write(
        self,
        kind: type[P],
        path: tuple[str, Mapping[str, str]],
        change: PolicyChange[P],
        expected: P | None,
        of: str,
    ) -> P:
        """PUT the fields `change` sets and `expected` to serve's schema-policy route; the policy it stored."""
        body = {"changes": to_json(change.as_mapping()), "expected": None if expected is None else to_json(expected)}
        response = self._write("PUT", path[0], body=body, params=path[1])
        assert self._explorer is not None
        return self._explorer.answer(kind, response, f"setting the schema policies of {of}")

    def _write(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """Every write goes here, so this handle's catalog cache (keyed on change_token) sees its own writes."""
        self._own_writes += 1
        response = self._client.write(method, path, body=body, params=params)
        if self._index is not None and response.status_code < 400:
            self._index.touched(path)  # a search sees this handle's own writes at once
        return response

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
                    live = self._state.live(name)
                    data = self._local_data(info)
                except RegistryError:
                    live, data = None, None
                if live is not None and data is not None:
                    self._state.duplicate(name, live, data)
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
            local = self._state.judge(self._state.live(name), self._local_data(info), strategy)
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
            live = self._state.live(name)
            strategy = strategy or self._state.admin_strategy(name).value
            local = self._state.judge(live, self._local_data(info), strategy)
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


def _version_of(body: Any, what: str) -> int:
    """`{"version": n}` or PostSchemaResponse's `{"version": {"version": n}}` (§7.1)."""
    value = body.get("version") if isinstance(body, dict) else body
    if isinstance(value, dict):
        value = value.get("version")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise StorageError(f"{what}: the server answered {clip(json.dumps(body))!r} without a version number")


def _same_line(reported: str, chosen: str) -> bool:
    """The server reports the line it answers as; a broker's version maps to its line."""
    try:
        return line_for_broker(reported).name == chosen
    except InvalidArgumentError:
        return False


def _judged_under(told: str | None) -> CompatibilityStrategy | None:
    """The strategy `serve`'s JUDGED_HEADER names; None when absent (nothing checked, or a plain broker) or not
    one of Pulsar's eight (a server this handle does not know: the handle claims nothing it was not told)."""
    return CompatibilityStrategy(told) if told is not None and told in CompatibilityStrategy.__members__ else None
