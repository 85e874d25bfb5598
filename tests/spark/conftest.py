"""One SparkSession for the whole test run (local[2], few shuffle partitions, no UI), and the sample registry
as a pipeline Source. Skipped with a clear reason when Java or PySpark is missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import needs
from registry import Registry, export_snapshot, seed_sample_data


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pipeline._spark import SparkUnavailableError, spark_session

    needs.require("java")
    try:
        session = spark_session(
            "local[2]", app_name="schema-explorer tests", shuffle_partitions=2, ui=False, progress=False
        )
    except SparkUnavailableError as exc:
        pytest.skip(str(exc))
    yield session
    session.stop()


class _SharedSession:
    """The test run's SparkSession as the CLI sees it: `audit` stops its session when done, this one stays."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def stop(self) -> None:
        pass


@pytest.fixture
def cli_spark(spark: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The run's session handed to `schema-explorer audit` run in-process (one SparkSession per test run)."""
    monkeypatch.setattr("pipeline._spark.spark_session", lambda *args, **kwargs: _SharedSession(spark))
    return spark


@pytest.fixture(scope="session")
def sample_registry() -> Registry:
    reg = Registry.in_memory()
    seed_sample_data(reg)
    return reg


@pytest.fixture(scope="session")
def sample_snapshot(sample_registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample registry exported as a snapshot file, for audits run as a command."""
    path = tmp_path_factory.mktemp("snapshot") / "sample.jsonl"
    export_snapshot(sample_registry, path)
    return path


@pytest.fixture(scope="session")
def sample_source(sample_registry: Registry) -> Any:
    from pipeline._source import records_source

    return records_source(sample_registry, "the sample registry")
