"""`propose` and `proposals ...`: schema change proposals (registry/proposals/) from the command line.

A proposal is a candidate schema for a topic, or a policy change, that a team reviews and approves before it
is applied exactly as approved. These commands translate arguments into the core's proposal calls and print
what the core decided; they decide nothing themselves, so the CLI, the app and REST refuse the same things.

Who acts: over `--url` the server names the person by the bearer token (the `actor` passed to a remote
registry is not sent), so `--as` is refused there. On `--db` the user can write the registry file anyway, so
they act as an admin, named as the app names them: `NAME (os user)`; `--as NAME` names someone else, for a
team sharing one registry file on one machine.

Exit codes: 0 done; 1 refused (a permission, a missing approval, a stale proposal, a state that does not
allow the step, a schema Pulsar refuses at apply); 2 a usage error. Each refusal is one line on stderr.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from typing import Any

from registry import (
    Admission,
    CompatibilityResult,
    PolicyPreview,
    Proposal,
    ProposalKind,
    ProposalReview,
    ProposalState,
    PulsarLine,
    ReviewedProblem,
    ReviewRules,
    SchemaRegistry,
    WhatIf,
    applied_text,
    approvals_text,
    policy_change,
    pulsar_line,
    refusal_word,
    refusals_text,
    rules_note,
    to_json,
)

from ._common import (
    EXIT_OK,
    PROG,
    UserError,
    acting_person,
    add_as_argument,
    add_schema_arguments,
    add_source_arguments,
    read_schema_info,
    record_pitfalls,
    refused,
    say,
    whole_number,
)
from .admin import (
    JSON_HELP,
    add_policy_change_arguments,
    policy_change_given,
    policy_changes,
    print_json,
    registry_for,
    render_result,
    say_pitfalls,
    time_text,
)

Handler = Callable[[argparse.Namespace], int]

APP_URL_ENV = "SCHEMA_EXPLORER_APP_URL"


# --- commands -----------------------------------------------------------------------------------------------


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    propose = commands.add_parser(
        "propose",
        help="propose a schema (or a policy change) for review instead of registering it",
        description="Store a proposal: a candidate schema for --topic (the same inputs as `check`), or a policy "
        "change of --namespace or --topic (the same options as `policy set`). Nothing is registered or changed "
        "until the proposal is approved and applied (`proposals apply ID`). Prints the proposal and how Pulsar "
        "judges it now; exits 0 once it is stored, whatever the verdict (gate on `check --proposal ID`).",
    )
    _common_arguments(propose, writes=True)
    target = propose.add_mutually_exclusive_group(required=True)
    target.add_argument("--topic", "-t", metavar="T", help="the topic: persistent://tenant/namespace/topic (or t/n/x)")
    target.add_argument("--namespace", "-n", metavar="NS", help="a namespace's policies (tenant/namespace)")
    propose.add_argument("--title", required=True, help="what the change is, in one line (required)")
    propose.add_argument("--description", default="", help="why, for the reviewers (default: none)")
    add_schema_arguments(propose, required=False)
    add_policy_change_arguments(propose.add_argument_group("policy change (instead of a schema)"))
    propose.set_defaults(handler=_refusals(run_propose))

    proposals = commands.add_parser(
        "proposals",
        help="list, show, review, approve and apply schema change proposals",
        description="Schema change proposals: review them, comment, approve or reject, apply exactly what was "
        "approved. Exits 1 when the registry refuses a step (a permission, missing approvals, a stale "
        "proposal), 2 on a usage error.",
    )
    verbs = proposals.add_subparsers(dest="verb", title="verbs", metavar="VERB", required=True)

    listing = _verb(verbs, "list", "proposals, newest first", run_list, writes=False, takes_id=False)
    listing.add_argument("--state", metavar="S", help="open, approved, applied, rejected, withdrawn or stale")
    listing.add_argument("--namespace", "-n", metavar="NS", help="only this namespace's proposals")
    listing.add_argument("--topic", "-t", metavar="T", help="only this topic's proposals")
    listing.add_argument("--limit", type=whole_number(1), default=500, metavar="N", help="at most N (default 500)")

    _verb(
        verbs,
        "show",
        "a proposal, its revisions, approvals and comments, and its review computed now",
        run_show,
        writes=False,
    )
    comment = _verb(verbs, "comment", "comment on a proposal (anyone who may read)", run_comment)
    comment.add_argument("text", metavar="TEXT", help="the comment")
    comment.add_argument(
        "--path", default="", metavar="P", help="where in the candidate: a JSON pointer such as /fields/3/type"
    )
    approve = _verb(verbs, "approve", "approve the current revision (never your own proposal)", run_approve)
    _revision_argument(approve, "approve")
    reject = _verb(verbs, "reject", "reject a proposal, with a reason", run_reject)
    reject.add_argument("--reason", required=True, metavar="R", help="why (required)")
    _verb(verbs, "withdraw", "withdraw a proposal (its author, or an admin)", run_withdraw)
    revise = _verb(
        verbs,
        "revise",
        "a new revision: another schema (the same inputs as `check`), or other policy values; clears approvals",
        run_revise,
    )
    add_schema_arguments(revise, required=False)
    add_policy_change_arguments(revise.add_argument_group("policy change (a policy proposal)"))
    _verb(verbs, "rebase", "a new revision of the same candidate against the latest version (or policy)", run_rebase)
    apply = _verb(verbs, "apply", "apply exactly the approved revision, while its base is still the latest", run_apply)
    apply.add_argument(
        "--override-reason",
        metavar="R",
        help="an admin applying without the approvals the namespace asks for: why (kept with the proposal)",
    )
    _revision_argument(apply, "apply")
    rules = _verb(
        verbs,
        "rules",
        "a namespace's review rules: approvals needed and who may give them (--set changes them)",
        run_rules,
        takes_id=False,
    )
    rules.add_argument("namespace", metavar="NAMESPACE", help="tenant/namespace")
    rules.add_argument("--set", action="store_true", help="change the rules (an admin); others stay as they are")
    rules.add_argument(
        "--required-approvals", type=whole_number(0), metavar="N", help="approvals a proposal needs (0 to 5)"
    )
    rules.add_argument(
        "--reviewer",
        action="append",
        default=[],
        metavar="NAME",
        help="who may approve (repeatable; replaces the list)",
    )
    rules.add_argument(
        "--any-reviewer",
        action="store_true",
        help="clear the reviewers: anyone who may write approves (not the author)",
    )
    rules.add_argument(
        "--require-proposals",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="refuse every direct schema or policy write in the namespace (upload, policy set, the app's Register "
        "and Save, REST): changes go through a proposal; --no-require-proposals allows direct writes again",
    )


def run_propose(args: argparse.Namespace) -> int:
    title = args.title.strip()
    if not title:
        raise UserError("--title must not be empty: say in one line what the change is")
    actor = acting_person(args)
    if policy_change_given(args):
        if has_schema(args):
            raise UserError("give either a schema (--file, --record, --type) or policy changes, not both")
        target = args.namespace or args.topic
        change = policy_change(target, policy_changes(args, namespace=args.namespace is not None))
        with registry_for(args) as reg:
            made = reg.proposals.propose_policy(target, change, title=title, description=args.description, actor=actor)
            return _print_made(args, reg, made, "created")
    if args.namespace is not None:
        raise UserError(
            "a namespace proposal changes its policies: give --compatibility, --validation-enforced, "
            "--allow-auto-update or --auto-update-strategy (a schema is proposed for a --topic)"
        )
    info = read_schema_info(args)
    pitfalls = record_pitfalls(args)
    with registry_for(args) as reg:
        made = reg.proposals.propose_schema(args.topic, info, title=title, description=args.description, actor=actor)
        code = _print_made(args, reg, made, "created")
    if not args.json:
        say_pitfalls(pitfalls)  # what a --record class generates that is worth a fix, as `check` shows it
    return code


def run_list(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        found = reg.proposals.list(state=args.state, namespace=args.namespace, topic=args.topic, limit=args.limit)
        rules = {space: reg.proposals.rules(space) for space in {p.namespace for p in found}} if not args.json else {}
    if args.json:
        print_json({"proposals": to_json(found)})
        return EXIT_OK
    if not found:
        say("no proposals" + _filters_text(args))
        return EXIT_OK
    # The title as its author wrote it; CHANGE says what the current revision changes (after a rebase too).
    rows = [("ID", "STATE", "KIND", "TARGET", "REV", "APPROVALS", "AUTHOR", "UPDATED", "CHANGE", "TITLE")]
    for p in found:
        rows.append(
            (
                f"#{p.id}",
                str(p.state),
                str(p.kind),
                p.target,
                str(p.revision.number),
                approvals_text(p, rules[p.namespace]),
                p.author,
                time_text(p.updated_at),
                p.revision.summary,
                p.title,
            )
        )
    say("\n".join(_table(rows)))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        proposal = reg.proposals.get(args.id)
        rules = reg.proposals.rules(proposal.namespace)
        review, frozen = current_review(reg, proposal)
        line = line_named(review.line)
    if args.json:
        print_json({**to_json(proposal), "review": to_json(review), "review_computed": "at apply" if frozen else "now"})
        return EXIT_OK
    lines = render_proposal(proposal, rules)
    lines.append("")
    lines += render_review(proposal, review, line, when="at apply (frozen)" if frozen else "now")
    say("\n".join(lines))
    return EXIT_OK


def run_comment(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    with registry_for(args) as reg:
        made = reg.proposals.comment(args.id, args.text, path=args.path, actor=actor)
    if args.json:
        print_json(to_json(made))
    else:
        where = f" on {made.path}" if made.path else ""
        say(f"proposal #{args.id}: comment {made.id}{where} by {made.user} on revision {made.revision}")
    return EXIT_OK


def run_approve(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    with registry_for(args) as reg:
        done = reg.proposals.approve(args.id, actor=actor, revision=args.revision)
        rules = reg.proposals.rules(done.namespace)
    return _print_step(args, done, f"approved: approvals {approvals_text(done, rules)}")


def run_reject(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise UserError("--reason must not be empty: say why the proposal is rejected")
    actor = acting_person(args)
    with registry_for(args) as reg:
        done = reg.proposals.reject(args.id, args.reason, actor=actor)
    return _print_step(args, done, f"rejected: {done.reason}")


def run_withdraw(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    with registry_for(args) as reg:
        done = reg.proposals.withdraw(args.id, actor=actor)
    return _print_step(args, done, "withdrawn")


def run_revise(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    schema_given, policy_given = has_schema(args), policy_change_given(args)
    if schema_given and policy_given:
        raise UserError("give either a schema (--file, --record, --type) or policy changes, not both")
    if not schema_given and not policy_given:
        raise UserError(
            "nothing to revise: give the new schema (--file, --record, --type) or the new policy values "
            "(--compatibility, ...); `proposals rebase ID` keeps the candidate and moves its base"
        )
    info = read_schema_info(args) if schema_given else None  # a bad file is refused before anything is read
    with registry_for(args) as reg:
        current = reg.proposals.get(args.id)
        if current.kind is ProposalKind.SCHEMA and info is None:
            raise UserError(f"proposal #{args.id} proposes a schema: revise it with --file, --record or --type")
        if current.kind is ProposalKind.POLICY and info is not None:
            raise UserError(f"proposal #{args.id} changes a policy: revise it with --compatibility and the like")
        if info is not None:
            done = reg.proposals.revise(args.id, schema=info, actor=actor)
        else:
            changes = policy_changes(args, namespace=current.target == current.namespace)
            done = reg.proposals.revise(args.id, policy=policy_change(current.target, changes), actor=actor)
        return _print_made(args, reg, done, f"revised (revision {done.revision.number}; approvals cleared)")


def run_rebase(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    with registry_for(args) as reg:
        done = reg.proposals.rebase(args.id, actor=actor)
        return _print_made(args, reg, done, f"rebased (revision {done.revision.number}; approvals cleared)")


def run_apply(args: argparse.Namespace) -> int:
    from registry import IncompatibleSchemaError

    reason = args.override_reason
    if reason is not None and not reason.strip():
        raise UserError("--override-reason must not be empty: say why the approvals are not needed")
    actor = acting_person(args)
    with registry_for(args) as reg:
        try:
            done = reg.proposals.apply(args.id, actor=actor, override_reason=reason, revision=args.revision)
        except IncompatibleSchemaError as exc:
            if exc.result is None:
                raise
            proposal = reg.proposals.get(args.id)
            if not args.json:
                say(render_result(proposal.target, exc.result))
            else:
                print_json({"proposal": args.id, "applied": False, **to_json(exc.result)})
            return refused(
                f"proposal #{args.id} was not applied: Pulsar refuses its schema under {exc.result.strategy} "
                "now (the strategy in force at apply decides); nothing was registered"
            )
    if args.json:
        print_json(to_json(done))
        return EXIT_OK
    approvers = ", ".join(done.approvers) or "nobody"
    say(f"proposal #{done.id} {applied_text(done)} (revision {done.revision.number}, approved by {approvers})")
    if done.reason and reason is not None:
        say(f"applied WITHOUT the approvals the namespace asks for, by {done.applied_by}: {done.reason}")
    return EXIT_OK


def run_rules(args: argparse.Namespace) -> int:
    changing = (
        args.required_approvals is not None or args.reviewer or args.any_reviewer or args.require_proposals is not None
    )
    if changing and not args.set:
        raise UserError(
            "--required-approvals, --reviewer, --any-reviewer and --[no-]require-proposals change the rules: add --set"
        )
    if args.set and not changing:
        raise UserError(
            "--set changes nothing: give --required-approvals N, --reviewer NAME, --any-reviewer or "
            "--[no-]require-proposals"
        )
    if args.reviewer and args.any_reviewer:
        raise UserError("give --reviewer NAME or --any-reviewer, not both")
    if any(not name.strip() for name in args.reviewer):
        raise UserError("--reviewer must name someone (it is empty)")
    actor = acting_person(args) if args.set else None
    with registry_for(args) as reg:
        rules = reg.proposals.rules(args.namespace)
        if args.set:
            wanted = ReviewRules(
                required_approvals=rules.required_approvals
                if args.required_approvals is None
                else args.required_approvals,
                reviewers=() if args.any_reviewer else tuple(args.reviewer) or rules.reviewers,
                require_proposals=rules.require_proposals if args.require_proposals is None else args.require_proposals,
            )
            rules = reg.proposals.set_rules(args.namespace, wanted, actor=actor)
    if args.json:
        print_json({"namespace": args.namespace.strip(), **to_json(rules)})
        return EXIT_OK
    who = ", ".join(rules.reviewers) or "anyone who may write (never the author)"
    required = "; direct writes refused: changes go through proposals" if rules.require_proposals else ""
    say(f"namespace {args.namespace.strip()}: {rules.required_approvals} approval(s) from {who}{required}")
    return EXIT_OK


def current_review(reg: SchemaRegistry, proposal: Proposal) -> tuple[ProposalReview, bool]:
    """The review to show, and whether it is the one frozen at apply. An applied proposal is shown as it was
    judged when applied: against the registry now it would only look stale, since its own registration moved
    the latest version past its base. Every other proposal is reviewed now."""
    if proposal.state is ProposalState.APPLIED and proposal.applied_review is not None:
        return proposal.applied_review, True
    return reg.proposals.review(proposal.id), False


# --- rendering for people -----------------------------------------------------------------------------------


def render_proposal(proposal: Proposal, rules: ReviewRules) -> list[str]:
    """The proposal and its history: revisions (each with its base and digest), approvals of the current
    revision against the rules, comments, and how it ended."""
    revision = proposal.revision
    lines = [
        f"proposal #{proposal.id} · {proposal.kind} · {proposal.target}",
        f"  title:       {proposal.title}",
        f"  change:      {revision.summary}",
        f"  state:       {proposal.state}",
        f"  author:      {proposal.author}",
        f"  created:     {time_text(proposal.created_at)}, updated {time_text(proposal.updated_at)}",
        f"  revision:    {revision.number}, against {base_text(proposal)}",
        f"  approvals:   {approvals_text(proposal, rules)}{rules_note(proposal)}"
        + (f"; reviewers: {', '.join(rules.reviewers)}" if rules.reviewers else ""),
    ]
    if proposal.reason:
        label = "rejected" if str(proposal.state) == "rejected" else "override"
        lines.append(f"  {label + ':':<12} {proposal.reason}")
    if proposal.state is ProposalState.APPLIED:
        lines.append(f"  outcome:     {applied_text(proposal)}")
    if proposal.description:
        lines.append("  description:")
        lines += [f"    {row}" for row in proposal.description.splitlines()]
    lines.append("revisions:")
    for rev in proposal.revisions:
        lines.append(f"  {rev.number}. {time_text(rev.at)} by {rev.author}: {rev.summary} (sha256 {rev.sha256[:12]})")
    if proposal.comments:
        lines.append("comments:")
        for comment in proposal.comments:
            where = f" on {comment.path}" if comment.path else ""
            lines.append(
                f"  [{comment.id}] {comment.user}, {time_text(comment.at)}, revision {comment.revision}{where}:"
            )
            lines += [f"      {row}" for row in comment.text.splitlines()]
    return lines


def render_review(proposal: Proposal, review: ProposalReview, line: PulsarLine, *, when: str) -> list[str]:
    """What the core says of the current revision: for a schema, the verdict with each problem marked
    introduced or already there, the verdict under each strategy, advisories, admission, the upgrade order
    and the changes; for a policy, its preview; and whether it is stale."""
    lines = [f"review, computed {when} (as {line.title}, Avro {line.avro}):"]
    lines += ["  " + row for row in _stale_lines(proposal, review)]
    if review.preview is not None:
        return lines + ["  " + row for row in _preview_lines(review.preview)]
    what_if = review.what_if
    if what_if is None:
        return lines
    result = what_if.result
    lines.append("  " + _verdict_text(result, review))
    for number, marked in enumerate(_introduced_first(review.problems), 1):
        problem = marked.problem
        where = f" at {problem.path}" if problem.path else ""
        mark = "introduced" if marked.introduced else "already there"
        lines.append(f"    {number}. [{mark}] {problem.code}{where}")
        lines.append(f"       direction: {problem.direction} ({problem.direction_text})")
        lines.append(f"       {problem.message}")
        if problem.hint:
            lines.append(f"       hint: {problem.hint}")
    if review.blocking is not None:
        lines.append("  " + refusals_text(review))
        cells = [f"{s} {refusal_word(review, s)}" for s in review.blocking]
        lines.append("  introduces a refusal, under each strategy: " + ", ".join(cells))
    if what_if.duplicate_of is not None:
        lines.append(f"  identical to live version {what_if.duplicate_of}: applying it stores nothing")
    lines.append("  admission:")
    for label, admission in (
        ("registration", what_if.registration),
        ("producer", what_if.producer),
        ("consumer", what_if.consumer),
    ):
        lines.append(f"    {label + ':':<14}{_admission_text(admission)}")
    if what_if.advisories:
        lines.append("  advisories (accepted by Pulsar, but worth a look):")
        for advisory in what_if.advisories:
            where = f" at {advisory.path}" if advisory.path else ""
            lines.append(f"    - {advisory.severity} {advisory.code}{where}: {advisory.message}")
            if advisory.hint:
                lines.append(f"      hint: {advisory.hint}")
    lines += ["  " + row for row in _upgrade_lines(what_if)]
    diff = review.diff
    if diff is not None:
        lines.append(f"  changes against version {diff.old_version}:" + ("" if diff.changes else " none"))
        for change in diff.changes:
            mark = "!" if change.is_breaking else " "
            lines.append(f"   {mark} {change.kind} {change.path}: {change.message}")
    return lines


def render_summary(proposal: Proposal, review: ProposalReview, line: PulsarLine) -> list[str]:
    """A few lines on the review, for `propose`, `revise` and `rebase`: the verdict and what needs doing."""
    lines = [f"review (as {line.title}):"]
    if review.preview is not None:
        preview = review.preview
        lines.append("  changes: " + ("; ".join(preview.changes) or "none"))
        refused = [t.topic for t in preview.refused_topics]
        lines.append(f"  topics whose latest registration it would refuse: {', '.join(refused) or 'none'}")
        lines.append(f"  clients that could no longer connect: {len(preview.refused_clients)}")
    elif review.what_if is not None:
        lines.append("  " + _verdict_text(review.what_if.result, review))
        lines += ["  " + row for row in _upgrade_lines(review.what_if)[:2]]
    lines += ["  " + row for row in _stale_lines(proposal, review)]
    lines.append(f"  details: {PROG} proposals show {proposal.id}")
    return lines


def _verdict_text(result: CompatibilityResult, review: ProposalReview) -> str:
    versions = result.checked_versions
    checked = f"version{'s' * (len(versions) != 1)} {', '.join(map(str, versions))}" if versions else "no live version"
    if result.compatible:
        return f"verdict: compatible under {result.strategy} (checked against {checked})"
    count = len(result.problems)
    there = count - review.introduced_problems
    return (
        f"verdict: INCOMPATIBLE under {result.strategy} (checked against {checked}): {count} "
        f"problem{'s' * (count != 1)}, {review.introduced_problems} introduced, {there} already there"
    )


def _stale_lines(proposal: Proposal, review: ProposalReview) -> list[str]:
    if not review.stale:
        return ["stale: no (its base is still the latest)"]
    if review.preview is not None:
        changed = "the policy was changed since it was proposed"
    else:
        changed = (
            f"against {base_text(proposal)}; stored since: "
            + (", ".join(map(str, review.changed_since)) or "a delete")
            + f" (latest now: {'none' if review.latest_version is None else review.latest_version})"
        )
    return [f"stale: YES, {changed}; `{PROG} proposals rebase {proposal.id}` before it can be applied"]


def _preview_lines(preview: PolicyPreview) -> list[str]:
    lines = [f"preview of the change on {preview.scope} {preview.target}:"]
    lines += [f"  {change}" for change in preview.changes] or ["  nothing would change"]
    for topic in preview.topics:
        if topic.latest_refused or topic.refused_versions:
            versions = ", ".join(map(str, topic.refused_versions))
            first = f": {topic.first_problem.message}" if topic.first_problem is not None else ""
            lines.append(f"  {topic.topic}: would have refused version(s) {versions}{first}")
        for client in topic.refused_clients:
            lines.append(
                f"  {topic.topic}: {client.client.role} {client.client.name!r} could not connect: {client.reason}"
            )
        if topic.shielded_by:
            lines.append(f"  {topic.topic}: not (fully) reached: {'; '.join(topic.shielded_by)}")
    lines.append(
        f"  {len(preview.topics)} topic(s) looked at: {len(preview.refused_topics)} whose latest registration "
        f"it would refuse, {len(preview.refused_clients)} client(s) that could no longer connect"
    )
    return lines


def _upgrade_lines(what_if: WhatIf) -> list[str]:
    lines = []
    change = what_if.change_order
    if change is not None:
        lines.append(f"upgrade order: {change.order}: {change.explanation}")
    lines.append(f"{what_if.effective.value} guarantees {what_if.strategy_order} for any change it accepts")
    plan = what_if.plan
    if plan is not None and not plan.feasible:
        lines.append(f"recorded clients: no safe order: {plan.reason}")
    elif plan is not None:
        for step in plan.steps:
            names = ", ".join(c.name for c in step.clients)
            lines.append(f"  step {step.number}: {step.role}s {names}: {step.explanation}")
    return lines


def _admission_text(admission: Admission) -> str:
    if not admission.accepted:
        return f"refused: {admission.reason}"
    version = "" if admission.version is None else f" with version {admission.version}"
    stored = " (registers it)" if admission.registered else ""
    return f"accepted{version}{stored}" + (f": {admission.reason}" if admission.reason else "")


def _introduced_first(problems: Sequence[ReviewedProblem]) -> list[ReviewedProblem]:
    return sorted(problems, key=lambda p: not p.introduced)


def base_text(proposal: Proposal) -> str:
    if proposal.revision.schema is None:
        return "the policy as stored"
    base = proposal.base_version
    return "a topic without a live schema" if base is None else f"version {base}"


def _filters_text(args: argparse.Namespace) -> str:
    parts = [f"{name} {value}" for name in ("state", "namespace", "topic") if (value := getattr(args, name))]
    return f" ({', '.join(parts)})" if parts else ""


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as aligned columns; the last column (a title) is left as long as it is."""
    cells = [[" ".join(str(cell).split()) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]) for row in cells]


