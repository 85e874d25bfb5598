"""The server's memory under a storm of viewers posting distinct large schemas (issue 18 item 3).

    python bench/bench_memory.py [--seconds 60] [--clients 32] [--kib 900] [--cache-bytes N]

Starts `schema-explorer serve` on loopback with one viewer token ($SCHEMA_EXPLORER_TOKENS), registers one live Avro
record of about `--kib` KiB (thousands of fields, 3 deep: the shape that keeps the most per input byte), then
`--clients` concurrent clients (asyncio + httpx) post, for `--seconds`, each request a distinct candidate of
that size (a salted doc makes every text new, so no parse cache can answer it): alternately the explorer's
diff (POST /explorer/v1/topics/.../diff) and the schema lookup (POST /admin/v2/schemas/.../version, which
parses the candidate and compares it with every live version: the check a viewer may make). The server's RSS
(/proc/PID/status VmRSS) is sampled every 0.5 s. Prints the requests done by status, the RSS before the storm
and its peak, and whether the peak stayed under the target, 1 GB. `--cache-bytes` sets
SCHEMA_EXPLORER_CACHE_BYTES for the server (default: the server's default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for extra in (_ROOT / "tests" / "reliability", _ROOT / "bench", _ROOT):  # bench/schemas.py, not tests/'s
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import httpx  # noqa: E402
import storm  # noqa: E402

from registry import Registry, SchemaInfo, SchemaType  # noqa: E402
from schemas import large_record  # noqa: E402

TOPIC = "acme/memory/wide"
TARGET_BYTES = 1024 * 1024 * 1024


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def schema_of_size(kib: int) -> str:
    """A large_record of about `kib` KiB, with a placeholder doc the clients salt."""
    top = 100
    while True:
        doc = json.loads(large_record(top))
        doc["doc"] = "SALT"
        text = json.dumps(doc, separators=(",", ":"))
        if len(text) >= kib * 1024:
            return text
        top = int(top * kib * 1024 / len(text)) + 5


async def client(url: str, token: str, template: str, n: int, stop_at: float, done: Counter[str]) -> None:
    headers = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120.0) as http:
        i = 0
        while time.monotonic() < stop_at:
            candidate = {
                "type": "AVRO",
                "schema": template.replace("SALT", f"client {n} request {i}"),
                "properties": {},
            }
            try:
                if i % 2:
                    answer = await http.post(f"/admin/v2/schemas/{TOPIC}/version", json=candidate)
                    done[f"lookup {answer.status_code}"] += 1
                else:
                    answer = await http.post(f"/explorer/v1/topics/{TOPIC}/diff", json={"candidate": candidate})
                    done[f"diff {answer.status_code}"] += 1
            except httpx.HTTPError as exc:
                done[f"error {type(exc).__name__}"] += 1
            i += 1


def sample(pid: int, peak: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], rss(pid))
        except (OSError, RuntimeError):
            return
        stop.wait(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--kib", type=int, default=900, help="size of each schema (the limit is 1,024 KiB)")
    parser.add_argument("--cache-bytes", type=int, help="SCHEMA_EXPLORER_CACHE_BYTES for the server")
    args = parser.parse_args()
    template = schema_of_size(args.kib)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as folder:
        db, log = Path(folder) / "registry.db", Path(folder) / "serve.log"
        token = secrets.token_hex(16)
        with Registry.open(db, create=True) as reg:
            reg.create_namespace("acme/memory")
            reg.register(
                f"persistent://{TOPIC}", SchemaInfo(type=SchemaType.AVRO, schema=template.replace("SALT", "live"))
            )
        env = {"SCHEMA_EXPLORER_TOKENS": json.dumps({token: "viewer"})}  # the tokens file's JSON itself
        if args.cache_bytes is not None:
            env["SCHEMA_EXPLORER_CACHE_BYTES"] = str(args.cache_bytes)
        server = storm.Server(db, log, env).start()
        try:
            assert server.process is not None
            pid = server.process.pid
            before = rss(pid)
            peak, stop = [before], threading.Event()
            sampler = threading.Thread(target=sample, args=(pid, peak, stop), daemon=True)
            sampler.start()
            done: Counter[str] = Counter()
            start = time.monotonic()

            async def storm_of_clients() -> None:
                stop_at = time.monotonic() + args.seconds
                await asyncio.gather(
                    *(client(server.url, token, template, n, stop_at, done) for n in range(args.clients))
                )

            asyncio.run(storm_of_clients())
            elapsed = time.monotonic() - start
            stop.set()
            sampler.join()
            after = rss(pid)
            alive = server.alive
        finally:
            server.stop()
    print(f"{args.clients} viewer clients, distinct {len(template) / 1024:,.0f} KiB Avro candidates, {elapsed:.0f} s")
    print(f"requests: {sum(done.values()):,} ({', '.join(f'{k}: {v:,}' for k, v in sorted(done.items()))})")
    print(
        f"server RSS: {before / 2**20:,.0f} MiB before, peak {peak[0] / 2**20:,.0f} MiB, {after / 2**20:,.0f} MiB after"
    )
    print(f"target: peak RSS under 1 GB: {'met' if peak[0] < TARGET_BYTES else 'MISSED'}; server alive: {alive}")
    return 0 if peak[0] < TARGET_BYTES and alive else 1


if __name__ == "__main__":
    sys.exit(main())
