"""`serve` (server.serve, the function `schema-explorer serve` runs) over a registry with one planted bug, for
tests/server/test_unhandled_errors.py: `python planted_bug_serve.py DB PORT`. Listing tenants raises an
exception no layer answers, as a bug would; everything else is the registry as `serve` opens it."""

from __future__ import annotations

import sys

from registry import Registry
from server import create_app, serve

PLANTED = "a planted bug"


def _planted() -> list[str]:
    raise RuntimeError(PLANTED)


def main(db: str, port: str) -> None:
    registry = Registry.open(db, auto_create=False)
    registry.tenants = _planted  # type: ignore[method-assign]
    serve(create_app(registry), host="127.0.0.1", port=int(port), log_format="json")


if __name__ == "__main__":
    main(*sys.argv[1:])
