"""`schema-explorer ui --client-conf FILE` and `--context NAME` (issue 42): accepted like the other commands,
checked before anything starts, and passed to the app process as the file's path or the context's name only,
so no credential is on the app's command line (where `ps` shows it) or in its environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.connection import connection_from_argv
from cli.main import app_command, build_parser, main

TOKEN = "cli-secret-token-123"
PLUGIN = "org.apache.pulsar.client.impl.auth."


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.delenv("SCHEMA_EXPLORER_TOKEN", raising=False)
    return tmp_path / "home"


def write_conf(folder: Path, **extra: str) -> Path:
    lines = {
        "webServiceUrl": "https://broker.example:8443",
        "authPlugin": PLUGIN + "AuthenticationToken",
        "authParams": f"token:{TOKEN}",
    } | extra
    path = folder / "client.conf"
    path.write_text("".join(f"{key}={value}\n" for key, value in lines.items()))
    return path


def test_ui_passes_the_client_conf_path_never_its_token(home: Path, tmp_path: Path) -> None:
    conf = write_conf(tmp_path)
    args = build_parser().parse_args(["ui", "--client-conf", str(conf), "--port", "8599"])
    command, env, where = app_command(args)
    assert command[command.index("--client-conf") + 1] == str(conf.resolve())
    assert TOKEN not in " ".join(command) and TOKEN not in where
    assert all(TOKEN not in value for value in env.values())
    assert "https://broker.example:8443" in where and "auth: token" in where
    started = connection_from_argv(command[3:], environ={})  # what the app process makes of its arguments
    assert started.client_conf == str(conf.resolve()) and started.is_remote and started.token is None


def test_ui_client_conf_alone_reads_pulsar_client_conf(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PULSAR_CLIENT_CONF", str(write_conf(tmp_path)))
    command, _env, _where = app_command(build_parser().parse_args(["ui", "--client-conf"]))
    assert "--client-conf" in command


def write_contexts(home: Path) -> None:
    config = home / ".config" / "pulsar" / "config"
    config.parent.mkdir(parents=True)
    config.write_text(
        "current-context: prod\ncontexts:\n  prod:\n    admin-service-url: https://broker.example:8443\n"
        f"auth-info:\n  prod:\n    token: {TOKEN}\n"
    )


def test_ui_passes_a_context_by_name(home: Path) -> None:
    write_contexts(home)
    command, env, where = app_command(build_parser().parse_args(["ui", "--context", "prod"]))
    assert command[command.index("--context") + 1] == "prod"
    assert TOKEN not in " ".join(command) + where + "".join(env.values())
    assert connection_from_argv(command[3:], environ={}).context == "prod"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--client-conf", "missing.conf"], "cannot read"),
        (["--context", "nope"], "no context 'nope'"),
        (["--client-conf", "{conf}", "--token", "T"], "--token only applies with --url"),
        (["--client-conf", "{sasl}"], "Kerberos"),
    ],
    ids=["missing client.conf", "unknown context", "token beside a client.conf", "unsupported plugin"],
)
def test_ui_refuses_a_bad_cluster_in_one_line_before_starting(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], expected: str
) -> None:
    conf = write_conf(tmp_path)
    write_contexts(home)
    sasl = tmp_path / "sasl.conf"
    sasl.write_text(f"webServiceUrl=https://b:1\nauthPlugin={PLUGIN}AuthenticationSasl\n")
    filled = [a.format(conf=conf, sasl=sasl) for a in arguments]
    assert main(["ui", *filled, "--port", "8599"]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1 and TOKEN not in err


def test_ui_passes_a_workspace_in_the_environment_for_a_broker_only(home: Path, tmp_path: Path) -> None:
    """`ui --url URL --workspace LOCATION`: the location travels in the environment (a database location may
    hold a password), and the app's connection carries it to `registry.open`; beside a registry file it is a
    usage error."""
    where = "postgresql://explorer:secret@db.example/reviews"
    args = build_parser().parse_args(["ui", "--url", "http://broker.example:8080", "--workspace", where])
    command, env, _ = app_command(args)
    assert env["SCHEMA_EXPLORER_WORKSPACE"] == where and "secret" not in " ".join(command)
    started = connection_from_argv(command[3:], environ={"SCHEMA_EXPLORER_WORKSPACE": where})
    assert (started.target, started.workspace) == ("http://broker.example:8080", where)
    assert (
        connection_from_argv(["--db", str(tmp_path / "r.db")], environ={"SCHEMA_EXPLORER_WORKSPACE": where}).workspace
        is None
    )
    assert main(["ui", "--db", str(tmp_path / "r.db"), "--workspace", "ws.db"]) == 2
