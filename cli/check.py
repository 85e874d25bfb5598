"""`check`: would the registry accept this schema (pulsar-admin schemas compatibility), or the schema a
proposal holds, as its review judges it (`check --proposal ID`), in text, JSON or a Markdown comment for a pull
request. Exits 0 when compatible, 1 when not (or the proposal is stale), 2 on a user error.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from registry import Proposal, ProposalKind, ProposalReview, SchemaInfo, TopicName, to_json

from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    PROG,
    UserError,
    add_schema_arguments,
    read_schema_info,
    record_pitfalls,
    say,
    whole_number,
)
from ._markdown import MarkedProblem, ProposalRef, check_comment, policy_comment
from .admin import FORMATS, command, print_json, registry_for, render_result, topic_text
from .proposals import APP_URL_ENV, base_text, current_review, has_schema, line_named, render_review


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    check = command(
        commands,
        "check",
        "would the registry accept this schema? (pulsar-admin schemas compatibility)",
        "Check a schema against a topic's live versions under its effective strategy (or --strategy) without "
        "registering it. Exits 0 when compatible, 1 when not, and explains each problem: which rule, which "
        "direction (who cannot read whom), where in the schema, and how to fix it.",
        run_check,
    )
    check.add_argument(
        "--topic",
        "-t",
        metavar="T",
        help="topic: persistent://tenant/namespace/topic (or t/n/x); required unless --proposal names it",
    )
    add_schema_arguments(check, required=False)
    check.add_argument("--strategy", metavar="S", help="check under this strategy instead of the topic's own")
    check.add_argument(
        "--format",
        choices=FORMATS,
        help="text (default), json (as --json), or markdown: a pull-request comment, user text escaped",
    )
    check.add_argument(
        "--proposal",
        type=whole_number(1),
        metavar="ID",
        help="check proposal ID (its current revision, each problem marked introduced or already there; exit 1 "
        "also when it is stale); with a schema file, check the file and link the proposal",
    )
    check.add_argument(
        "--app-url",
        metavar="URL",
        help="the app's address, to link the proposal as URL/proposal?id=ID (default: $SCHEMA_EXPLORER_APP_URL; "
        "without it the proposal is named #ID)",
    )


def run_check(args: argparse.Namespace) -> int:
    form = output_format(args)
    if args.proposal is not None:
        return run_check_proposal(args, form)
    if args.app_url is not None:
        raise UserError("--app-url links a proposal: give --proposal ID too")
    if not args.topic:
        raise UserError("--topic is required (or --proposal ID, to check a proposal's schema)")
    info = read_schema_info(args)
    pitfalls = record_pitfalls(args)
    with registry_for(args) as reg:
        return emit_check(args, form, reg, args.topic, info, pitfalls)


def output_format(args: argparse.Namespace) -> str:
    """`--format`, with `--json` as another name for `--format json` (both given: they must agree)."""
    if args.json and args.format not in (None, "json"):
        raise UserError(f"--json asks for --format json, but --format says {args.format}: give one of them")
    return "json" if args.json else (args.format or "text")


def emit_check(
    args: argparse.Namespace,
    form: str,
    reg: Any,
    topic: str,
    info: Any,
    pitfalls: tuple[Any, ...],
    proposal: ProposalRef | None = None,
) -> int:
    """Check `info` on `topic` (under --strategy, or the topic's own) and print the verdict in `form`; with
    `proposal`, the proposal the check is linked to. Exit 0 when compatible, 1 when not."""
    result = reg.check(topic, info, strategy=args.strategy)
    line = reg.pulsar_line
    result = replace(result, advisories=result.advisories + pitfalls)
    name = topic_text(topic)
    if form == "json":
        extra = {} if proposal is None else {"proposal": to_json(proposal)}
        print_json({"topic": name, "pulsar_version": line.name, **to_json(result), **extra})
    elif form == "markdown":
        what_if = reg.what_if(topic, info)  # the upgrade order and the changes, which a verdict does not hold
        marked = [MarkedProblem(problem=p) for p in result.problems]
        sys.stdout.write(
            check_comment(
                topic=name,
                result=result,
                line=line,
                problems=marked,
                advisories=result.advisories,
                what_if=what_if,
                proposal=proposal,
            )
        )
    else:
        say(render_result(name, result))
        say(f"answered as {line.title} (Avro {line.avro})")
        if proposal is not None:
            say(proposal_line(proposal))
    return EXIT_OK if result.compatible else EXIT_REFUSED


def proposal_line(proposal: ProposalRef) -> str:
    """The proposal a check is about, for people: its number (and link), title, state and revision."""
    where = f" {proposal.url}" if proposal.url else ""
    note = f"\n  note: {proposal.note}" if proposal.note else ""
    return (
        f"proposal #{proposal.id}{where}: {proposal.title} ({proposal.state}, revision {proposal.revision} "
        f"against {proposal.base}){note}"
    )


def run_check_proposal(args: argparse.Namespace, form: str) -> int:
    """`check --proposal ID`: the proposal's current revision as its review judges it (problems marked
    introduced or already there; exit 1 when Pulsar would refuse it or it is stale), or, with a schema file
    that is not that revision, the file checked on the proposal's topic with the proposal linked."""
    if args.strategy is not None:
        raise UserError("--strategy: a proposal is judged under the strategy in force (its review shows all 8)")
    url_base = app_url(args.app_url)
    info = read_schema_info(args) if has_schema(args) else None
    pitfalls = record_pitfalls(args) if info is not None else ()
    with registry_for(args) as reg:
        proposal = reg.proposals.get(args.proposal)
        url = None if url_base is None else f"{url_base}/proposal?id={proposal.id}"
        if proposal.kind is ProposalKind.POLICY:
            if info is not None or args.topic:
                raise UserError(f"proposal #{proposal.id} changes a policy: check it without a topic or schema")
            review, frozen = current_review(reg, proposal)
            return _emit_policy_check(form, proposal, review, url)
        if args.topic and str(TopicName.parse(args.topic).base) != proposal.target:
            raise UserError(f"--topic {args.topic!r} is not proposal #{proposal.id}'s topic ({proposal.target})")
        revision = proposal.revision
        if info is not None and not _same_schema(info, revision.schema):
            note = (
                f"the schema checked is not revision {revision.number} of proposal #{proposal.id}: the proposal's "
                f"own review may differ (`{PROG} check --proposal {proposal.id}`)"
            )
            ref = _ref(proposal, url, note)
            return emit_check(args, form, reg, proposal.target, info, pitfalls, ref)
        review, frozen = current_review(reg, proposal)
        ref = _ref(proposal, url, "as it was judged when applied" if frozen else "")
        line = line_named(review.line)
    what_if = review.what_if
    if what_if is None:  # a schema proposal's review always holds one; a registry that sends none is refused
        raise UserError(f"proposal #{proposal.id}: the registry answered no verdict for this schema")
    result = replace(what_if.result, advisories=what_if.result.advisories + tuple(pitfalls))
    refused_now = not result.compatible or review.stale
    if form == "json":
        print_json(
            {
                "topic": proposal.target,
                "pulsar_version": line.name,
                **to_json(result),
                "proposal": to_json(ref),
                "review": to_json(review),
            }
        )
    elif form == "markdown":
        sys.stdout.write(
            check_comment(
                topic=proposal.target,
                result=result,
                line=line,
                problems=[MarkedProblem(problem=p.problem, introduced=p.introduced) for p in review.problems],
                advisories=result.advisories,
                what_if=what_if,
                proposal=ref,
                stale_since=review.changed_since if review.stale else None,
                refusals=review,
                diff=review.diff,
            )
        )
    else:
        say(proposal_line(ref))
        say("\n".join(render_review(proposal, review, line, when="at apply (frozen)" if frozen else "now")))
    return EXIT_REFUSED if refused_now else EXIT_OK


