"""What every `schema-explorer` command shares: exit codes, user errors, and opening the registry named by
`--db PATH`, `--url URL [--token T]`, `--client-conf [FILE]` or `--context NAME`.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from registry import Actor, Registry, SchemaRegistry

PROG = "schema-explorer"
DIST = "pulsar-schema-explorer"
PROJECT_ROOT = Path(__file__).resolve().parent.parent

EXIT_OK = 0
EXIT_REFUSED = 1  # the command understood the request and declined it (e.g. an incompatible schema)
EXIT_USAGE = 2  # a user error: bad arguments, bad path, or a RegistryError

DB_HELP = (
    "where the registry is: a file path (default: a per-user data file, seeded from sample_data/ on first use), "
    "sqlite:///PATH, postgresql://USER@HOST/DB (password from PGPASSWORD or ~/.pgpass), memory:, "
    "package.module:factory, or a scheme a package registers as a storage"
)


class UserError(Exception):
    """A problem the user can fix; reported as one line, exit code 2."""


def add_source_arguments(parser: argparse.ArgumentParser, *, remote: bool = True) -> None:
    """`--db PATH`, and unless `remote=False`, `--url URL` and `--token T` (or $SCHEMA_EXPLORER_TOKEN); and
    `--pulsar-version` everywhere."""
    add_pulsar_version_argument(parser)
    if not remote:
        parser.add_argument("--db", metavar="PATH", help=DB_HELP)
        return
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--db", metavar="PATH", help=DB_HELP)
    source.add_argument("--url", metavar="URL", help="a Pulsar admin v2 endpoint (a broker's web service, or serve)")
    source.add_argument(
        "--client-conf",
        metavar="FILE",
        nargs="?",
        const="",
        help="connect as pulsar-admin does with Pulsar's client.conf (webServiceUrl, authPlugin, authParams, "
        "tlsTrustCertsFilePath, ...); without FILE, $PULSAR_CLIENT_CONF",
    )
    source.add_argument("--context", metavar="NAME", help="a pulsarctl context from ~/.config/pulsar/config")
    parser.add_argument(
        "--token", metavar="T", help="bearer token for --url (default: $SCHEMA_EXPLORER_TOKEN when set)"
    )
    parser.add_argument("--workspace", metavar="LOCATION", help=WORKSPACE_HELP)


WORKSPACE_HELP = (
    "with a plain broker (--url, --client-conf, --context): where proposals, review rules, the audit trail and "
    "webhooks are kept, in the forms of --db (a file, postgresql://...); default: a file of your own per cluster "
    "URL. schema-explorer serve keeps its own: refused there"
)


PULSAR_VERSION_HELP = (
    "the Pulsar release line to answer as: 3.0, 4.0 or master (default: the one stored with the registry, "
    "master for a new one; with --url, the version the broker reports). Verdicts differ by line: Avro name "
    "rules, JSON strictness, EXTERNAL schemas (docs/guide/fidelity.md, Which Pulsar)"
)


def add_pulsar_version_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pulsar-version", metavar="LINE", help=PULSAR_VERSION_HELP)


# --- who acts -----------------------------------------------------------------------------------------------

AS_HELP = (
    "act as NAME (still an admin) instead of the operating-system user, for a team sharing one registry file "
    "or one broker's workspace (the audit trail names NAME); schema-explorer serve names you by your token instead"
)


def add_as_argument(parser: argparse.ArgumentParser) -> None:
    """`--as NAME`, on every command that writes (read by `acting_person`)."""
    parser.add_argument("--as", dest="as_name", metavar="NAME", help=AS_HELP)


def os_user() -> str:
    """The operating-system user running the command (app/session.py's `os_user`, which the CLI does not
    import: it would pull in Streamlit)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return f"uid {os.getuid()}"


