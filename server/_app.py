"""`create_app(registry)`: the REST shell over one registry, Pulsar's admin v2 API plus the explorer API."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from registry import SchemaRegistry

from . import _admin, _audit_routes, _explorer, _policy_writes, _proposals, _webhooks
from ._auth import Tokens
from ._errors import install_error_handlers
from ._fast_reads import FastReads
from ._gate import Gate
from ._health import ReadyProbe
from ._limits import ServerLimits, install_limits
from ._metrics import CountingThrottle
from ._observe import Observed, Observer
from ._proposal_tally import ProposalTally
from ._storage_timing import StorageTimer
from ._writer import GroupWriter

DESCRIPTION = """
Pulsar Schema Explorer's REST backend over an embedded, Pulsar-faithful schema registry, or, as the review
gateway (`serve --upstream`), in front of a plain Pulsar broker.

* `/admin/v2/...`: Apache Pulsar's admin v2 schema, policy, tenant, namespace and topic endpoints, with
  Pulsar's paths, JSON field names and status codes, so `pulsar-admin` and Pulsar's REST clients work.
* `/explorer/v1/...`: what Pulsar lacks: topic search, diffs, what-if under every strategy, policy impact
  and upgrade plans.

Errors carry `{"reason": "..."}`. When the server has tokens, send `Authorization: Bearer <token>`; each
operation's `x-required-role` says which role it needs (viewer < producer < admin). Without tokens the
server answers only requests addressed to a loopback name (or one allowed with `serve --allow-host`).
"""


# The routes are built once and shared by every app: they find their registry in `request.app.state`, and
# FastAPI prepares a route's request and response models on its first request (about 0.1 s for these 50
# routes), which `include_router` would make every new app pay again.
_ROUTES = (
    *_admin.router.routes,
    *_explorer.router.routes,
    *_policy_writes.router.routes,
    *_audit_routes.router.routes,
    *_proposals.router.routes,
    *_webhooks.router.routes,
)
_ADMIN_ROUTES = tuple(_admin.router.routes)


def create_app(
    registry: SchemaRegistry,
    *,
    tokens: Tokens | None = None,
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    limits: ServerLimits | None = None,
    admin_only: bool = False,
    metrics_public: bool = False,
    storage_timer: StorageTimer | None = None,
) -> FastAPI:
    """An app serving `registry`. Without `tokens` every request is allowed, but only when addressed to a
    loopback name or one of `allowed_hosts` (server/_gate.py); CORS is closed unless `cors_origins` lists the
    origins allowed to call from a browser. `limits` default to the environment's (server/_limits.py).
    `admin_only` serves Pulsar's admin v2 API alone, as a plain broker does (no explorer API, no audit
    trail), so tests and benchmarks can point a remote registry at what a real cluster offers. `metrics_public`
    lets any address scrape /metrics without a token (server/_metrics.py). `storage_timer`, the one the registry
    was opened with (`Registry.open(..., wrap=timer.wrap)`), sends each storage call's time to /metrics.

    `registry` is any handle: an embedded `Registry` (`serve`), or a remote one over a plain broker with a
    workspace (the review gateway, `serve --upstream`), whose admin v2 routes then reach the broker through the
    handle after this app's role check, gated and audited by the workspace (registry/remote/_direct.py)."""
    app = FastAPI(
        title="Pulsar Schema Explorer",
        version="1",
        description=DESCRIPTION,
        openapi_tags=[
            {"name": "schemas", "description": "Pulsar admin v2 schema endpoints (§7.1)"},
            {"name": "namespace policies", "description": "Pulsar namespace schema policies (§7.2)"},
            {"name": "topic policies", "description": "Pulsar topic schema policies (§7.3)"},
            {"name": "explorer", "description": "Search, diff, what-if, policy impact, upgrade plans"},
            {"name": "policies", "description": "Schema policy changes in one write, with compare-and-set"},
            {"name": "proposals", "description": "Schema change proposals: propose, review, approve, apply"},
            {"name": "webhooks", "description": "Notifications: webhooks told of proposals, policies, schemas"},
        ],
    )
    app.state.registry = registry
    # Every write of this app goes through one writer thread, in arrival order, and the writes that queue up while
    # it commits commit together (server/_writer.py: group commit; server/_deps.py `written`). Reads (on the
    # event loop or the threadpool) never queue behind writes.
    app.state.writer = GroupWriter()
    app.state.admin_only = admin_only
    app.state.tokens = tokens
    app.state.gate = Gate(tokens, allowed_hosts)
    install_error_handlers(app)
    app.router.routes.extend(_ADMIN_ROUTES if admin_only else _ROUTES)
    install_limits(app, limits)  # body, header and time limits, security headers; before CORS so CORS wraps it
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(FastReads)  # the hot reads skip limits, CORS and routing
    app.state.ready_probe = ReadyProbe(registry)
    app.state.metrics_public = metrics_public
    app.state.proposal_tally = ProposalTally(registry)
    observer = Observer(app, pulsar_otel=str(registry.pulsar_version) != "3.0")  # PIP-264 came with 3.3
    app.state.observer, app.state.metrics, app.state.pulsar_stats = observer, observer.metrics, observer.pulsar
    app.state.gate.throttle = CountingThrottle(observer.metrics)
    backend = app.state.ready_probe.kind
    app.state.writer.on_batch = lambda seconds: observer.metrics.storage_operation("batch", backend, seconds)
    if storage_timer is not None:
        storage_timer.observe = observer.metrics.storage_operation
    app.add_middleware(Observed)  # last, so outermost: request ids, probes, metrics and the access log
    return app
