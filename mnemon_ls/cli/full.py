"""The full ``mnemon-ls`` command line: the parser of every command (:func:`build_parser`) and :func:`main`.

Commands: ``wake``, ``runtime add|replace|remove|list|recover|archived``, ``doctor``, ``migrate``, ``redact [--apply]``,
``doc``, ``space``, ``remember``, ``recall``, ``mcp``, ``setup``, ``hook`` (``serve`` starts the
language server). Every command takes ``--workspace`` (default: see :func:`mnemon_ls.roots.find_workspace`),
``--scope``, ``--data-dir`` and the other settings as flags, and ``--json`` for scripts.

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
from . import ops as cli_ops
from .argv import check_text_arguments
from .common import absorb_hand_edits, emit, guarded, open_host, read_content, run_released
from .parser import Parser, add_mcp_parser, settings_parent


def _host(args: argparse.Namespace) -> Any:
    """The command's one host (:func:`mnemon_ls.cli.common.open_host`); a module global so that a test can
    wrap it (``mnemon_ls.cli.full._host = ...``): every handler of :func:`main` reaches it through this name."""
    return open_host(args)


#: The first words of the commands ``mnemon-ls --help`` lists before every other operation's, in this order.
FIRST = ("wake", "runtime", "doctor", "redact", "migrate")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every command: each operation's (:func:`mnemon_ls.cli.ops.add_parsers`), then
    ``mcp``, ``setup``, ``hook`` and ``serve``."""
    common = settings_parent()
    parser = Parser(prog="mnemon-ls", description="Workspace-scoped, branch-aware memory for coding assistants.")
    parser.add_argument("--version", action="version", version=f"mnemon-ls {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    groups: dict[str, Any] = {}
    for word in FIRST:
        cli_ops.add_parsers(commands, groups, common, first_word=word)
    cli_ops.add_parsers(commands, groups, common, skip=(*FIRST, "setup"))  # doc ..., records ..., space ..., recall
    add_mcp_parser(commands, common)
    cli_ops.add_parsers(commands, groups, common, first_word="setup")
    from .hooks import add_hook_parser  # light: `mnemon-ls hook` itself starts from there (mnemon_ls.cli.light)

    add_hook_parser(commands, common)
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    from ..lsp.launch import add_serve_arguments  # light: `mnemon-ls serve` itself starts from there

    add_serve_arguments(serve)
    return parser


def cmd_mcp(args: argparse.Namespace) -> int:
    """``mnemon-ls mcp`` (:func:`mnemon_ls.cli.common.run_mcp`)."""
    from .common import run_mcp

    return run_mcp(args)


def cmd_serve(args: argparse.Namespace) -> int:
    """``mnemon-ls serve``: run the language server."""
    from ..lsp.server import run  # imported lazily: the other commands never load pygls

    return run(tcp=args.tcp, log_file=args.log_file, verbose=args.verbose)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``argv`` (default ``sys.argv[1:]``) with the parser of every command; returns the exit code.
    :func:`mnemon_ls.cli.main`, the console script, hands it what the light path does not run."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.cli_parser = parser  # the options an error may name (mnemon_ls.cli.ops.typed_options)
    if args.command not in ("serve", "mcp"):  # the servers install it with their own log level
        output.install()  # what provider engines print, warn or log stays out of our output (mnemon_ls.output)
    handlers = {"serve": cmd_serve, "mcp": cmd_mcp, "hook": cmd_hook}
    if getattr(args, "operation", None) is not None:
        handler = lambda a: cli_ops.run(a, _host, emit, read_content, absorb_hand_edits)  # noqa: E731
    else:
        handler = handlers[args.command]

    def run() -> int:
        check_text_arguments(parser, args)  # bytes that are not UTF-8 in a text argument (mnemon_ls.cli.argv)
        return run_released(handler, args)

    return guarded(args, run, cli_ops.explain)


def cmd_hook(args: argparse.Namespace) -> int:
    """``mnemon-ls hook EVENT`` (:func:`mnemon_ls.cli.hooks.cmd_hook`)."""
    from .hooks import cmd_hook as run_hook

    return run_hook(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
