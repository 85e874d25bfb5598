"""Comparing two registries (registry/compare/, issue 44): each kind of drift reported exactly, the hazards of
replicating A into B with their explanations, and the plan judged in order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drift import FORMATTED, HAZARDS, POLICIES, SAFE, STATES, build_pair, record, with_field
from registry import (
    ClientRole,
    CompatibilityStrategy,
    MemoryStorage,
    Registry,
    SchemaInfo,
    SchemaType,
    SchemaVersion,
    TopicPolicy,
    seed_sample_data,
)
from registry._snapshot import registry_from_records
from registry.compare import Comparison, HazardReason, TopicState, compare_registries, drift_diff


@pytest.fixture(scope="module", params=("memory", "sqlite"))
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Registry, Registry]]:
    """The drifted pair (drift.py), built once per storage for the tests that only compare it."""
    if request.param == "memory":
        a, b = Registry.in_memory(), Registry.in_memory()
    else:
        folder = tmp_path_factory.mktemp("pair")
        a, b = Registry.open(folder / "a.db", create=True), Registry.open(folder / "b.db", create=True)
    build_pair(a, b)
    yield a, b
    for reg in (a, b):
        reg.close()


@pytest.fixture
def fresh_pair(make_reg: Callable[..., Registry]) -> tuple[Registry, Registry]:
    """The drifted pair, new for a test that writes to it."""
    a, b = make_reg(), make_reg()
    build_pair(a, b)
    return a, b


def test_each_kind_of_drift_is_reported_exactly(pair: tuple[Registry, Registry]) -> None:
    found = compare_registries(*pair)
    assert {t.topic: str(t.state) for t in found.drifted} == STATES
    same = {t.topic for t in found.topics if t.state is TopicState.SAME}
    assert FORMATTED in same  # stored with other whitespace: the same version, as Pulsar's dedup sees it
    assert {(p.target, p.field, str(p.from_value), str(p.to_value)) for p in found.policies} == {
        (t, f, str(x), str(y)) for t, f, x, y in POLICIES
    }
    assert {h.topic: str(h.reason) for h in found.hazards} == HAZARDS
    assert found.has_drift


def test_hazards_carry_the_explanation_and_the_policy_that_decides(pair: tuple[Registry, Registry]) -> None:
    hazards = {h.topic: h for h in compare_registries(*pair).hazards}
    breaking = hazards["persistent://initech/hr/employee-records"]
    assert breaking.version == 8
    assert (breaking.policy, breaking.policy_value, breaking.policy_source) == (
        "compatibility",
        CompatibilityStrategy.FULL,
        "namespace",
    )
    (problem,) = breaking.problems
    assert (problem.code, problem.direction, problem.path) == ("READER_FIELD_WITHOUT_DEFAULT", "BACKWARD", "/fields/7")
    assert "badge" in problem.hint
    disallowed = hazards["persistent://initech/legacy/timesheets"]
    assert (disallowed.reason, disallowed.policy, disallowed.policy_value) == (
        HazardReason.AUTO_UPDATE_DISALLOWED,
        "allow_auto_update",
        False,
    )


def test_the_plan_registers_safe_versions_in_order_and_explains_the_refused(pair: tuple[Registry, Registry]) -> None:
    plans = {p.topic: p for p in compare_registries(*pair).plan}
    assert {t for t, p in plans.items() if p.safe} == SAFE
    # the second version passes BACKWARD only after the first: judged in sequence, both are accepted
    steps = plans["persistent://acme/orders/order-status-changed"].steps
    assert [(s.version, s.accepted, s.registers_as) for s in steps] == [(5, True, 5), (6, True, 6)]
    refused = plans["persistent://initech/hr/employee-records"].steps
    assert [(s.version, s.accepted, s.blocked_by) for s in refused] == [(8, False, None), (9, False, 8)]
    assert refused[0].reason.startswith("incompatible under FULL")
    diverged = plans["persistent://initech/analytics/page-views"]
    assert not diverged.steps and "version 6" in diverged.note


def test_registering_the_plan_converges_the_safe_topics(fresh_pair: tuple[Registry, Registry]) -> None:
    a, b = fresh_pair
    for plan in compare_registries(a, b).plan:
        if plan.safe:
            for step in plan.steps:
                b.register(plan.topic, a.get(plan.topic, step.version).info)
    after = {t.topic: t.state for t in compare_registries(a, b).topics}
    assert all(after[topic] is TopicState.SAME for topic in SAFE)


def test_a_registry_against_itself_has_no_drift(make_reg: Callable[..., Registry]) -> None:
    reg = make_reg()
    seed_sample_data(reg)
    found = compare_registries(reg, reg.read_only())
    assert not found.has_drift and not found.hazards and not found.plan
    assert found.as_json() == {**found.as_json(), "topics": [], "policies": [], "hazards": [], "plan": []}


def test_a_schemaless_producer_is_a_hazard_where_b_enforces_validation(make_reg: Callable[..., Registry]) -> None:
    a, b = make_reg(), make_reg()
    seed_sample_data(a)
    seed_sample_data(b)
    producers = [c for c in a.clients("globex/telemetry/raw-frames") if c.role is ClientRole.PRODUCER]
    assert producers and producers[0].schema_type is None
    assert not compare_registries(a, b).hazards
    b.set_namespace_policy("globex/telemetry", validation_enforced=True)
    (hazard,) = compare_registries(a, b).hazards
    assert (hazard.topic, hazard.reason, hazard.version) == (
        "persistent://globex/telemetry/raw-frames",
        HazardReason.VALIDATION_ENFORCED,
        None,
    )
    assert (hazard.policy_value, hazard.policy_source) == (True, "namespace")


def test_the_wire_form(pair: tuple[Registry, Registry]) -> None:
    found = compare_registries(*pair)
    doc = json.loads(json.dumps(found.as_json()))
    assert set(doc) == {"from", "to", "summary", "topics", "policies", "hazards", "plan"}
    assert doc["summary"]["to_behind"] == 3 and doc["summary"]["hazards"] == 2
    assert {t["topic"] for t in doc["topics"]} == set(STATES)
    assert len(found.as_json(include_same=True)["topics"]) == len(found.topics)
    assert {"target", "field", "from", "to", "from_source", "to_source"} == set(doc["policies"][0])
    assert isinstance(found, Comparison)


def _schema(i: int, *fields: str) -> SchemaInfo:
    doc = {"type": "record", "name": f"E{i}", "fields": [{"name": "id", "type": "long"}]}
    doc["fields"] += [{"name": f, "type": "int", "default": 0} for f in fields]
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc), properties={})


def _synthetic(topics: int) -> Iterator[dict[str, object]]:
    yield {"kind": "snapshot", "format": 1}
    yield {"kind": "tenant", "name": "t"}
    yield {"kind": "namespace", "name": "t/ns", "policy": {"compatibility": "BACKWARD"}}
    for i in range(topics):
        yield {"kind": "topic", "name": f"persistent://t/ns/topic-{i}", "namespace": "t/ns"}
    for i in range(topics):
        for v, info in enumerate((_schema(i), _schema(i, "f1"))):
            yield {"kind": "version", "topic": f"t/ns/topic-{i}", "version": v, "type": "AVRO", "deleted": False,
                   "timestamp": 1, "user": "", "properties": {}, "schema": info.schema}  # fmt: skip


def test_forty_changed_topics_among_thousands_are_found_and_only_those(tmp_path: Path) -> None:
    a, b = (Registry.open(tmp_path / f"{n}.db", create=True) for n in "ab")
    for reg in (a, b):
        registry_from_records(_synthetic(3000), into=reg)
    changed: dict[str, TopicState] = {}
    for k in range(40):
        i = 17 + 73 * k
        topic = f"persistent://t/ns/topic-{i}"
        kind = k % 4
        if kind == 0:
            a.register(topic, _schema(i, "f1", "f2"))
            changed[topic] = TopicState.TO_BEHIND
        elif kind == 1:
            b.register(topic, _schema(i, "f1", "f2"))
            changed[topic] = TopicState.TO_AHEAD
        elif kind == 2:
            b.delete(topic)
            changed[topic] = TopicState.DELETED_IN_TO
        else:
            a.register(topic, _schema(i, "f1", "g"))
            b.register(topic, _schema(i, "f1", "h"))
            changed[topic] = TopicState.DIVERGED
    found = compare_registries(a, b)
    assert {t.topic: t.state for t in found.drifted} == changed
    assert len(found.topics) == 3000 and not found.policies
    assert {p.topic for p in found.plan if p.safe} == {t for t, s in changed.items() if s is TopicState.TO_BEHIND}
    a.close()
    b.close()


class _CountingStorage(MemoryStorage):
    """A memory storage that notes which histories are read whole (and by how many per-topic policy reads)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []
        self.policy_reads = 0

    def history(self, schema_id: str) -> list[SchemaVersion]:
        self.read.append(schema_id)
        return super().history(schema_id)

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        self.policy_reads += 1
        return super().topic_policy(topic)


