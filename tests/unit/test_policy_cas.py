"""A policy change saved against what was previewed (`expected=`) and a registration that says whether it stored:
the decisions the app used to make itself by re-reading (a check-then-act), now made by the core, atomically."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from registry import (
    AuditOutcome,
    CompatibilityStrategy,
    NamespacePolicy,
    PolicyChangedError,
    Registration,
    Registry,
    SchemaInfo,
    SchemaType,
    TopicPolicy,
)

NS = "acme/cas"
TOPIC = f"persistent://{NS}/orders"
AVRO = SchemaInfo(type=SchemaType.AVRO, schema='{"type":"record","name":"O","fields":[{"name":"a","type":"long"}]}')


@pytest.fixture
def reg(tmp_path: Path) -> Registry:
    reg = Registry.open(tmp_path / "r.db", create=True)
    reg.create_tenant("acme")
    reg.create_namespace(NS)
    reg.register(TOPIC, AVRO)
    return reg


def test_a_save_against_a_stale_preview_is_refused_and_recorded(reg: Registry) -> None:
    alice = reg.preview_namespace_policy(NS, compatibility="FULL")
    reg.set_namespace_policy(NS, compatibility="FORWARD", user="bob")  # bob saves first
    with pytest.raises(PolicyChangedError, match="changed since"):
        reg.set_namespace_policy(NS, compatibility="FULL", expected=alice.before, user="alice")
    assert reg.namespace_policy(NS).compatibility is CompatibilityStrategy.FORWARD
    refused = reg.audit_trail(NS)[0]
    assert (refused.user, refused.outcome) == ("alice", AuditOutcome.REFUSED)
    fresh = reg.preview_namespace_policy(NS, compatibility="FULL")  # preview again, then save
    assert reg.set_namespace_policy(NS, compatibility="FULL", expected=fresh.before).compatibility == "FULL"


def test_a_topic_policy_is_compared_and_set_too(reg: Registry) -> None:
    preview = reg.preview_topic_policy(TOPIC, compatibility="FULL")
    assert preview.before == TopicPolicy()
    reg.set_topic_policy(TOPIC, validation_enforced=True)
    with pytest.raises(PolicyChangedError):
        reg.set_topic_policy(TOPIC, compatibility="FULL", expected=preview.before)
    assert reg.topic_policy(TOPIC) == TopicPolicy(validation_enforced=True)


def test_a_namespace_not_made_yet_is_previewed_against_the_defaults(reg: Registry) -> None:
    preview = reg.preview_namespace_policy("acme/new", compatibility="FULL")
    assert preview.before == NamespacePolicy()
    assert reg.set_namespace_policy("acme/new", compatibility="FULL", expected=preview.before).compatibility == "FULL"


def _race(first: Registry, second: Registry, before: NamespacePolicy) -> list[str]:
    """`first` saves FULL and `second` FORWARD against `before`, released at the same moment."""
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def save(handle: Registry, strategy: str) -> None:
        start.wait()
        try:
            handle.set_namespace_policy(NS, compatibility=strategy, expected=before)
            outcomes.append(strategy)
        except PolicyChangedError:
            outcomes.append("refused")

    threads = [
        threading.Thread(target=save, args=(first, "FULL")),
        threading.Thread(target=save, args=(second, "FORWARD")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_two_saves_of_one_preview_at_once_store_exactly_one(tmp_path: Path) -> None:
    """Two handles on one file (two app sessions, or two processes' connections) save different values
    against the same preview at the same moment: one wins, the other is refused, never both."""
    path = tmp_path / "race.db"
    with Registry.open(path, create=True) as seed:
        seed.create_tenant("acme")
        seed.create_namespace(NS)
    for _ in range(5):
        with Registry.open(path) as first, Registry.open(path) as second:
            outcomes = _race(first, second, first.namespace_policy(NS))
            assert outcomes.count("refused") == 1, outcomes
            winner = next(o for o in outcomes if o != "refused")
            assert first.namespace_policy(NS).compatibility == winner
            first.set_namespace_policy(NS, compatibility="UNDEFINED")  # back to the shared start


def test_register_says_whether_it_stored(reg: Registry) -> None:
    assert reg.register(TOPIC, AVRO) == Registration(0, stored=False)
    newer = SchemaInfo(
        type=SchemaType.AVRO,
        schema=AVRO.schema.replace('"long"}', '"long"},{"name":"b","type":["null","string"],"default":null}'),
    )
    judged = reg.effective_policy(TOPIC).admin_compatibility.value
    assert reg.register(TOPIC, newer) == Registration(1, stored=True, judged_under=judged)
    assert reg.register(TOPIC, AVRO) == Registration(0, stored=False)  # still live: found, not stored
