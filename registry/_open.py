"""`registry.open(location)`: one way to open every kind of registry, as one handle type.

A location names an embedded registry (a file path or `sqlite:///path`, `memory:`, `postgresql://...`,
`package.module:factory`, or a scheme a package registers: _location.py) or a remote one (an http(s)
URL of a Pulsar admin API: a broker's web service or `schema-explorer serve`). Either way the caller holds a
`SchemaRegistry` and never needs to know which (_handle.py).
"""

from __future__ import annotations

import os

from ._errors import InvalidArgumentError, StorageError
from ._handle import SchemaRegistry
from ._location import remote_url
from ._model import BrokerConfig
from ._registry import Registry


def open(  # noqa: A001 - `registry.open`, as `io.open` and `sqlite3.connect` name theirs
    location: str | os.PathLike[str] | None = None,
    *,
    token: str | None = None,
    client_conf: str | os.PathLike[str] | None = None,
    context: str | None = None,
    pulsarctl_config: str | os.PathLike[str] | None = None,
    create: bool = False,
    read_only: bool = False,
    pulsar_version: str | None = None,
    broker: BrokerConfig | None = None,
    auto_create: bool = True,
    system_topics: bool = False,
    workspace: str | os.PathLike[str] | None = None,
) -> SchemaRegistry:
    """The registry `location` names, embedded or remote.

    - `token`: the bearer token of a remote admin API (refused for an embedded location).
    - `client_conf`: connect as pulsar-admin does with this client.conf (its webServiceUrl, auth plugin and TLS
      settings; `location`, when given, overrides webServiceUrl); `context`: a pulsarctl context's name (from
      ~/.config/pulsar/config, or `pulsarctl_config`: what a Spark executor is given, whose home may not be the
      driver's). registry/remote/_connection.py lists the auth plugins understood.
    - `create`: make an embedded registry where there is none; without it a missing one raises
      RegistryNotFoundError, because reading or checking against a registry made on the spot would answer from
      an empty history (fail closed). Never with `read_only`: what is only read is never created.
    - `read_only`: a handle that answers every read and refuses every write (`SchemaRegistry.read_only()`).
    - `pulsar_version`: the Pulsar line to answer as ("3.0", "4.0", "master"); None takes the one stored with
      an embedded registry, or the one a broker reports.
    - `broker`: the broker settings the rules read (defaults, or what a remote broker reports).
    - `system_topics`: a remote broker's listings and search index show its system topics too (`pulsar/system`,
      `__change_events`, transaction buffers); hidden otherwise, as Pulsar hides them. An embedded registry
      has no broker bookkeeping to hide: refused there.
    - `workspace`: for a plain broker, where the explorer keeps proposals, review rules, the audit trail of the
      writes made through it, and webhooks (a SQLite file, `memory:` or `postgresql://...`, made when missing;
      registry/remote/_workspace.py). Without it, a per-user file for the cluster's URL. Refused for an embedded
      registry and for `schema-explorer serve`, which keep all of this in their own storage.
    """
    if read_only and create:
        raise InvalidArgumentError("a read-only handle never creates a registry: pass create=False")
    handle: SchemaRegistry
    if pulsarctl_config is not None and context is None:
        raise InvalidArgumentError("pulsarctl_config only applies with context")
    if client_conf is not None or context is not None:
        from .remote._connection import from_client_conf, from_context
        from .remote._handle import RemoteRegistry

        if client_conf is not None and context is not None:
            raise InvalidArgumentError("pass client_conf or context, not both")
        if token is not None:
            raise InvalidArgumentError("the credentials come from the client.conf or context: pass no token")
        override = None if location is None else remote_url(os.fspath(location))
        if location is not None and override is None:
            raise InvalidArgumentError(f"with client_conf or context the location must be an http(s) URL: {location}")
        connection = (
            from_client_conf(client_conf, url=override)
            if client_conf is not None
            else from_context(context, config=pulsarctl_config, url=override)
        )
        handle = RemoteRegistry(
            connection.url,
            broker=broker,
            auto_create=auto_create,
            pulsar_version=pulsar_version,
            connection=connection,
            system_topics=system_topics,
            workspace=workspace,
        )
        return handle.read_only() if read_only else handle
    if location is None:
        raise InvalidArgumentError("name a registry: a location, client_conf or context")
    text = os.fspath(location)
    url = remote_url(text)
    if url is not None:
        from .remote._handle import RemoteRegistry  # httpx is only imported when a URL is opened

        handle = RemoteRegistry(
            url,
            token=token,
            broker=broker,
            auto_create=auto_create,
            pulsar_version=pulsar_version,
            system_topics=system_topics,
            workspace=workspace,
        )
    else:
        if token is not None:
            raise StorageError("a token only applies to remote registries (http:// or https:// URLs)")
        if system_topics:
            raise InvalidArgumentError("system_topics only applies to a remote broker (http:// or https:// URLs)")
        if workspace is not None:
            raise InvalidArgumentError(
                "a workspace only applies to a plain broker (http:// or https:// URLs): an embedded registry keeps "
                "proposals, rules and the audit trail in its own storage"
            )
        handle = Registry.open(
            text, broker=broker, auto_create=auto_create, create=create, pulsar_version=pulsar_version
        )
    return handle.read_only() if read_only else handle
