"""One contract, two registries: the embedded facade and `registry.open(url)` over a live `serve` must answer
identically (architecture.md: "all shells give identical verdicts on the same input, and a test proves it").

Both start from the same sample data, against both kinds of remote (conftest.py): `serve` with its explorer
API, and `serve --admin-only`, a plain broker's API. Documented differences, asserted as such at the end: the
admin API carries no `user` for a version and no versions before the last soft delete; a plain broker records
no clients and keeps no audit trail.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

import registry
from registry import (
    STRATEGIES,
    ClientRole,
    CompatibilityStrategy,
    IncompatibleSchemaError,
    NamespacePolicy,
    PolicyError,
    Registration,
    Registry,
    RegistryError,
    SchemaInfo,
    SchemaType,
    SchemaVersion,
    TopicPolicy,
    TopicQuery,
    to_json,
)
from registry._model import ClientRecord

ORDERS = "persistent://acme/orders/order-created"
RETURNS_NS = "acme/orders"


def normalised(value: Any, *, times: bool = False) -> Any:
    """Blank what the admin API cannot carry (`user`) and, for writes made at different moments, times; and
    when the clients were connected (each registry file was seeded at its own moment)."""
    if isinstance(value, SchemaVersion):
        return dataclasses.replace(value, user="", timestamp=0 if times else value.timestamp)
    if isinstance(value, ClientRecord):
        return dataclasses.replace(value, connected_at=0)
    if isinstance(value, list | tuple):
        return type(value)(normalised(v, times=times) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("json", connected_at_blanked(to_json(value)))
    return value


def connected_at_blanked(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: 0 if k == "connected_at" else connected_at_blanked(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [connected_at_blanked(v) for v in doc]
    return doc


def outcome(call: Callable[[Registry], Any], reg: Registry, *, times: bool = False) -> Any:
    """The answer, or the error's class (and `.result` for refusals), so errors compare too."""
    try:
        return ("ok", normalised(call(reg), times=times))
    except IncompatibleSchemaError as exc:
        return ("refused", str(exc), exc.result)
    except RegistryError as exc:
        return ("error", type(exc).__name__)


def same(embedded: Registry, remote: Registry, call: Callable[[Registry], Any], *, times: bool = False) -> Any:
    mine, theirs = outcome(call, embedded, times=times), outcome(call, remote, times=times)
    assert theirs == mine
    return mine


def all_topics(reg: Registry) -> list[str]:
    return [t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns)]


# --- reads ----------------------------------------------------------------------------------------------------


def test_listings_are_identical(embedded, remote):
    assert same(embedded, remote, lambda r: r.tenants()) == ("ok", ["acme", "globex", "initech"])
    for tenant in embedded.tenants():
        same(embedded, remote, lambda r, t=tenant: r.namespaces(t))
        for ns in embedded.namespaces(tenant):
            same(embedded, remote, lambda r, n=ns: r.topics(n))
            same(embedded, remote, lambda r, n=ns: r.namespace_policy(n))
    assert len(all_topics(remote)) == 47


def test_every_topic_reads_identically(embedded, remote):
    """Live history, latest version, policies in force and the catalog row of all 47 sample topics."""
    for topic in all_topics(embedded):
        same(embedded, remote, lambda r, t=topic: r.history(t))
        same(embedded, remote, lambda r, t=topic: r.get(t))
        same(embedded, remote, lambda r, t=topic: r.effective_policy(t))
        same(embedded, remote, lambda r, t=topic: r.topic_policy(t))
        same(embedded, remote, lambda r, t=topic: r.topic_summary(t))


def test_catalog_search_pages_are_identical(embedded, remote):
    same(embedded, remote, lambda r: r.search_topics(offset=0, limit=10))
    same(embedded, remote, lambda r: r.search_topics(TopicQuery(tenant="initech"), offset=2, limit=5))


