"""Every audit on a real multi-process cluster: `local-cluster[2,1,1024]` starts a master, two workers and
their executor JVMs with their own Python workers, as a standalone cluster does, so the code must reach
executors in other processes, and each executor reads its own part of the source: a snapshot file, a
PostgreSQL database (throwaway server), a Parquet export. The tables must equal those of the shared local[2]
session over the reader they replaced (every record on the driver).

One local-cluster run per audit and source, each its own `schema-explorer audit` process (a process holds
one Spark context, and the test run's is the local[2] session), with `--progress none`: nothing on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ROOT / "sample_data" / "messages"
MASTER = "local-cluster[2,1,1024]"


def cluster_run(job: list[str], source: list[str], out: Path) -> None:
    env = {**os.environ, "SPARK_DRIVER_MEMORY": "1g"}
    env.pop("SPARK_HOME", None)  # found from the pip-installed pyspark
    argv = [sys.executable, "-m", "cli.main", "audit", *job, *source, "--out", str(out)]
    done = subprocess.run(
        [*argv, "--master", MASTER, "--partitions", "4", "--progress", "none"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on {MASTER}" in done.stdout
    # --progress none: no progress line, no Spark console bar or log line; only Java's own notice that Spark
    # loads an incubator module, printed by the JVM before any setting applies
    assert [line for line in done.stderr.splitlines() if "incubator modules" not in line] == []


def table(out: Path, name: str) -> list[dict[str, Any]]:
    """A table's rows in a fixed order (Spark writes them in any order)."""
    rows = pq.read_table(out / name).to_pylist()
    return sorted(rows, key=lambda r: tuple(str(r[c]) for c in sorted(r)))


@pytest.fixture(params=["snapshot", pytest.param("postgresql", marks=pytest.mark.postgres), "parquet"])
def source(request: pytest.FixtureRequest, sample_snapshot: Path, tmp_path: Path) -> list[str]:
    """The sample registry as an audit's source arguments (the fixture's parameter says which source)."""
    from cli.main import main
    from registry import Registry, import_snapshot

    if request.param == "snapshot":
        return ["--snapshot", str(sample_snapshot)]
    location = request.getfixturevalue("postgres_url") if request.param == "postgresql" else str(tmp_path / "r.db")
    reg = Registry.open(location, create=True)
    import_snapshot(sample_snapshot, into=reg)
    reg.close()
    if request.param == "postgresql":
        return ["--db", location]
    assert main(["export", "--format", "parquet", "--db", location, str(tmp_path / "export")]) == 0
    return ["--parquet", str(tmp_path / "export")]


@pytest.mark.parametrize(
    ("job", "tables"),
    [
        (["compat-matrix"], ["compat_matrix", "compat_topics"]),
        (["policy-impact", "--strategy", "FULL_TRANSITIVE"], ["policy_impact", "policy_impact_clients"]),
        (["data", "--messages", str(MESSAGES)], ["data_versions", "data_failures", "data_field_stats"]),
    ],
    ids=["compat-matrix", "policy-impact", "data"],
)
def test_an_audit_on_a_local_cluster_gives_the_local_tables(
    job: list[str], tables: list[str], source: list[str], spark: Any, sample_source: Any, tmp_path: Path
) -> None:
    from pipeline._archive import find_archive
    from pipeline.jobs import run_compat_matrix, run_data_audit, run_policy_impact

    local = tmp_path / "local"
    if job[0] == "compat-matrix":
        run_compat_matrix(spark, sample_source, local, partitions=4)
    elif job[0] == "policy-impact":
        run_policy_impact(spark, sample_source, local, strategy="FULL_TRANSITIVE", partitions=4)
    else:
        run_data_audit(spark, sample_source, local, find_archive(str(MESSAGES)))
    cluster = tmp_path / "cluster"
    cluster_run(job, source, cluster)
    for name in tables:
        assert table(cluster, name) == table(local, name), name