def line_named(name: str) -> PulsarLine:
    return pulsar_line(name)


def _print_made(args: argparse.Namespace, reg: SchemaRegistry, proposal: Proposal, verb: str) -> int:
    """A proposal just made or revised: the proposal, and (for people) the review computed now."""
    if args.json:
        print_json(to_json(proposal))
        return EXIT_OK
    review = reg.proposals.review(proposal.id)
    base = base_text(proposal)
    say(f"proposal #{proposal.id} {verb}: {proposal.title}")
    say(
        f"  {proposal.kind} proposal for {proposal.target}, against {base} · state {proposal.state} · "
        f"revision {proposal.revision.number} by {proposal.revision.author} · author {proposal.author}"
    )
    say("\n".join(render_summary(proposal, review, line_named(review.line))))
    return EXIT_OK


def _print_step(args: argparse.Namespace, proposal: Proposal, what: str) -> int:
    if args.json:
        print_json(to_json(proposal))
    else:
        say(f"proposal #{proposal.id} {what}; now {proposal.state}")
    return EXIT_OK


# --- arguments and refusals ---------------------------------------------------------------------------------


def _common_arguments(parser: argparse.ArgumentParser, *, writes: bool) -> None:
    add_source_arguments(parser)
    parser.add_argument("--json", action="store_true", help=JSON_HELP)
    if writes:
        add_as_argument(parser)


