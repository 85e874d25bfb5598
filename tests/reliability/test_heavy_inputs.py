"""Valid but heavy input from the catalogue (issue 18 items 3 and 10): distinct large candidates posted by a
viewer are answered and the server stays up under a small cache budget; a CLI text diff of two 100 KiB
schemas with every field renamed completes and marks every renamed line. Memory figures: bench/bench_memory.py;
diff timings: bench/bench_diff.py."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import storm
from catalogue import HEAVY_REST_CASES, renamed_pair, wide_avro

from cli.main import main
from registry import Registry, SchemaInfo, SchemaType

pytestmark = [pytest.mark.timeout(300), pytest.mark.server, pytest.mark.slow]
TOPIC = "persistent://acme/tests/topic"
TOKEN = secrets.token_hex(16)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[storm.Server]:
    folder = tmp_path_factory.mktemp("heavy")
    db = folder / "registry.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("acme/tests")
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=wide_avro("live")))
    env = {"SCHEMA_EXPLORER_TOKENS": json.dumps({TOKEN: "viewer"}), "SCHEMA_EXPLORER_CACHE_BYTES": str(16 << 20)}
    server = storm.Server(db, folder / "serve.log", env).start()
    yield server
    server.stop()
    log = (folder / "serve.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.parametrize(
    ("method", "path", "body", "status"), [c[1:] for c in HEAVY_REST_CASES], ids=[c[0] for c in HEAVY_REST_CASES]
)
def test_distinct_large_candidates_from_a_viewer_are_answered(
    live: storm.Server, method: str, path: str, body: Any, status: int
) -> None:
    with httpx.Client(base_url=live.url, timeout=120.0, headers={"authorization": f"Bearer {TOKEN}"}) as client:
        for n in range(3):
            answer = client.request(method, path, json=body(n))
            assert answer.status_code == status, answer.text[:300]
    assert live.alive


def test_a_text_diff_of_two_100_kib_schemas_with_every_field_renamed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = renamed_pair()
    assert len(old) > 100 * 1024
    db, candidate = tmp_path / "registry.db", tmp_path / "new.avsc"
    candidate.write_text(new)
    with Registry.open(db, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=old))
    assert main(["diff", "--db", str(db), "-t", TOPIC, "--file", str(candidate), "--text"]) == 0
    out = capsys.readouterr().out
    renamed = [line for line in out.splitlines() if line.startswith("+") and '"renamed_' in line]
    assert len(renamed) == 1200
