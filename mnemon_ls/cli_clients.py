"""The CLI commands that connect assistants outside the editor: ``mnemon-ls setup CLIENT`` (their MCP
entry and hooks, :mod:`mnemon_ls.mcp.clients`) and ``mnemon-ls hook EVENT`` (what a lifecycle hook prints).
Handlers take the CLI's shared helpers (``emit``, ``host_factory``, ``settings_from`` of :mod:`.cli`) as
arguments, like :mod:`.cli_providers`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from .errors import EXIT_OK, MnemonError
from .host import default_workspace


def cmd_setup(args: argparse.Namespace, emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """``mnemon-ls setup CLIENT``: show, then write (unless ``--dry-run``), the client's MCP entry and hooks."""
    from .mcp import clients

    # Project files go to the workspace's top (the repository), else the current directory.
    workspace = (Path(os.path.abspath(os.path.expanduser(args.workspace))) if args.workspace
                 else default_workspace() or Path(os.getcwd()))
    changes = clients.plan(args.client, workspace=workspace, project=args.project, remove=args.remove)
    written = [] if args.dry_run else clients.apply(changes)
    emit(args, clients.report(args.client, changes, project=args.project, remove=args.remove,
                               dry_run=args.dry_run, written=written), clients.report_text(
        args.client, changes, project=args.project, remove=args.remove, dry_run=args.dry_run))
    return EXIT_OK


#: The hook event each ``mnemon-ls hook`` verb answers (``hookSpecificOutput.hookEventName`` of ``--json``).
HOOK_EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}


def hook_output(event: str, text: str, as_json: bool) -> str:
    """What ``mnemon-ls hook EVENT`` prints for the context ``text``: the text and a newline, or with
    ``as_json`` the hook JSON Claude Code and Codex both read, ``{"hookSpecificOutput": {"hookEventName":
    "SessionStart"|"UserPromptSubmit", "additionalContext": text}}`` (Codex takes plain output that starts
    with ``[`` or ``{`` for broken JSON). Empty ``text``: nothing at all (no context to add)."""
    if not text:
        return ""
    if not as_json:
        return text + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": HOOK_EVENT_NAMES[event], "additionalContext": text}},
                      ensure_ascii=False) + "\n"


def cmd_hook(args: argparse.Namespace, host_factory: Callable[[argparse.Namespace], Any],
             settings_from: Callable[[argparse.Namespace], Any]) -> int:
    """``mnemon-ls hook session-start|prompt [--json]``: what an assistant's lifecycle hook prints into the
    model's context (the bounded wake; a one-line cue), as text or (``--json``) as :func:`hook_output`'s
    hook JSON. Never fails the assistant's turn: errors go to stderr, exit 0."""
    from .mcp import clients

    try:
        payload = json.loads(sys.stdin.read() or "{}") if not sys.stdin.isatty() else {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        payload = {}
    cwd = payload.get("cwd") if isinstance(payload, dict) and isinstance(payload.get("cwd"), str) else None
    if args.workspace is None:
        args.workspace = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
    try:
        as_json = bool(getattr(args, "json", False))
        if args.event == "prompt":
            cue = clients.recall_cue(settings_from(args).recall_mode, settings_from(args).writeback_mode)
            sys.stdout.write(hook_output("prompt", cue, as_json))
            return EXIT_OK
        host = host_factory(args)
        snapshot, _ = host.wake(budget_chars=clients.HOOK_WAKE_BUDGET, surface="tool")
        sys.stdout.write(hook_output("session-start", snapshot.text, as_json))
    except (MnemonError, OSError) as exc:
        print(f"mnemon-ls hook: {getattr(exc, 'message', exc)}", file=sys.stderr)
    return EXIT_OK
