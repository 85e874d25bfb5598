"""`schema-explorer`: the command line over the registry core.

Commands translate arguments into core calls and print the result; user errors (RegistryError, bad paths)
become one line on stderr and exit code 2, never a traceback. This module never imports streamlit: `ui`
starts it in a child process so the CLI stays fast and the app runs in Streamlit's own runtime.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

from ._common import (
    DB_HELP,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    PROG,
    PROJECT_ROOT,
    UserError,
    add_source_arguments,
    check_url,
    close_registry,
    connection_options,
    describe_os_error,
    open_registry,
    package_version,
    port_number,
    pulsar_version,
    report_error,
    resolve_db,
    shown,
)

APP_SCRIPT = PROJECT_ROOT / "app" / "streamlit_app.py"

# Each module adds its own subcommands with `add_commands(subparsers)`; they import their heavy
# dependencies (uvicorn, pyspark) only when their command runs, so `schema-explorer --help` stays fast.
COMMAND_MODULES = (
    "cli.check",
    "cli.admin",
    "cli.proposals",
    "cli.webhooks",
    "cli.search",
    "cli.serve",
    "cli.audit",
    "cli.backup",
    "cli.compare",
)


def main(argv: list[str] | None = None) -> int:
    """Run `schema-explorer` with `argv` (default: sys.argv[1:]) and return the exit code.

    Standard output is flushed here, not at exit, so that a reader gone early (`... | head -1`) is seen while
    it can still be answered: quietly, exit 0 (`quiet_after_closed_pipe`)."""
    try:
        try:
            code = run_command(argv)
        except SystemExit:  # argparse's --help and --version print, then exit
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except BrokenPipeError as exc:
        if not stdout_closed():
            return report_error(describe_os_error(exc))
        return quiet_after_closed_pipe()


def run_command(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from registry import RegistryError

    for stream in (sys.stdout, sys.stderr):  # a character no encoding can take prints escaped, not as a traceback
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="backslashreplace")
    try:
        result: int = args.handler(args)
        return result
    except BrokenPipeError:
        raise  # main's to answer: quietly when it is our reader who has gone
    except (UserError, RegistryError) as exc:
        return report_error(exc)
    except OSError as exc:
        return report_error(describe_os_error(exc))
    except KeyboardInterrupt:
        return 130


def stdout_closed() -> bool:
    """Whether the reader of standard output has gone (`... | head -1` read its line and exited). A broken
    pipe elsewhere (a connection to a registry) is an error like any other, never a quiet success, so the
    pipe itself is asked: a pipe or socket whose reader closed polls as POLLERR or POLLHUP."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a real file (a test's capture): it cannot be closed
        return False
    if not hasattr(select, "poll"):  # no poll (Windows): the error came from writing, most likely here
        return True
    poller = select.poll()
    poller.register(fd, 0)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def quiet_after_closed_pipe() -> int:
    """Exit 0 without a word once the reader of our output has gone, as Python's documentation recommends
    for SIGPIPE: what is still buffered goes to /dev/null, so the interpreter's own flush at exit does not
    print "Exception ignored ... BrokenPipeError". The reader took what it wanted; that is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Explore, check and diff Apache Pulsar schemas over an embedded, Pulsar-faithful registry.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")

    ui = commands.add_parser("ui", help="start the Streamlit app (seeds an empty registry first)")
    add_source_arguments(ui)
    ui.add_argument(
        "--read-only",
        action="store_true",
        help="refuse every write (register, delete, policy changes) for the whole server; no session can undo it",
    )
    ui.add_argument(
        "--user-header",
        metavar="NAME",
        help="attribute writes to the value of this request header, set by a trusted reverse proxy "
        "(a request without it is read-only); default: the signed-in user, else the OS user",
    )
    ui.add_argument(
        "--roles",
        metavar="FILE",
        help="a JSON (or .toml) file mapping names to viewer, producer or admin, for proposals and review rules "
        "(default: $SCHEMA_EXPLORER_ROLES; without one, everyone who may write is a producer and the OS user of a "
        "local app an admin); a name it does not list is a viewer",
    )
    ui.add_argument("--port", type=port_number, default=8501, help="port to listen on (default: 8501)")
    ui.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    ui.set_defaults(handler=run_ui)

    seed = commands.add_parser("seed", help="load sample_data/ into the registry")
    seed.add_argument("--db", metavar="PATH", help=DB_HELP)
    seed.add_argument(
        "--force", action="store_true", help="replace a non-empty registry's contents with the sample data"
    )
    seed.set_defaults(handler=run_seed)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(commands)
    return parser


def run_seed(args: argparse.Namespace) -> int:
    from registry import seed_sample_data

    path = resolve_db(args.db)
    reg = open_registry(path, create=True)
    try:
        tenants = reg.tenants()
        if tenants and not args.force:
            print(
                f"{PROG}: registry {shown(path)} is not empty ({len(tenants)} tenant(s): {', '.join(tenants[:5])}"
                f"{', …' if len(tenants) > 5 else ''}); use --force to replace its contents with the sample data",
                file=sys.stderr,
            )
            return EXIT_REFUSED
        if tenants:
            if not isinstance(path, Path):
                raise UserError(
                    f"--force replaces registry files only; {shown(path)} is another storage: empty it, or seed "
                    "a new database"
                )
            # Replaying the sample steps onto live histories would mean nothing: start from an empty file.
            close_registry(reg)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            reg = open_registry(path, create=True)
        report = seed_sample_data(reg)
    finally:
        close_registry(reg)
    print(f"Seeded {shown(path)}: {report}")
    return EXIT_OK


def run_ui(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("streamlit") is None:
        raise UserError("streamlit is not installed; run `make run`, or `pip install -e .` in this checkout")
    if not APP_SCRIPT.is_file():
        raise UserError(f"app script not found: {APP_SCRIPT}")
    command, env, where = app_command(args)
    print(f"Starting the app on http://{args.host}:{args.port} (registry: {where}); Ctrl+C stops it.", flush=True)
    with subprocess.Popen(command, cwd=PROJECT_ROOT, env=env) as child:
        # `kill PID` on this process must not orphan the server: pass SIGTERM on to Streamlit.
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: child.terminate())
        try:
            return child.wait()
        except KeyboardInterrupt:
            # A terminal's Ctrl+C reaches Streamlit too; give it time to stop, then make sure it does.
            stop_child(child)
            return 130
        finally:
            signal.signal(signal.SIGTERM, previous)


def app_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str], str]:
    """The app process's command line, environment and what the start-up line calls the registry. No secret on
    the command line (`ps` shows it): a token travels in the environment, a client.conf or context as its path
    or name, read by the app."""
    from registry import seed_sample_data

    env = dict(os.environ)
    roles = checked_roles(args.roles or env.get("SCHEMA_EXPLORER_ROLES", "").strip() or None)
    client_conf, context = connection_options(args)
    if args.workspace is not None:  # in the environment: a database location may hold a password
        if client_conf is None and context is None and not args.url:
            raise UserError("--workspace only applies to a plain broker (--url, --client-conf or --context)")
        env["SCHEMA_EXPLORER_WORKSPACE"] = args.workspace
    if client_conf is not None or context is not None:
        source, where = cluster_source(args, client_conf, context)
    elif args.url:
        # The token travels in the environment, not on the command line where `ps` would show it.
        source = ["--url", check_url(args.url)]
        if args.token:
            env["SCHEMA_EXPLORER_TOKEN"] = args.token
        where = source[1]
    else:
        if args.token:
            raise UserError("--token only applies with --url")
        path = resolve_db(args.db)
        # The app seeds a new or empty registry (make run); a read-only app writes nothing, not even that.
        reg = open_registry(path, create=not args.read_only)
        try:
            if reg.tenants() == [] and not args.read_only:
                report = seed_sample_data(reg)
                print(f"Seeded empty registry {shown(path)}: {report}")
        finally:
            close_registry(reg)
        if isinstance(path, Path):
            source = ["--db", str(path)]
        else:  # a location may hold a password: it travels in the environment, never on a command line
            source = []
            env["SCHEMA_EXPLORER_DB"] = path
        where = shown(path)

    # app.launch.serve runs the app as an st.App that warms the registry and its catalog while it starts,
    # so the first visit after `make run` does not wait for them.
    command = [
        sys.executable, "-c", "import sys; from app.launch import serve; serve(sys.argv[1:])",
        "--port", str(args.port),
        "--host", args.host,
        *source, *(["--read-only"] if args.read_only else []),
        *(["--pulsar-version", version] if (version := pulsar_version(args)) else []),
        *(["--user-header", args.user_header] if args.user_header else []),
        *(["--roles", roles] if roles else []),
    ]  # fmt: skip
    # Run from the project root so Streamlit reads .streamlit/config.toml, and put the root on the path so
    # the app imports this checkout's registry even without an editable install.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    return command, env, where


def cluster_source(args: argparse.Namespace, client_conf: str | None, context: str | None) -> tuple[list[str], str]:
    """The app's arguments for a client.conf (its absolute path) or a pulsarctl context (its name), read and
    checked here first so that a missing file, an unknown context or an unsupported auth plugin stops `ui` with
    one line. Only the path or the name reaches the app's command line: the app reads the file itself."""
    from registry import RegistryError
    from registry.remote._connection import describe_connection

    if args.token:
        raise UserError("--token only applies with --url (a client.conf or context carries its own credentials)")
    try:
        found = describe_connection(client_conf=client_conf, context=context)
    except RegistryError as exc:
        raise UserError(str(exc)) from None
    if found.insecure_warning:
        print(f"{PROG}: warning: {found.insecure_warning}", file=sys.stderr)
    where = f"{found.url}, {found.source}, auth: {found.auth}"
    if client_conf is not None:
        return ["--client-conf", str(Path(client_conf).expanduser().resolve())], where
    return ["--context", str(context)], where


def checked_roles(path: str | None) -> str | None:
    """The roles file's absolute path, read and checked whole before the server starts: a bad file stops `ui`
    with one line naming the entry (app/roles.py), rather than a server where nobody has the role they expect."""
    if path is None:
        return None
    from app.roles import RolesFileError, load_roles  # streamlit-free: app/roles.py imports only the core

    try:
        return str(load_roles(path).path.resolve())
    except RolesFileError as exc:
        raise UserError(str(exc)) from None


def stop_child(child: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


if __name__ == "__main__":
    sys.exit(main())