def test_histories_whose_fingerprints_agree_are_never_read() -> None:
    stores = _CountingStorage(), _CountingStorage()
    a, b = (Registry(store) for store in stores)
    for reg in (a, b):
        seed_sample_data(reg)
    a.register("acme/orders/order-status-changed", with_field(a, "acme/orders/order-status-changed", "note"))
    for store in stores:
        store.read.clear()
        store.policy_reads = 0
    found = compare_registries(a, b)
    assert [t.topic for t in found.drifted] == ["persistent://acme/orders/order-status-changed"]
    for store in stores:
        assert set(store.read) == {"acme/orders/order-status-changed"}
        # one per topic with its own policy (its policy in force is compared), the changed topic's copy of B and
        # B's validation on raw-frames (A records a schema-less producer there): not one per topic
        assert store.policy_reads <= len(store.all_topic_policies()) + 2 < len(found.topics)


def test_a_broker_without_topic_policies_compares(make_reg: Callable[..., Registry]) -> None:
    a, b = make_reg(), make_reg(topic_level_policies_enabled=False)
    seed_sample_data(a)
    a.register("acme/orders/refunds-v2", record("Refund", "id"))
    found = compare_registries(a, b)  # B's topic policies are refused, not empty: none is read
    assert "persistent://acme/orders/refunds-v2" in {p.topic for p in found.plan if p.safe}


