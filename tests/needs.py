"""What a test needs beyond Python, as pytest markers: `java` (PySpark), `browser` (Chromium), `server` (a
`schema-explorer serve` child on loopback), `postgres` (a throwaway PostgreSQL server), `prometheus` (Debian's
Prometheus) and `slow` (seconds each: storms, crash rounds, a notebook kernel).

`make check` leaves out `java`, `browser`, `cluster` and `slow`. So that a marker cannot be forgotten, the helpers
that start a server, a SparkSession, a browser or a simulated cluster call `require()`: a test that uses one without
its marker fails, naming it.
"""

from __future__ import annotations

MARKERS = {
    "java": "needs a Java runtime (PySpark)",
    "browser": "needs Debian's Chromium (Playwright)",
    "server": "starts `schema-explorer serve` or `ui` as a child process on loopback",
    "postgres": "starts a throwaway PostgreSQL server (Debian's postgresql package; tests/postgres.py)",
    "prometheus": "starts Debian's `prometheus` on loopback to scrape a live server (tests/server/test_prometheus.py)",
    "cluster": "plays a Pulsar cluster of TLS brokers on loopback (tests/cluster_sim.py); left out of `make check`",
    "slow": "takes seconds: storms, crash rounds, hostile clients, a notebook kernel; left out of `make check`",
}

# The markers of the test being set up, or None outside a pytest run (storm.py also runs as a script).
current: frozenset[str] | None = None


def require(marker: str) -> None:
    """Fail the running test unless it carries `marker` (set by `pytest_runtest_setup` in tests/conftest.py)."""
    if current is not None and marker not in current:
        raise AssertionError(f"this test needs @pytest.mark.{marker} ({MARKERS[marker]}); add it to the test or module")
