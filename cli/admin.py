"""`diff`, `get`, `upload`, `delete`, `policy get|set`: pulsar-admin's schema and policy verbs.

Each command takes `--db PATH` or `--url URL [--token T]`, prints for people by default and a stable JSON
document with `--json`, and exits 0 (ok, compatible), 1 (incompatible or refused) or 2 (a user error).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from registry import to_json
from registry._wire import policies_json, schema_response
from registry.explain.text_diff import line_diff

from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    UserError,
    add_as_argument,
    add_schema_arguments,
    add_source_arguments,
    close_registry,
    open_source,
    read_schema_info,
    record_pitfalls,
    refused,
    say,
    writer_name,
)

JSON_HELP = "print one JSON document (stable field names) instead of text"
FORMATS = ("text", "json", "markdown")
BOOL_CHOICES = {"true": True, "false": False}


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    diff = command(
        commands,
        "diff",
        "what changed between two versions, or a version and a file",
        "Semantic diff: each change with its effect on BACKWARD (new reads old) and FORWARD (old reads new). "
        "Default: the previous live version against the latest; with --file, the latest against the file.",
        run_diff,
    )
    _topic_argument(diff)
    diff.add_argument("--from", dest="old", metavar="V", type=_version, help="old side: a live version")
    diff.add_argument("--to", dest="new", metavar="V", type=_version, help="new side: a live version (default: latest)")
    add_schema_arguments(diff, required=False)
    diff.add_argument("--text", action="store_true", help="also print a unified diff of the two schema texts")

    get = command(
        commands,
        "get",
        "print a topic's schema (pulsar-admin schemas get)",
        "Print the latest live schema, one --version, or --all live versions. --json prints Pulsar's REST shapes "
        "(GetSchemaResponse, GetAllVersionsSchemaResponse).",
        run_get,
    )
    _topic_argument(get)
    which = get.add_mutually_exclusive_group()
    which.add_argument("--version", type=_version, metavar="V", help="a live version (default: the latest)")
    which.add_argument("--all", action="store_true", help="every live version, oldest first")

    upload = command(
        commands,
        "upload",
        "register a schema (pulsar-admin schemas upload)",
        "Register a schema on a topic as REST POST /schema does: an identical live version is returned as is; "
        "otherwise it is checked under the topic's strategy and stored. Exits 1, with the explanation, when "
        "it is incompatible.",
        run_upload,
        writes=True,
    )
    _topic_argument(upload)
    add_schema_arguments(upload, required=False)

    delete = command(
        commands,
        "delete",
        "delete a topic's schema (pulsar-admin schemas delete)",
        "Soft delete appends a tombstone (it takes a version number; the next schema starts a new history). "
        "--force drops the whole history, and numbering restarts at 0.",
        run_delete,
        writes=True,
    )
    _topic_argument(delete)
    delete.add_argument("--force", action="store_true", help="drop the whole history instead of a tombstone")

    policy = commands.add_parser(
        "policy",
        help="read or change schema policies (pulsar-admin namespaces/topics *-schema-* verbs)",
        description="Namespace and topic schema policies, and the values in force for a topic.",
    )
    verbs = policy.add_subparsers(dest="verb", title="verbs", metavar="VERB", required=True)
    policy_get = command(
        verbs,
        "get",
        "a namespace's policies, or the policies in force for a topic and where each comes from",
        "With --namespace: the namespace's own schema policies (unset values shown as such). With --topic: "
        "each policy in force for the topic and the level it comes from (topic, namespace, broker).",
        run_policy_get,
    )
    _target_arguments(policy_get)
    policy_set = command(
        verbs,
        "set",
        "change namespace or topic schema policies",
        "Change the given policies; others stay as they are. With --dry-run (namespace compatibility only), "
        "show which live versions and recorded consumers the new strategy would have refused, and change nothing.",
        run_policy_set,
        writes=True,
    )
    _target_arguments(policy_set)
    add_policy_change_arguments(policy_set)
    policy_set.add_argument(
        "--dry-run", action="store_true", help="preview a namespace --compatibility change; change nothing"
    )


# --- commands -----------------------------------------------------------------------------------------------


def run_diff(args: argparse.Namespace) -> int:
    info = read_schema_info(args) if (args.file or args.type or args.record) else None
    if info is not None and args.new is not None:
        raise UserError("give the new side either as --to VERSION or as --file, not both")
    with registry_for(args) as reg:
        live = reg.history(args.topic)
        if not live:
            raise UserError(f"topic {topic_text(args.topic)} has no live schema to diff")
        old = args.old
        if old is None:
            if info is not None:
                old = live[-1].version
            elif len(live) < 2:
                raise UserError(
                    f"topic {topic_text(args.topic)} has one live version ({live[0].version}); "
                    "name another side with --file"
                )
            else:
                reference = args.new if args.new is not None else live[-1].version
                older = [e.version for e in live if e.version < reference]
                if not older:
                    raise UserError(f"no live version before {reference}; name the old side with --from")
                old = older[-1]
        new = info if info is not None else args.new
        result = reg.diff(args.topic, old, new)
    if info is not None:
        new_label = f"record {args.record}" if args.record else "file"
    else:
        new_label = f"v{result.new_version}"
    if args.json:
        print_json(to_json(result))  # names the topic and both versions compared (old_version, new_version)
        return EXIT_OK
    say(render_diff(f"v{result.old_version}", new_label, result, text=args.text))
    say_pitfalls(record_pitfalls(args))
    return EXIT_OK


def run_get(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        entries = reg.history(args.topic) if args.all else [reg.get(args.topic, args.version)]
    if args.json:
        docs = [schema_response(e) for e in entries]
        print_json({"getSchemaResponses": docs} if args.all else docs[0])
        return EXIT_OK
    if not entries:
        say(f"{topic_text(args.topic)}: no live schema")
    for entry in entries:
        say(render_version(topic_text(args.topic), entry))
    return EXIT_OK


def run_upload(args: argparse.Namespace) -> int:
    from registry import IncompatibleSchemaError

    info = read_schema_info(args)
    pitfalls = record_pitfalls(args)
    if not args.json:
        say_pitfalls(pitfalls)
    topic = topic_text(args.topic)
    user = writer_name(args)
    with registry_for(args, create=True) as reg:
        try:
            done = reg.register(args.topic, info, user=user)
        except IncompatibleSchemaError as exc:
            if exc.result is None:
                raise
            if args.json:
                answer = {"topic": topic, "registered": False, "stored": False, "version": None}
                print_json({**answer, **to_json(exc.result)})
            else:
                say(f"refused: {topic} did not register the schema")
                say(render_result(topic, exc.result))
            return EXIT_REFUSED
    # What the core did, not a guess from the history read before: of two identical uploads at once, one stores
    # and the other finds that version (a history read first would have lacked it for both).
    if args.json:
        extra = {"advisories": to_json(pitfalls)} if pitfalls else {}
        print_json({"topic": topic, "registered": done.stored, "stored": done.stored, "version": done.version, **extra})
    elif done.stored:
        say(f"{topic}: registered as version {done.version}")
    else:
        say(f"{topic}: identical to live version {done.version}; nothing stored")
    return EXIT_OK


def run_delete(args: argparse.Namespace) -> int:
    user = writer_name(args)
    with registry_for(args) as reg:
        version = reg.delete(args.topic, force=args.force, user=user)
    topic = topic_text(args.topic)
    if args.json:
        print_json({"topic": topic, "force": args.force, "version": version})
    elif args.force:
        say(f"{topic}: schema history dropped; the next schema registers as version 0")
    else:
        say(f"{topic}: schema deleted (tombstone at version {version}); the next schema starts a new history")
    return EXIT_OK


def run_policy_get(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        if args.namespace:
            doc, text = _namespace_answer(args.namespace, reg.namespace_policy(args.namespace))
        else:
            own = reg.topic_policy(args.topic) if reg.broker.topic_level_policies_enabled else None
            doc, text = _topic_answer(reg, args.topic, own)
    return _emit(args, doc, text)


def say_pitfalls(pitfalls: tuple[Any, ...]) -> None:
    """A Record class's pitfalls, as the check's advisories are shown."""
    if pitfalls:
        say("the Record class's generated schema (worth a fix before it ships):")
    for advisory in pitfalls:
        say(f"  - {advisory.severity} {advisory.code} at {advisory.path}: {advisory.message}")
        say(f"    fix: {advisory.hint}")


def _namespace_answer(namespace: str, policy: Any) -> tuple[dict[str, Any], str]:
    name = namespace.strip()
    return {"namespace": name, **policies_json(policy)}, render_namespace_policy(name, policy)


def _topic_answer(reg: Any, topic: str, own: Any) -> tuple[dict[str, Any], str]:
    effective = reg.effective_policy(topic)
    doc = to_json(effective) | ({} if own is None else {"topic_policy": to_json(own)})
    return doc, render_effective(effective, own)


def _emit(args: argparse.Namespace, doc: dict[str, Any], text: str) -> int:
    if args.json:
        print_json(doc)
    else:
        say(text)
    return EXIT_OK


def add_policy_change_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The policy values `policy set` changes, and a policy proposal proposes (read by `policy_changes`)."""
    parser.add_argument(
        "--compatibility", metavar="S", help="a strategy, e.g. BACKWARD; UNDEFINED removes the value set here"
    )
    parser.add_argument(
        "--auto-update-strategy",
        metavar="X",
        help="namespace only, deprecated: e.g. AutoUpdateDisabled, Backward; 'unset' removes it",
    )
    parser.add_argument(
        "--allow-auto-update",
        choices=["true", "false", "unset"],
        help="namespace only: may producers and idle consumers register new schemas",
    )
    parser.add_argument(
        "--validation-enforced",
        choices=["true", "false", "unset"],
        help="refuse producers without a schema on topics that have one ('unset': topic only)",
    )


