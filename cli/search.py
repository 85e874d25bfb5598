"""`schema-explorer search` and `schema-explorer index`: find topics from the command line.

    schema-explorer search "field:currency type:AVRO" [--db PATH | --url URL] [--limit N] [--json]
    schema-explorer index --url URL [--token T] [--json]

Against a plain broker (no explorer API), a search needs the broker's topic index: built in the background
and cached locally (registry/remote/_broker_index.py). Both commands then show its progress on stderr,
topics read of the total, and Ctrl-C cancels it (what was read stays cached; the next run resumes).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from registry import BrokerIndex

from ._common import EXIT_OK, EXIT_REFUSED, PROG, add_source_arguments, close_registry, open_source, whole_number

_TICK_S = 0.5  # how often the progress line is redrawn on a terminal
_LOG_EVERY_S = 10.0  # and how often a line is written when stderr is not a terminal


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    search = commands.add_parser(
        "search",
        help="find topics by name, field, type, strategy or namespace",
        description="Search the topic catalog as the app's Browse page does: each term must match, "
        "case-insensitively; `name:x` and `field:x` restrict a term, `type:AVRO` names the latest schema type. "
        "Against a plain broker the first search waits for its topic index (progress on stderr).",
    )
    add_source_arguments(search)
    search.add_argument("text", nargs="?", default="", help="search terms (default: every topic)")
    search.add_argument("--namespace", "-n", metavar="NS", help="only this namespace (tenant/namespace)")
    search.add_argument("--limit", type=whole_number(1), default=50, help="topics to print (default: 50)")
    search.add_argument("--offset", type=whole_number(0), default=0, help="topics to skip (default: 0)")
    search.add_argument("--json", action="store_true", help="print the page as JSON (to_json of a TopicPage)")
    _system_topics_option(search)
    search.set_defaults(handler=run_search)

    index = commands.add_parser(
        "index",
        help="build or refresh the local search index of a plain broker",
        description="Read every topic of a broker (a listing per namespace, then each topic's schemas, and its own "
        "strategy where the namespace has topic policies; 32 requests in flight) into the local cache a search "
        "answers from. Ctrl-C cancels; what was "
        "read stays cached and the next run resumes. A registry file or `schema-explorer serve` needs no index.",
    )
    add_source_arguments(index)
    index.add_argument("--json", action="store_true", help="print the final status as JSON")
    _system_topics_option(index)
    index.set_defaults(handler=run_index)


def _system_topics_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--system-topics",
        action="store_true",
        help="include the broker's own topics (pulsar/system, __change_events, transaction buffers), hidden "
        "otherwise as Pulsar hides them",
    )


def run_search(args: argparse.Namespace) -> int:
    from registry import TopicQuery, to_json

    reg = open_source(args)
    try:
        index = reg.broker_index
        if index is not None and not index.status().ready and not _follow(index):
            return EXIT_REFUSED
        page = reg.search_topics(
            TopicQuery(text=args.text, namespace=args.namespace), offset=args.offset, limit=args.limit
        )
        if args.json:
            import json

            print(json.dumps(to_json(page), indent=2, ensure_ascii=False))
            return EXIT_OK
        for row in page.items:
            kind = row.schema_type.value if row.schema_type else "NONE"
            print(f"{row.topic}\t{kind}\tv{row.latest_version if row.latest_version is not None else '-'}"
                  f"\t{row.versions} live\t{row.strategy.value} ({row.strategy_source.value})")  # fmt: skip
        shown_to = page.offset + len(page.items)
        print(f"{page.offset + 1 if page.items else 0}-{shown_to} of {page.total} topics", file=sys.stderr)
        return EXIT_OK
    finally:
        close_registry(reg)


def run_index(args: argparse.Namespace) -> int:
    from registry import to_json

    reg = open_source(args)
    try:
        index = reg.broker_index
        if index is None:
            print(
                f"{PROG}: {reg.location} searches without an index (a registry file, or `schema-explorer serve`, "
                "which searches itself)",
                file=sys.stderr,
            )
            return EXIT_OK
        started = time.monotonic()
        index.refresh()
        done = _follow(index)
        final = index.status()
        if args.json:
            import json

            print(json.dumps(to_json(final), indent=2, ensure_ascii=False))
        else:
            print(
                f"{final.state}: {final.indexed} of {final.total} topics read in {time.monotonic() - started:.1f} s "
                f"with {final.requests} requests ({final.workers} in flight); {final.cached} cached in "
                f"{final.cache_path}"
                + (f"; {final.unreadable} unreadable, first: {final.error}" if final.unreadable else "")
            )
        return EXIT_OK if done else EXIT_REFUSED
    finally:
        close_registry(reg)


def _follow(index: BrokerIndex) -> bool:
    """Start the index if needed and show its progress on stderr until it ends; True when it completed.
    Ctrl-C cancels it and says what stays cached."""
    status = index.refresh()
    tty = sys.stderr.isatty()
    last_line = 0.0
    try:
        while status.running:
            now = time.monotonic()
            if tty or now - last_line >= _LOG_EVERY_S:
                line = _progress(status)
                print(f"\r{line}" if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
                last_line = now
            time.sleep(_TICK_S)
            status = index.status()
    except KeyboardInterrupt:
        status = index.cancel()
        while status.running:
            time.sleep(0.1)
            status = index.status()
        print(
            f"\n{PROG}: index cancelled after {status.indexed} of {status.total} topics; {status.cached} are "
            "cached and the next run resumes",
            file=sys.stderr,
        )
        raise
    if tty:
        print(file=sys.stderr)
    if not status.ready or status.state != "done":
        print(f"{PROG}: the index {status.state}: {status.error or 'no complete index'}", file=sys.stderr)
    return bool(status.ready and status.state == "done")


def _progress(status: Any) -> str:
    if status.state == "listing":
        return f"indexing: listing namespaces and topics ({status.requests} requests)"
    share = f" ({100 * status.indexed // status.total}%)" if status.total else ""
    return f"indexing: {status.indexed} of {status.total} topics{share}, {status.requests} requests"