def acting_person(args: argparse.Namespace) -> Actor:
    """Who a write is made as, the same for every command that writes: `--as NAME` or `USER (os user)` (the
    app's name for the same person), an admin: on `--db` they can write the file anyway, and over a plain broker
    they write with their own credentials, recorded by name in the workspace. `schema-explorer serve` ignores
    it and names the person by the token."""
    from registry import Actor, Role

    name = getattr(args, "as_name", None)
    if name is None:
        return Actor(f"{os_user()} (os user)", Role.ADMIN)
    if not name.strip():
        raise UserError("--as must name someone (it is empty)")
    return Actor(name.strip(), Role.ADMIN)


def writer_name(args: argparse.Namespace) -> str:
    """The name a direct write (register, delete, a policy) records in the audit trail and with the version:
    `acting_person`'s (`serve` records the token's name instead)."""
    return acting_person(args).name


def open_source(args: argparse.Namespace, *, create: bool = False) -> SchemaRegistry:
    """The registry named by `--url` (remote) or `--db` (embedded, the default file when absent).

    Fails closed: a `--url` that is not an http(s) URL is a usage error, and a registry file that does not exist
    is only made for commands that write (`create=True`, which says so on stderr). A command that reads, checks
    or diffs against a registry made on the spot would answer from an empty history."""
    import registry

    url = getattr(args, "url", None)
    token = getattr(args, "token", None)
    version = pulsar_version(args)
    client_conf, context = connection_options(args)
    system_topics = bool(getattr(args, "system_topics", False))
    workspace = getattr(args, "workspace", None)
    if client_conf is not None or context is not None:
        if token:
            raise UserError("--token only applies with --url (a client.conf or context carries its own credentials)")
        return _named_by_token(
            args,
            registry.open(
                client_conf=client_conf or None,
                context=context,
                pulsar_version=version,
                system_topics=system_topics,
                workspace=workspace,
            ),
        )
    if url is not None:
        return _named_by_token(
            args,
            registry.open(
                check_url(url),
                token=token or os.environ.get("SCHEMA_EXPLORER_TOKEN") or None,
                pulsar_version=version,
                system_topics=system_topics,
                workspace=workspace,
            ),
        )
    if token:
        raise UserError("--token only applies with --url")
    if workspace is not None:
        raise UserError("--workspace only applies to a plain broker (--url, --client-conf or --context)")
    if system_topics:
        raise UserError("--system-topics only applies to a broker (--url, --client-conf or --context)")
    return open_registry(resolve_db(getattr(args, "db", None)), create=create, pulsar_version=version)


def _named_by_token(args: argparse.Namespace, reg: SchemaRegistry) -> SchemaRegistry:
    """A remote registry as opened, unless `--as` names someone to `serve` (a remote without a workspace),
    which names the person by the token: a usage error rather than a name silently dropped."""
    if getattr(args, "as_name", None) is not None and reg.workspace is None:
        reg.close()
        raise UserError(
            "--as applies to a registry file or a plain broker's workspace; with --url the server names you by your "
            "token"
        )
    return reg


