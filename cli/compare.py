"""`schema-explorer compare --from A --to B`: where registry B drifts from registry A, what replicating A into
B would stall on, and the plan to converge (registry/compare/, docs/guide/compare.md).

    schema-explorer compare --from a.db --to http://broker:8080 [--to-token T] [--plan] [--json | --format
                            markdown] [--all] [--propose [--as NAME]]

Exit 0: no drift; 1: drift (a topic not the same, or a policy difference); 2: an error, in one line.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    UserError,
    add_pulsar_version_argument,
    check_url,
    close_registry,
    pulsar_version,
    say,
)
from ._markdown import code, text

if TYPE_CHECKING:
    from registry import SchemaRegistry
    from registry.compare import Comparison, TopicPlan

LOCATION_HELP = (
    "a registry: a file path, sqlite:///PATH, postgresql://..., a storage location, an export file (`export`'s "
    "JSON lines), a Parquet export folder (`export --format parquet`), or the http(s) URL of a Pulsar admin API "
    "(a broker or `schema-explorer serve`)"
)


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare two registries: drift per topic, policy differences, replication hazards, a plan",
        description="Compare registry A (--from) with registry B (--to): each topic's state (same, only_in_from, "
        "only_in_to, to_behind, to_ahead, diverged, deleted_in_to, deleted_in_from; versions compared as Pulsar's "
        "duplicate check compares them), the schema policies in force differently, the topics on which "
        "replicating A into B would stall, and with --plan the versions to register into B in order with B's "
        "verdict on each. Exit 0: no drift; 1: drift; 2: an error.",
    )
    add_comparison_arguments(parser)
    parser.add_argument(
        "--propose",
        action="store_true",
        help="open one proposal in B per topic B would accept (its next version from A); never for refused "
        "or diverged topics. B must keep proposals (a registry file, or serve)",
    )
    parser.add_argument("--as", dest="as_name", metavar="NAME", help="who --propose opens them as (a registry file)")
    parser.add_argument(
        "--workspace",
        metavar="LOCATION",
        help="where --propose keeps B's proposals when B is a plain broker (a file, memory: or postgresql://...; "
        "default: your per-cluster workspace file)",
    )
    parser.set_defaults(handler=run_compare)


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """The sides and the output of a comparison: `compare` and `audit drift` take the same."""
    parser.add_argument("--from", dest="source", required=True, metavar="A", help=LOCATION_HELP)
    parser.add_argument("--to", dest="target", required=True, metavar="B", help=LOCATION_HELP)
    for side in ("from", "to"):
        parser.add_argument(
            f"--{side}-token",
            metavar="T",
            help=f"bearer token for a --{side} URL (default: $SCHEMA_EXPLORER_TOKEN when set)",
        )
    add_pulsar_version_argument(parser)
    parser.add_argument("--plan", action="store_true", help="print the plan to converge B on A")
    parser.add_argument("--all", action="store_true", help="list the topics that are the same too")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the comparison as JSON")
    output.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="text for people, or a Markdown table"
    )


def open_location(
    option: str, location: str, token: str | None, line: str | None, *, writes: bool, workspace: str | None = None
) -> SchemaRegistry:
    """The registry `location` names (registry.compare.open_side: an admin URL with `token`, a Parquet export
    folder, an export file, or a registry, never created); read-only unless `writes`."""
    from registry import RegistryError, RegistryNotFoundError
    from registry._location import remote_url
    from registry.compare import open_side

    if not location.strip():
        raise UserError(f"{option} must name a registry")
    try:
        url = remote_url(location)
        if url is not None:
            check_url(url)
            token = token or os.environ.get("SCHEMA_EXPLORER_TOKEN") or None
        elif token:
            raise UserError(f"{option}-token only applies when {option} is an http(s) URL")
        elif workspace is not None:
            raise UserError(f"--workspace only applies when {option} is a plain broker's URL")
        return open_side(location, token=token, pulsar_version=line, writes=writes, workspace=workspace)
    except RegistryNotFoundError:
        raise UserError(f"{option}: no registry in {location.strip()}") from None
    except RegistryError as exc:
        raise UserError(f"{option} {location!r}: {exc}") from None


def run_compare(args: argparse.Namespace) -> int:
    from registry.compare import compare_registries

    line = pulsar_version(args)
    if args.as_name is not None and not args.propose:
        raise UserError("--as only applies with --propose")
    source = open_location("--from", args.source, args.from_token, line, writes=False)
    try:
        target = open_location("--to", args.target, args.to_token, line, writes=args.propose, workspace=args.workspace)
        try:
            found = compare_registries(source, target)
            opened = propose(args, target, source, found) if args.propose else []
        finally:
            close_registry(target)
    finally:
        close_registry(source)
    if args.json:
        doc = found.as_json(include_same=args.all)
        if args.propose:
            doc["proposals"] = opened
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif args.format == "markdown":
        print(markdown(found, plan=args.plan, include_same=args.all))
    else:
        for row in lines(found, plan=args.plan, include_same=args.all):
            say(row)
        for made in opened:
            say(f"proposal #{made['id']} opened on {made['topic']} (version {made['version']} of A)")
    return EXIT_REFUSED if found.has_drift else EXIT_OK


def propose(
    args: argparse.Namespace, target: SchemaRegistry, source: SchemaRegistry, found: Comparison
) -> list[dict[str, Any]]:
    """The plan's proposals in B (registry.propose_plan), as the person `--as` names (a file) or the token does."""
    from registry._location import remote_url
    from registry.compare import propose_plan

    from ._common import acting_person

    remote = remote_url(args.target) is not None
    actor = acting_person(argparse.Namespace(as_name=args.as_name, url=args.target if remote else None))
    made = propose_plan(source, target, found, actor=actor)
    return [{"id": p.id, "topic": p.target, "version": step} for p, step in zip(made, _first_steps(found), strict=True)]


