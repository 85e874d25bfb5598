"""The Pulsar version line over REST: `serve` reports it at GET /admin/v2/brokers/version, and a remote
registry answers as the line the broker reports (tests/unit/test_pulsar_version.py has the rules)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import registry
from registry import InvalidSchemaError, Registry, SchemaInfo, SchemaType
from serving import served

TOPIC = "persistent://t/n/orders"
DOLLAR = json.dumps({"type": "record", "name": "A$B", "fields": []})


def test_the_rest_server_reports_its_profile_and_a_remote_registry_answers_as_it(tmp_path: Path) -> None:
    """`GET /admin/v2/brokers/version` says the line a `serve` answers as; `registry.open(url)` reads it
    (a real broker says `4.0.7`, mapped by line_for_broker), and the same candidate gets the same verdict
    remotely and embedded."""
    db = tmp_path / "r.db"
    Registry.open(db, create=True, pulsar_version="4.0").close()
    with served(db, log_dir=tmp_path) as url:
        assert httpx.get(f"{url}/admin/v2/brokers/version").text == "4.0"
        with registry.open(url) as remote:
            assert remote.pulsar_version == "4.0" and remote.pulsar_version_source == "the broker reports 4.0"
            with pytest.raises(InvalidSchemaError, match=r"Illegal character in: A\$B"):
                remote.register(
                    TOPIC,
                    SchemaInfo(
                        type=SchemaType.AVRO, schema=json.dumps({"type": "record", "name": "A$B", "fields": []})
                    ),
                )
        with registry.open(url, pulsar_version="master") as remote:
            assert remote.pulsar_version_source == "asked (the broker reports 4.0)"
