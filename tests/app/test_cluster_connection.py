"""The sidebar connects to a cluster as pulsar-admin and pulsarctl do (issue 42): a pulsarctl context picked
from ~/.config/pulsar/config, or a client.conf path, against the simulated 3-broker TLS cluster with token
auth. The sidebar shows the cluster's URL and the auth method by name, warns in insecure mode, and never shows
the token; links name the context or the client.conf path, never a credential. What cannot connect (a missing
file, an unknown context, an unsupported plugin, a refused connection) is one line, and the session stays on
the registry it had."""

from __future__ import annotations

import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_helpers import errors
from streamlit.testing.v1 import AppTest

from app import session
from cluster_sim import ADMIN_TOKEN, SimulatedCluster, simulated_cluster
from registry import CACHE_ENV_VAR, Registry

pytestmark = [pytest.mark.server, pytest.mark.cluster]

MakeApp = Callable[..., AppTest]
PLUGIN = "org.apache.pulsar.client.impl.auth."


@pytest.fixture(scope="module")
def cluster(seeded_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatedCluster]:
    folder = tmp_path_factory.mktemp("app-cluster")
    shutil.copy(seeded_file, folder / "registry.db")
    with Registry.open(folder / "registry.db") as reg, simulated_cluster(reg, folder / "certs", auth="token") as sim:
        yield sim


