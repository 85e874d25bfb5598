"""Where the default embedded registry lives: a per-user data file (platformdirs), overridable by env; and the
per-user data folder itself."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

ENV_VAR = "SCHEMA_EXPLORER_DB"


def data_dir() -> Path:
    """`<user data dir>/pulsar-schema-explorer`: the default registry file and a broker's search index cache."""
    return Path(user_data_dir("pulsar-schema-explorer", appauthor=False))


def default_db_path() -> Path:
    """`$SCHEMA_EXPLORER_DB`, else `<user data dir>/pulsar-schema-explorer/registry.db`."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    return data_dir() / "registry.db"