def connection_options(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """`--client-conf` (its file; `--client-conf` alone reads $PULSAR_CLIENT_CONF, as pulsar-admin does) and
    `--context`, as given."""
    client_conf: str | None = getattr(args, "client_conf", None)
    context: str | None = getattr(args, "context", None)
    if client_conf == "":
        client_conf = os.environ.get("PULSAR_CLIENT_CONF", "").strip()  # pulsar-admin's own variable
        if not client_conf:
            raise UserError("--client-conf without FILE reads $PULSAR_CLIENT_CONF, which is not set")
    if context is not None and not context.strip():
        raise UserError("--context must name a context")
    return client_conf, context


def pulsar_version(args: argparse.Namespace) -> str | None:
    """`--pulsar-version` checked (a usage error naming the known lines), or None when not given."""
    from registry import RegistryError
    from registry._pulsar_version import pulsar_line

    raw = getattr(args, "pulsar_version", None)
    if raw is None:
        return None
    try:
        return pulsar_line(raw).name
    except RegistryError as exc:
        raise UserError(f"--pulsar-version: {exc}") from None


def check_url(text: str) -> str:
    """`--url` as given, if it is an http:// or https:// URL (scheme in any case, whitespace around dropped);
    anything else is a usage error naming the value, so a mistyped URL never becomes a local file."""
    from registry import RegistryError
    from registry._location import remote_url

    try:
        url = remote_url(text)
    except RegistryError as exc:
        raise UserError(f"--url {text!r}: {exc}") from None
    if url is None:
        raise UserError(f"--url {text!r} is not an http:// or https:// URL (for a registry file, use --db PATH)")
    return url


def resolve_db(raw: str | None) -> Path | str:
    """`--db`: the absolute path of a registry file (resolve_db_path), or, for a location that names another
    storage (memory:, postgresql://, package.module:factory, a registered scheme), that location as given."""
    if raw is not None and raw.strip():
        from registry import RegistryError
        from registry._location import LocationKind, parse_location

        try:
            location = parse_location(raw)
        except RegistryError as exc:
            raise UserError(f"--db: {exc}") from None
        if location.kind is not LocationKind.SQLITE:
            return raw.strip()
        raw = location.target
    return resolve_db_path(raw)


def shown(target: Path | str) -> str:
    """A registry target as messages show it (a PostgreSQL password never printed)."""
    if isinstance(target, Path):
        return str(target)
    from registry._location import parse_location

    return parse_location(target).shown


def resolve_db_path(raw: str | None) -> Path:
    """The absolute database path to use; the default per-user file's folder is created if needed."""
    if raw is None:
        from registry._paths import default_db_path

        path = Path(default_db_path()).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    if not raw.strip():
        raise UserError("--db must not be empty")
    path = Path(raw).expanduser().resolve()
    if path.is_dir():
        raise UserError(f"--db {raw!r} is a directory; give a database file path such as {path / 'registry.db'}")
    if not path.parent.is_dir():
        raise UserError(f"--db {raw!r}: folder {path.parent} does not exist")
    return path


def open_registry(path: Path | str, *, create: bool = False, pulsar_version: str | None = None) -> Registry:
    """The embedded registry file at `path` (or the storage a location names: resolve_db). Missing: exit 2 "no
    registry at PATH", unless `create` (a command that writes), which makes it and says so on stderr."""
    from registry import Registry, RegistryNotFoundError

    if isinstance(path, str):
        try:
            return Registry.open(path, create=create, pulsar_version=pulsar_version)
        except RegistryNotFoundError:
            raise UserError(
                f"no registry in {shown(path)} (create one with `{PROG} seed --db LOCATION` or `{PROG} upload`)"
            ) from None
    if not path.exists():
        if not create:
            raise UserError(f"no registry at {path} (create one with `{PROG} seed --db PATH` or `{PROG} upload`)")
        print(f"{PROG}: created new registry {path}", file=sys.stderr, flush=True)
    return Registry.open(str(path), create=create, pulsar_version=pulsar_version)


def close_registry(reg: SchemaRegistry) -> None:
    reg.close()


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse `type` for a whole number >= `minimum`, naming the value it refuses."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def add_spark_arguments(parser: argparse.ArgumentParser, *, partitions: str) -> None:
    """Where and how an audit runs on Spark: every `audit` job takes the same."""
    parser.add_argument("--master", default="local[*]", metavar="URL", help="Spark master (default: local[*])")
    parser.add_argument("--partitions", type=whole_number(1), metavar="N", help=partitions)
    parser.add_argument(
        "--code",
        choices=("ship", "installed"),
        default="ship",
        help="on a cluster, ship this project's code to the executors as a zip (default), or use the copy "
        "installed on the workers",
    )
    parser.add_argument(
        "--progress",
        choices=("text", "json", "none"),
        default="text",
        help="progress from Spark's status tracker on stderr: a line (default), JSON lines (for tools), or none "
        "(no progress output at all, Spark's console bars included)",
    )


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be between 1 and 65535, got {port}")
    return port


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST)
    except PackageNotFoundError:
        return "0+unknown (not installed)"


