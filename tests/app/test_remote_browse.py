"""The app over a remote registry (issue 22): against `schema-explorer serve` the first Browse page costs a
handful of requests (the explorer API answers a page in one), the recorded clients show on the Topic page,
and against a plain broker's API (`serve --admin-only`) the same page still answers the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from shell_helpers import TOPIC_PAGE, errors
from streamlit.testing.v1 import AppTest

from app import state
from serving import served

pytestmark = pytest.mark.server

MakeApp = Callable[..., AppTest]
ORDERS = "persistent://acme/orders/order-created"


@pytest.fixture(scope="module")
def servers(seeded_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    logs = tmp_path_factory.mktemp("serve-logs")
    with ExitStack() as stack:
        yield {
            kind: stack.enter_context(served(seeded_file, log_dir=logs, admin_only=kind == "admin-only"))
            for kind in ("serve", "admin-only")
        }


def counts(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "match" in m.value)


def test_first_browse_page_over_the_explorer_api_costs_a_few_requests(make_app: MakeApp, servers) -> None:
    url = servers["serve"]
    at = make_app(url).run()
    assert errors(at) == [] and not at.exception
    assert counts(at).startswith("**47** topics match")
    assert len(at.dataframe[0].value) == 47
    handle = state._open(url, None, None)
    sent = handle.requests_sent
    namespaces = sum(len(handle.namespaces(t)) for t in handle.tenants())
    # Issue 22's bound is namespaces + 100; a page is one search request, plus the open and the tenant list.
    assert handle.records_clients and sent <= 8 < namespaces + 100


def test_a_plain_broker_browses_the_same_topics(make_app: MakeApp, servers) -> None:
    at = make_app(servers["admin-only"]).run()
    assert errors(at) == [] and not at.exception
    assert counts(at).startswith("**47** topics match")
    assert not state._open(servers["admin-only"], None, None).records_clients


def test_the_topic_page_shows_recorded_clients_or_what_a_broker_can_tell(make_app: MakeApp, servers) -> None:
    """Our server records which version each client uses; a plain broker only says who is connected (stats)."""
    frames, said, metrics = {}, {}, {}
    for kind, url in servers.items():
        at = make_app(url, topic=ORDERS, page=TOPIC_PAGE).run()
        assert errors(at) == [] and not at.exception
        frames[kind] = [frame.value for frame in at.dataframe if "subscription" in frame.value.columns]
        said[kind] = " ".join(info.value for info in at.info)
        metrics[kind] = {m.label: m.value for m in at.metric if m.label in ("Producers", "Consumers")}
    assert metrics["admin-only"] == metrics["serve"] == {"Producers": "2", "Consumers": "3"}
    recorded = frames["serve"][0]
    assert "version" in recorded.columns and len(recorded) == 5 and "admin API does not say" not in said["serve"]
    connected = frames["admin-only"][0]
    assert "version" not in connected.columns and "connected_since" in connected.columns
    assert sorted(connected["name"]) == sorted(recorded["name"])
    assert "admin API does not say which producers and consumers use which schema version" in said["admin-only"]