@pytest.mark.parametrize(
    "topic",
    [
        ORDERS,
        "persistent://initech/hr/employee-records",
        "persistent://initech/hr/time-off-requests",
        "persistent://acme/inventory/warehouse-transfers",
        "persistent://acme/payments/ledger-entries",
        "persistent://initech/legacy/timesheets",
    ],
    ids=["avro long history", "always-compatible history", "type changes", "protobuf", "full transitive", "legacy"],
)
def test_explanations_are_computed_identically(embedded, remote, topic):
    """what-if, check under every strategy, diffs and upgrade plans from the fetched history."""
    live = embedded.history(topic)
    first, latest = live[0].info, live[-1].info
    for candidate in (first, latest):
        same(embedded, remote, lambda r, c=candidate: r.what_if(topic, c))
        same(embedded, remote, lambda r, c=candidate: r.check(topic, c))
        for strategy in STRATEGIES:
            same(embedded, remote, lambda r, c=candidate, s=strategy: r.check(topic, c, s))
        same(embedded, remote, lambda r, c=candidate: r.find_version(topic, c))
    same(embedded, remote, lambda r: r.diff(topic, live[0].version))
    same(embedded, remote, lambda r: r.diff(topic, live[0].version, latest))
    same(embedded, remote, lambda r: r.upgrade_plan(topic))
    same(embedded, remote, lambda r: r.upgrade_plan(topic, first))


@pytest.mark.parametrize("namespace", ["acme/orders", "initech/hr", "initech/analytics"])
def test_policy_impact_is_identical(embedded, remote, namespace):
    for strategy in ("FULL_TRANSITIVE", "BACKWARD", "ALWAYS_INCOMPATIBLE"):
        same(embedded, remote, lambda r, s=strategy: r.policy_impact(namespace, s))


@pytest.mark.parametrize("namespace", ["acme/orders", "initech/hr", "initech/analytics"])
def test_policy_previews_are_identical(embedded, remote, namespace):
    """Every policy change previews the same on both (issue 19: a preview before every change)."""
    for values in (
        {"compatibility": "FULL_TRANSITIVE"},
        {"compatibility": "UNDEFINED"},
        {"validation_enforced": True},
        {"allow_auto_update": False, "auto_update_strategy": "Backward"},
    ):
        same(embedded, remote, lambda r, v=values: r.preview_namespace_policy(namespace, **v))
    for topic in all_topics(embedded):
        if topic.split("://", 1)[1].startswith(namespace + "/"):
            same(embedded, remote, lambda r, t=topic: r.preview_topic_policy(t, compatibility="ALWAYS_INCOMPATIBLE"))
            same(embedded, remote, lambda r, t=topic: r.preview_topic_policy(t, compatibility=None))


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.get(ORDERS, 99),
        lambda r: r.get(ORDERS, -1),
        lambda r: r.get("persistent://acme/orders/never-registered"),
        lambda r: r.get("persistent://acme/orders/bad name"),
        lambda r: r.namespaces("nobody"),
        lambda r: r.topics("acme/nothing"),
        lambda r: r.namespace_policy("acme/nothing"),
        lambda r: r.topic_summary("persistent://acme/orders/never-created"),
        lambda r: r.diff(ORDERS, 99),
        lambda r: r.check(ORDERS, SchemaInfo(type=SchemaType.AVRO, schema="{not json")),
        lambda r: r.what_if(ORDERS, SchemaInfo(type=SchemaType.INT32, schema="12")),
        lambda r: r.policy_impact("acme/orders", "SIDEWAYS"),
        lambda r: r.preview_namespace_policy("acme/orders", compatibility="SIDEWAYS"),
        lambda r: r.preview_topic_policy(ORDERS + "-partition-1", compatibility="FULL"),
    ],
    ids=[
        "a version that never existed",
        "a negative version",
        "a topic without schema",
        "an invalid topic name",
        "an unknown tenant",
        "an unknown namespace's topics",
        "an unknown namespace's policies",
        "an unknown topic's summary",
        "a diff from a missing version",
        "checking unparseable Avro",
        "a primitive with schema data",
        "an unknown strategy",
        "previewing an unknown strategy",
        "previewing a partition's policy",
    ],
)
def test_bad_reads_fail_identically(embedded, remote, call):
    assert same(embedded, remote, call)[0] == "error"


