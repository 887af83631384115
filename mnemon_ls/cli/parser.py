"""The parser pieces every ``mnemon-ls`` command shares: the settings flags (:func:`settings_parent`) and the
parser class with one-line usage errors (:class:`Parser`). :mod:`mnemon_ls.cli.full` builds every command with them,
:mod:`mnemon_ls.cli.light` the ``hook`` and ``wake`` commands alone."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterator

from ..errors import EXIT_INVALID


def settings_parent() -> argparse.ArgumentParser:
    """The parent parser of every command: ``--workspace``, the settings flags and ``--json``."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("workspace and settings")
    group.add_argument("--workspace", metavar="DIR",
                       help="workspace directory (default: the nearest directory from the current one upward "
                            "holding .git or .mnemon; none found: no workspace, the global root is used)")
    group.add_argument("--scope", choices=("global", "workspace", "workspaces", "custom"),
                       help="storageScope (default workspaces: <$MNEMON_DATA_DIR or ~/.mnemon>/workspaces/"
                            "<sha256 of the workspace path>; global: $MNEMON_DATA_DIR or ~/.mnemon)")
    group.add_argument("--data-dir", metavar="DIR",
                       help="dataDir: the root (implies --scope custom), or the base for --scope workspaces")
    group.add_argument("--runtime-user-scope", choices=("storage", "global"),
                       help="runtimeUserScope (default global: USER.md from the global root; storage: from the selected root)")
    group.add_argument("--user-limit-bytes", type=int, metavar="N", help="runtimeMemory.userLimitBytes (1..1048576)")
    group.add_argument("--memory-limit-bytes", type=int, metavar="N", help="runtimeMemory.memoryLimitBytes (1..1048576)")
    group.add_argument("--memory-maintenance", choices=("archive", "reject"),
                       help="runtimeMemory.maintenance: a full MEMORY.md archives what does not fit into Memory Spaces "
                            "or the local archive (default archive), or refuses the change (reject)")
    group.add_argument("--detached-head-policy", choices=("hide", "show"), help="detachedHeadPolicy")
    group.add_argument("--worktree-sharing", choices=("shared", "separate"), help="worktreeSharing")
    group.add_argument("--recall-mode", choices=("guided", "off"), help="recallMode (assistant hooks' recall cue)")
    group.add_argument("--writeback-mode", choices=("guided", "off"), help="writebackMode (assistant hooks' writeback cue)")
    group.add_argument("--secrets", choices=("redact", "reject", "allow"),
                       help="secrets: what a write does with a value that looks like a credential (default redact)")
    group.add_argument("--hand-edits", choices=("import", "restore"),
                       help="handEdits: import hand edits of USER.md/MEMORY.md (default) or restore the files")
    group.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parent


def chosen_parsers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[argparse.ArgumentParser]:
    """``parser``, then each sub-command parser ``args`` went through (``mnemon-ls``, ``mnemon-ls space``,
    ``mnemon-ls space list``)."""
    current: argparse.ArgumentParser | None = parser
    while current is not None:
        yield current
        following = None
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                following = action.choices.get(getattr(args, action.dest, None) or "")
        current = following


#: How argparse begins the error of a required argument not given.
_REQUIRED = "the following arguments are required: "


class _Refused(Exception):
    """An error met while :class:`Parser` looks for unrecognized arguments behind a missing required one."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (``mnemon-ls: error: <message>``, exit 2), like every other error;
    each points at the ``--help`` of the command it is about (an unrecognized argument of ``mnemon-ls space list``
    at ``mnemon-ls space list --help``). A mistyped option is named before a required one it left missing
    (``runtime add --contnet y``: ``unrecognized arguments: --contnet y; the following arguments are required:
    --content``), where argparse reports only the missing one."""

    #: While true, :meth:`error` raises :class:`_Refused` instead of printing (:meth:`_unrecognized`).
    _probing = False
    #: The arguments this parser was last given (:meth:`parse_known_args`), for :meth:`_unrecognized`.
    _given: list[str] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse's, remembering ``args`` in case a required argument turns out missing (:meth:`error`)."""
        self._given = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(self._given, namespace)

    def _unrecognized(self) -> list[str]:
        """The arguments no parser takes among those this parser was given, found by parsing them again with no
        argument required; ``[]`` when none looks like an option or that parse meets another error."""
        given, required = list(self._given or ()), [a for a in self._actions if a.required]
        Parser._probing = True
        for action in required:
            action.required = False
        try:
            _parsed, extras = super().parse_known_args(given, argparse.Namespace())
        except _Refused:
            extras = []
        finally:
            Parser._probing = False
            for action in required:
                action.required = True
        return extras if any(e.startswith("-") and e != "-" for e in extras) else []

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """argparse's, but arguments no parser took are refused by the command they were given to."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            *_, chosen = chosen_parsers(self, parsed)
            chosen.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print one line and exit 2 (argparse's own usage block is not printed); what was typed is repeated
        escaped and the message cut at 512 characters (:func:`mnemon_ls.errors.echo_value`)."""
        from ..errors import echo_value

        if Parser._probing:
            raise _Refused(message)
        if message.startswith(_REQUIRED):
            extras = self._unrecognized()
            if extras:
                message = f"unrecognized arguments: {' '.join(extras)}; {message}"
        message = echo_value(message, 512)
        print(f"mnemon-ls: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        if "--json" in sys.argv[1:]:
            sys.stdout.write(json.dumps({"error": {"code": "invalid-input", "message": message}}) + "\n")
        raise SystemExit(EXIT_INVALID)


def add_mcp_parser(commands: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``mcp`` command to the ``commands`` subparsers (``common``: the settings flags)."""
    mcp = commands.add_parser("mcp", parents=[common], help="run the MCP server (stdio) for assistants outside the editor")
    mcp.add_argument("--read-only", action="store_true", help="offer only the read tools (writeEnabled=false)")
    return mcp

