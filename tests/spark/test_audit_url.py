"""`schema-explorer audit ... --url`: the audits read a live `schema-explorer serve` (Pulsar's admin v2 API)
and answer as they do over the registry file it serves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cli.main import main
from serving import PROJECT_ROOT, seeded, served


@pytest.fixture(scope="module")
def served_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(url, registry file): `schema-explorer serve` on a free loopback port over a seeded file."""
    folder = tmp_path_factory.mktemp("served")
    db = seeded(folder / "registry.db")
    with served(db, log_dir=folder) as url:
        yield url, db


class _SharedSession:
    """The test run's SparkSession as the CLI sees it: `audit` stops its session when done, this one stays."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def stop(self) -> None:
        pass


def _table(folder: Path, name: str) -> list[str]:
    return sorted(map(str, pq.read_table(folder / name).to_pylist()))


def test_audits_over_url_answer_as_over_the_served_file(
    spark: Any, served_file: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pipeline._spark.spark_session", lambda *args, **kwargs: _SharedSession(spark))
    url, db = served_file
    messages = str(PROJECT_ROOT / "sample_data" / "messages")
    for source, value in (("--url", url), ("--db", str(db))):
        out = tmp_path / source.strip("-")
        assert main(["audit", "compat-matrix", source, value, "--out", str(out / "matrix")]) == 0
        assert main(["audit", "data", source, value, "--messages", messages, "--out", str(out / "data")]) == 0
    remote, embedded = tmp_path / "url", tmp_path / "db"
    assert len(_table(remote / "matrix", "compat_topics")) == 47
    tables = {"matrix": ("compat_matrix", "compat_topics"),
              "data": ("data_versions", "data_failures", "data_field_stats", "data_enum_counts")}  # fmt: skip
    for folder, name in ((folder, name) for folder, names in tables.items() for name in names):
        assert _table(remote / folder, name) == _table(embedded / folder, name), name
