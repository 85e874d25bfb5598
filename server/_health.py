"""Liveness and readiness: `GET /admin/v2/brokers/health` as Pulsar answers it, and `GET /ready`.

- **Health.** Pulsar's `BrokersBase.healthCheck` answers 200 with the text `ok` (`pulsar-admin brokers
  healthcheck` reads it). A broker earns it by writing and reading a message on a heartbeat topic; this server
  moves no messages, so answering at all (the event loop is alive and reaches the app) is the whole check.
  A deliberate difference: Pulsar asks for a super-user token there; here no token is needed, since probes
  (a Kubernetes liveness probe, a load balancer) seldom hold one and the answer tells nothing but "alive".
- **Readiness.** `GET /ready` asks the storage to answer within `READY_TIMEOUT_S`: a SQLite file that exists
  and can be read (its change token read through the registry, which is a real read of the file), a PostgreSQL
  database that answers (the same read is one round trip), and says 200 `{"status": "ready", ...}`, or 503
  with the reason. For the review gateway (`serve --upstream`) the storage is the upstream broker: ready when
  it answers an admin call (GET /admin/v2/tenants, with the gateway's credential) in time; the workspace is
  read on every proposal request and fails those loudly. The reason never names a file, a host or a driver's
  words (the probe needs no token, so anyone who can reach the port reads it): those go to the log under the
  request id the answer carries.

Both are answered in front of the whole stack (server/_observe.py), so they are exempt from the throttle
(an address locked out for failed tokens still gets its probes answered), from authentication and from the
limits, and cost a few microseconds; the Host check against DNS rebinding (server/_gate.py) still applies to
a server without tokens. One readiness probe at a time touches the storage: concurrent probes wait for the
same answer, so a hung database cannot pile up threads however often the probes come.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import dataclass

from registry import SchemaRegistry
from registry._location import LocationKind, locate, parse_location

from ._request_id import current_request_id, new_request_id

HEALTH_PATH = "/admin/v2/brokers/health"
READY_PATH = "/ready"
READY_TIMEOUT_S = 2.0

log = logging.getLogger("server")


@dataclass(frozen=True, slots=True)
class Readiness:
    """The probe's verdict: `reason` is empty when the storage answered."""

    storage: str  # sqlite, postgresql, memory, factory, plugin, or remote (the review gateway's upstream)
    reason: str = ""

    @property
    def ready(self) -> bool:
        return not self.reason

    def body(self) -> bytes:
        if self.ready:
            return json.dumps({"status": "ready", "storage": self.storage}).encode()
        return json.dumps({"reason": self.reason}).encode()


def storage_kind(registry: SchemaRegistry) -> str:
    """The kind of storage behind `registry` (a bounded label: sqlite, postgresql, memory, factory, plugin,
    remote)."""
    try:
        return locate(registry.location).kind
    except Exception:  # noqa: BLE001 - a location the parser does not know is still some storage
        return "other"


class ReadyProbe:
    """Readiness of one registry's storage, asked at most once at a time (see the module docstring)."""

    def __init__(self, registry: SchemaRegistry, timeout_s: float = READY_TIMEOUT_S) -> None:
        self._registry = registry
        self._timeout_s = timeout_s
        self._kind = storage_kind(registry)
        self._pending: asyncio.Future[None] | None = None

    @property
    def kind(self) -> str:
        return self._kind

    async def check(self) -> Readiness:
        if self._pending is None or self._pending.done():
            self._pending = asyncio.ensure_future(asyncio.to_thread(self._probe))
        try:
            await asyncio.wait_for(asyncio.shield(self._pending), self._timeout_s)
        except TimeoutError:
            return Readiness(self._kind, f"the registry's storage did not answer within {self._timeout_s:g} s")
        except Exception as exc:  # noqa: BLE001 - any failure of the storage means not ready; the log says which
            request_id = current_request_id() or new_request_id()
            log.error("request %s: readiness probe: the %s storage failed", request_id, self._kind, exc_info=exc)
            return Readiness(
                self._kind,
                f"the registry's {self._kind} storage failed to answer (request id {request_id}; the server's log "
                "has the details)",
            )
        return Readiness(self._kind)

    def _probe(self) -> None:
        """A real read of the storage: raises when it cannot answer."""
        if self._kind == LocationKind.REMOTE:  # the gateway's upstream: change_token() would not ask it
            self._registry.tenants()
            return
        if self._kind == LocationKind.SQLITE:
            path = parse_location(self._registry.location).target
            if not os.access(path, os.R_OK):
                raise FileNotFoundError(f"the registry file {path} is missing or not readable")
        self._registry.change_token()
