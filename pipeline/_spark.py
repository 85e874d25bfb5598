"""One place that builds the SparkSession, so the CLI, tests and benchmarks run the same configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
JAVA_HINT = (
    "PySpark needs a Java 17+ runtime: install one (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless) "
    "or set JAVA_HOME"
)


class SparkUnavailable(RuntimeError):
    """No Java, or no PySpark: the pipeline cannot start (reported before any work begins)."""


def check_java() -> str:
    """The `java -version` banner, or SparkUnavailable with how to install a JRE."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkUnavailable(
            f"no Java runtime found ({'JAVA_HOME=' + home if home else 'java not on PATH'}). " + JAVA_HINT
        )
    try:
        banner = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailable(f"{java} -version failed: {exc}. {JAVA_HINT}") from None
    return banner.splitlines()[0] if banner else java


def spark_session(
    master: str = DEFAULT_MASTER,
    *,
    app_name: str = "schema-explorer audit",
    shuffle_partitions: int | None = None,
    ui: bool = True,
    progress: bool = True,
    extra: dict[str, str] | None = None,
) -> SparkSession:
    """A SparkSession on `master` whose Python workers run this interpreter (so they import the same core)."""
    check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable("pyspark is not installed; run `make install` or `pip install -e .`") from None
    # Executors start Python workers with $PYSPARK_PYTHON (default "python3"): without this they would miss
    # pyarrow and this checkout's registry/.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", str(ui).lower())
        .config("spark.ui.showConsoleProgress", str(progress).lower())
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "2g"))
    )
    if shuffle_partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session
