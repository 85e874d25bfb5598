"""One place that builds the SparkSession, so the CLI, tests and benchmarks run the same configuration."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
# Spark's logging for `audit --progress none`: errors only, from the JVM's start (Spark's own defaults print a
# "Setting default log level" banner before any setting of ours applies; it prints it for a shell, as PySpark's
# gateway is, unless the shell's own logger is configured, hence logger.shell).
QUIET_LOGGING = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.shell.name = org.apache.spark.api.python.PythonGatewayServer
logger.shell.level = error
"""
JAVA_HINT = (
    "PySpark needs a Java 17+ runtime: install one (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless) "
    "or set JAVA_HOME"
)


class SparkUnavailableError(RuntimeError):
    """No Java, no PySpark, or a master Spark does not know: the pipeline cannot start (reported before any
    work begins)."""


# The masters Spark knows (SparkContext.createTaskScheduler), checked before a JVM starts.
_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|local-cluster\[[1-9]\d*,[1-9]\d*,[1-9]\d*\]"
    r"|spark://\S+|yarn|k8s://\S+"
)


def check_master(master: str) -> str:
    """`master` when Spark would take it; otherwise SparkUnavailableError naming the forms it takes."""
    if not _MASTER.fullmatch(master.strip()):
        raise SparkUnavailableError(
            f"--master {master!r} is not a Spark master: use local[*], local[N], local-cluster[WORKERS,CORES,MB], "
            "spark://HOST:PORT (a standalone cluster), yarn, or k8s://https://HOST:PORT"
        )
    return master.strip()


def check_java() -> str:
    """The `java -version` banner, or SparkUnavailableError with how to install a JRE."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkUnavailableError(
            f"no Java runtime found ({'JAVA_HOME=' + home if home else 'java not on PATH'}). " + JAVA_HINT
        )
    try:
        banner = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailableError(f"{java} -version failed: {exc}. {JAVA_HINT}") from None
    return banner.splitlines()[0] if banner else java


def spark_session(
    master: str = DEFAULT_MASTER,
    *,
    app_name: str = "schema-explorer audit",
    shuffle_partitions: int | None = None,
    ui: bool = True,
    progress: bool = True,
    quiet: bool = False,
    extra: dict[str, str] | None = None,
    ship_code: bool = True,
) -> SparkSession:
    """A SparkSession on `master` whose Python workers run this interpreter (so they import the same core).

    On a cluster (any master but local[...]) the project's code is shipped to the executors as a zip
    (`code_archive`), unless `ship_code=False` says it is installed on the workers. `progress=False` turns off
    Spark's console progress bars; `quiet=True` also keeps Spark's own logging to errors from the JVM's start
    (`--progress none`: nothing on stderr but what went wrong)."""
    master = check_master(master)
    check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailableError("pyspark is not installed; run `make install` or `pip install -e .`") from None
    # Executors start Python workers with $PYSPARK_PYTHON (default "python3"): without this they would miss
    # pyarrow and this checkout's registry/.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local-cluster") and "SPARK_HOME" not in os.environ:
        # local-cluster starts executor JVMs with $SPARK_HOME/bin; the pip-installed pyspark carries bin/ and jars/.
        import pyspark

        os.environ["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
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
    if quiet:
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_quiet_logging()}")
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR" if quiet else "WARN")
    if ship_code and not _in_process(master):
        session.sparkContext.addPyFile(str(code_archive()))
    return session


def _quiet_logging() -> Path:
    """QUIET_LOGGING as a file for the driver JVM, written once per process and removed at its exit."""
    folder = tempfile.mkdtemp(prefix="schema-explorer-log4j2-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "log4j2.properties"
    path.write_text(QUIET_LOGGING, encoding="utf-8")
    return path


def _in_process(master: str) -> bool:
    """local[...] runs every executor inside the driver's JVM, with this interpreter's own imports."""
    return master == "local" or master.startswith("local[")


def code_archive() -> Path:
    """This project's code (registry/ and pipeline/, sources only) as one zip for `SparkContext.addPyFile`:
    the code reaches each executor once, by file, and executors import it from there. Their Python needs the
    dependencies (pyarrow, fastavro, protobuf): install the project there, or ship a packed environment
    (docs/guide/spark.md "On a cluster"). Built once per process; compiled modules stay out (zipimport cannot load
    them), so executors run the pure-Python Avro core unless the project is installed on them."""
    global _ARCHIVE
    if _ARCHIVE is None or not _ARCHIVE.exists():
        root = Path(__file__).resolve().parent.parent
        folder = tempfile.mkdtemp(prefix="schema-explorer-code-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # one per process, gone with it
        target = Path(folder) / "pulsar_schema_explorer.zip"
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for package in ("registry", "pipeline"):
                for path in sorted((root / package).rglob("*.py")):
                    archive.write(path, path.relative_to(root).as_posix())
        _ARCHIVE = target
    return _ARCHIVE


_ARCHIVE: Path | None = None
