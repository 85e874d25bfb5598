"""`audit JOB`: the Spark pipeline (pipeline/).

    schema-explorer audit compat-matrix (--db LOCATION | --url URL | --client-conf FILE | --context NAME
        | --snapshot FILE | --parquet DIR) --out DIR
        [--tenant T | --namespace T/NS] [--max-versions N] [--master URL]
    schema-explorer audit policy-impact ... --out DIR --strategy S [--namespace T/NS]
    schema-explorer audit data ... --out DIR --messages DIR [--reader FILE --topic T]
    schema-explorer audit drift --from A --to B [...]   (compare on Spark: cli/audit_drift.py)

Every input is checked before Spark starts (the source reachable, a registry, in a format the tasks read; only
its header and bounds are read on the driver), so a bad path, a malformed snapshot or a foreign Parquet table
is one line on stderr and exit code 2; bad rows inside the data, and parts of the source a task could not
read, are counted in the output instead (a part not wholly read makes the exit code 1: the tables are
written but incomplete).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from . import audit_drift
from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    UserError,
    add_source_arguments,
    add_spark_arguments,
    check_url,
    connection_options,
    pulsar_version,
    whole_number,
)

JOBS = ("compat-matrix", "policy-impact", "data", "drift")


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    audit = commands.add_parser(
        "audit",
        help="fleet-wide and data-level audits on Spark (writes Parquet)",
        description="Run an audit on Spark (local[*] by default; --master for a cluster) and write Parquet tables.",
    )
    jobs = audit.add_subparsers(dest="job", title="jobs", metavar="JOB")
    matrix = jobs.add_parser("compat-matrix", help="pairwise reader/writer compatibility of every topic's versions")
    _common(matrix)
    scope = matrix.add_mutually_exclusive_group()
    scope.add_argument("--tenant", metavar="T", help="only this tenant's topics")
    scope.add_argument("--namespace", metavar="T/NS", help="only this namespace's topics")
    matrix.add_argument(
        "--max-versions",
        type=whole_number(1),
        default=20,
        metavar="N",
        help="check each topic's latest N live versions (default: 20)",
    )
    impact = jobs.add_parser("policy-impact", help="what a proposed strategy would have refused")
    _common(impact)
    impact.add_argument("--strategy", required=True, metavar="S", help="the proposed strategy, e.g. FULL_TRANSITIVE")
    impact.add_argument("--namespace", metavar="T/NS", help="one namespace (default: every namespace)")
    data = jobs.add_parser("data", help="can the reader schema read every archived message; field statistics")
    _common(data)
    data.add_argument("--messages", required=True, metavar="DIR", help="message archive folder (.jsonl / .parquet)")
    data.add_argument("--reader", metavar="FILE", help="candidate reader schema (.avsc / Avro JSON), with --topic")
    data.add_argument("--topic", metavar="T", help="the topic the candidate reader is for")
    for parser in (matrix, impact, data):
        parser.set_defaults(handler=run_audit)
    audit_drift.add_command(jobs)  # its own options (--from, --to) and handler: cli/audit_drift.py
    audit.set_defaults(handler=lambda args: _no_job(audit))


def _common(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(parser)
    parser.add_argument("--snapshot", metavar="FILE", help="an exported snapshot (JSON lines) instead of a registry")
    parser.add_argument(
        "--parquet", metavar="DIR", help="a Parquet export (`export --format parquet DIR`) instead of a registry"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the Parquet tables")
    add_spark_arguments(parser, partitions="Spark partitions for the topic rows")


def _no_job(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    raise UserError(f"choose a job: {', '.join(JOBS)}")


def run_audit(args: argparse.Namespace) -> int:
    from pipeline._archive import ArchiveError, find_archive
    from pipeline._open import load_source
    from pipeline._registry_source import TOKEN_ENV, executor_token
    from pipeline._source import SourceError
    from pipeline._spark import SparkUnavailableError, check_java, check_master, spark_session
    from pipeline._sql_source import executor_settings
    from pipeline.jobs import candidate_schema, check_out, run_compat_matrix, run_data_audit, run_policy_impact
    from pipeline.progress import SparkProgress, write_run_record

    client_conf, context = connection_options(args)  # read again by each executor: no credential passes Spark
    if (client_conf or context) and args.token:
        raise UserError("--token only applies with --url (a client.conf or context carries its own credentials)")
    if sum(1 for x in (args.snapshot, args.parquet, args.db or args.url or client_conf or context) if x) > 1:
        raise UserError(
            "give one source: --db LOCATION, --url URL, --client-conf FILE, --context NAME, --snapshot FILE "
            "or --parquet DIR"
        )
    db = args.db
    if not (args.snapshot or args.parquet or args.url is not None or db or client_conf or context):
        from ._common import resolve_db_path

        db = str(resolve_db_path(None))
    try:
        # Everything that can be wrong with the inputs is found here, before the JVM starts; the output folder is
        # made only once the source has been read.
        check_master(args.master)
        archive = find_archive(args.messages) if args.job == "data" else None
        if args.job == "data" and (args.reader is None) != (args.topic is None):
            raise UserError("--reader and --topic go together: a candidate reader schema is for one topic")
        if args.job == "policy-impact":
            from registry import CompatibilityStrategy

            CompatibilityStrategy.parse(args.strategy)
        if args.progress != "none":
            shown = args.snapshot or args.parquet or args.url or client_conf or (context and f"context {context}") or db
            print(f"checking {shown} ...", file=sys.stderr, flush=True)
        url = check_url(args.url) if args.url is not None else None
        if url is not None and args.token:
            os.environ[TOKEN_ENV] = args.token  # the tasks' token (and a cluster's executors', below)
        source = load_source(
            db=db if url is None and not (args.snapshot or args.parquet) else None,
            url=url,
            client_conf=client_conf,
            context=context,
            snapshot=args.snapshot,
            parquet=args.parquet,
            token=args.token,
            pulsar_version=pulsar_version(args),
        )
        if args.job == "data" and args.reader is not None:
            candidate_schema(source, args.topic, args.reader)
        check_out(args.out)
        check_java()
    except (SourceError, ArchiveError, SparkUnavailableError) as exc:
        raise UserError(str(exc)) from None
    started = time.perf_counter()
    spark = spark_session(
        args.master,
        app_name=f"schema-explorer audit {args.job}",
        ship_code=args.code == "ship",
        progress=args.progress != "none",
        quiet=args.progress == "none",
        extra={**executor_settings(source), **({} if client_conf or context else executor_token())},
    )
    try:
        with SparkProgress(spark, args.progress):
            if args.job == "compat-matrix":
                report = run_compat_matrix(
                    spark,
                    source,
                    args.out,
                    tenant=args.tenant,
                    namespace=args.namespace,
                    max_versions=args.max_versions,
                    partitions=args.partitions,
                )
            elif args.job == "policy-impact":
                report = run_policy_impact(
                    spark,
                    source,
                    args.out,
                    strategy=args.strategy,
                    namespace=args.namespace,
                    partitions=args.partitions,
                )
            else:
                assert archive is not None
                report = run_data_audit(spark, source, args.out, archive, reader=args.reader, topic=args.topic)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    finally:
        spark.stop()
    seconds = time.perf_counter() - started
    write_run_record(report.out, args.job, location=report.location, change_token=report.state, seconds=seconds)
    print(report)
    print(f"done in {seconds:.1f} s on {args.master}")
    if report.unread:  # the tables are written, but miss what those parts hold: never a clean pass
        print(f"{report.unread} part(s) of the source were not wholly read; see source_reads", file=sys.stderr)
        return EXIT_REFUSED
    return EXIT_OK