def _verb(
    verbs: argparse._SubParsersAction[Any],
    name: str,
    help_text: str,
    handler: Handler,
    *,
    writes: bool = True,
    takes_id: bool = True,
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = verbs.add_parser(
        name, help=help_text, description=help_text[:1].upper() + help_text[1:] + "."
    )
    if takes_id:
        parser.add_argument("id", type=whole_number(1), metavar="ID", help="the proposal's number")
    _common_arguments(parser, writes=writes or name == "rules")
    parser.set_defaults(handler=_refusals(handler))
    return parser


def _revision_argument(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.add_argument(
        "--revision",
        type=whole_number(1),
        metavar="N",
        help=f"{verb} only while revision N (the one you reviewed) is the current one; else exit 1, nothing written",
    )


def has_schema(args: argparse.Namespace) -> bool:
    return bool(args.file or args.record or args.type or args.property or args.message or args.proto_path)


def _refusals(handler: Handler) -> Handler:
    """`handler` with the registry's refusals (a permission, missing approvals, a stale proposal, a state
    that does not allow the step) as exit code 1 and one line, where every other RegistryError is a usage
    error (main's exit 2)."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        from registry import ApprovalsMissingError, PermissionDeniedError, ProposalError

        try:
            return handler(args)
        except ApprovalsMissingError as exc:
            hint = " (--override-reason R)" if "written reason" in str(exc) else ""
            return refused(f"{exc}{hint}")
        except (PermissionDeniedError, ProposalError) as exc:
            return refused(str(exc))

    return run
