"""The app over a remote registry (issue 22): against `schema-explorer serve` the first Browse page costs a
handful of requests (the explorer API answers a page in one), the recorded clients show on the Topic page,
and against a plain broker's API (`serve --admin-only`) the same page answers the same once the app's search
index of the broker is complete: until then Browse shows the index's progress (never a blocked script), with
Cancel and Resume, and the sidebar says how old the index is."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from shell_helpers import TOPIC_PAGE, errors
from streamlit.testing.v1 import AppTest

import registry
from app import session
from registry import CACHE_ENV_VAR, IndexState, IndexStatus
from registry.remote._broker_index import CachedBrokerIndex
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
    handle = session.open_handle(url, None, None)
    sent = handle.requests_sent
    namespaces = sum(len(handle.namespaces(t)) for t in handle.tenants())
    # Issue 22's bound is namespaces + 100; a page is one search request, plus the open and the tenant list.
    assert handle.records_clients and sent <= 8 < namespaces + 100
    assert handle.broker_index is None and "Search index" not in sidebar_captions(at)


def sidebar_captions(at: AppTest) -> str:
    return " | ".join(c.value for c in at.sidebar.caption)


def shows_progress(at: AppTest) -> bool:
    """Browse shows the index's progress view: a bar or the stopped run's message, and no topic list."""
    view = [m.value for m in at.main.markdown if "Building the search index of" in m.value]
    return bool(view) and not at.main.dataframe and not [m for m in at.main.markdown if "match" in m.value]


def ready(url: str, timeout: float = 30.0) -> IndexStatus:
    """Wait until the app's handle of `url` has a complete index (the handle every session shares)."""
    handle = session.open_handle(url, None, None)
    deadline = time.monotonic() + timeout
    while True:
        status = handle.broker_index.status()
        assert status is not None
        if status.ready and not status.running:
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


@pytest.fixture
def fresh_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[threading.Event]:
    """An empty index cache for the app's next handle, and a gate every topic read waits at until it is set,
    so a test sees the index while it runs (on loopback, 47 topics are read in a blink)."""
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "index-cache"))
    gate = threading.Event()
    read = CachedBrokerIndex._row

    def gated(index: CachedBrokerIndex, topic: str) -> object:
        gate.wait(timeout=60)
        return read(index, topic)

    monkeypatch.setattr(CachedBrokerIndex, "_row", gated)
    session.open_handle.clear()  # the handles opened so far keep their caches: the next one opens the empty one
    try:
        yield gate
    finally:
        gate.set()
        session.open_handle.clear()


def test_a_plain_broker_browses_the_same_topics(make_app: MakeApp, servers) -> None:
    url = servers["admin-only"]
    at = make_app(url).run()  # the first visit starts the index and shows its progress (or, done already, the list)
    assert errors(at) == [] and not at.exception
    status = ready(url)
    at.run()
    assert errors(at) == [] and not at.exception
    assert counts(at).startswith("**47** topics match")
    handle = session.open_handle(url, None, None)
    assert not handle.records_clients
    # The index, not the page, costs the requests on a plain broker: per namespace its policies and three topic
    # listings, per topic its schemas (plus its metadata when it has none, its own strategy when topic-level
    # policies are on). The page itself then answers from the cache.
    namespaces = sum(len(handle.namespaces(t)) for t in handle.tenants())
    assert status.total == 47 and 0 < status.requests <= namespaces * 4 + 47 * 3
    assert "Search index: 47 topics, updated" in sidebar_captions(at)
    assert at.sidebar.button(key="index_refresh").label == "Refresh index"


