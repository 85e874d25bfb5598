"""Where the default embedded registry lives: a per-user data file (platformdirs), overridable by env; and the
per-user data folder itself."""

from __future__ import annotations

import os
import re
from pathlib import Path

from platformdirs import user_data_dir

from ._errors import StorageError

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


_URL_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*)://")


def remote_url(location: str) -> str | None:
    """The admin endpoint URL `location` names (http or https, scheme in any case, surrounding whitespace
    dropped), or None when it names a storage (a file, or a storage scheme: storage/_locations.py). Any other
    `scheme://` is refused rather than taken for a file name: `ftp://x` or a mistyped `htp://host` must never
    become an empty registry file called `ftp:/x`."""
    match = _URL_SCHEME.match(location)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in ("http", "https"):
        from .storage._locations import is_storage_scheme

        if is_storage_scheme(scheme):
            return None  # sqlite://, postgresql:// or a registered storage: a storage location (Registry.open)
        raise StorageError(
            f"unsupported registry location {location.strip()!r}: only http:// and https:// URLs name a remote "
            "registry (storages: a path, sqlite:///path, postgresql://..., memory:, package.module:factory, or a "
            "scheme registered as a pulsar_schema_explorer.storage entry point)"
        )
    return f"{scheme}{location.strip()[len(match.group(1)) :]}"  # the rest is checked by the remote registry
