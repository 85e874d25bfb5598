"""Everything the app shows, one call away in Jupyter: open a registry, tables as DataFrames, the app's charts.

    from registry.views import notebook as nb
    reg = nb.open_registry()                     # $SCHEMA_EXPLORER_DB, else the per-user file (seeded if empty)
    nb.topics(reg, text="order")                 # DataFrame of every matching topic
    nb.history(reg, topic)                       # displays as HTML; .frame() and .chart() for the rest
    reg.what_if(topic, info)                     # core values display as HTML in Jupyter
    scratch = nb.scratch_copy(reg)               # toggle policies here; the original is untouched
    nb.read_audit("audit-out")                   # the Spark audit's Parquet tables as DataFrames

The charts are `registry.views.charts`' and the tables `registry.views.tables`', re-exported here: the same ones the app
draws. Not imported by `registry/__init__.py`: the core must import without pandas or altair.

Importing this module switches altair to the "schema-explorer" renderer (`registry.views.charts.offline_renderer`):
each chart output carries its Vega-Lite spec, which JupyterLab and VS Code draw with their bundled Vega, and
the same chart as a static SVG drawn here (vl-convert, no browser, no network), which every other viewer of
an executed notebook shows: classic Notebook offline, nbviewer, GitHub, exports. altair's own default loads
Vega from a CDN and shows nothing offline. `alt.renderers.enable("default")` goes back to it.
"""

from __future__ import annotations

import io
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import altair as alt
import pandas as pd

from registry import (
    CompatibilityStrategy,
    Registry,
    SchemaRegistry,
    SchemaType,
    SchemaVersion,
    StorageError,
    TopicQuery,
    TopicSummary,
    export_snapshot,
    import_snapshot,
    seed_sample_data,
)
from registry import open as open_handle
from registry._location import remote_url
from registry._paths import default_db_path

from .charts import OFFLINE_RENDERER, compatibility_heatmap, strategy_matrix_chart, version_timeline
from .html import history_html
from .tables import (
    advisories_frame,
    changes_frame,
    clients_frame,
    compatibility_matrix,
    history_frame,
    policy_impact_frame,
    problems_frame,
    strategy_frame,
    topics_frame,
    upgrade_plan_frame,
)

alt.renderers.enable(OFFLINE_RENDERER)

__all__ = [
    "AUDIT_ENV",
    "AUDIT_TABLES",
    "History",
    "advisories_frame",
    "audit_command",
    "changes_frame",
    "clients_frame",
    "compatibility_heatmap",
    "compatibility_matrix",
    "find_audit_dir",
    "history",
    "history_frame",
    "open_registry",
    "policy_impact_frame",
    "problems_frame",
    "read_audit",
    "sample_registry",
    "scratch_copy",
    "strategy_frame",
    "strategy_matrix_chart",
    "summary",
    "topics",
    "topics_frame",
    "upgrade_plan_frame",
    "version_timeline",
]

# Where the notebooks look for the Spark audit's output when no folder is given.
AUDIT_ENV = "SCHEMA_EXPLORER_AUDIT"
# The Parquet tables the audit jobs write under their --out folder (pipeline/compat_matrix.py, jobs.py).
AUDIT_TABLES = (
    "compat_matrix",
    "compat_topics",
    "policy_impact",
    "policy_impact_clients",
    "data_versions",
    "data_failures",
    "data_field_stats",
    "data_enum_counts",
)


def open_registry(target: str | os.PathLike[str] | None = None, *, seed_if_empty: bool = True) -> SchemaRegistry:
    """A registry file or an admin URL (http://…); None: `$SCHEMA_EXPLORER_DB`, else the per-user file.

    A new or empty embedded file is seeded from sample_data/ (as the CLI and the app do on first use), so a
    fresh machine has something to explore; with `seed_if_empty=False` nothing is written, and a file that does
    not exist raises RegistryNotFoundError instead of being made empty.
    """
    text = os.fspath(target) if target is not None else str(default_db_path())
    if remote_url(text) is not None:
        return open_handle(text, token=os.environ.get("SCHEMA_EXPLORER_TOKEN") or None)
    path = Path(text).expanduser()
    if seed_if_empty:
        path.parent.mkdir(parents=True, exist_ok=True)
    registry = Registry.open_file(path, create=seed_if_empty)
    if seed_if_empty and not registry.tenants():
        seed_sample_data(registry)
    return registry


def sample_registry(path: str | os.PathLike[str] | None = None) -> Registry:
    """A new registry file holding the sample data (in a fresh temporary folder unless `path` is given)."""
    target = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="schema-explorer-")) / "sample.db"
    registry = Registry.open_file(target, create=True)
    if registry.tenants():
        raise StorageError(f"{target} is not empty; give a new path for the sample registry")
    seed_sample_data(registry)
    return registry