def _first_steps(found: Comparison) -> list[int]:
    return [plan.steps[0].version for plan in found.plan if plan.safe]


# --- text ----------------------------------------------------------------------------------------------------


def lines(found: Comparison, *, plan: bool, include_same: bool) -> list[str]:
    out = [f"{found.source} (A) against {found.target} (B)"]
    counts = ", ".join(
        f"{n} {state}" for state, n in found.summary.items() if n and state not in ("policies", "hazards")
    )
    out.append(f"topics: {counts or 'none'}")
    for row in found.topics if include_same else found.drifted:
        out.append(f"  {row.state:<16} {row.topic}  A v{_v(row.from_latest)}  B v{_v(row.to_latest)}")
    if found.policies:
        out.append("policy differences:")
        for diff in found.policies:
            out.append(
                f"  {diff.target} {diff.field}: A {_value(diff.from_value)} ({diff.from_source}), "
                f"B {_value(diff.to_value)} ({diff.to_source})"
            )
    if found.hazards:
        out.append("replication hazards (A into B):")
        for hazard in found.hazards:
            at = "" if hazard.version is None else f" at version {hazard.version}"
            out.append(
                f"  {hazard.topic}{at}: {hazard.reason} ({hazard.policy} {_value(hazard.policy_value)} from "
                f"{hazard.policy_source}): {hazard.message}"
            )
            for problem in hazard.problems:
                where = f" at {problem.path}" if problem.path else ""
                out.append(f"    {problem.code}{where}: {problem.direction_text}; {problem.hint or problem.message}")
    if plan:
        out.append("plan to converge B on A:" if found.plan else "plan: nothing to register")
        for topic_plan in found.plan:
            out.extend(_plan_lines(topic_plan))
    return out


def _plan_lines(topic_plan: TopicPlan) -> list[str]:
    out = [f"  {topic_plan.topic} ({topic_plan.state}){': ' + topic_plan.note if topic_plan.note else ''}"]
    for step in topic_plan.steps:
        if step.accepted and step.duplicate_of is not None:
            verdict = f"accepted: B already holds it as version {step.duplicate_of}"
        elif step.accepted:
            verdict = f"accepted as version {step.registers_as}"
        elif step.blocked_by is not None:
            verdict = f"not reached: replication stops at version {step.blocked_by}"
        else:
            verdict = f"refused: {step.reason}"
        out.append(f"    version {step.version} ({step.schema_type}): {verdict}")
    return out


def _v(version: int | None) -> str:
    return "-" if version is None else str(version)


def _value(value: object) -> str:
    return "unset" if value is None else str(getattr(value, "value", value))


# --- markdown ------------------------------------------------------------------------------------------------


def markdown(found: Comparison, *, plan: bool, include_same: bool) -> str:
    """A table for a pull request or a ticket; every name from a registry goes through `code`/`text`."""
    out = [f"### Registry drift: {code(found.source)} (A) against {code(found.target)} (B)", ""]
    rows = found.topics if include_same else found.drifted
    if rows:
        out += ["| Topic | State | A latest | B latest |", "|---|---|---|---|"]
        out += [f"| {code(r.topic)} | {r.state} | {_v(r.from_latest)} | {_v(r.to_latest)} |" for r in rows]
    else:
        out.append("No topic differs.")
    if found.policies:
        out += ["", "| Target | Policy | A | B |", "|---|---|---|---|"]
        for d in found.policies:
            out.append(
                f"| {code(d.target)} | {d.field} | {_value(d.from_value)} ({d.from_source}) | "
                f"{_value(d.to_value)} ({d.to_source}) |"
            )
    if found.hazards:
        out += ["", "| Hazard | Reason | Version | Why |", "|---|---|---|---|"]
        for h in found.hazards:
            out.append(f"| {code(h.topic)} | {h.reason} | {_v(h.version)} | {text(h.message)} |")
    if plan and found.plan:
        out += ["", "| Plan: topic | A version | B's verdict |", "|---|---|---|"]
        for p in found.plan:
            if not p.steps:
                out.append(f"| {code(p.topic)} | - | {text(p.note)} |")
            for s in p.steps:
                verdict = (
                    "accepted" if s.accepted else f"refused: {s.reason}" if s.blocked_by is None else "not reached"
                )
                out.append(f"| {code(p.topic)} | {s.version} | {text(verdict)} |")
    return "\n".join(out)