def test_the_diff_of_a_diverged_version(pair: tuple[Registry, Registry]) -> None:
    a, b = pair
    diff = drift_diff(a, b, "initech/analytics/page-views", 6)
    assert diff is not None and (diff.old_version, diff.new_version) == ("B v6", "A v6")
    assert {(c.kind, c.path.rsplit("/", 1)[-1]) for c in diff.changes} >= {("FIELD_ADDED", "referrer")}
    assert "campaign" in diff.old_text and "referrer" in diff.new_text
    assert drift_diff(a, b, "initech/analytics/page-views", 99) is None


def test_a_comparison_assembled_from_parts_is_the_whole_one(pair: tuple[Registry, Registry]) -> None:
    """`audit drift` computes each topic's answers in batches, in any order, and the namespaces apart: put back
    together they are `compare_registries`'s answer; `same` topics left out are still counted."""
    from registry.compare import assemble, compare_namespaces, compare_topics

    a, b = pair
    whole = compare_registries(a, b)
    parts = compare_topics(a, b)
    assert assemble(a.location, b.location, compare_namespaces(a, b), reversed(parts)) == whole
    drifted = [p for p in parts if p.drift is None or p.drift.state is not TopicState.SAME or p.policies or p.hazard]
    same = len(parts) - len(drifted)  # price-changes is `same` but its own policy differs: kept
    counted = assemble(a.location, b.location, compare_namespaces(a, b), drifted, unlisted_same=same)
    assert counted.summary == whole.summary and counted.as_json() == whole.as_json()
    assert counted.summary["same"] > 0


def test_a_parquet_export_is_a_side_and_a_folder_that_is_not_one_is_refused(
    pair: tuple[Registry, Registry], tmp_path: Path
) -> None:
    """`export --format parquet` read back whole (registry.parquet) compares as the registry it came from,
    bytes that are not UTF-8 included; any other folder is refused naming what is missing or foreign."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline._parquet_export import export_parquet
    from registry import InvalidArgumentError
    from registry.compare import parquet_side

    a, b = pair
    a.register("acme/orders/raw-bytes", SchemaInfo(type=SchemaType.BYTES, schema=b"\xff\xfe", properties={}))
    export_parquet(a, None, str(tmp_path / "a"))
    side = parquet_side(tmp_path / "a")
    assert side.get("acme/orders/raw-bytes").data == b"\xff\xfe"
    whole, read_back = compare_registries(a, b), compare_registries(side, b)
    assert read_back.as_json(include_same=True) | {"from": ""} == whole.as_json(include_same=True) | {"from": ""}
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidArgumentError, match="not a Parquet export: no registry table"):
        parquet_side(tmp_path / "empty")
    with pytest.raises(InvalidArgumentError, match="no such folder"):
        parquet_side(tmp_path / "missing")
    pq.write_table(pa.table({"topic": ["t"], "schema_id": [1]}), tmp_path / "foreign.parquet")
    for part in (tmp_path / "a" / "versions").rglob("*.parquet"):
        part.unlink()
    (tmp_path / "foreign.parquet").rename(tmp_path / "a" / "versions" / "part-00000.parquet")
    with pytest.raises(InvalidArgumentError, match="column 'schema_id' is int64, expected string"):
        parquet_side(tmp_path / "a")