def _emit_policy_check(form: str, proposal: Proposal, review: ProposalReview, url: str | None) -> int:
    """A policy proposal checked: its preview; exit 1 when it is stale (it could not be applied)."""
    ref = _ref(proposal, url, "")
    line = line_named(review.line)
    if form == "json":
        print_json({"pulsar_version": line.name, "proposal": to_json(ref), "review": to_json(review)})
    elif form == "markdown":
        if review.preview is None:
            raise UserError(f"proposal #{proposal.id}: the registry answered no preview for this policy change")
        sys.stdout.write(policy_comment(preview=review.preview, stale=review.stale, proposal=ref, line=line))
    else:
        say(proposal_line(ref))
        say("\n".join(render_review(proposal, review, line, when="now")))
    return EXIT_REFUSED if review.stale else EXIT_OK


def _same_schema(info: SchemaInfo, proposed: SchemaInfo | None) -> bool:
    """Whether a schema read from a file is the proposal's revision (type, text and properties)."""
    if proposed is None:
        return False
    return (info.type, info.schema, dict(info.properties)) == (
        proposed.type,
        proposed.schema,
        dict(proposed.properties),
    )


def _ref(proposal: Proposal, url: str | None, note: str) -> ProposalRef:
    return ProposalRef(
        id=proposal.id,
        title=proposal.title,
        state=str(proposal.state),
        revision=proposal.revision.number,
        base=base_text(proposal),
        url=url,
        note=note,
    )


def app_url(raw: str | None) -> str | None:
    """The app's address for proposal links: `--app-url`, else $SCHEMA_EXPLORER_APP_URL, else None. Only an
    http(s) URL without a query, fragment, spaces, quotes or angle brackets passes, so a link made from it
    cannot break out of the Markdown or HTML around it; anything else is a usage error naming it."""
    flag = "--app-url"
    if raw is None:
        raw = os.environ.get(APP_URL_ENV) or None
        flag = f"${APP_URL_ENV}"
    if raw is None:
        return None
    text = raw.strip()
    parts = urlsplit(text)
    bad = any(c.isspace() or c in "<>\"'`\\" or not c.isprintable() for c in text)
    if bad or parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise UserError(
            f"{flag} {raw!r} is not the app's address: give an http:// or https:// URL without a query, "
            "e.g. https://schemas.example.com"
        )
    return text.rstrip("/")