@pytest.fixture
def home(cluster: SimulatedCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home whose pulsarctl config has `prod` (token, the cluster's CA), `insecure` (no certificate check)
    and `closed` (a port nobody listens on); the index cache is the test's own."""
    home = tmp_path / "home"
    config = home / ".config" / "pulsar" / "config"
    config.parent.mkdir(parents=True)
    url, ca = cluster.urls[0], cluster.certs.ca
    config.write_text(
        "current-context: prod\n"
        "contexts:\n"
        f"  prod:\n    admin-service-url: {url}\n"
        f"  insecure:\n    admin-service-url: {url}\n"
        "  closed:\n    admin-service-url: https://127.0.0.1:1\n"
        "auth-info:\n"
        f"  prod:\n    token: {ADMIN_TOKEN}\n    tls_trust_certs_file_path: {ca}\n"
        f"  insecure:\n    token: {ADMIN_TOKEN}\n    tls_allow_insecure_connection: true\n"
        f"  closed:\n    token: {ADMIN_TOKEN}\n    tls_trust_certs_file_path: {ca}\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "index-cache"))
    for name in ("SCHEMA_EXPLORER_URL", "SCHEMA_EXPLORER_CLIENT_CONF", "SCHEMA_EXPLORER_CONTEXT"):
        monkeypatch.delenv(name, raising=False)
    yield home
    # The handles every session shares hold connections to the cluster: close them, or it cannot stop.
    for client_conf, context in OPENED:
        session.open_handle("", None, None, client_conf, context).close()
    OPENED.clear()
    session.open_handle.clear()


OPENED: set[tuple[str | None, str | None]] = set()  # (client_conf, context) the test connected to


def client_conf(cluster: SimulatedCluster, folder: Path, **extra: str) -> Path:
    lines = {
        "webServiceUrl": cluster.urls[1],
        "authPlugin": PLUGIN + "AuthenticationToken",
        "authParams": f"token:{ADMIN_TOKEN}",
        "tlsTrustCertsFilePath": str(cluster.certs.ca),
    } | extra
    path = folder / "client.conf"
    path.write_text("".join(f"{key}={value}\n" for key, value in lines.items()))
    return path


def rendered(at: AppTest) -> str:
    """Everything the page sent to the browser (every element's message, links and code blocks included) and
    its query parameters."""
    parts: list[str] = [repr(at.query_params.to_dict() if hasattr(at.query_params, "to_dict") else at.query_params)]

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts)


def sidebar_text(at: AppTest) -> str:
    return " | ".join([m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption])


def pick_context(at: AppTest, name: str) -> AppTest:
    at.sidebar.selectbox(key="conn_context").set_value(name)
    return connected(at.sidebar.button(key="conn_context_apply").click().run(), None, name)


def give_client_conf(at: AppTest, path: Path | str) -> AppTest:
    at.sidebar.text_input(key="conn_client_conf").set_value(str(path))
    return connected(at.sidebar.button(key="conn_client_conf_apply").click().run(), str(path), None)


def connected(at: AppTest, client_conf: str | None, context: str | None) -> AppTest:
    if not at.error:
        OPENED.add((client_conf, context))
    return at


def failures(at: AppTest) -> list[str]:
    """The error lines, as read (markdown escapes removed)."""
    return [e.replace("\\", "") for e in errors(at)]


def indexed(at: AppTest, *, client_conf: str | None = None, context: str | None = None) -> AppTest:
    """Run the page again once the app's handle of that cluster has its search index (a plain broker's):
    Browse then lists the cluster's topics and keeps its link."""
    handle = session.open_handle("", None, None, client_conf, context)
    deadline = time.monotonic() + 60
    while not ((status := handle.broker_index.status()) is not None and status.ready and not status.running):
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    return at.run()


def on_the_embedded_file(at: AppTest, db: Path) -> bool:
    return f"**Embedded** · `{db}`" in sidebar_text(at)


def test_a_context_picked_in_the_sidebar_connects_and_never_shows_its_token(
    make_app: MakeApp, db: Path, home: Path, cluster: SimulatedCluster
) -> None:
    at = make_app(db).run()
    assert at.sidebar.selectbox(key="conn_context").options == ["prod", "closed", "insecure"]  # current first
    at = pick_context(at, "prod")
    assert errors(at) == []
    text = sidebar_text(at)
    assert "**Cluster** · `pulsarctl context prod`" in text
    assert f"`{cluster.urls[0]}` · auth: token" in text
    assert "pulsarctl context prod" in rendered(at) and ADMIN_TOKEN not in rendered(at)  # the walk sees the page
    at = indexed(at, context="prod")
    assert any(m.value.startswith("**47** topics match") for m in at.markdown)  # the cluster's topics
    assert at.query_params["context"] in ("prod", ["prod"])  # the link names the context, as it names a file
    assert ADMIN_TOKEN not in rendered(at)


def test_a_client_conf_path_connects_and_links_name_the_path_only(
    make_app: MakeApp, db: Path, home: Path, cluster: SimulatedCluster, tmp_path: Path
) -> None:
    conf = client_conf(cluster, tmp_path)
    at = give_client_conf(make_app(db).run(), conf)
    assert errors(at) == []
    text = sidebar_text(at)
    assert f"**Cluster** · `client.conf {conf}`" in text and f"`{cluster.urls[1]}` · auth: token" in text
    at = indexed(at, client_conf=str(conf))
    assert at.query_params["client_conf"] in (str(conf), [str(conf)])
    assert not at.sidebar.warning  # certificates are checked: no insecure warning
    assert ADMIN_TOKEN not in rendered(at)

    # A teammate opening that link lands on the same cluster, read from the same file on the app's machine.
    other = make_app(db)
    other.query_params["client_conf"] = str(conf)
    other.run()
    assert errors(other) == [] and f"`client.conf {conf}`" in sidebar_text(other)
    assert ADMIN_TOKEN not in rendered(other)


def test_insecure_mode_shows_a_visible_warning(make_app: MakeApp, db: Path, home: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the core also warns once per handle (InsecureConnectionWarning)
        at = pick_context(make_app(db).run(), "insecure")
    assert errors(at) == []
    assert any("NOT checked" in w.value for w in at.sidebar.warning)
    assert ADMIN_TOKEN not in rendered(at)


def test_what_cannot_connect_is_one_line_and_the_previous_connection_stays(
    make_app: MakeApp, db: Path, home: Path, cluster: SimulatedCluster, tmp_path: Path
) -> None:
    at = make_app(db).run()
    assert on_the_embedded_file(at, db)
    at = give_client_conf(at, tmp_path / "missing.conf")
    assert [e for e in failures(at) if "cannot read" in e and "missing.conf" in e and "Still on" in e]
    assert on_the_embedded_file(at, db) and "topics match" in rendered(at)  # never an empty registry

    sasl = client_conf(cluster, tmp_path, authPlugin=PLUGIN + "AuthenticationSasl", authParams="")
    at = give_client_conf(at, sasl)
    assert [e for e in failures(at) if "Kerberos" in e] and on_the_embedded_file(at, db)

    at = indexed(pick_context(at, "prod"), context="prod")  # then a good one, then a refusing one: prod stays
    assert errors(at) == [] and "`pulsarctl context prod`" in sidebar_text(at)
    at = pick_context(at, "closed")
    failed = failures(at)
    assert len(failed) == 1 and "\n" not in failed[0].strip() and "Still on pulsarctl context prod" in failed[0]
    assert "`pulsarctl context prod`" in sidebar_text(at)
    assert at.query_params["context"] in ("prod", ["prod"])
    assert ADMIN_TOKEN not in rendered(at)


def test_a_link_naming_an_unknown_context_is_reported_and_changes_nothing(
    make_app: MakeApp, db: Path, home: Path
) -> None:
    at = make_app(db)
    at.query_params["context"] = "nope"
    at.run()
    assert any("context" in w.value and "nope" in w.value for w in at.warning)
    assert on_the_embedded_file(at, db)