def describe_os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}"


def report_error(error: BaseException | str) -> int:
    message = str(error) or type(error).__name__
    print(f"{PROG}: error: {for_terminal(message)}", file=sys.stderr)
    return EXIT_USAGE


def refused(message: str) -> int:
    """One line on stderr for a step the registry declined (a permission, a proposal's state); exit code 1."""
    print(f"{PROG}: refused: {for_terminal(' '.join(message.split()))}", file=sys.stderr)
    return EXIT_REFUSED


# C0 and C1 controls but newline and tab, DEL, and the Unicode line separators and bidirectional overrides: a
# schema's doc or a property can hold ESC sequences that would recolour, retitle or rewrite the user's terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """`text` with each control character shown as its escape (`\\x1b`, `\\u202e`), so stored text prints
    as what it is instead of acting on the terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def say(text: str) -> None:
    """Print text meant for people (never `--json`, which escapes through JSON) safely for a terminal."""
    print(for_terminal(text))


# --- schema files -------------------------------------------------------------------------------------------

# How a file's name says its schema type when --type is absent (pulsar-admin takes a JSON payload instead,
# which is recognised whatever the extension).
TYPE_BY_EXTENSION = {
    ".avsc": "AVRO",
    ".avro": "AVRO",
    ".json": "JSON",
    ".proto": "PROTOBUF_NATIVE",
    ".binpb": "PROTOBUF_NATIVE",
    ".desc": "PROTOBUF_NATIVE",
    ".pb": "PROTOBUF_NATIVE",
}
_DESCRIPTOR_SETS = (".binpb", ".desc", ".pb")


def add_schema_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """`--file F` (or `-` for stdin), `--type`, `--property K=V`, and the .proto options."""
    group = parser.add_argument_group("schema")
    group.add_argument(
        "--file",
        "-f",
        metavar="F",
        help="schema file: .avsc (AVRO), .json (JSON), .proto or a descriptor set (PROTOBUF_NATIVE), or a "
        'pulsar-admin payload {"type": ..., "schema": ..., "properties": {...}}; "-" reads stdin'
        + ("" if required else " (not needed for primitive types such as --type STRING)"),
    )
    group.add_argument(
        "--record",
        metavar="MODULE:CLASS",
        help="a pulsar-client Record class (or generated protobuf class), e.g. acme.models:Order: its schema as "
        "the installed pulsar-client sends it (modules are found from the current folder, as uvicorn does)",
    )
    group.add_argument(
        "--type",
        "--schema-type",
        metavar="TYPE",
        help="schema type (default: from the file's extension; AVRO for --record, or JSON), e.g. AVRO, JSON, STRING",
    )
    group.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a SchemaInfo property (repeatable)",
    )
    group.add_argument(
        "--message", metavar="NAME", help="PROTOBUF_NATIVE root message (default: the root file's first message)"
    )
    group.add_argument(
        "--proto-path",
        "-I",
        action="append",
        default=[],
        metavar="DIR",
        help="where .proto imports are found, as protoc's -I (default: the .proto file's folder)",
    )


