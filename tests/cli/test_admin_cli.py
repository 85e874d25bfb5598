"""`check`, `diff`, `get`, `upload`, `delete`, `policy get|set` over a seeded registry file, and over `--url`
against a live `schema-explorer serve` (same output as the file, by contract).

Commands run in-process through `cli.main.main(argv)` for speed; one test runs the real console script.
"""

from __future__ import annotations

import io
import json
import linecache
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from serving import PROJECT_ROOT, free_port, seeded, served

ORDERS = "persistent://acme/orders/order-created"
SAMPLES = PROJECT_ROOT / "sample_data" / "schemas"
LATEST_ORDER = SAMPLES / "acme/orders/order-created/v13.avsc"
WAREHOUSE = "persistent://acme/inventory/warehouse-transfers"
WAREHOUSE_V2 = SAMPLES / "acme/inventory/warehouse-transfers/v2"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("served")
    with served(seeded(folder / "registry.db"), log_dir=folder) as url:
        yield url


@pytest.fixture
def breaking_avsc(tmp_path: Path) -> Path:
    """The latest order schema plus a required field without a default: BACKWARD refuses it."""
    doc = json.loads(LATEST_ORDER.read_text())
    doc["fields"].append({"name": "loyaltyTier", "type": "string"})
    path = tmp_path / "order-v14.avsc"
    path.write_text(json.dumps(doc, indent=2))
    return path


# --- check ------------------------------------------------------------------------------------------------------


def test_check_compatible_exits_0(cli, sample_db):
    code, out, err = cli("check", "--db", str(sample_db), "--topic", ORDERS, "--file", str(LATEST_ORDER))
    assert (code, err) == (0, "")
    assert out.strip().splitlines() == [
        f"{ORDERS}: compatible under BACKWARD (checked against version 13)",
        "answered as Pulsar master (4.2 and later lines) (Avro 1.12)",
    ]
    code, out, _ = cli(
        "check", "--db", str(sample_db), "-t", ORDERS, "-f", str(LATEST_ORDER), "--pulsar-version", "4.0"
    )
    assert (code, out.strip().splitlines()[-1]) == (0, "answered as Pulsar 4.0 LTS (Avro 1.11.4)")


def test_check_incompatible_exits_1_and_explains(cli, sample_db, breaking_avsc):
    code, out, _ = cli("check", "--db", str(sample_db), "-t", ORDERS, "-f", str(breaking_avsc))
    assert code == 1
    assert f"{ORDERS}: INCOMPATIBLE under BACKWARD (checked against version 13): 1 problem" in out
    assert "1. READER_FIELD_WITHOUT_DEFAULT at /fields/" in out
    assert "direction: BACKWARD (the new schema, as a reader, cannot read data written with version 13)" in out
    assert "hint: give field 'loyaltyTier' a default" in out


def test_check_json_is_stable(cli, sample_db, breaking_avsc):
    code, out, _ = cli("check", "--db", str(sample_db), "-t", ORDERS, "-f", str(breaking_avsc), "--json")
    doc = json.loads(out)
    assert code == 1
    assert list(doc) == [
        "topic",
        "pulsar_version",
        "compatible",
        "strategy",
        "checked_versions",
        "problems",
        "advisories",
        "message",
    ]
    assert (
        doc["compatible"] is False
        and doc["pulsar_version"] == "master"
        and doc["strategy"] == "BACKWARD"
        and doc["checked_versions"] == [13]
    )
    problem = doc["problems"][0]
    assert list(problem) == [
        "code", "message", "direction", "version", "reader_path", "writer_path", "hint", "path", "direction_text"
    ]  # fmt: skip
    assert problem["code"] == "READER_FIELD_WITHOUT_DEFAULT" and problem["direction"] == "BACKWARD"


def test_check_under_another_strategy(cli, sample_db, breaking_avsc):
    code, out, _ = cli("check", "--db", str(sample_db), "-t", ORDERS, "-f", str(breaking_avsc), "--strategy", "forward")
    assert code == 0 and "compatible under FORWARD" in out


def test_check_reads_stdin(cli, sample_db, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LATEST_ORDER.read_bytes())))
    code, out, _ = cli("check", "--db", str(sample_db), "-t", ORDERS, "--file", "-", "--type", "AVRO")
    assert code == 0 and "compatible" in out


def test_check_takes_a_pulsar_admin_payload(cli, sample_db, tmp_path):
    payload = tmp_path / "payload.txt"
    payload.write_text(json.dumps({"type": "AVRO", "schema": LATEST_ORDER.read_text(), "properties": {}}))
    code, out, _ = cli("check", "--db", str(sample_db), "-t", ORDERS, "--file", str(payload))
    assert code == 0 and "compatible" in out