# --- writes: the same steps on both registries, which start equal ----------------------------------------------


def avro(*fields: tuple[str, str, Any]) -> SchemaInfo:
    doc = {
        "type": "record",
        "name": "Shipment",
        "namespace": "com.acme.contract",
        "fields": [{"name": n, "type": t, **({} if d is ... else {"default": d})} for n, t, d in fields],
    }
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc))


V0 = avro(("id", "string", ...))
V1 = avro(("id", "string", ...), ("carrier", "string", "none"))
BREAKING = avro(("id", "string", ...), ("weight", "double", ...))


def test_register_check_delete_answer_identically(embedded, remote):
    topic = "persistent://acme/orders/contract-shipments"
    steps: list[Callable[[Registry], Any]] = [
        lambda r: r.register(topic, V0),
        lambda r: r.register(topic, V0),  # dedup: the same version, nothing stored
        lambda r: r.check(topic, V1),
        lambda r: r.register(topic, V1),
        lambda r: r.check(topic, BREAKING),
        lambda r: r.register(topic, BREAKING),  # 409 → IncompatibleSchemaError with the local explanation
        lambda r: r.register(topic, SchemaInfo(type=SchemaType.AVRO, schema='["null","string"]')),
        lambda r: r.register(topic, SchemaInfo(type=SchemaType.STRING)),  # a type change under BACKWARD
        lambda r: r.find_version(topic, V1),
        lambda r: r.history(topic),
        lambda r: r.delete(topic),
        lambda r: r.get(topic),
        lambda r: r.history(topic),
        lambda r: r.what_if(topic, BREAKING),
        lambda r: r.register(topic, BREAKING),  # a new history after the delete: no check
        lambda r: r.get(topic),
        lambda r: r.delete(topic, force=True),
        lambda r: r.register(topic, V0),  # numbering restarts at 0
        lambda r: r.history(topic),
    ]
    answers = [same(embedded, remote, step, times=True) for step in steps]
    assert answers[0] == ("ok", normalised(Registration(0, stored=True)))
    assert answers[1] == ("ok", normalised(Registration(0, stored=False)))  # the live duplicate: nothing stored
    assert answers[5][0] == "refused" and answers[5][2].problems[0].code == "READER_FIELD_WITHOUT_DEFAULT"
    assert answers[6] == ("error", "InvalidSchemaError")
    checked = Registration(1, stored=True, judged_under=CompatibilityStrategy.BACKWARD)  # the metrics count it
    assert answers[3] == ("ok", normalised(checked)) and answers[10] == ("ok", 2)
    assert answers[14] == ("ok", normalised(Registration(3, stored=True)))  # the first after a delete: unjudged
    assert answers[17] == ("ok", normalised(Registration(0, stored=True)))


def test_refusals_carry_the_same_message(embedded, remote):
    topic = "persistent://acme/orders/contract-messages"
    for reg in (embedded, remote):
        reg.register(topic, V0)
    messages = []
    for reg in (embedded, remote):
        with pytest.raises(IncompatibleSchemaError) as refused:
            reg.register(topic, BREAKING)
        messages.append((str(refused.value), refused.value.result))
    assert messages[0] == messages[1]
    assert "weight" in messages[0][0]


