"""Schemathesis against /openapi.json: generated requests for every operation, bounded for CI, no
unexpected 5xx, responses that match the documented status codes and schemas.

The only 5xx the API documents is Pulsar's own convention: POST /compatibility answers 500 for an
incompatible schema (pulsar-semantics.md §7.1). Any other 5xx fails.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from registry import Registry, seed_sample_data
from server import create_app

# Loaded at import, as schemathesis' pytest integration needs; the module fixture below cleans up.
_FOLDER = Path(tempfile.mkdtemp(prefix="schema-explorer-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
with Registry.open(_FOLDER / "fuzz.db", create=True) as _seeding:
    seed_sample_data(_seeding)
_REGISTRY = Registry.open(_FOLDER / "fuzz.db", auto_create=False)
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_REGISTRY, allowed_hosts=["testserver"]))


pytestmark = pytest.mark.slow  # seconds of generated requests; `make check` leaves it out


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    _REGISTRY.close()
    shutil.rmtree(_FOLDER, ignore_errors=True)


@schema.parametrize()
@settings(
    max_examples=6,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_generated_requests(case: schemathesis.Case) -> None:
    response = case.call()
    if response.status_code >= 500:
        documented = case.path.endswith("/compatibility") and response.status_code == 500
        assert documented and response.json()["reason"].startswith("incompatible under"), response.text
    # positive_data_acceptance: schema-valid text is often not a valid Avro schema, topic name or strategy
    # choice, and refusing it with a documented 4xx naming the problem is the contract.
    case.validate_response(response, excluded_checks=[checks.not_a_server_error, checks.positive_data_acceptance])
