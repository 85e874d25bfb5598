"""Pulsar Schema Explorer, placeholder page: every topic in the registry, one row each.

Started by `schema-explorer ui`, which passes `-- --db PATH`. The real app (st.navigation + app_pages/)
replaces this page; like it, this page only calls the registry facade and renders.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import streamlit as st

from registry import Registry, RegistryError, default_db_path

COLUMNS = ["Tenant", "Namespace", "Topic", "Latest schema type", "Versions", "Compatibility"]


def db_path_from_argv(argv: list[str]) -> str:
    """`--db PATH` from the arguments Streamlit passes after `--`; else the per-user default."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--db")
    args, _ = parser.parse_known_args(argv)
    return str(args.db) if args.db else str(default_db_path())


@st.cache_resource
def open_registry(path: str) -> Registry:
    return Registry.open(path)


def topic_table(reg: Registry) -> pd.DataFrame:
    rows = []
    for tenant in reg.tenants():
        for namespace in reg.namespaces(tenant):
            for topic in reg.topics(namespace):
                history = reg.history(topic)
                latest = history[-1] if history else None
                rows.append(
                    {
                        "Tenant": tenant,
                        "Namespace": namespace.rsplit("/", 1)[-1],
                        "Topic": topic,
                        "Latest schema type": str(latest.type) if latest else "",
                        "Versions": len(history),
                        "Compatibility": str(reg.effective_policy(topic).compatibility.value),
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


st.set_page_config(page_title="Pulsar Schema Explorer", layout="wide")
st.title("Pulsar Schema Explorer")

db_path = db_path_from_argv(sys.argv[1:])
st.caption(f"Registry: `{db_path}`")

try:
    registry = open_registry(db_path)
    table = topic_table(registry)
except RegistryError as exc:
    st.error(f"Cannot read the registry at {db_path}: {exc}")
    st.stop()

if table.empty:
    st.info(
        "This registry has no topics yet. Load the sample data with "
        f"`schema-explorer seed --db {Path(db_path)}`, then reload this page."
    )
else:
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(f"{table['Topic'].nunique()} topics in {table['Tenant'].nunique()} tenants.")