POLICY_FLAGS = ("compatibility", "auto_update_strategy", "allow_auto_update", "validation_enforced")


def policy_change_given(args: argparse.Namespace) -> bool:
    """Whether any of `add_policy_change_arguments`' options was given."""
    return any(getattr(args, flag, None) is not None for flag in POLICY_FLAGS)


def policy_changes(args: argparse.Namespace, *, namespace: bool) -> dict[str, Any]:
    """The keyword arguments for `set_namespace_policy` (`namespace`) or `set_topic_policy` that the policy
    options ask for; a namespace-only option on a topic, or a value a level cannot take, is a usage error."""
    changes: dict[str, Any] = {}
    if args.compatibility is not None:
        changes["compatibility"] = args.compatibility
    if not namespace:
        for flag in ("auto_update_strategy", "allow_auto_update"):
            if getattr(args, flag) is not None:
                raise UserError(f"--{flag.replace('_', '-')} is a namespace policy; use --namespace")
        if args.validation_enforced is not None:
            changes["validation_enforced"] = BOOL_CHOICES.get(args.validation_enforced)
    else:
        if args.auto_update_strategy is not None:
            unset = args.auto_update_strategy.strip().lower() in ("unset", "none")
            changes["auto_update_strategy"] = None if unset else args.auto_update_strategy
        if args.allow_auto_update is not None:
            changes["allow_auto_update"] = BOOL_CHOICES.get(args.allow_auto_update)
        if args.validation_enforced is not None:
            if args.validation_enforced == "unset":
                raise UserError("a namespace's schemaValidationEnforced cannot be unset; use true or false")
            changes["validation_enforced"] = BOOL_CHOICES[args.validation_enforced]
    return changes