def scratch_copy(registry: SchemaRegistry, path: str | os.PathLike[str] | None = None) -> Registry:
    """An independent copy of `registry` (embedded, remote or in memory) in a new registry file, to toggle
    policies and register candidates without touching the original.

    An embedded file is copied with SQLite's online backup (consistent while other processes write); any
    other registry goes through a snapshot. The copy lives in a fresh temporary folder unless `path` is given;
    `copy.location` names the file.
    """
    target = (
        Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="schema-explorer-scratch-")) / "scratch.db"
    )
    if target.exists():
        raise StorageError(f"cannot make a scratch copy at {target}: the file exists")
    source = Path(registry.location)
    if registry.location != ":memory:" and source.is_file():
        with closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)) as src:
            with closing(sqlite3.connect(target)) as dst:
                src.backup(dst)
        return Registry.open_file(target, broker=registry.broker)  # made by the backup just above
    buffer = io.StringIO()
    export_snapshot(registry, buffer)
    buffer.seek(0)
    return import_snapshot(buffer, into=Registry.open_file(target, broker=registry.broker, create=True))


def topics(
    registry: Registry,
    text: str = "",
    *,
    tenant: str | None = None,
    namespace: str | None = None,
    schema_types: Sequence[SchemaType | str] = (),
    strategies: Sequence[CompatibilityStrategy | str] = (),
    has_clients: bool | None = None,
    page_size: int = 500,
) -> pd.DataFrame:
    """Every topic matching the search (all topics by default), one row each: the app's Browse table.

    `text` matches a substring of the topic name or of a field name, as in the app's search box.
    """
    query = TopicQuery(
        text=text,
        tenant=tenant,
        namespace=namespace,
        schema_types=frozenset(SchemaType.parse(t) for t in schema_types),
        strategies=frozenset(CompatibilityStrategy.parse(s) for s in strategies),
        has_clients=has_clients,
    )
    rows: list[TopicSummary] = []
    offset = 0
    while True:
        page = registry.search_topics(query, offset=offset, limit=page_size)
        rows.extend(page.items)
        offset += len(page.items)
        if not page.has_more or not page.items:
            break
    return topics_frame(rows)


@dataclass(frozen=True, slots=True)
class History(Sequence[SchemaVersion]):
    """A topic's schema history that displays as a table in Jupyter, with its DataFrame and timeline chart."""

    topic: str
    versions: tuple[SchemaVersion, ...]

    @overload
    def __getitem__(self, index: int) -> SchemaVersion: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SchemaVersion]: ...
    def __getitem__(self, index: int | slice) -> SchemaVersion | Sequence[SchemaVersion]:
        return self.versions[index]

    def __len__(self) -> int:
        return len(self.versions)

    def __iter__(self) -> Iterator[SchemaVersion]:
        return iter(self.versions)

    def version(self, number: int) -> SchemaVersion:
        """The entry with this version number (tombstones included)."""
        for entry in self.versions:
            if entry.version == number:
                return entry
        raise KeyError(f"{self.topic} has no version {number}; it has {[v.version for v in self.versions]}")

    def frame(self) -> pd.DataFrame:
        return history_frame(self.versions)

    def chart(self) -> alt.LayerChart:
        return version_timeline(self.versions, title=f"Versions of {self.topic}")

    def __repr__(self) -> str:
        numbers = ", ".join(f"{v.version}{'†' if v.deleted else ''}" for v in self.versions)
        return f"History({self.topic!r}, versions=[{numbers}])"

    def _repr_html_(self) -> str:
        return history_html(self.versions, self.topic)


def history(registry: Registry, topic: str, *, include_deleted: bool = True) -> History:
    """The topic's history, tombstones included by default (they are part of what happened)."""
    return History(topic, tuple(registry.history(topic, include_deleted=include_deleted)))


def find_audit_dir(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The audit output folder: `path`, else `$SCHEMA_EXPLORER_AUDIT`, else ./audit-out; None if absent."""
    candidate = path if path is not None else os.environ.get(AUDIT_ENV) or "audit-out"
    folder = Path(candidate).expanduser()
    return folder if folder.is_dir() else None


def read_audit(path: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """The Parquet tables an audit job wrote under its --out folder, by table name (only those present)."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"no audit output at {folder}; produce it with: {audit_command()}")
    tables: dict[str, pd.DataFrame] = {}
    for name in AUDIT_TABLES:
        table = folder / name
        if table.is_dir() and any(table.glob("*.parquet")):
            tables[name] = pd.read_parquet(table)
        elif table.with_suffix(".parquet").is_file():
            tables[name] = pd.read_parquet(table.with_suffix(".parquet"))
    return tables


def audit_command(db: str | os.PathLike[str] | None = None, out: str = "audit-out", job: str = "compat-matrix") -> str:
    """The shell command that writes the audit tables this module reads."""
    source = f" --db {os.fspath(db)}" if db is not None else ""
    return f"schema-explorer audit {job}{source} --out {out}"


def summary(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Rows per audit table, to see at a glance what an audit folder holds."""
    return pd.DataFrame({"table": list(tables), "rows": [len(t) for t in tables.values()]})
