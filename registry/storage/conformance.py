"""The conformance suite of the storage protocol (`StorageBackend`, registry/storage/README.md): what any
backend must do for the registry above it to behave as Pulsar's, checked against a fresh, empty storage.

Every check is a plain function `check(make)`, where `make()` returns a new empty storage; it raises
AssertionError naming what the backend got wrong. Run them from any test framework; with pytest:

    from registry.storage.conformance import CHECKS

    @pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
    def test_my_storage_conforms(check):
        check(lambda: MyStorage(...))

`ROLLBACK_CHECKS` hold backends to atomic transactions (an exception undoes the writes inside). The memory
storage is exempt: it is documented not to keep a journal.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .._audit import AuditAction, AuditEntry, AuditOutcome
from .._model import ClientRecord, ClientRole, CompatibilityStrategy, NamespacePolicy, SchemaVersion, TopicPolicy
from .._types import SchemaType
from ._base import LocalStorage, ProposalRow, StaleHistoryError, fingerprint

Make = Callable[[], LocalStorage]
SCHEMA_ID = "acme/orders/created"
TOPIC = f"persistent://{SCHEMA_ID}"


def _version(
    version: int, *, deleted: bool = False, data: bytes = b"", kind: SchemaType = SchemaType.AVRO
) -> SchemaVersion:
    text = data or f'{{"type":"record","name":"R{version}","fields":[]}}'.encode()
    return SchemaVersion(
        topic=SCHEMA_ID,
        version=version,
        type=SchemaType.NONE if deleted else kind,
        data=b"" if deleted else text,
        properties={} if deleted else {"owner": "team-é", "k": "v"},
        timestamp=1_700_000_000_000 + version,
        deleted=deleted,
        user="ci",
    )


def _closing(make: Make) -> Any:
    class Opened:
        def __enter__(self) -> LocalStorage:
            self.storage = make()
            return self.storage

        def __exit__(self, *_: object) -> None:
            self.storage.close()

    return Opened()


def appends_compare_and_set_on_the_latest_version(make: Make) -> None:
    with _closing(make) as storage:
        storage.append(_version(0), None)
        for expected in (None, 1, 5):
            try:
                storage.append(_version(1), expected)
            except StaleHistoryError:
                continue
            raise AssertionError(f"append of version 1 expecting latest {expected} (it is 0) was accepted")
        storage.append(_version(1), 0)
        try:
            storage.append(_version(1), 0)  # a second writer that read the same latest
        except StaleHistoryError:
            pass
        else:
            raise AssertionError("a duplicate version 1 was appended")
        assert [e.version for e in storage.history(SCHEMA_ID)] == [0, 1]


def histories_read_back_exactly(make: Make) -> None:
    with _closing(make) as storage:
        payload = b"\x00\xff binary \xe2\x82\xac"
        storage.append(_version(0, data=payload, kind=SchemaType.PROTOBUF_NATIVE), None)
        storage.append(_version(1), 0)
        storage.append(_version(2, deleted=True), 1)
        storage.append(_version(3), 2)
        entries = storage.history(SCHEMA_ID)
        assert entries == [_version(0, data=payload, kind=SchemaType.PROTOBUF_NATIVE), _version(1),
                           _version(2, deleted=True), _version(3)], entries  # fmt: skip
        assert [e.version for e in storage.history_range(SCHEMA_ID, 1, 2)] == [1, 2]
        assert storage.history("acme/orders/none") == []


def dedup_scans_see_the_last_tombstone_and_matching_rows(make: Make) -> None:
    with _closing(make) as storage:
        first, second = _version(0), _version(1)
        storage.append_indexed(first, None, b"eq-0")
        storage.append_indexed(second, 0, None)
        print0 = fingerprint(first)
        scan = storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, print0.sha256, None)
        assert (scan.latest, scan.tombstone) == (1, None) and [r.version for r in scan.rows] == [0]
        scan = storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, b"x" * 32, b"eq-0")
        assert [r.version for r in scan.rows] == [0, 1], "the equal version and the one of unknown equality"
        storage.put_equalities(SCHEMA_ID, {1: b"eq-1"})
        scan = storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, b"x" * 32, b"eq-0")
        assert [r.version for r in scan.rows] == [0]
        storage.append_indexed(_version(2, deleted=True), 1, None)
        scan = storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, print0.sha256, None)
        assert (scan.latest, scan.tombstone, scan.rows) == (2, 2, []) and not scan.has_live


def force_delete_drops_the_whole_history(make: Make) -> None:
    with _closing(make) as storage:
        storage.append(_version(0), None)
        assert storage.drop(SCHEMA_ID) is True
        assert storage.history(SCHEMA_ID) == [] and storage.drop(SCHEMA_ID) is False
        storage.append(_version(0), None)  # a new history starts at 0 again
        assert storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, b"", None).latest == 0


def names_are_created_once_and_listed_in_byte_order(make: Make) -> None:
    with _closing(make) as storage:
        assert storage.put_tenant("acme", 1) is True and storage.put_tenant("acme", 2) is False
        storage.put_tenant("Zeta", 1)
        assert storage.tenants() == ["Zeta", "acme"]
        storage.put_namespace("acme/orders", NamespacePolicy(), 1)
        storage.put_namespace("acme/Billing", NamespacePolicy(), 1)
        assert storage.namespaces("acme") == ["acme/Billing", "acme/orders"]
        assert storage.put_topic(TOPIC, "acme/orders", 1) is True
        assert storage.put_topic(TOPIC, "acme/orders", 2) is False
        storage.put_topic("persistent://acme/orders/B", "acme/orders", 1)
        assert storage.topics("acme/orders") == ["persistent://acme/orders/B", TOPIC]
        assert storage.has_topic(TOPIC) and not storage.has_topic("persistent://acme/orders/none")


def policies_are_replaced_and_cleared(make: Make) -> None:
    with _closing(make) as storage:
        assert storage.namespace_policy("acme/orders") is None
        storage.put_namespace("acme/orders", NamespacePolicy(), 1)
        changed = NamespacePolicy(compatibility=CompatibilityStrategy.FULL, allow_auto_update=False,
                                  validation_enforced=True)  # fmt: skip
        storage.put_namespace("acme/orders", changed, 2)
        assert storage.namespace_policy("acme/orders") == changed
        policy = TopicPolicy(compatibility=CompatibilityStrategy.BACKWARD_TRANSITIVE, validation_enforced=False)
        storage.put_topic_policy(TOPIC, policy)
        assert storage.topic_policy(TOPIC) == policy
        storage.put_topic_policy(TOPIC, None)
        assert storage.topic_policy(TOPIC) is None


def clients_are_keyed_and_removed_by_role(make: Make) -> None:
    with _closing(make) as storage:
        producer = ClientRecord(topic=TOPIC, role=ClientRole.PRODUCER, name="app", version=1, connected_at=5)
        consumer = ClientRecord(topic=TOPIC, role=ClientRole.CONSUMER, name="app", subscription="s",
                                schema_type=SchemaType.AVRO, version=0, connected_at=6, replicator=True)  # fmt: skip
        storage.put_client(producer)
        storage.put_client(consumer)
        storage.put_client(ClientRecord(topic=TOPIC, role=ClientRole.PRODUCER, name="app", version=2, connected_at=7))
        assert storage.clients([TOPIC]) == [consumer, ClientRecord(topic=TOPIC, role=ClientRole.PRODUCER, name="app",
                                                                   version=2, connected_at=7)]  # fmt: skip
        assert storage.clients([]) == [] and len(storage.clients(None)) == 2
        assert storage.remove_clients(TOPIC, "app", str(ClientRole.PRODUCER)) == 1
        assert storage.remove_clients(TOPIC, "app", None) == 1 and storage.clients(None) == []


def settings_round_trip(make: Make) -> None:
    with _closing(make) as storage:
        assert storage.setting("pulsar_version") is None
        storage.put_setting("pulsar_version", "3.0")
        storage.put_setting("pulsar_version", "4.0")
        assert storage.setting("pulsar_version") == "4.0"
        # Review rules and webhooks (registry/webhooks/_records.py) are JSON documents kept whole in a setting.
        document = '{"hooks":[' + ",".join(['{"url":"https://chat.example.com/é","secret":"' + "s" * 256 + '"}'] * 50)
        storage.put_setting("webhooks", document + "]}")
        assert storage.setting("webhooks") == document + "]}" and storage.setting("pulsar_version") == "4.0"


def the_change_token_moves_with_every_write_and_only_then(make: Make) -> None:
    with _closing(make) as storage:
        seen = [storage.change_token()]

        def moved(what: str) -> None:
            token = storage.change_token()
            assert token != seen[-1], f"{what} did not change the change token"
            seen.append(token)

        storage.put_tenant("acme", 1)
        moved("put_tenant")
        storage.append(_version(0), None)
        moved("append")
        storage.put_namespace("acme/orders", NamespacePolicy(), 1)
        moved("put_namespace")
        storage.put_client(ClientRecord(topic=TOPIC, role=ClientRole.PRODUCER, name="p"))
        moved("put_client")
        storage.append_audit(AuditEntry(at=1, user="u", action=AuditAction.REGISTER, target=TOPIC))
        storage.put_equalities(SCHEMA_ID, {0: b"e"})
        assert storage.change_token() == seen[-1], "an audit line or an equality digest changed the token"


def the_audit_trail_is_newest_first_and_filtered_by_scope(make: Make) -> None:
    with _closing(make) as storage:
        for at, target in enumerate([TOPIC, "acme/orders", "acme", "globex/x", "persistent://globex/x/y"]):
            storage.append_audit(AuditEntry(at=at, user="u", action=AuditAction.REGISTER, target=target,
                                             detail=f"d{at}", outcome=AuditOutcome.OK))  # fmt: skip
        assert [e.at for e in storage.audit(None, 10)] == [4, 3, 2, 1, 0]
        assert [e.at for e in storage.audit("acme", 10)] == [2, 1, 0]
        assert [e.target for e in storage.audit("acme/orders", 10)] == ["acme/orders", TOPIC]
        assert [e.at for e in storage.audit(None, 2)] == [4, 3]


def the_catalog_source_lists_every_topic_with_its_head(make: Make) -> None:
    with _closing(make) as storage:
        storage.put_tenant("acme", 1)
        storage.put_namespace("acme/orders", NamespacePolicy(), 1)
        storage.put_topic(TOPIC, "acme/orders", 1)
        storage.put_topic("persistent://acme/orders/empty", "acme/orders", 1)
        storage.append(_version(0), None)
        storage.append(_version(1), 0)
        source = storage.catalog_source()
        assert source.token == storage.change_token()
        heads = {row[0]: row for row in source.rows}
        assert set(heads) == {TOPIC, "persistent://acme/orders/empty"}
        assert heads[TOPIC][2:4] == (1, "AVRO") and int(heads[TOPIC][6]) == 2
        assert heads["persistent://acme/orders/empty"][2] is None


def proposals_are_numbered_replaced_listed_and_counted(make: Make) -> None:
    with _closing(make) as storage:
        assert storage.proposals(state=None, namespace=None, target=None, limit=10) == []
        assert storage.proposal(1) is None and not any(storage.proposal_counts().values())

        def row(namespace: str, state: str, doc: str = "{}") -> ProposalRow:
            return ProposalRow(id=0, namespace=namespace, target=f"persistent://{namespace}/t", state=state,
                               updated_at=1, doc=doc)  # fmt: skip

        first, second = storage.put_proposal(row("acme/a", "open")), storage.put_proposal(row("acme/b", "open"))
        assert (first, second) == (1, 2), f"new proposals are numbered from 1: got {first}, {second}"
        token = storage.change_token()
        storage.put_proposal(replace(row("acme/a", "applied", '{"x": "é"}'), id=first))
        assert storage.change_token() != token, "replacing a proposal did not change the change token"
        assert storage.proposal(first) == ProposalRow(id=1, namespace="acme/a", target="persistent://acme/a/t",
                                                      state="applied", updated_at=1, doc='{"x": "é"}')  # fmt: skip
        storage.put_proposal(replace(row("acme/c", "stale"), id=7))  # an import keeps its id
        assert storage.put_proposal(row("acme/a", "open")) == 8, "a new id is above every id stored"
        listed = storage.proposals(state=None, namespace=None, target=None, limit=10)
        assert [r.id for r in listed] == [8, 7, 2, 1], "proposals are listed newest first"
        assert [r.id for r in storage.proposals(state="open", namespace="acme/a", target=None, limit=10)] == [8]
        assert [r.id for r in storage.proposals(state=None, namespace=None, target=None, limit=2)] == [8, 7]
        counts = {state: n for state, n in storage.proposal_counts().items() if n}
        assert counts == {"open": 2, "applied": 1, "stale": 1}, f"counts by state: {counts}"


def concurrent_appends_lose_and_duplicate_nothing(make: Make) -> None:
    with _closing(make) as storage:
        writers, each = 4, 15
        errors: list[BaseException] = []

        def write() -> None:
            try:
                for _ in range(each):
                    while True:
                        latest = storage.dedup_scan(SCHEMA_ID, SchemaType.AVRO, b"", None).latest
                        nxt = 0 if latest is None else latest + 1
                        try:
                            storage.append(_version(nxt), latest)
                            break
                        except StaleHistoryError:
                            continue
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=write) for _ in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        assert [e.version for e in storage.history(SCHEMA_ID)] == list(range(writers * each))


def transactions_commit_everything_inside_at_once(make: Make) -> None:
    with _closing(make) as storage:
        with storage.transaction():
            storage.put_tenant("acme", 1)
            with storage.transaction():
                storage.append(_version(0), None)
            storage.put_namespace("acme/orders", NamespacePolicy(), 1)
        assert storage.tenants() == ["acme"] and len(storage.history(SCHEMA_ID)) == 1


def an_exception_undoes_the_transactions_writes(make: Make) -> None:
    with _closing(make) as storage:
        storage.put_tenant("acme", 1)
        try:
            with storage.transaction():
                storage.put_tenant("globex", 1)
                storage.append(_version(0), None)
                raise KeyError("boom")
        except KeyError:
            pass
        assert storage.tenants() == ["acme"] and storage.history(SCHEMA_ID) == []
        with storage.transaction():
            storage.put_tenant("initech", 1)
            try:
                with storage.transaction():
                    storage.put_tenant("hooli", 1)
                    raise KeyError("inner")
            except KeyError:
                pass
        assert storage.tenants() == ["acme", "initech"], "an inner failure undoes only its own writes"


CHECKS: list[Callable[[Make], None]] = [
    appends_compare_and_set_on_the_latest_version,
    histories_read_back_exactly,
    dedup_scans_see_the_last_tombstone_and_matching_rows,
    force_delete_drops_the_whole_history,
    names_are_created_once_and_listed_in_byte_order,
    policies_are_replaced_and_cleared,
    clients_are_keyed_and_removed_by_role,
    settings_round_trip,
    the_change_token_moves_with_every_write_and_only_then,
    the_audit_trail_is_newest_first_and_filtered_by_scope,
    the_catalog_source_lists_every_topic_with_its_head,
    proposals_are_numbered_replaced_listed_and_counted,
    concurrent_appends_lose_and_duplicate_nothing,
    transactions_commit_everything_inside_at_once,
]
"""Every backend must pass these."""
ROLLBACK_CHECKS: list[Callable[[Make], None]] = [an_exception_undoes_the_transactions_writes]
"""Backends with a journal (SQLite, PostgreSQL) must pass these too."""