def test_browse_shows_the_index_progress_until_it_is_complete(make_app: MakeApp, servers, fresh_index) -> None:
    """A first visit to a plain broker never blocks the script for the whole index: Browse shows its progress
    and Cancel, the sidebar a small bar; once complete a rerun shows the topics and the index's age."""
    url = servers["admin-only"]
    at = make_app(url).run()
    assert errors(at) == [] and not at.exception
    assert shows_progress(at)
    bar = at.main.get("progress")[0]
    assert bar.value == 0
    assert bar.text == "Listing namespaces and topics…" or bar.text.startswith(f"Indexing `{url}`: 0 of 47 topics")
    assert at.main.button(key="index_cancel").label == "Cancel"
    assert "Search index: none complete yet" in sidebar_captions(at)
    small = at.sidebar.get("progress")[0].text
    assert small == "Listing namespaces and topics…" or small.startswith("Indexing: 0 of 47 topics")
    at.run()  # a rerun meanwhile (what the fragment does every second) neither blocks nor restarts the run
    assert shows_progress(at) and at.main.get("progress")[0].value == 0

    fresh_index.set()
    ready(url)
    at.run()
    assert errors(at) == [] and not at.exception
    assert counts(at).startswith("**47** topics match") and len(at.dataframe[0].value) == 47
    assert "Search index: 47 topics, updated just now" in sidebar_captions(at)
    assert not at.get("progress")
    assert any("results come from this app's index" in c.value for c in at.main.caption)


def test_cancel_then_resume_the_index_from_browse(make_app: MakeApp, servers, fresh_index) -> None:
    url = servers["admin-only"]
    at = make_app(url).run()
    handle = session.open_handle(url, None, None)
    at.button(key="index_cancel").click().run()
    assert errors(at) == [] and not at.exception
    assert shows_progress(at)
    assert any(c.value.startswith("Stopping:") for c in at.main.caption)  # the reads in flight finish first
    fresh_index.set()
    deadline = time.monotonic() + 30
    while (status := handle.broker_index.status()) is not None and status.running:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert status is not None and status.state is IndexState.CANCELLED and not status.ready
    at.run()
    assert errors(at) == [] and not at.exception
    assert shows_progress(at)
    assert "Indexing was cancelled" in at.main.warning[0].value
    assert "The last run was cancelled after" in sidebar_captions(at)
    assert at.sidebar.button(key="index_refresh").label == "Build index"

    at.main.button(key="index_resume").click().run()
    assert errors(at) == [] and not at.exception
    resumed = ready(url)
    # The resumed run reads only the topics the cancelled one did not.
    assert resumed.state is IndexState.DONE and resumed.requests < status.requests + 47 * 3
    at.run()
    assert counts(at).startswith("**47** topics match")


def test_the_sidebar_stops_a_background_refresh(make_app: MakeApp, servers, fresh_index) -> None:
    url = servers["admin-only"]
    fresh_index.set()
    with registry.open(url) as other:  # an earlier visit left a complete index
        assert other.search_topics().total == 47
    fresh_index.clear()
    at = make_app(url).run()  # the refresh starts, its reads wait at the gate
    handle = session.open_handle(url, None, None)
    at.sidebar.button(key="index_sidebar_cancel").click().run()
    fresh_index.set()
    status = handle._index.wait(timeout=30)  # type: ignore[attr-defined]
    assert status.state is IndexState.CANCELLED and status.ready  # the earlier complete index still answers
    at.run()
    assert errors(at) == [] and counts(at).startswith("**47** topics match")
    assert "The last run was cancelled after" in sidebar_captions(at)


def test_a_second_visit_searches_at_once_from_the_cached_index(make_app: MakeApp, servers, fresh_index) -> None:
    """The cache is a file per cluster URL and token: a handle that finds a complete one answers from it at once
    (the page says how old it is) while a refresh runs in the background."""
    url = servers["admin-only"]
    fresh_index.set()
    with registry.open(url) as other:  # an earlier visit: the same cache file
        assert other.search_topics().total == 47
    fresh_index.clear()  # the refresh this visit starts waits: the page must answer from the cache meanwhile
    at = make_app(url).run()
    assert errors(at) == [] and not at.exception
    assert counts(at).startswith("**47** topics match")
    said = " ".join(c.value for c in at.main.caption)
    assert "results come from this app's index" in said and "refreshing in the background" in said
    assert "Search index: 47 topics, updated just now" in sidebar_captions(at)
    assert at.sidebar.get("progress")[0].text.startswith(("Listing", "Refreshing: "))
    fresh_index.set()
    ready(url)  # the background refresh the first search started ends before the server may stop


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
