"""Every cache of parsed or read schemas is bounded by bytes, within one budget (registry/_cache_budget.py).

Issue 18 item 3: caches bounded by entry count let a viewer pin 1.9-3.5 GB by posting distinct large schemas.
Each cache is filled here with distinct large inputs: its accounted bytes never pass its share, the least
recently used entries go first, and an entry larger than the share is not kept at all.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from registry import _cache_budget as budget
from registry._cache_budget import ByteLRU, cache_bytes
from registry._errors import StorageError
from registry.protobuf._descriptor import MODELS, model_of
from registry.protobuf._native import PARSED, parse_protobuf_native

ROOT = Path(__file__).resolve().parents[2]


def test_the_shares_add_up_to_the_budget_and_the_default_fits_a_1_gb_server() -> None:
    assert cache_bytes({}) == budget.DEFAULT_CACHE_BYTES == 256 * 1024 * 1024
    shares = (
        budget.AVRO_PARSED_BYTES,
        budget.READ_CACHE_BYTES,
        budget.FAST_READ_BYTES,
        budget.PROTOBUF_PARSED_BYTES,
        budget.PROTOBUF_MODEL_BYTES,
    )
    assert sum(shares) <= budget.TOTAL_BYTES


@pytest.mark.parametrize(
    ("value", "words"),
    [("lots", "whole number of bytes"), ("-5", "at least"), ("1000", "at least"), ("1.5e9", "whole number")],
)
def test_a_bad_setting_is_refused_naming_the_variable(value: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as caught:
        cache_bytes({budget.CACHE_BYTES_ENV: value})
    assert budget.CACHE_BYTES_ENV in str(caught.value)


def test_the_setting_is_read_from_the_environment() -> None:
    code = (
        "from registry import _cache_budget as b; from registry.avro import _schema as a;"
        "from registry.storage import _read_cache as r;"
        "print(b.TOTAL_BYTES, a._PARSED_MAX_BYTES, r.ReadCache()._max_bytes)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), budget.CACHE_BYTES_ENV: "8_388_608"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(8 << 20), str(3 << 20), str(2 << 20)]
    bad = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, budget.CACHE_BYTES_ENV: "x"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and budget.CACHE_BYTES_ENV in bad.stderr


def test_byte_lru_evicts_the_least_recently_used_to_stay_within_its_bytes() -> None:
    cache: ByteLRU[str, int] = ByteLRU(100)
    for i in range(10):
        cache.put(f"k{i}", i, 30)
        assert cache.bytes <= 100
    assert len(cache) == 3 and "k9" in cache and "k6" not in cache
    assert cache.get("k7") == 7  # now the most recently used
    cache.put("k10", 10, 30)
    assert "k7" in cache and "k8" not in cache
    cache.put("too big", 0, 101)
    assert "too big" not in cache and len(cache) == 3 and cache.bytes == 90
    cache.put("k7", 7, 60)  # replacing an entry accounts its new size only
    assert cache.bytes <= 100 and cache.get("k7") == 7
    cache.clear()
    assert cache.bytes == 0 and len(cache) == 0


def proto_doc(salt: int, fields: int, messages: int = 1) -> bytes:
    """A distinct PROTOBUF_NATIVE document of `messages` messages (the root is M) of `fields` string fields."""
    fdp = descriptor_pb2.FileDescriptorProto(name="big.proto", package=f"big{salt}", syntax="proto3")
    for m in range(messages):
        message = fdp.message_type.add(name="M" if m == 0 else f"M{m}")
        for f in range(fields):
            message.field.add(name=f"field_{f}", number=f + 1, type=9, label=1)
    data = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    doc = {
        "fileDescriptorSet": base64.b64encode(data).decode(),
        "rootMessageTypeName": f"big{salt}.M",
        "rootFileDescriptorName": "big.proto",
    }
    return json.dumps(doc).encode()


@pytest.mark.slow
def test_the_protobuf_parse_and_model_caches_stay_within_their_bytes() -> None:
    PARSED.clear()
    MODELS.clear()
    docs = [proto_doc(salt, 2000) for salt in range(60)]
    parsed_cost = len(docs[0]) * budget.PROTOBUF_PARSED_FACTOR
    assert PARSED.max_bytes // parsed_cost < len(docs)  # more than fits: the old bound was 1,024 entries
    for doc in docs:
        schema = parse_protobuf_native(doc)
        model_of(schema)
        assert PARSED.bytes <= PARSED.max_bytes and MODELS.bytes <= MODELS.max_bytes
    # Keyed by data and the line's rules (the default line: master, exact root lookup, protobuf-java 4.x).
    assert (docs[0], True, "4.x") not in PARSED and (docs[-1], True, "4.x") in PARSED
    assert len(MODELS) < len(docs)
    assert parse_protobuf_native(docs[-1]) is parse_protobuf_native(docs[-1])  # still a cache


def test_a_protobuf_document_larger_than_the_share_is_parsed_but_not_kept() -> None:
    PARSED.clear()
    messages = PARSED.max_bytes // budget.PROTOBUF_PARSED_FACTOR // (20 * 2000) + 1
    doc = proto_doc(999, 2000, messages)
    assert len(doc) * budget.PROTOBUF_PARSED_FACTOR > PARSED.max_bytes
    assert parse_protobuf_native(doc).root_full_name == "big999.M"
    assert (doc, True) not in PARSED and PARSED.bytes == 0


def test_the_work_gate_bounds_the_large_candidates_in_work_at_once() -> None:
    gate = budget.WorkGate(100, small=10, wait_s=0.2)
    inside: list[int] = []
    with gate.admit(60):
        inside.append(gate.bytes)
        with gate.admit(60):  # the same thread again (a facade call calling another): no wait for itself
            inside.append(gate.bytes)
        with gate.admit(5):  # small: passes freely
            inside.append(gate.bytes)
        refused: list[BaseException] = []

        def other() -> None:
            try:
                with gate.admit(60):
                    pass
            except StorageError as exc:
                refused.append(exc)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert refused and "try again" in str(refused[0])  # 60 + 60 > 100: it waited its 0.2 s, then refused
    assert inside == [60, 60, 60] and gate.bytes == 0
    with gate.admit(500):  # larger than the gate: goes in alone
        assert gate.bytes == 500
    assert gate.bytes == 0


def test_a_waiting_candidate_goes_in_when_room_is_made() -> None:
    gate = budget.WorkGate(100, small=10, wait_s=30)
    entered = threading.Event()
    leave = threading.Event()

    def holder() -> None:
        with gate.admit(80):
            entered.set()
            leave.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    entered.wait(30)
    timer = threading.Timer(0.1, leave.set)
    timer.start()
    with gate.admit(80):  # waits for the holder to leave
        assert gate.bytes == 80
    thread.join()
    timer.join()


def test_registry_calls_on_candidates_go_through_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    from registry import Registry, SchemaInfo, SchemaType

    seen: list[int] = []
    real = budget.CANDIDATES.admit

    def spy(size: int) -> Any:
        seen.append(size)
        return real(size)

    monkeypatch.setattr(budget.CANDIDATES, "admit", spy)
    text = json.dumps({"type": "record", "name": "R", "doc": "x" * 100_000, "fields": []})
    with Registry.in_memory() as reg:
        reg.create_namespace("a/b")
        reg.register("persistent://a/b/t", SchemaInfo(type=SchemaType.AVRO, schema=text))
        reg.check("persistent://a/b/t", SchemaInfo(type=SchemaType.AVRO, schema=text))
        reg.diff("persistent://a/b/t", 0, SchemaInfo(type=SchemaType.AVRO, schema=text))
    assert seen == [len(text)] * 3