def test_check_a_primitive_type_needs_no_file(cli, sample_db):
    code, out, _ = cli(
        "check", "--db", str(sample_db), "-t", "persistent://initech/legacy/fax-gateway", "--type", "STRING"
    )
    assert code == 0 and "compatible under ALWAYS_INCOMPATIBLE" in out


def test_check_a_proto_file_compiled_with_protoc(cli, sample_db):
    proto = WAREHOUSE_V2 / "acme/inventory/warehouse_transfer.proto"
    args = ("check", "--db", str(sample_db), "-t", WAREHOUSE, "-f", str(proto), "-I", str(WAREHOUSE_V2))
    code, out, _ = cli(*args)
    assert code == 0 and "compatible under FORWARD" in out
    code, out, _ = cli(*args, "--message", "Line", "--json")
    assert code == 1 and json.loads(out)["problems"][0]["code"] == "ROOT_MESSAGE_CHANGED"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--file", "missing.avsc"], "--file 'missing.avsc': no such file"),
        (["--file", "schema.txt"], "cannot tell the schema type of schema.txt: pass --type"),
        (["--type", "AVRO"], "--file is required for a AVRO schema"),
        (["--type", "SIDEWAYS"], "unknown schema type 'SIDEWAYS'"),
        (["--type", "AUTO_CONSUME"], "AUTO_CONSUME is a client-side schema type"),
        (["--file", "bad.avsc"], "Invalid schema definition data for AVRO schema"),
        (["--file", "bad.proto"], "protoc could not compile bad.proto"),
        (["--type", "STRING", "--property", "novalue"], "--property 'novalue': expected KEY=VALUE"),
        (["--type", "INT32", "--strategy", "SIDEWAYS"], "unknown compatibility strategy 'SIDEWAYS'"),
    ],
    ids=[
        "a missing file",
        "an extension without a type",
        "a struct type without a file",
        "an unknown type",
        "a client-side type",
        "an unparseable avro file",
        "a proto that does not compile",
        "a property without a value",
        "an unknown strategy",
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, sample_db, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schema.txt").write_text("{}")
    (tmp_path / "bad.avsc").write_text('{"type": "record", "name": "X", "fields": [{"name": "a"}]}')
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage X { strng a = 1; }\n')
    code, out, err = cli("check", "--db", str(sample_db), "-t", ORDERS, *args)
    assert code == 2 and out == ""
    assert err.startswith("schema-explorer: error: ") and message in err
    assert "Traceback" not in err


# --- upload, get, delete, diff ------------------------------------------------------------------------------


def test_upload_registers_dedups_and_refuses(cli, db, breaking_avsc, tmp_path):
    doc = json.loads(LATEST_ORDER.read_text())
    doc["fields"].append({"name": "giftNote", "type": ["null", "string"], "default": None})
    good = tmp_path / "order-gift-note.avsc"
    good.write_text(json.dumps(doc))
    assert cli("upload", "--db", db, "-t", ORDERS, "-f", str(good))[:2] == (0, f"{ORDERS}: registered as version 14\n")
    code, out, _ = cli("upload", "--db", db, "-t", ORDERS, "-f", str(good), "--json")
    assert (code, json.loads(out)) == (0, {"topic": ORDERS, "registered": False, "stored": False, "version": 14})
    code, out, _ = cli("upload", "--db", db, "-t", ORDERS, "-f", str(breaking_avsc))
    assert code == 1 and out.startswith(f"refused: {ORDERS} did not register the schema")
    assert "READER_FIELD_WITHOUT_DEFAULT" in out


def _waiting_for_the_write_lock(thread: threading.Thread) -> bool:
    """Whether `thread` is at the registry file's `BEGIN IMMEDIATE` (waiting there while another holds the lock)."""
    frame = sys._current_frames().get(thread.ident or 0)
    line = "" if frame is None else linecache.getline(frame.f_code.co_filename, frame.f_lineno or 0)
    return frame is not None and frame.f_code.co_filename.endswith("_sqlite.py") and "BEGIN IMMEDIATE" in line


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_an_upload_beside_an_identical_one_says_it_found_the_stored_version(cli, db, tmp_path, as_json):
    """Two identical uploads at once: the other one has stored version 14 and not yet committed when this one
    starts, and this one waits for the write lock. It must say that it found version 14 and stored nothing, as
    the core's Registration says; a history read before registering lacked version 14 and said "registered"."""
    from registry import Registry, SchemaInfo, SchemaType

    doc = json.loads(LATEST_ORDER.read_text())
    doc["fields"].append({"name": "giftNote", "type": ["null", "string"], "default": None})
    good = tmp_path / "order-gift-note.avsc"
    good.write_text(json.dumps(doc))
    said: list[tuple[int, str, str]] = []
    upload = threading.Thread(
        target=lambda: said.append(cli("upload", "--db", db, "-t", ORDERS, "-f", str(good), *["--json"] * as_json))
    )
    with Registry.open(db) as other:
        with other.batch():
            assert other.register(ORDERS, SchemaInfo(type=SchemaType.AVRO, schema=good.read_text())).stored
            upload.start()
            deadline = time.monotonic() + 120  # a bound for a stuck test, not a timing the outcome depends on
            while upload.is_alive() and not _waiting_for_the_write_lock(upload) and time.monotonic() < deadline:
                time.sleep(0.005)
        upload.join()
        assert [v.version for v in other.history(ORDERS)][-2:] == [13, 14]
    ((code, out, err),) = said
    assert (code, err) == (0, "")
    if as_json:
        assert json.loads(out) == {"topic": ORDERS, "registered": False, "stored": False, "version": 14}
    else:
        assert out == f"{ORDERS}: identical to live version 14; nothing stored\n"


def test_get_prints_a_version_and_pulsars_json(cli, sample_db):
    code, out, _ = cli("get", "--db", str(sample_db), "-t", ORDERS, "--version", "2")
    assert code == 0 and out.startswith(f"{ORDERS} version 2 · AVRO · registered 2024-05-06T")
    code, out, _ = cli("get", "--db", str(sample_db), "-t", ORDERS, "--json")
    assert set(json.loads(out)) == {"version", "type", "timestamp", "data", "properties"}
    code, out, _ = cli("get", "--db", str(sample_db), "-t", ORDERS, "--all", "--json")
    assert [v["version"] for v in json.loads(out)["getSchemaResponses"]] == list(range(14))


def test_get_a_missing_version_is_a_user_error(cli, sample_db):
    code, _, err = cli("get", "--db", str(sample_db), "-t", ORDERS, "--version", "99")
    assert code == 2 and "Schema not found" in err and "version 99" in err
    code, _, err = cli("get", "--db", str(sample_db), "-t", ORDERS, "--version", "x")
    assert code == 2 and "not a schema version: 'x'" in err


def test_delete_soft_then_force(cli, db):
    code, out, _ = cli("delete", "--db", db, "-t", ORDERS)
    assert code == 0 and "tombstone at version 14" in out
    assert cli("get", "--db", db, "-t", ORDERS)[0] == 2
    code, out, _ = cli("delete", "--db", db, "-t", ORDERS, "--force", "--json")
    assert json.loads(out) == {"topic": ORDERS, "force": True, "version": None}


def test_diff_defaults_to_previous_against_latest(cli, sample_db):
    code, out, _ = cli("diff", "--db", str(sample_db), "-t", ORDERS)
    assert code == 0 and out.startswith("v12 → v13 (AVRO): BACKWARD (new reads old)")
    code, out, _ = cli("diff", "--db", str(sample_db), "-t", ORDERS, "--from", "3", "--to", "5", "--json")
    doc = json.loads(out)
    assert (doc["topic"], doc["old_version"], doc["new_version"]) == (ORDERS, 3, 5)
    assert {c["kind"] for c in doc["changes"]} >= {"FIELD_ADDED"}
    assert "old" not in doc and "new" not in doc


def test_diff_json_names_the_versions_it_compared(cli, sample_db, breaking_avsc):
    """Issue 34 item 4: the latest, when left out, is named as a number; a file is "candidate"."""
    code, out, _ = cli("diff", "--db", str(sample_db), "-t", ORDERS, "--json")
    assert code == 0 and (json.loads(out)["old_version"], json.loads(out)["new_version"]) == (12, 13)
    code, out, _ = cli("diff", "--db", str(sample_db), "-t", ORDERS, "-f", str(breaking_avsc), "--json")
    doc = json.loads(out)
    assert code == 0 and (doc["topic"], doc["old_version"], doc["new_version"]) == (ORDERS, 13, "candidate")


def test_diff_against_a_file_marks_breaking_changes(cli, sample_db, breaking_avsc):
    code, out, _ = cli("diff", "--db", str(sample_db), "-t", ORDERS, "-f", str(breaking_avsc), "--text")
    assert code == 0 and "v13 → file (AVRO): BACKWARD (new reads old) breaks" in out
    assert " ! FIELD_ADDED loyaltyTier" in out and '+    "name": "loyaltyTier",' not in out
    assert "+++ file" in out


# --- policies -------------------------------------------------------------------------------------------------


def test_policy_get_namespace_and_topic(cli, sample_db):
    code, out, _ = cli("policy", "get", "--db", str(sample_db), "--namespace", "acme/payments", "--json")
    assert json.loads(out) == {
        "namespace": "acme/payments",
        "schema_compatibility_strategy": "FULL_TRANSITIVE",
        "schema_auto_update_compatibility_strategy": None,
        "is_allow_auto_update_schema": False,
        "is_allow_auto_update_schema_with_replicator": True,
        "schema_validation_enforced": True,
    }
    code, out, _ = cli("policy", "get", "--db", str(sample_db), "--topic", "acme/orders/order-cancelled")
    assert "compatibility (admin REST)         FULL_TRANSITIVE        from topic" in out


def test_policy_set_and_preview(cli, db):
    code, out, _ = cli("policy", "set", "--db", db, "-n", "initech/hr", "--compatibility", "BACKWARD", "--dry-run")
    assert code == 0 and "preview of compatibility BACKWARD (nothing changed)" in out
    assert "persistent://initech/hr/employee-records: would have refused version(s)" in out
    assert "ALWAYS_COMPATIBLE" in cli("policy", "get", "--db", db, "-n", "initech/hr")[1]
    code, out, _ = cli("policy", "set", "--db", db, "-n", "initech/hr", "--compatibility", "full", "--json")
    assert json.loads(out)["schema_compatibility_strategy"] == "FULL"
    code, out, _ = cli("policy", "set", "--db", db, "-t", ORDERS, "--compatibility", "NONE_SUCH")
    assert code == 2
    code, out, _ = cli("policy", "set", "--db", db, "-t", ORDERS, "--validation-enforced", "true", "--json")
    assert json.loads(out)["validation_enforced"] == {"value": True, "source": "topic"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-t", ORDERS, "--allow-auto-update", "true"], "--allow-auto-update is a namespace policy"),
        (["-n", "acme/orders"], "nothing to change"),
        (["-n", "acme/orders", "--validation-enforced", "true", "--dry-run"], "--dry-run previews"),
        (["-n", "acme/orders", "--validation-enforced", "unset"], "cannot be unset"),
        (["-n", "acme/orders", "--auto-update-strategy", "Sometimes"], "unknown auto-update strategy 'Sometimes'"),
    ],
    ids=["a namespace flag on a topic", "no change", "dry run of another field", "unset namespace flag", "bad value"],
)
def test_policy_set_refuses_bad_combinations(cli, db, args, message):
    code, _, err = cli("policy", "set", "--db", db, *args)
    assert code == 2 and message in err


