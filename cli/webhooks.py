"""`webhooks add|list|remove`: the registry's notifications (registry/webhooks/) from the command line, on a
registry file (`--db`, acting as an admin as `proposals` does) or against `schema-explorer serve` (`--url`, an
admin's token). The core checks and keeps them; this module only translates arguments and prints.

The secret is read from a file or an environment variable, never from the command line (other users of the
machine see a process's arguments), and is never printed: `list` says only whether a webhook has one.
Exit codes: 0 done; 1 refused (not an admin); 2 a usage error (a bad URL or event, no such webhook).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from registry import Webhook, to_json
from registry.webhooks import EVENTS

from ._common import (
    EXIT_OK,
    UserError,
    acting_person,
    add_as_argument,
    add_source_arguments,
    say,
    whole_number,
)
from .admin import JSON_HELP, print_json, refusing, registry_for, time_text

Handler = Callable[[argparse.Namespace], int]


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    webhooks = commands.add_parser(
        "webhooks",
        help="notify chat or other services of proposals, policy changes and registrations (admins)",
        description="Webhooks told of each write once it commits: a signed JSON body with a `text` line that "
        "Slack and Mattermost incoming webhooks show as is. Admins only.",
    )
    verbs = webhooks.add_subparsers(dest="verb", title="verbs", metavar="VERB", required=True)
    add = _verb(verbs, "add", "add a webhook", run_add, writes=True)
    add.add_argument("hook_url", metavar="URL", help="where to POST: an http:// or https:// URL")
    add.add_argument(
        "--event",
        "-e",
        dest="events",
        action="append",
        metavar="E",
        help=f"an event or a glob such as proposal.*, repeatable (default: every event): {', '.join(EVENTS)}",
    )
    secret = add.add_mutually_exclusive_group()
    secret.add_argument("--secret-file", metavar="PATH", help="sign bodies with the secret in this file")
    secret.add_argument("--secret-env", metavar="VAR", help="sign bodies with the secret in this environment variable")
    _verb(verbs, "list", "the webhooks, without secrets, and how each one's last delivery went", run_list)
    remove = _verb(verbs, "remove", "remove a webhook", run_remove, writes=True)
    remove.add_argument("id", type=whole_number(1), metavar="ID", help="the webhook's number (`webhooks list`)")


def run_add(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    key = _secret(args)
    with registry_for(args) as reg:
        made = reg.webhooks.add(args.hook_url, events=args.events or ["*"], secret=key, actor=actor)
    if args.json:
        print_json(to_json(made))
        return EXIT_OK
    signed = "bodies signed with the secret" if made.has_secret else "bodies unsigned (no secret)"
    say(f"webhook #{made.id} added: {made.url} told of {', '.join(made.events)}; {signed}")
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:
    with registry_for(args) as reg:
        found = reg.webhooks.list()
    if args.json:
        print_json({"webhooks": to_json(found)})
        return EXIT_OK
    if not found:
        say("no webhooks")
        return EXIT_OK
    for hook in found:
        secret = "signed" if hook.has_secret else "unsigned"
        say(f"#{hook.id} {hook.url} ({secret}) events {', '.join(hook.events)}; added by {hook.created_by}")
        say(f"    last delivery: {_last(hook)}")
    return EXIT_OK


def run_remove(args: argparse.Namespace) -> int:
    actor = acting_person(args)
    with registry_for(args) as reg:
        gone = reg.webhooks.remove(args.id, actor=actor)
    if args.json:
        print_json(to_json(gone))
        return EXIT_OK
    say(f"webhook #{gone.id} removed: {gone.url}")
    return EXIT_OK


def _last(hook: Webhook) -> str:
    last = hook.last_delivery
    if last is None:
        return "none yet"
    tries = f"{last.attempts} attempt{'s' if last.attempts != 1 else ''}"
    why = f": {last.reason}" if last.reason else ""
    return f"{last.outcome} {last.event} {time_text(last.at)} ({tries}){why}"


def _secret(args: argparse.Namespace) -> str | None:
    if args.secret_file is not None:
        try:
            return Path(args.secret_file).read_text(encoding="utf-8").strip() or None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--secret-file {args.secret_file}: cannot read it ({type(exc).__name__})") from None
    if args.secret_env is not None:
        value = os.environ.get(args.secret_env)
        if not value:
            raise UserError(f"--secret-env {args.secret_env}: that environment variable is not set")
        return value.strip()
    return None


def _verb(
    verbs: argparse._SubParsersAction[Any], name: str, help_text: str, handler: Handler, *, writes: bool = False
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = verbs.add_parser(
        name, help=help_text, description=help_text[:1].upper() + help_text[1:] + "."
    )
    add_source_arguments(parser)
    parser.add_argument("--json", action="store_true", help=JSON_HELP)
    if writes:
        add_as_argument(parser)
    parser.set_defaults(handler=refusing(handler))
    return parser