def test_a_policy_saved_against_a_stale_preview_is_refused_identically(embedded, remote):
    """Two people preview changes of the same namespace; one saves; the other's save, made against what it
    previewed (`expected=`), is refused and stores nothing, embedded and remote alike."""
    ns = "globex/contract-cas"
    topic = f"persistent://{ns}/readings"
    for reg in (embedded, remote):
        reg.create_namespace(ns)
        reg.create_topic(topic)
    steps: list[Callable[[Registry], Any]] = [
        lambda r: r.set_namespace_policy(
            ns, compatibility="FULL", expected=r.preview_namespace_policy(ns, compatibility="FULL").before
        ),
        lambda r: r.set_namespace_policy(ns, compatibility="FORWARD", expected=NamespacePolicy()),  # stale
        lambda r: r.namespace_policy(ns),
        lambda r: r.set_topic_policy(topic, compatibility="FORWARD", expected=TopicPolicy()),
        lambda r: r.set_topic_policy(topic, compatibility="FULL", expected=TopicPolicy()),  # stale now
        lambda r: r.topic_policy(topic),
    ]
    answers = [same(embedded, remote, step) for step in steps]
    assert answers[1] == answers[4] == ("error", "PolicyChangedError")
    assert answers[0] == ("ok", normalised(NamespacePolicy(compatibility=CompatibilityStrategy.FULL)))
    assert answers[2] == answers[0] and answers[5] == (
        "ok",
        normalised(TopicPolicy(compatibility=CompatibilityStrategy.FORWARD)),
    )


def test_policies_answer_identically(embedded, remote):
    ns = "globex/contract"
    topic = f"persistent://{ns}/readings"
    steps: list[Callable[[Registry], Any]] = [
        lambda r: r.create_namespace(ns),
        lambda r: r.create_namespace(ns),
        lambda r: r.namespace_policy(ns),
        lambda r: r.set_namespace_policy(ns, compatibility="backward_transitive"),
        lambda r: r.set_namespace_policy(ns, auto_update_strategy="AutoUpdateDisabled", compatibility="UNDEFINED"),
        lambda r: r.set_namespace_policy(ns, allow_auto_update=False, validation_enforced=True),
        lambda r: r.set_namespace_policy(ns, allow_auto_update=True, allow_auto_update_with_replicator=False),
        lambda r: r.set_namespace_policy(ns, compatibility="SIDEWAYS"),
        lambda r: r.set_namespace_policy(ns, validation_enforced="yes"),
        lambda r: r.create_topic(topic),
        lambda r: r.create_topic(topic),
        lambda r: r.effective_policy(topic),
        lambda r: r.set_topic_policy(topic, compatibility="FORWARD"),
        lambda r: r.set_topic_policy(topic, validation_enforced=False),
        lambda r: r.effective_policy(topic),
        lambda r: r.set_topic_policy(f"{topic}-partition-1", compatibility="FULL"),
        lambda r: r.set_topic_policy(topic, compatibility="UNDEFINED"),
        lambda r: r.topic_policy(topic),
        lambda r: r.effective_policy(topic),
        lambda r: r.topics(ns),
        lambda r: r.create_tenant("contract-tenant"),
        lambda r: r.create_tenant("contract-tenant"),
        lambda r: r.tenants(),
    ]
    answers = [same(embedded, remote, step) for step in steps]
    assert answers[0] == ("ok", True) and answers[1] == ("ok", False)
    assert answers[6] == answers[7] == answers[8] == ("error", "PolicyError")


# --- where the admin API knows less, by design ---------------------------------------------------------------


def test_recorded_clients_come_from_the_explorer_api_and_a_broker_has_none(embedded, remote, kind):
    if kind == "admin-only":
        assert remote.clients() == [] and not remote.records_clients
    else:
        assert remote.records_clients
        assert sorted(normalised(remote.clients()), key=repr) == sorted(normalised(embedded.clients()), key=repr)
        assert len(remote.clients()) > 10 and normalised(remote.clients(ORDERS)) == normalised(embedded.clients(ORDERS))
    for missing in ("connect_producer", "connect_consumer", "disconnect"):
        assert not hasattr(remote, missing)
        with pytest.raises(AttributeError, match="what_if"):
            getattr(remote, missing)
    assert remote.what_if(ORDERS, V1).producer.role is ClientRole.PRODUCER  # the dry run instead


def test_calls_a_broker_cannot_serve_do_not_exist_remotely(remote):
    for missing in ("batch", "set_pulsar_version", "stored_pulsar_version", "in_memory", "open_file"):
        assert not hasattr(remote, missing)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        remote.nonsense  # noqa: B018


