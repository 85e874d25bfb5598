"""`audit drift`: `compare` run on Spark, for fleets past one machine (pipeline/drift.py).

    schema-explorer audit drift --from A --to B [--from-token T] [--to-token T] [--plan] [--all]
                                [--json | --format markdown] [--master URL] [--partitions N]

A and B are what the other audits read: a registry file or location, an admin URL, a snapshot file
(`export`'s JSON lines) or a Parquet export folder. The answers are `compare`'s, in its forms (text, --json,
--format markdown; exit 0 no drift, 1 drift, 2 an error in one line); only `--propose` stays with `compare`
(it writes into B). Every input is checked before Spark starts, as for the other audits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    UserError,
    add_spark_arguments,
    check_url,
    pulsar_version,
    say,
)
from .compare import add_comparison_arguments

if TYPE_CHECKING:
    from pipeline._source import Source


def add_command(jobs: argparse._SubParsersAction[Any]) -> None:
    parser = jobs.add_parser(
        "drift",
        help="compare two registries on Spark (compare's answers, for fleets past one machine)",
        description="Compare registry A (--from) with registry B (--to) on Spark: each side read by the executors "
        "in parts, the core's answers per topic (states, policy differences, replication hazards, the plan). "
        "The output is `compare`'s. Exit 0: no drift; 1: drift; 2: an error.",
    )
    add_comparison_arguments(parser)
    add_spark_arguments(parser, partitions="Spark partitions pairing the two sides by topic")
    parser.set_defaults(handler=run_drift_audit)


def side_source(option: str, location: str, given: str | None, token: str | None, line: str | None) -> Source:
    """The pipeline source `location` names (checked, its header read; nothing of its topics): an admin URL
    (read with `token`), a Parquet export folder, a snapshot file, else a registry location. UserError (exit 2)
    when it is none, or when a token is `given` for a side that is not a URL."""
    from pipeline._open import load_source
    from pipeline._source import SourceError
    from registry import RegistryError
    from registry._location import remote_url

    from ._common import resolve_db

    if not location.strip():
        raise UserError(f"{option} must name a registry")
    try:
        url = remote_url(location)
    except RegistryError as exc:
        raise UserError(f"{option} {location!r}: {exc}") from None
    if url is None and given:
        raise UserError(f"{option}-token only applies when {option} is an http(s) URL")
    try:
        if url is not None:
            return load_source(url=check_url(url), token=token, pulsar_version=line)
        if Path(location).expanduser().is_dir():
            return load_source(parquet=location, pulsar_version=line)
        target = resolve_db(location)
        if isinstance(target, Path) and _is_snapshot(target):
            return load_source(snapshot=str(target), pulsar_version=line)
        return load_source(db=str(target), pulsar_version=line)
    except SourceError as exc:
        raise UserError(f"{option}: {exc}") from None


def _is_snapshot(path: Path) -> bool:
    """An export file (JSON lines, starting with `{`) rather than a registry file."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(64).lstrip().startswith(b"{")


def _one_password(source: Source, target: Source) -> None:
    """Both sides on PostgreSQL with different passwords: the executors' environment holds one PGPASSWORD."""
    from pipeline._sql_source import SqlSource

    passwords = {s.password for s in (source, target) if isinstance(s, SqlSource) and s.postgres and s.password}
    if len(passwords) > 1:
        raise UserError("--from and --to give different PostgreSQL passwords: executors read one PGPASSWORD")


def _token(args: argparse.Namespace) -> str | None:
    """The one token the executors read (their environment holds one): a URL side's, or both sides' alike."""
    from registry._location import remote_url

    tokens = set()
    for location, given in ((args.source, args.from_token), (args.target, args.to_token)):
        if remote_url(location) is not None:
            tokens.add(given or os.environ.get("SCHEMA_EXPLORER_TOKEN") or None)
    tokens.discard(None)
    if len(tokens) > 1:
        raise UserError(
            "--from-token and --to-token differ: executors read one token from their environment, so compare "
            "two admin APIs that take different tokens with `compare`"
        )
    return next(iter(tokens), None)


def run_drift_audit(args: argparse.Namespace) -> int:
    from pipeline._registry_source import TOKEN_ENV, executor_token
    from pipeline._source import SourceError
    from pipeline._spark import SparkUnavailableError, check_java, check_master, spark_session
    from pipeline._sql_source import executor_settings
    from pipeline.drift import run_drift
    from pipeline.progress import SparkProgress

    from .compare import lines, markdown

    line = pulsar_version(args)
    token = _token(args)
    try:
        check_master(args.master)
        if token:
            os.environ[TOKEN_ENV] = token  # the tasks' token (and a cluster's executors', below)
        source = side_source("--from", args.source, args.from_token, token, line)
        target = side_source("--to", args.target, args.to_token, token, line)
        _one_password(source, target)
        check_java()
    except (SourceError, SparkUnavailableError) as exc:
        raise UserError(str(exc)) from None
    started = time.perf_counter()
    spark = spark_session(
        args.master,
        app_name="schema-explorer audit drift",
        ship_code=args.code == "ship",
        progress=args.progress != "none",
        quiet=args.progress == "none",
        extra={**executor_settings(source), **executor_settings(target), **executor_token()},
    )
    try:
        with SparkProgress(spark, args.progress):
            drift = run_drift(spark, source, target, include_same=args.all, partitions=args.partitions)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    finally:
        spark.stop()
    found = drift.comparison
    if args.progress != "none":
        for note in drift.notes:
            print(note, file=sys.stderr)
        print(f"done in {time.perf_counter() - started:.1f} s on {args.master}", file=sys.stderr)
    if args.json:
        print(json.dumps(found.as_json(include_same=args.all), indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        print(markdown(found, plan=args.plan, include_same=args.all))
    else:
        for row in lines(found, plan=args.plan, include_same=args.all):
            say(row)
    return EXIT_REFUSED if found.has_drift else EXIT_OK
