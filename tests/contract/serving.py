"""Helpers to run `schema-explorer serve` over a seeded registry file (used by the contract fixtures)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from registry import Registry, seed_sample_data

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def seeded(path: Path, *, keep_clients: bool = True) -> Path:
    reg = Registry.open(path)
    try:
        seed_sample_data(reg)
        if not keep_clients:
            for client in reg.clients():
                reg.disconnect(client.topic, name=client.name, role=client.role)
    finally:
        reg.close()
    return path


def serve_command(db: Path, port: int) -> list[str]:
    script = Path(sys.executable).with_name("schema-explorer")
    head = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
    return [*head, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