def test_remote_history_shows_the_last_tombstone_not_what_came_before(embedded, remote):
    topic = "persistent://acme/orders/contract-tombstones"
    for reg in (embedded, remote):
        reg.register(topic, V0)
        reg.delete(topic)
        reg.register(topic, V1)
    whole = embedded.history(topic, include_deleted=True)
    seen = remote.history(topic, include_deleted=True)
    assert [(e.version, e.deleted) for e in whole] == [(0, False), (1, True), (2, False)]
    assert [(e.version, e.deleted) for e in seen] == [(1, True), (2, False)]
    assert normalised(seen[1:], times=True) == normalised(whole[2:], times=True)


def test_versions_carry_no_user_over_the_admin_api(embedded, remote):
    assert embedded.get(ORDERS).user and remote.get(ORDERS).user == ""


def test_remote_registry_names_its_endpoint(remote, server_url):
    assert remote.location == server_url
    assert repr(remote) == f"RemoteRegistry({server_url!r})"


def test_clearing_policies_over_http(embedded, remote, kind):
    """Embedded: None clears. Over a broker's admin API: a JSON null clears the auto-update strategy as in
    Pulsar, but the API has no call that removes a topic's schemaValidationEnforced, so that is a PolicyError.
    Over `serve`, the change goes in one write to the core (server/_policy_writes.py) and clears as embedded."""
    for reg in (embedded, remote):
        reg.set_namespace_policy("initech/legacy", allow_auto_update=False)
    cleared = [
        reg.set_namespace_policy("initech/legacy", auto_update_strategy=None).auto_update_strategy
        for reg in (embedded, remote)
    ]
    assert cleared == [None, None]
    assert embedded.set_topic_policy(ORDERS, validation_enforced=None).validation_enforced is None
    if kind == "serve":
        assert remote.set_topic_policy(ORDERS, validation_enforced=None).validation_enforced is None
        return
    with pytest.raises(PolicyError, match="cannot remove the schemaValidationEnforced policy"):
        remote.set_topic_policy(ORDERS, validation_enforced=None)


def test_the_audit_trail_reads_the_same_through_the_server(embedded, remote, kind):
    topic = "persistent://acme/orders/contract-audited"
    trails = []
    for reg in (embedded, remote):
        reg.register(topic, V0)
        with pytest.raises(IncompatibleSchemaError):
            reg.register(topic, BREAKING)
        trails.append([(e.action, e.target, e.outcome) for e in reg.audit_trail(topic)])
    assert trails[0] == trails[1]  # a plain broker's: the workspace's, of the writes made through the explorer
    assert [outcome for _, _, outcome in trails[0]] == ["refused", "ok"]  # newest first


def test_clearing_allow_auto_update_over_http_is_refused_not_turned_into_false(embedded, remote, kind):
    """A broker reads a null isAllowAutoUpdateSchema body as false, so over its admin API clearing is refused;
    `serve` takes the change in one write to the core and clears it as embedded."""
    if kind == "serve":
        for reg in (embedded, remote):
            reg.set_namespace_policy("acme/orders", allow_auto_update=True)
        assert [
            reg.set_namespace_policy("acme/orders", allow_auto_update=None).allow_auto_update
            for reg in (embedded, remote)
        ] == [None, None]
        return
    before = remote.namespace_policy("acme/orders").allow_auto_update
    with pytest.raises(PolicyError, match="cannot clear isAllowAutoUpdateSchema"):
        remote.set_namespace_policy("acme/orders", allow_auto_update=None)
    assert remote.namespace_policy("acme/orders").allow_auto_update == before


# --- what each question costs over HTTP (issue 22) -------------------------------------------------------------


