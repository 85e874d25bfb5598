"""`schema-explorer webhooks add|list|remove` on a registry file and against a live `schema-explorer serve`
(an admin's token; a producer is refused with exit 1 and one line): a proposal made with the CLI reaches a
receiver on loopback, signed, and `list` shows how the last delivery went, never the secret."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from registry.webhooks import DELIVERIES
from serving import seeded, served
from webhook_receiver import Receiver

NS = "acme/orders"
SECRET = "s3cret-of-the-cli"
PEOPLE = {"alice": "producer", "ops": "admin"}
TOKENS = {name: secrets.token_hex(32) for name in PEOPLE}


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """`cli(person, *args) -> (exit code, stdout, stderr)`; `person`'s token in $SCHEMA_EXPLORER_TOKEN."""

    def run(person: str | None, *args: str) -> tuple[int, str, str]:
        if person is None:
            monkeypatch.delenv("SCHEMA_EXPLORER_TOKEN", raising=False)
        else:
            monkeypatch.setenv("SCHEMA_EXPLORER_TOKEN", TOKENS[person])
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver
    assert DELIVERIES.wait_idle(60)


def test_add_list_remove_on_a_registry_file(cli, tmp_path: Path, receiver: Receiver) -> None:
    db = str(seeded(tmp_path / "r.db"))
    (tmp_path / "secret").write_text(SECRET + "\n")
    code, out, err = cli(
        None, "webhooks", "add", receiver.url, "-e", "proposal.*", "--secret-file", str(tmp_path / "secret"), "--db", db
    )
    assert code == 0 and out.startswith("webhook #1 added:") and SECRET not in out + err
    code, _, _ = cli(None, "propose", "--db", db, "-n", NS, "--compatibility", "FULL", "--title", "Tighten")
    assert code == 0
    (got,) = receiver.wait_for(1)
    assert got.signed_with(SECRET) and got.doc["event"] == "proposal.created"
    assert DELIVERIES.wait_idle(60)
    code, out, err = cli(None, "webhooks", "list", "--db", db)
    assert code == 0 and f"#1 {receiver.url} (signed) events proposal.*" in out
    assert "last delivery: delivered proposal.created" in out and SECRET not in out + err
    code, out, _ = cli(None, "webhooks", "list", "--db", db, "--json")
    assert json.loads(out)["webhooks"][0]["has_secret"] is True and SECRET not in out
    code, out, _ = cli(None, "webhooks", "remove", "1", "--db", db)
    assert code == 0 and out.startswith("webhook #1 removed")
    assert cli(None, "webhooks", "list", "--db", db)[1].strip() == "no webhooks"
    code, _, err = cli(None, "webhooks", "remove", "1", "--db", db)
    assert code == 2 and "no webhook #1" in err
    code, _, err = cli(None, "webhooks", "add", "ftp://example.com/x", "--db", db)
    assert code == 2 and "only http:// and https://" in err


@pytest.mark.server
def test_add_list_remove_against_serve(cli, tmp_path: Path, receiver: Receiver) -> None:
    tokens = {name: {"role": role, "token": TOKENS[name]} for name, role in PEOPLE.items()}
    env = {"SCHEMA_EXPLORER_TOKENS": json.dumps(tokens)}
    with served(seeded(tmp_path / "r.db"), log_dir=tmp_path, env=env) as url:
        code, _, err = cli("alice", "webhooks", "add", receiver.url, "--url", url)
        assert code == 1 and err.startswith("schema-explorer: refused: ") and "admin" in err
        assert cli("alice", "webhooks", "list", "--url", url)[0] == 1
        key = "WEBHOOK_SECRET_FOR_TEST"
        with pytest.MonkeyPatch.context() as env_patch:
            env_patch.setenv(key, SECRET)
            code, out, err = cli(
                "ops", "webhooks", "add", receiver.url, "-e", "proposal.created", "--secret-env", key, "--url", url
            )
        assert code == 0 and out.startswith("webhook #1 added:"), err
        code, _, err = cli("alice", "propose", "--url", url, "-n", NS, "--compatibility", "FULL", "--title", "Tighten")
        assert code == 0, err
        (got,) = receiver.wait_for(1)
        assert got.signed_with(SECRET) and got.doc["actor"] == "alice" and got.doc["proposal"]["title"] == "Tighten"
        code, out, err = cli("ops", "webhooks", "list", "--url", url)
        assert code == 0 and f"#1 {receiver.url} (signed)" in out and SECRET not in out + err
        code, out, _ = cli("ops", "webhooks", "remove", "1", "--url", url)
        assert code == 0 and out.startswith("webhook #1 removed")
        assert cli("ops", "webhooks", "list", "--url", url)[1].strip() == "no webhooks"


@pytest.mark.server
def test_a_plain_broker_keeps_its_webhooks_in_the_workspace(cli, tmp_path: Path) -> None:
    with served(seeded(tmp_path / "r.db"), log_dir=tmp_path, admin_only=True) as url:
        ws = ["--url", url, "--workspace", str(tmp_path / "ws.db")]
        code, out, err = cli(None, "webhooks", "add", "https://chat.example.com/x", *ws, "--as", "ops")
        assert code == 0 and out.startswith("webhook #1"), err
        code, out, _ = cli(None, "webhooks", "list", *ws)
        assert code == 0 and "#1 https://chat.example.com/x" in out
