"""The full ``mnemon-ls`` command line: the parser of every command (:func:`build_parser`) and :func:`main`.

Commands: ``wake``, ``runtime add|replace|remove|list|recover|archived``, ``doctor``, ``migrate``, ``redact [--apply]``,
``doc``, ``space``, ``remember``, ``recall``, ``mcp``, ``setup``, ``hook`` (``serve`` starts the
language server). Every command takes ``--workspace`` (default: see :func:`mnemon_ls.roots.find_workspace`), ``--scope``,
``--data-dir`` and the other settings as flags, and ``--json`` for scripts.

Exit codes: 0 success; 2 invalid input (the error names the field and the rule); 3 rejected by the
store (capacity, revision conflict, ambiguous or missing match); 1 anything else (unreadable store, lock
timeout, I/O). Errors go to stderr as one line; with ``--json`` the error object is also printed to
stdout as ``{"error": {...}}``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from .. import __version__, output
from ..errors import EXIT_FAILURE, EXIT_OK
from ..runtime.model import PROJECTION_FILES, TARGETS
from . import ops as cli_ops, setup as cli_clients
from .argv import check_text_arguments
from .common import absorb_hand_edits, emit as _emit, guarded, open_host, read_content, run_released
from .parser import Parser, add_mcp_parser, settings_parent


def _host(args: argparse.Namespace) -> Any:
    """The command's one host (:func:`mnemon_ls.cli.common.open_host`); a module global so that a test can
    wrap it (``mnemon_ls.cli.full._host = ...``): every handler of :func:`main` reaches it through this name."""
    return open_host(args)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every command."""
    common = settings_parent()
    parser = Parser(prog="mnemon-ls", description="Workspace-scoped, branch-aware memory for coding assistants.")
    parser.add_argument("--version", action="version", version=f"mnemon-ls {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    groups: dict[str, Any] = {}
    cli_ops.add_parsers(commands, groups, common, first_word="wake")
    cli_ops.add_parsers(commands, groups, common, first_word="runtime")  # add ... recover, archived, compact

    doctor = commands.add_parser("doctor", parents=[common], help="explain the state of the storage root")
    doctor.add_argument("--providers", action="store_true", help="also open and check enabled third-party providers")
    redact = commands.add_parser("redact", parents=[common],
                                 help="list stored values that look like credentials; --apply replaces them")
    redact.add_argument("--apply", action="store_true",
                        help="rewrite them durably with [redacted:<kind>] placeholders (default: dry run)")

    migrate = commands.add_parser("migrate", parents=[common],
                                  help="copy the memory of another root (e.g. the old global default) into this one")
    migrate.add_argument("--from", dest="source", required=True, metavar="global|workspace|DIR",
                         help="global ($MNEMON_DATA_DIR or ~/.mnemon), workspace (<workspace>/.mnemon) or a root's "
                              "absolute path; it is read, never changed")
    migrate.add_argument("--dry-run", action="store_true", help="show what would be copied; write nothing")

    cli_ops.add_parsers(commands, groups, common, skip=("runtime", "wake"))  # doc ..., records ..., space ..., remember, recall

    add_mcp_parser(commands, common)
    setup = commands.add_parser("setup", parents=[common],
                                help="add mnemon-ls to an assistant's MCP configuration (and its hooks)")
    setup.add_argument("client", choices=("claude-code", "codex", "cursor", "vscode"))
    setup.add_argument("--project", action="store_true",
                       help="write the workspace's shared configuration instead of the user's")
    setup.add_argument("--remove", action="store_true", help="take mnemon-ls out again (other entries stay)")
    setup.add_argument("--dry-run", action="store_true", help="show what would change, write nothing")
    from .hooks import add_hook_parser  # light: `mnemon-ls hook` itself starts from there (mnemon_ls.cli.light)

    add_hook_parser(commands, common)
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    from ..lsp.launch import add_serve_arguments  # light: `mnemon-ls serve` itself starts from there

    add_serve_arguments(serve)
    return parser


def cmd_doctor(args: argparse.Namespace) -> int:
    """``mnemon-ls doctor`` (:func:`mnemon_ls.cli.doctor.cmd_doctor`)."""
    from . import doctor as cli_doctor

    return cli_doctor.cmd_doctor(args, _host, _emit)


def cmd_migrate(args: argparse.Namespace) -> int:
    """``mnemon-ls migrate --from global|workspace|DIR [--dry-run]``: copy another root's memory into this
    workspace's root, verified (:mod:`mnemon_ls.migrate`); prints the receipt (``--json``: the receipt dict)."""
    from ..migrate import migrate, resolve_source

    host = _host(args)
    try:
        source = resolve_source(host, args.source)
        receipt = migrate(host, source, dry_run=args.dry_run)
    finally:
        host.close()
    verb = "would copy" if args.dry_run else "copied"
    lines = [f"{'Dry run: nothing was written. ' if args.dry_run else ''}From {receipt['from']} into {receipt['to']}:"]
    for target in TARGETS:
        row = receipt["runtime"][target]
        line = f"  {PROJECTION_FILES[target]}: {verb} {row['added']}, skipped {row['skipped']} already here"
        lines.append(line + (f" ({row['note']})" if row.get("note") else ""))
    docs = receipt["documents"]
    lines.append(f"  documents: {verb} {docs['added']} ({docs['archived']} archived), skipped {docs['skipped']} already here")
    for dropped in docs["sourcePathsNotCopied"]:
        lines.append(f"    source path {dropped['path']!r} of {dropped['title']!r} not carried over: {dropped['rule']}")
    for row in receipt["spaces"]:
        into = row["intoId"] or "a new space"
        if args.dry_run:
            lines.append(f"  space {row['name']} ({row['fromId']}): {row['items']} item(s) offered to {into}")
        else:
            lines.append(f"  space {row['name']} ({row['fromId']}) -> {into}{' (created)' if row['created'] else ''}: "
                         f"added {row['added']}, skipped {row['skipped']} already here, {row['edgesCopied']} edge(s)")
    for row in receipt["spacesNotCopied"]:
        lines.append(f"  space {row['name']} ({row['id']}) not copied: {row['reason']}")
    if receipt["status"] == "nothing-to-copy":
        lines.append("Nothing to copy: every entry, document and item is already here.")
    elif receipt["verified"]:
        lines.append("Verified: every copied value reads back as in the source. The source was not changed.")
    _emit(args, receipt, "\n".join(lines))
    return EXIT_OK


def cmd_redact(args: argparse.Namespace) -> int:
    """``mnemon-ls redact [--apply]``: list stored values that look like credentials (location and kind,
    never the value); ``--apply`` rewrites them through every Source's commit path first. Exit 0, or 1
    when values are left (a dry run that found some, or names no placeholder can replace)."""
    host = _host(args)
    try:
        report = host.stored_secrets(apply=args.apply)
    finally:
        host.close()
    findings = report["findings"]
    lines = [f"{f['location']}: {f['kind']} at character {f['position']}" for f in findings]
    applied = report["applied"]
    if applied is not None:
        runtime = sum(r["entries"] for r in applied["runtime"])
        documents = (applied["documents"] or {}).get("documents", 0)
        spaces = applied["spaces"] or {}
        copies = [f for r in applied["runtime"] for f in r["files"]] + (applied["documents"] or {}).get("files", []) \
            + spaces.get("files", [])
        lines.append(f"redacted: {runtime} runtime entries, {documents} documents, {spaces.get('items', 0)} space "
                     f"rows, {spaces.get('spaces', 0)} space names/descriptions, {len(copies)} saved copies")
        lines.append("nothing left to redact" if not findings else f"{len(findings)} value(s) could not be replaced "
                     "(remove them by hand)")
    else:
        lines.append(f"{len(findings)} stored value(s) look like credentials" + ("; run `mnemon-ls redact --apply`"
                                                                               if findings else ""))
    _emit(args, {"root": str(host.root), **report}, "\n".join(lines))
    return EXIT_FAILURE if findings else EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """``mnemon-ls mcp`` (:func:`mnemon_ls.cli.common.run_mcp`)."""
    from .common import run_mcp

    return run_mcp(args)


def cmd_serve(args: argparse.Namespace) -> int:
    """``mnemon-ls serve``: run the language server."""
    from ..lsp.server import run  # imported lazily: the other commands never load pygls

    return run(tcp=args.tcp, log_file=args.log_file, verbose=args.verbose)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mnemon-ls`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("serve", "mcp"):  # the servers install it with their own log level
        output.install()  # what provider engines print, warn or log stays out of our output (mnemon_ls.output)
    handlers = {"doctor": cmd_doctor, "migrate": cmd_migrate, "redact": cmd_redact, "serve": cmd_serve,
                "mcp": cmd_mcp,
                "setup": lambda a: cli_clients.cmd_setup(a, _emit),
                "hook": cmd_hook}
    if getattr(args, "operation", None) is not None:
        handler = lambda a: cli_ops.run(a, _host, _emit, read_content, absorb_hand_edits)  # noqa: E731
    else:
        handler = handlers[args.command]

    def run() -> int:
        check_text_arguments(parser, args)  # bytes that are not UTF-8 in a text argument (mnemon_ls.cli.argv)
        return run_released(handler, args)

    return guarded(args, run, cli_ops.message)


def cmd_hook(args: argparse.Namespace) -> int:
    """``mnemon-ls hook EVENT`` (:func:`mnemon_ls.cli.hooks.cmd_hook`)."""
    from .hooks import cmd_hook as run_hook

    return run_hook(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
