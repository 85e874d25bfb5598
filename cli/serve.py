"""`serve`: the REST backend (server/) under uvicorn.

Authentication: `--tokens FILE`, else the environment variable SCHEMA_EXPLORER_TOKENS, holds one JSON object
mapping each bearer token to a role, `{"<token>": "viewer" | "producer" | "admin"}`. Without tokens every
request is allowed, so the server then binds to loopback only unless `--insecure` says otherwise.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import Any

from ._common import PROG, UserError, add_source_arguments, close_registry, port_number, resolve_db_path

TOKENS_HELP = """\
authentication:
  --tokens FILE (or the environment variable SCHEMA_EXPLORER_TOKENS) holds one JSON object that maps each
  bearer token (8+ printable characters, no spaces) to a role:

      {"9f2c4e1b7a0d": "admin", "41aa07c3e5f2": "producer", "d00b5e6c9a18": "viewer"}

  viewer: every read (schemas, policies, listings, explorer search, diffs, plans)
  producer: viewer + register and check schemas (POST .../schema, .../compatibility, explorer what-if)
  admin: producer + delete schemas, set policies, create tenants, namespaces and topics

  Clients send "Authorization: Bearer <token>". A missing or unknown token gets 401; a role too low gets
  Pulsar's answer for that check (401 or 403). Tokens are never logged.
  Without tokens every request is allowed: the server then refuses to bind a non-loopback address unless
  --insecure is given.

examples:
  schema-explorer serve --db registry.db --port 8080
  SCHEMA_EXPLORER_TOKENS='{"9f2c4e1b7a0d": "admin"}' schema-explorer serve --host 0.0.0.0
  curl -H 'Authorization: Bearer 9f2c4e1b7a0d' http://127.0.0.1:8080/admin/v2/tenants
"""


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
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8080, help="port to listen on (default: 8080)")
    serve.add_argument("--tokens", metavar="FILE", help="bearer tokens file (default: $SCHEMA_EXPLORER_TOKENS)")
    serve.add_argument("--insecure", action="store_true", help="allow binding a non-loopback address without tokens")
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow browser calls from this origin (repeatable; default: none)",
    )
    serve.add_argument("--no-access-log", action="store_true", help="do not log each request")
    serve.set_defaults(handler=run_serve)


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from registry import Registry, seed_sample_data
    from server import create_app, load_tokens
    from server._auth import TokenError

    try:
        tokens = load_tokens(args.tokens)
    except TokenError as exc:
        raise UserError(str(exc)) from None
    if tokens is None and not is_loopback(args.host) and not args.insecure:
        raise UserError(
            f"refusing to serve on {args.host} without tokens: anyone who reaches it could change the registry. "
            "Give --tokens FILE (or $SCHEMA_EXPLORER_TOKENS), bind 127.0.0.1, or add --insecure"
        )
    path = resolve_db_path(args.db)
    # Strict: unknown tenants and namespaces answer Pulsar's 404s instead of being created.
    if not path.exists():
        print(f"{PROG}: created new registry {path}", file=sys.stderr, flush=True)
    registry = Registry.open(str(path), auto_create=False, create=True)
    try:
        if args.db is None and not registry.tenants():
            print(f"Seeded empty registry {path}: {seed_sample_data(registry)}", flush=True)
        app = create_app(registry, tokens=tokens, cors_origins=args.cors_origin)
        auth = f"{len(tokens)} token(s)" if tokens else "no authentication"
        print(
            f"{PROG} serve: http://{args.host}:{args.port} (registry: {path}; {auth}); docs at /docs",
            file=sys.stderr,
            flush=True,
        )
        uvicorn.run(app, host=args.host, port=args.port, access_log=not args.no_access_log, log_level="info")
    finally:
        close_registry(registry)
    return 0