def read_schema_info(args: argparse.Namespace) -> Any:
    """The SchemaInfo that `--file`/`--type`/`--property` describe; UserError naming what is wrong."""
    from registry import SchemaInfo, SchemaType

    declared = _schema_type(args.type) if args.type else None
    properties = _properties(args.property)
    if getattr(args, "record", None):
        if args.file:
            raise UserError("give the schema either as --record or as --file, not both")
        info = _from_record(SchemaInfo.from_record, args.record, declared)
        return SchemaInfo(type=info.type, schema=info.schema, properties=properties)
    if not args.file:
        if declared is not None and declared.is_primitive:
            return SchemaInfo(type=declared, schema="", properties=properties)
        what = f"a {declared} schema" if declared else "a schema"
        raise UserError(f"--file is required for {what} (only primitive types such as --type STRING need none)")
    name = "stdin" if args.file == "-" else args.file
    data = _read_input(args.file)
    suffix = Path(args.file).suffix.lower() if args.file != "-" else ""
    payload = _pulsar_admin_payload(data)
    if payload is not None:
        kind = _schema_type(payload["type"])
        if declared is not None and declared is not kind:
            raise UserError(f"{name} is a pulsar-admin payload of type {kind}, but --type says {declared}")
        props = {str(k): str(v) for k, v in (payload.get("properties") or {}).items()}
        return SchemaInfo(type=kind, schema=payload["schema"], properties={**props, **properties})
    if declared is None:
        if suffix not in TYPE_BY_EXTENSION:
            raise UserError(
                f"cannot tell the schema type of {name}: pass --type (e.g. --type AVRO), or use a file ending in "
                + ", ".join(sorted(TYPE_BY_EXTENSION))
            )
        declared = _schema_type(TYPE_BY_EXTENSION[suffix])
    if declared is SchemaType.PROTOBUF_NATIVE and (suffix in (".proto", *_DESCRIPTOR_SETS) or _looks_like_proto(data)):
        text = _protobuf_native(args, data, suffix)
        return SchemaInfo(type=declared, schema=text, properties=properties)
    if declared.is_primitive and data.strip():
        raise UserError(f"{declared} schemas have no schema text, but {name} is not empty; leave out --file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return SchemaInfo(type=declared, schema=text.strip(), properties=properties)


def record_pitfalls(args: argparse.Namespace) -> tuple[Any, ...]:
    """The advisories of the `--record` class (none without one)."""
    if not getattr(args, "record", None):
        return ()
    from registry._record_pitfalls import record_advisories

    found: tuple[Any, ...] = _from_record(
        record_advisories, args.record, _schema_type(args.type) if args.type else None
    )
    return found


def _from_record(read: Any, spec: str, kind: Any) -> Any:
    """`read(spec, kind)` with the current folder on the import path (as `uvicorn app:app` has it); a class
    that cannot be loaded is a usage error naming it."""
    from registry._records import RecordError

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return read(spec, kind)
    except RecordError as exc:
        raise UserError(str(exc)) from None


def _schema_type(text: str) -> Any:
    from registry import InvalidSchemaError, SchemaType

    try:
        kind = SchemaType.parse(text)
    except InvalidSchemaError as exc:
        raise UserError(str(exc)) from None
    if kind.is_client_side:
        raise UserError(f"{kind} is a client-side schema type; the registry stores no such schema")
    return kind


def _properties(pairs: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--property {pair!r}: expected KEY=VALUE")
        found[key.strip()] = value
    return found


def _read_input(file: str) -> bytes:
    """The schema file (or stdin), read no further than the input limit: a 10 GB file or an endless pipe is
    refused after reading the limit, never loaded whole."""
    from registry._limits import current_limits

    schema_limit = current_limits().max_schema_bytes
    cap = 2 * schema_limit + 65_536  # a pulsar-admin payload holds the schema as an escaped JSON string
    if file == "-":
        data = sys.stdin.buffer.read(cap + 1)
    else:
        path = Path(file).expanduser()
        if path.is_dir():
            raise UserError(f"--file {file!r} is a directory, not a schema file")
        try:
            with path.open("rb") as handle:
                data = handle.read(cap + 1)
        except FileNotFoundError:
            raise UserError(f"--file {file!r}: no such file") from None
        except OSError as exc:
            raise UserError(f"--file {file!r}: {describe_os_error(exc)}") from None
    if len(data) > cap:
        where = "standard input" if file == "-" else f"--file {file!r}"
        raise UserError(
            f"{where} is over {cap:,} bytes: schemas are limited to {schema_limit:,} bytes "
            "($SCHEMA_EXPLORER_MAX_SCHEMA_BYTES)"
        )
    return data


def _pulsar_admin_payload(data: bytes) -> dict[str, Any] | None:
    """pulsar-admin's upload file: a JSON object with a type name and the schema as a string."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # not a payload: the schema checks report it
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str) or not isinstance(doc.get("type"), str):
        return None
    if doc["type"] != doc["type"].upper() or doc["type"] in ("RECORD", "ENUM"):
        return None  # an Avro document ({"type": "record", ...}), not a payload
    if not isinstance(doc.get("properties", {}), dict):
        raise UserError('the pulsar-admin payload\'s "properties" must be a JSON object of strings')
    return doc


def _looks_like_proto(data: bytes) -> bool:
    return not data.lstrip().startswith(b"{")


def _protobuf_native(args: argparse.Namespace, data: bytes, suffix: str) -> str:
    """A .proto (compiled with grpcio-tools' protoc) or a descriptor set → Pulsar's ProtobufNative JSON."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    from registry.protobuf._native import to_protobuf_native_data

    if suffix in _DESCRIPTOR_SETS:
        file_set = descriptor_pb2.FileDescriptorSet()
        try:
            file_set.ParseFromString(data)
        except DecodeError:
            raise UserError(f"{args.file} is not a protobuf FileDescriptorSet (protoc --descriptor_set_out)") from None
        if not file_set.file:
            raise UserError(f"{args.file} holds no .proto files")
        root_file = _root_file_of(file_set, args.message)
    else:
        file_set, root_file = _compile_proto(args, data)
    message = _root_message(file_set, root_file, args.message)
    return str(to_protobuf_native_data(file_set, message, root_file))


def _compile_proto(args: argparse.Namespace, data: bytes) -> tuple[Any, str]:
    import tempfile

    from registry.protobuf._protoc import ProtoCompileError, compile_proto

    with tempfile.TemporaryDirectory(prefix="schema-explorer-") as tmp:
        if args.file == "-":
            source = Path(tmp) / "src" / "stdin.proto"
            source.parent.mkdir()
            source.write_bytes(data)
        else:
            source = Path(args.file).expanduser().resolve()
        roots = [Path(p).expanduser().resolve() for p in args.proto_path] or [source.parent]
        for root in roots:
            if not root.is_dir():
                raise UserError(f"--proto-path {root}: no such folder")
        home = next((r for r in roots if r in source.parents), None)
        if home is None:
            roots.append(source.parent)
            home = source.parent
        try:
            file_set = compile_proto(source, roots)
        except ProtoCompileError as exc:
            raise UserError(f"protoc could not compile {args.file}:\n{exc}") from None
        return file_set, source.relative_to(home).as_posix()


def _root_file_of(file_set: Any, message: str | None) -> str:
    """In a descriptor set, the file declaring `message` (default: the last file, protoc's root)."""
    from registry.protobuf._protoc import declared_messages

    if message:
        for file in file_set.file:
            names = declared_messages(file)
            if message in names or any(m.rsplit(".", 1)[-1] == message for m in names):
                return str(file.name)
        raise UserError(f"no file in {len(file_set.file)} descriptor(s) declares message {message!r}")
    return str(file_set.file[-1].name)


def _root_message(file_set: Any, root_file: str, wanted: str | None) -> str:
    from registry.protobuf._protoc import declared_messages

    file = next(f for f in file_set.file if f.name == root_file)
    names = declared_messages(file)
    if not names:
        raise UserError(f"{root_file} declares no message; a PROTOBUF_NATIVE schema needs a root message")
    if not wanted:
        return names[0]
    matches = [n for n in names if n == wanted or n.endswith(f".{wanted}") or n.rsplit(".", 1)[-1] == wanted]
    if not matches:
        raise UserError(f"--message {wanted!r}: {root_file} declares {', '.join(names)}")
    return matches[0]
