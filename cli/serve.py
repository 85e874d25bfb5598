"""`serve`: the REST backend (server/) under uvicorn; `token new`: a strong token for its tokens file.

`serve --upstream URL_OR_CLIENT_CONF --workspace LOCATION` is the review gateway: the same server over a plain
Pulsar broker instead of a registry file. People authenticate with the gateway's tokens; the explorer API is
answered from the broker plus the workspace (proposals, rules, the audit trail, webhooks); the admin v2 routes
reach the broker with the gateway's own credential (SCHEMA_EXPLORER_UPSTREAM_TOKEN, or the client.conf's)
after the gateway's role check, each write audited in the workspace under the person's name.

Authentication: `--tokens FILE`, else the environment variable SCHEMA_EXPLORER_TOKENS, holds one JSON object
naming each token with its role (server/_auth.py). Without tokens every request is allowed, so the server
then binds to loopback only unless `--insecure` says otherwise, and answers only requests addressed to a
loopback name or one given with `--allow-host`.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import (
    PROG,
    UserError,
    add_source_arguments,
    check_url,
    close_registry,
    port_number,
    pulsar_version,
    resolve_db,
    shown,
)

if TYPE_CHECKING:
    from registry import SchemaRegistry
    from server import ServerLimits, Tokens

TOKENS_HELP = """\
authentication:
  --tokens FILE (or the environment variable SCHEMA_EXPLORER_TOKENS) holds one UTF-8 JSON object that names
  each bearer token and gives its role; the audit trail records the name:

      {"ops": {"role": "admin", "token": "kV3u5yQ0bq1nK8t2ZJmC7yqkqVt1xv9mHj0d8Wl2c0E"},
       "ci-gate": {"role": "producer", "token": "9f2c4e1b7a0d41aa07c3e5f2d00b5e6c"}}

  A token is printable ASCII without spaces and holds at least 128 bits (e.g. 32 hex or 22 base64
  characters): `schema-explorer token new` prints a 256-bit one. The first format, {"<token>": "<role>"},
  still loads; its tokens are named by position ("token #2").

  viewer: every read (schemas, policies, listings, explorer search, diffs, plans)
  producer: viewer + register and check schemas (POST .../schema, .../compatibility, explorer what-if)
  admin: producer + delete schemas, set policies, create tenants, namespaces and topics

  Clients send "Authorization: Bearer <token>". A missing or unknown token gets 401 (before the request's
  body is read); a role too low gets Pulsar's answer for that check (401 or 403). After 10 failed attempts
  an address may try once every 6 s (429 with Retry-After). Tokens are never logged.
  Without tokens every request is allowed: the server then refuses to bind a non-loopback address unless
  --insecure is given, and answers only Host names localhost, 127.0.0.1 and [::1] (others: --allow-host).

behind a proxy:
  The client's address (what the throttle counts, the access log shows and /metrics trusts without a token) is
  the connection's, unless --forwarded-allow-ips names the proxy: then X-Forwarded-For and X-Forwarded-Proto
  sent by that proxy give the client's. Nothing is trusted by default, not even loopback: a proxy on the same
  host needs --forwarded-allow-ips 127.0.0.1.

limits (environment variables, see docs/guide/operating.md "Reliability"):
  SCHEMA_EXPLORER_MAX_BODY_BYTES, _MAX_HEADER_BYTES, _REQUEST_TIMEOUT_S, _HEADER_TIMEOUT_S, _BODY_TIMEOUT_S,
  _MAX_BUFFERED_BYTES, _MAX_CONNECTIONS

