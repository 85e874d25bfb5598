"""`check`, `diff`, `get`, `upload`, `delete`, `policy get|set`: pulsar-admin's schema and policy verbs."""

from __future__ import annotations

import argparse
from typing import Any


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Not built yet: its issue adds the subcommands here."""