def test_each_question_costs_one_request_over_the_explorer_api(embedded, server_url, kind):
    """Against `serve`, a search page, a summary, the clients, a diff, a what-if, a plan and a policy impact are
    one request each; a plain broker's API makes the facade read what it needs (a search reads every topic)."""
    with registry.open(server_url) as fresh:
        assert fresh.requests_sent <= 4  # tenants (the probe), broker settings, version, explorer probe
        latest = embedded.get(ORDERS)
        questions = {
            "search": lambda r: r.search_topics(TopicQuery(text="name:inventory"), limit=5),
            "summary": lambda r: r.topic_summary(ORDERS),
            "clients": lambda r: r.clients(ORDERS),
            "diff": lambda r: r.diff(ORDERS, 0),
            "candidate diff": lambda r: r.diff(ORDERS, 0, latest.info),
            "what-if": lambda r: r.what_if(ORDERS, latest.info),
            "plan": lambda r: r.upgrade_plan(ORDERS, 0),
            "impact": lambda r: r.policy_impact(RETURNS_NS, "FULL"),
        }
        costs = {}
        for name, ask in questions.items():
            before = fresh.requests_sent
            assert normalised(ask(fresh)) == normalised(ask(embedded)), name
            costs[name] = fresh.requests_sent - before
    if kind == "serve":
        assert costs == dict.fromkeys(questions, 1)
    else:
        assert costs["clients"] == 0  # a broker has none to ask for
        assert costs["search"] > 47  # every topic's history and policies


def test_a_remote_answering_as_another_pulsar_line_computes_locally(server_url, kind):
    """The server answers as its own line: asked as another, the facade must not take the server's answers."""
    with registry.open(server_url, pulsar_version="3.0") as other:
        before = other.requests_sent
        other.search_topics(TopicQuery(), limit=5)
        assert other.requests_sent - before > 47  # read topic by topic, answered under 3.0's rules


def test_recorded_consumers_reach_the_policy_preview_remotely(embedded, remote, kind):
    """The issue's report: remote previews came back without the refused consumers the file shows."""
    refused = [
        len(topic.refused_clients)
        for ns in ("acme/orders", "initech/hr", "initech/analytics")
        for topic in remote.preview_namespace_policy(ns, compatibility="ALWAYS_INCOMPATIBLE").topics
    ]
    if kind == "serve":
        assert sum(refused) > 0
    else:
        assert sum(refused) == 0


def test_the_clients_of_several_topics_are_read_namespace_by_namespace(embedded, remote, kind):
    """The storage protocol's clients(topics) over HTTP: one request per namespace, only the topics asked."""
    topics = [ORDERS, "persistent://initech/hr/employee-records", "persistent://acme/inventory/product-catalog"]
    mine = embedded._state.storage.clients(topics)
    before = remote.requests_sent
    theirs = remote._state.storage.clients(topics)
    if kind == "admin-only":
        assert theirs == [] and remote.requests_sent == before
        return
    assert sorted(normalised(theirs), key=repr) == sorted(normalised(mine), key=repr) and len(mine) > 3
    assert remote.requests_sent - before == 3


def test_connected_clients_come_from_the_brokers_topic_stats(embedded, remote, kind):
    """Who is connected, from GET .../stats, which a plain broker answers too (without schema versions)."""
    for topic in all_topics(embedded)[:20]:
        mine, theirs = embedded.connected_clients(topic), remote.connected_clients(topic)
        if kind == "serve":
            blank = [dataclasses.replace(c, connected_since="") for c in mine]
            assert [dataclasses.replace(c, connected_since="") for c in theirs] == blank, topic
    orders = remote.connected_clients(ORDERS)
    assert {c.role for c in orders} == {ClientRole.PRODUCER, ClientRole.CONSUMER}
    assert all(c.connected_since.endswith("Z") for c in orders)
    same(embedded, remote, lambda r: r.connected_clients("persistent://acme/orders/no-such-topic"))
    same(embedded, remote, lambda r: r.connected_clients("persistent://acme/no-such-ns/topic"))


def test_a_search_text_longer_than_the_route_takes_is_searched_not_refused(embedded, remote, kind):
    long_text = "name:inventory " * 16  # 240 characters: past the explorer route's bound of 200
    same(embedded, remote, lambda r: r.search_topics(TopicQuery(text=long_text), limit=5))