review gateway (a plain broker behind the server):
  --upstream names the broker's admin URL (its credential from $SCHEMA_EXPLORER_UPSTREAM_TOKEN) or a Pulsar
  client.conf (webServiceUrl, authPlugin, authParams, TLS); --context NAME a pulsarctl context instead.
  --workspace (required) keeps proposals, review rules, the audit trail and webhooks (a file or
  postgresql://...; two gateways on one PostgreSQL workspace share them). People use the gateway's tokens;
  admin v2 writes reach the broker with the gateway's credential after the gateway's role check, refused where
  a namespace requires proposals, and audited under the person's name. The credential is never printed.

examples:
  schema-explorer serve --db registry.db --port 8080
  SCHEMA_EXPLORER_UPSTREAM_TOKEN=$JWT schema-explorer serve --upstream https://pulsar.example:8443 \
      --workspace review.db --tokens tokens.json --host 0.0.0.0        # the review gateway
  schema-explorer token new        # then put it in tokens.json with a name and a role
  schema-explorer serve --host 0.0.0.0 --tokens tokens.json
  schema-explorer serve --host 0.0.0.0 --tokens tokens.json --forwarded-allow-ips 10.0.0.7   # behind a proxy
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8080/admin/v2/tenants
"""

UPSTREAM_TOKEN_ENV = "SCHEMA_EXPLORER_UPSTREAM_TOKEN"  # the review gateway's own credential for a URL upstream


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve Pulsar's admin v2 API and the explorer API over HTTP",
        description="Serve the registry over HTTP: Pulsar's admin v2 schema API under /admin/v2, the explorer "
        "API under /explorer/v1, OpenAPI at /openapi.json and interactive docs at /docs.",
        epilog=TOKENS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_source_arguments(serve, remote=False)
    upstream = serve.add_mutually_exclusive_group()
    upstream.add_argument(
        "--upstream",
        metavar="URL_OR_CLIENT_CONF",
        help=f"be the review gateway of a plain broker: its admin URL (credential: ${UPSTREAM_TOKEN_ENV}) or its "
        "client.conf",
    )
    upstream.add_argument("--context", metavar="NAME", help="the review gateway's broker as a pulsarctl context")
    serve.add_argument(
        "--workspace",
        metavar="LOCATION",
        help="with --upstream (required there): where proposals, review rules, the audit trail and webhooks are kept "
        "(a file, memory: or postgresql://...)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8080, help="port to listen on (default: 8080)")
    serve.add_argument("--tokens", metavar="FILE", help="bearer tokens file (default: $SCHEMA_EXPLORER_TOKENS)")
    serve.add_argument("--insecure", action="store_true", help="allow binding a non-loopback address without tokens")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="without tokens, also answer requests addressed to this host name (repeatable; default: loopback "
        "names only, against DNS rebinding)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow browser calls from this origin (repeatable; default: none)",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        action="append",
        default=[],
        metavar="ADDRESSES",
        help="trust X-Forwarded-For and X-Forwarded-Proto from these proxies: IP addresses or networks, "
        "comma-separated, repeatable (default: none, not even loopback)",
    )
    serve.add_argument("--no-access-log", action="store_true", help="do not log each request")
    serve.add_argument(
        "--admin-only",
        action="store_true",
        help="serve only Pulsar's admin v2 API, as a plain broker does (no explorer API or audit trail): to try "
        "what the explorer does against a real cluster",
    )
    serve.add_argument(
        "--metrics-public",
        action="store_true",
        help="let any address scrape /metrics without a token (default: loopback without, others with a token)",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text (default): readable lines; json: one JSON object per line (time, level, request id, route, "
        "status, duration, caller)",
    )
    serve.set_defaults(handler=run_serve)

    token = commands.add_parser(
        "token", help="make a bearer token for `serve --tokens`", description="Bearer tokens for `serve --tokens`."
    )
    actions = token.add_subparsers(dest="action", metavar="ACTION", required=True)
    new = actions.add_parser(
        "new",
        help="print a new 256-bit token",
        description="Print a new 256-bit token (base64url). With --name and --role, print it as an entry of "
        "the tokens file instead.",
    )
    new.add_argument("--name", help="the token's name in the tokens file (recorded in the audit trail)")
    new.add_argument("--role", choices=("viewer", "producer", "admin"), help="the token's role")
    new.set_defaults(handler=run_token_new)


def run_token_new(args: argparse.Namespace) -> int:
    import json

    from registry._identity import name_clash
    from server import new_token

    if (args.name is None) != (args.role is None):
        raise UserError("give both --name and --role (or neither)")
    reserved = None if args.name is None else name_clash([args.name])
    if reserved is not None:  # serve would refuse the entry at start
        raise UserError(f"--name: {reserved}")
    token = new_token()
    if args.name is None:
        print(token)
    else:
        print(json.dumps({args.name: {"role": args.role, "token": token}}))
    return 0


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    from registry import Registry, seed_sample_data
    from registry._location import parse_location
    from server import (
        ServerLimits,
        StorageTimer,
        TokenError,
        create_app,
        load_tokens,
        startup_line,
        trusted_proxies,
    )

    try:
        tokens = load_tokens(args.tokens)
        limits = ServerLimits.from_env()
        proxies = trusted_proxies(args.forwarded_allow_ips)
    except (TokenError, ValueError) as exc:
        raise UserError(str(exc)) from None
    if tokens is None and not is_loopback(args.host) and not args.insecure:
        raise UserError(
            f"refusing to serve on {args.host} without tokens: anyone who reaches it could change the registry. "
            "Give --tokens FILE (or $SCHEMA_EXPLORER_TOKENS), bind 127.0.0.1, or add --insecure"
        )
    gateway = args.upstream is not None or args.context is not None
    if gateway or args.workspace is not None:
        return run_gateway(args, tokens, limits, proxies)
    path = resolve_db(args.db)
    # Strict: unknown tenants and namespaces answer Pulsar's 404s instead of being created.
    if isinstance(path, Path) and not path.exists():
        print(startup_line(f"{PROG}: created new registry {path}", args.log_format), file=sys.stderr, flush=True)
    timer = StorageTimer(parse_location(str(path)).kind)  # every storage call timed for /metrics
    version = pulsar_version(args)
    registry = Registry.open(str(path), auto_create=False, create=True, pulsar_version=version, wrap=timer.wrap)
    try:
        if args.db is None and not registry.tenants():
            print(f"Seeded empty registry {path}: {seed_sample_data(registry)}", flush=True)
        app = create_app(
            registry,
            tokens=tokens,
            cors_origins=args.cors_origin,
            allowed_hosts=args.allow_host,
            limits=limits,
            admin_only=args.admin_only,
            metrics_public=args.metrics_public,
            storage_timer=timer,
        )
        only = "; admin v2 API only" if args.admin_only else ""
        announce_and_serve(args, app, f"registry: {shown(path)}; {_auth(tokens, proxies, only)}", proxies)
    finally:
        close_registry(registry)
    return 0


def open_upstream(args: argparse.Namespace) -> SchemaRegistry:
    """The review gateway's registry: the plain broker `--upstream` (a URL or a client.conf) or `--context`
    names, with the workspace `--workspace` names. Refused clearly: no workspace, `--db` or `--admin-only`
    beside it, a credential in both the environment and a client.conf, an upstream that is `serve` itself."""
    import os
    from urllib.parse import urlsplit

    import registry
    from registry import RegistryError
    from registry._location import names_remote

    given = "--upstream" if args.upstream is not None else "--context"
    if args.upstream is None and args.context is None:
        raise UserError("--workspace only applies to the review gateway (--upstream or --context)")
    if args.workspace is None or not args.workspace.strip():
        raise UserError(
            f"{given} needs --workspace LOCATION: where the gateway keeps proposals, review rules, the audit trail "
            "and webhooks (a file or postgresql://...)"
        )
    if args.db is not None:
        raise UserError(f"--db and {given} are two registries: serve a registry file, or be a broker's gateway")
    if args.admin_only:
        raise UserError(f"--admin-only and {given}: the review gateway serves the explorer API as well")
    token = os.environ.get(UPSTREAM_TOKEN_ENV, "").strip() or None
    version = pulsar_version(args)
    try:
        if args.upstream is not None and names_remote(args.upstream):
            if urlsplit(args.upstream.strip()).username is not None:  # never echoed: it may hold a password
                raise UserError(
                    f"--upstream: a URL with a user name or password in it is refused (it would be printed); put the "
                    f"credential in ${UPSTREAM_TOKEN_ENV} or a client.conf"
                )
            return registry.open(
                check_url(args.upstream), token=token, pulsar_version=version, workspace=args.workspace
            )
        if token is not None:
            raise UserError(
                f"${UPSTREAM_TOKEN_ENV} is set, but {given} names a client.conf or context, which carries its own "
                "credential: unset one"
            )
        if args.upstream is not None:
            if not Path(args.upstream).expanduser().is_file():
                raise UserError(f"--upstream {args.upstream}: neither an http(s) URL nor a client.conf file")
            return registry.open(client_conf=args.upstream, pulsar_version=version, workspace=args.workspace)
        return registry.open(context=args.context, pulsar_version=version, workspace=args.workspace)
    except RegistryError as exc:
        raise UserError(f"{given}: {exc}") from None


def run_gateway(args: argparse.Namespace, tokens: Tokens | None, limits: ServerLimits, proxies: tuple[str, ...]) -> int:
    """`serve --upstream`: the server over a remote registry with a workspace (module docstring)."""
    from server import create_app

    registry = open_upstream(args)
    try:
        index = registry.broker_index
        if index is not None:  # read the broker's topics now: the first search waits for a complete index
            index.refresh()
        app = create_app(
            registry,
            tokens=tokens,
            cors_origins=args.cors_origin,
            allowed_hosts=args.allow_host,
            limits=limits,
            metrics_public=args.metrics_public,
        )
        where = f"review gateway of {registry.location}, workspace {registry.workspace}"
        announce_and_serve(args, app, f"{where}; {_auth(tokens, proxies)}", proxies)
    finally:
        close_registry(registry)
    return 0


def _auth(tokens: Tokens | None, proxies: tuple[str, ...], scope: str = "") -> str:
    """How people are told apart, and `scope` (what is served), for the startup line (never a token)."""
    auth = f"{len(tokens)} token(s)" if tokens else "no authentication"
    return auth + scope + (f"; forwarded headers trusted from {', '.join(proxies)}" if proxies else "")


def announce_and_serve(args: argparse.Namespace, app: Any, what: str, proxies: tuple[str, ...]) -> None:
    """The one startup line on stderr (what is served, how people are told apart), then serve until stopped:
    `serve` and the review gateway alike."""
    from server import serve, startup_line

    print(
        startup_line(f"{PROG} serve: http://{args.host}:{args.port} ({what}); docs at /docs", args.log_format),
        file=sys.stderr,
        flush=True,
    )
    serve(
        app,
        host=args.host,
        port=args.port,
        access_log=not args.no_access_log,
        log_format=args.log_format,
        forwarded_allow_ips=proxies,
    )