# --- --url: the same commands against a live server ----------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["check", "-t", ORDERS, "-f", "BREAKING"],
        ["check", "-t", ORDERS, "-f", "BREAKING", "--json", "--strategy", "FULL"],
        ["diff", "-t", ORDERS, "--from", "4"],
        ["get", "-t", "persistent://initech/legacy/fax-gateway", "--json"],
        ["policy", "get", "-n", "acme/inventory", "--json"],
        ["policy", "get", "-t", "persistent://initech/analytics/tps-reports"],
        ["policy", "set", "-n", "globex/iot", "--compatibility", "FULL", "--dry-run", "--json"],
        ["get", "-t", ORDERS, "--version", "99"],
    ],
    ids=["check", "check json", "diff", "get", "namespace policy", "topic policy", "policy preview", "missing version"],
)
@pytest.mark.server
def test_url_answers_as_the_file_does(cli, sample_db, server_url, breaking_avsc, args):
    args = [str(breaking_avsc) if a == "BREAKING" else a for a in args]
    assert cli(*args, "--url", server_url) == cli(*args, "--db", str(sample_db))


@pytest.mark.server
def test_the_console_script_over_url_writes_and_exits_1_on_refusal(server_url, breaking_avsc):
    script = Path(sys.executable).with_name("schema-explorer")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
    done = subprocess.run(
        [*command, "upload", "--url", server_url, "-t", ORDERS, "-f", str(breaking_avsc)],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=60,
    )
    assert done.returncode == 1 and "READER_FIELD_WITHOUT_DEFAULT" in done.stdout, done.stderr


def test_an_unreachable_url_is_one_line_and_exit_2(cli):
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = cli("get", "--url", url, "-t", ORDERS)
    assert code == 2 and out == ""
    assert err.startswith(f"schema-explorer: error: cannot reach the Pulsar admin endpoint {url}")
    assert err.count("\n") == 1


def test_a_token_needs_a_url(cli, sample_db):
    code, _, err = cli("get", "--db", str(sample_db), "-t", ORDERS, "--token", "secret-1")
    assert code == 2 and "--token only applies with --url" in err