def run_policy_set(args: argparse.Namespace) -> int:
    changes = policy_changes(args, namespace=not args.topic)
    if args.dry_run:
        if not args.namespace or set(changes) != {"compatibility"}:
            raise UserError("--dry-run previews a namespace --compatibility change only")
        return _preview(args)
    if not changes:
        raise UserError("nothing to change: give --compatibility, --validation-enforced or another policy option")
    user = writer_name(args)
    with registry_for(args, create=True) as reg:
        if args.namespace:
            saved = reg.set_namespace_policy(args.namespace, **changes, user=user)
            doc, text = _namespace_answer(args.namespace, saved)
        else:
            doc, text = _topic_answer(reg, args.topic, reg.set_topic_policy(args.topic, **changes, user=user))
    return _emit(args, doc, text)


def _preview(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        impact = reg.policy_impact(args.namespace, args.compatibility)
    if args.json:
        print_json(to_json(impact))
        return EXIT_OK
    say(render_impact(impact))
    return EXIT_OK


# --- rendering for people -----------------------------------------------------------------------------------


def render_result(topic: str, result: Any) -> str:
    """The verdict, then each problem as: rule and where, who cannot read whom, what, how to fix it."""
    checked = _versions_text(result.checked_versions)
    if result.compatible:
        lines = [f"{topic}: compatible under {result.strategy}{checked}"]
    else:
        count = len(result.problems)
        lines = [f"{topic}: INCOMPATIBLE under {result.strategy}{checked}: {count} problem{'s' * (count != 1)}"]
        for number, problem in enumerate(result.problems, 1):
            where = f" at {problem.path}" if problem.path else ""
            lines.append(f"  {number}. {problem.code}{where}")
            lines.append(f"     direction: {problem.direction} ({problem.direction_text})")
            lines.append(f"     {problem.message}")
            if problem.hint:
                lines.append(f"     hint: {problem.hint}")
    if result.advisories:
        lines.append("advisories (accepted by Pulsar, but worth a look):")
        for advisory in result.advisories:
            where = f" at {advisory.path}" if advisory.path else ""
            lines.append(f"  - {advisory.severity} {advisory.code}{where}: {advisory.message}")
            if advisory.hint:
                lines.append(f"    hint: {advisory.hint}")
    return "\n".join(lines)


def _versions_text(versions: tuple[int, ...]) -> str:
    if not versions:
        return " (no live version to check against)"
    label = "version" if len(versions) == 1 else "versions"
    return f" (checked against {label} {', '.join(map(str, versions))})"


def render_diff(old: str, new: str, result: Any, *, text: bool) -> str:
    kinds = f"{result.old_type}" + ("" if result.old_type is result.new_type else f" → {result.new_type}")
    lines = [
        f"{old} → {new} ({kinds}): BACKWARD (new reads old) {result.backward}, FORWARD (old reads new) {result.forward}"
    ]
    if not result.changes:
        lines.append("  no semantic change")
    for change in result.changes:
        mark = "!" if change.is_breaking else ("~" if "risk" in (change.backward, change.forward) else " ")
        lines.append(f" {mark} {change.kind} {change.path}: {change.message}")
        lines.append(f"     backward {change.backward}, forward {change.forward}")
    if text:
        lines.append("")
        lines += line_diff(result.old_text, result.new_text).unified(old, new)
    return "\n".join(lines)


def render_version(topic: str, entry: Any) -> str:
    header = f"{topic} version {entry.version} · {entry.type} · registered {time_text(entry.timestamp)}"
    if entry.user:
        header += f" by {entry.user}"
    lines = [header]
    for key, value in sorted(entry.properties.items()):
        lines.append(f"  property {key} = {value}")
    schema = entry.schema
    try:
        schema = json.dumps(json.loads(schema), indent=2, ensure_ascii=False)
    except ValueError:
        pass
    if schema:
        lines.append(schema)
    return "\n".join(lines)


def render_namespace_policy(namespace: str, policy: Any) -> str:
    def shown(value: Any) -> str:
        return (
            "unset"
            if value is None or str(value) == "UNDEFINED"
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )

    return "\n".join(
        [
            f"namespace {namespace}",
            f"  compatibility (schemaCompatibilityStrategy):               {shown(policy.compatibility)}",
            f"  auto-update strategy (deprecated):                         {shown(policy.auto_update_strategy)}",
            f"  allow auto-update (isAllowAutoUpdateSchema):               {shown(policy.allow_auto_update)}",
            "  allow auto-update with replicator:                         "
            f"{shown(policy.allow_auto_update_with_replicator)}",
            f"  validation enforced (schemaValidationEnforced):            {shown(policy.validation_enforced)}",
        ]
    )


def render_effective(effective: Any, own: Any) -> str:
    def line(label: str, item: Any) -> str:
        value = str(item.value).lower() if isinstance(item.value, bool) else str(item.value)
        return f"  {label:<34} {value:<22} from {item.source}"

    lines = [f"topic {effective.topic}" + (" (system topic)" if effective.is_system_topic else "")]
    lines.append(line("compatibility (producers, consumers)", effective.compatibility))
    lines.append(line("compatibility (admin REST)", effective.admin_compatibility))
    lines.append(line("allow auto-update", effective.allow_auto_update))
    lines.append(line("validation enforced", effective.validation_enforced))
    if own is not None:
        strategy = own.compatibility or "unset"
        enforced = "unset" if own.validation_enforced is None else str(own.validation_enforced).lower()
        lines.append(f"  topic's own policies: compatibility {strategy}, validation enforced {enforced}")
    return "\n".join(lines)


def render_impact(impact: Any) -> str:
    lines = [f"namespace {impact.namespace}: preview of compatibility {impact.proposed} (nothing changed)"]
    for topic in impact.topics:
        if topic.overridden:
            lines.append(f"  {topic.topic}: keeps its own {topic.current.value} (topic policy)")
            continue
        if not topic.refused_versions and not topic.refused_clients:
            lines.append(f"  {topic.topic}: ok")
            continue
        if topic.refused_versions:
            versions = ", ".join(map(str, topic.refused_versions))
            lines.append(f"  {topic.topic}: would have refused version(s) {versions}")
            if topic.first_problem is not None:
                lines.append(f"      first problem: {topic.first_problem.message}")
        for client in topic.refused_clients:
            lines.append(f"  {topic.topic}: consumer {client.client.name!r} could not subscribe: {client.reason}")
    if not impact.topics:
        lines.append("  (no topics)")
    return "\n".join(lines)


def time_text(millis: int) -> str:
    if not millis:
        return "at an unknown time"
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- argument helpers ---------------------------------------------------------------------------------------


def command(
    commands: argparse._SubParsersAction[Any],
    name: str,
    help_text: str,
    description: str,
    handler: Callable[[argparse.Namespace], int],
    *,
    writes: bool = False,
) -> argparse.ArgumentParser:
    """A command's parser; one that `writes` takes `--as NAME` and answers the registry's refusal of the
    person (a role too low, a namespace whose changes go through proposals) as exit 1, as `proposals` does."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text, description=description)
    add_source_arguments(parser)
    parser.add_argument("--json", action="store_true", help=JSON_HELP)
    if writes:
        add_as_argument(parser)
        handler = refusing(handler)
    parser.set_defaults(handler=handler)
    return parser


def refusing(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`handler` with a PermissionDeniedError (the person may not make this write) as one line and exit 1."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        from registry import PermissionDeniedError

        try:
            return handler(args)
        except PermissionDeniedError as exc:
            return refused(str(exc))

    return run


def _topic_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topic", "-t", required=True, metavar="T", help="topic: persistent://tenant/namespace/topic (or t/n/x)"
    )


def _target_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--namespace", "-n", metavar="NS", help="namespace: tenant/namespace")
    target.add_argument("--topic", "-t", metavar="T", help="topic: persistent://tenant/namespace/topic")


def _version(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a schema version: {text!r} (expected a whole number >= 0)") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"not a schema version: {text!r} (expected a whole number >= 0)")
    return number


def topic_text(topic: str) -> str:
    from registry import InvalidNameError, TopicName

    try:
        return str(TopicName.parse(topic))
    except InvalidNameError:
        return topic


@contextmanager
def registry_for(args: argparse.Namespace, *, create: bool = False) -> Iterator[Any]:
    """The registry for one command; only commands that write pass `create` (a missing file is made)."""
    reg = open_source(args, create=create)
    try:
        yield reg
    finally:
        close_registry(reg)


def print_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
