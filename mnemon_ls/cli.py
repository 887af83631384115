"""The ``mnemon-ls`` command line.

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
import json
import os
import sys
from typing import Any, Sequence

from . import __version__, cli_clients, cli_ops, output
from .cli_argv import check_text_arguments
from .errors import EXIT_FAILURE, EXIT_INVALID, EXIT_OK, InvalidInput, MnemonError, storage_error
from .host import WorkspaceHost, default_workspace
from .runtime.model import PROJECTION_FILES, TARGETS
from .settings import Settings, load_settings, settings_from_environment


def _settings_parent() -> argparse.ArgumentParser:
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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (``mnemon-ls: error: <message>``, exit 2), like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print one line and exit 2 (argparse's own usage block is not printed)."""
        print(f"mnemon-ls: error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        if "--json" in sys.argv[1:]:
            sys.stdout.write(json.dumps({"error": {"code": "invalid-input", "message": message}}) + "\n")
        raise SystemExit(EXIT_INVALID)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every command."""
    common = _settings_parent()
    parser = _Parser(prog="mnemon-ls", description="Workspace-scoped, branch-aware memory for coding assistants.")
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

    mcp = commands.add_parser("mcp", parents=[common], help="run the MCP server (stdio) for assistants outside the editor")
    mcp.add_argument("--read-only", action="store_true", help="offer only the read tools (writeEnabled=false)")
    setup = commands.add_parser("setup", parents=[common],
                                help="add mnemon-ls to an assistant's MCP configuration (and its hooks)")
    setup.add_argument("client", choices=("claude-code", "codex", "cursor", "vscode"))
    setup.add_argument("--project", action="store_true",
                       help="write the workspace's shared configuration instead of the user's")
    setup.add_argument("--remove", action="store_true", help="take mnemon-ls out again (other entries stay)")
    setup.add_argument("--dry-run", action="store_true", help="show what would change, write nothing")
    hook = commands.add_parser("hook", parents=[common], help="run an assistant lifecycle hook (reads the hook's JSON on stdin)",
                               description="Print what an assistant's lifecycle hook adds to the model's context: "
                                           "session-start the wake snapshot, prompt a one-line recall/writeback cue. "
                                           "--json prints it as hook JSON ({\"hookSpecificOutput\": {\"hookEventName\", "
                                           "\"additionalContext\"}}), which Codex needs.")
    hook.add_argument("event", choices=("session-start", "prompt"))
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    from .lsp.launch import add_serve_arguments  # light: `mnemon-ls serve` itself starts from there

    add_serve_arguments(serve)
    return parser


def _settings_from(args: argparse.Namespace) -> Settings:
    """Defaults, then the ``MNEMON_*`` environment (:data:`mnemon_ls.settings.ENVIRONMENT_SETTINGS`), then
    the flags (the same for every command, the MCP server included)."""
    scope = args.scope or ("custom" if args.data_dir else None)  # --data-dir alone means that root
    return load_settings({}).with_overrides(**settings_from_environment(os.environ)).with_overrides(
        storageScope=scope,
        dataDir=args.data_dir,
        runtimeUserScope=args.runtime_user_scope,
        userLimitBytes=args.user_limit_bytes,
        memoryLimitBytes=args.memory_limit_bytes,
        runtimeMaintenance=getattr(args, "memory_maintenance", None),
        detachedHeadPolicy=args.detached_head_policy,
        worktreeSharing=args.worktree_sharing,
        recallMode=args.recall_mode,
        writebackMode=args.writeback_mode,
        secrets=getattr(args, "secrets", None),
        handEdits=args.hand_edits,
    )


#: Hosts of the running :func:`main` that hold the pack gate.
_GATED: list[WorkspaceHost] = []


def _host(args: argparse.Namespace) -> WorkspaceHost:
    settings = _settings_from(args)
    workspace = args.workspace if args.workspace is not None else default_workspace()
    if isinstance(workspace, str):
        if not workspace.strip():
            raise InvalidInput("workspace", "must not be empty")
        workspace = os.path.abspath(os.path.expanduser(workspace))
    host = WorkspaceHost(workspace, settings)
    _OPENED.append(host)  # closed by main() after the command, whatever the command did with it
    _one_shot_semantic(host, getattr(args, "embed_seconds", 3.0))  # every command here is one process
    if args.command != "pack":  # one command, one view of the root: a pack import waits (mnemon_ls.packs.gate)
        host.hold_pack_gate()
        _GATED.append(host)  # released when main() returns, also by a handler that never closes its host
    return host


#: Hosts :func:`_host` made in this process. :func:`main` closes them when the command ends: closing the last
#: connection to a SQLite store in WAL mode checkpoints it and removes ``mnemon.db-wal``/``-shm``, so a read
#: (``doctor``, ``space status``, ``recall``, ``wake``) leaves the store's directory as it found it, and a
#: Mnemon CLI or ``pack export`` finds no un-checkpointed WAL afterwards.
_OPENED: list[WorkspaceHost] = []


def _close_opened() -> None:
    """Close every host :func:`_host` made (soft state flushed first; safe when a command closed it already)."""
    while _OPENED:
        _OPENED.pop().close()


def _one_shot_semantic(host: WorkspaceHost, seconds: float = 3.0) -> None:
    """This process ends after one command: semantic recall embeds in it for at most ``seconds`` per space,
    progress on stderr (:func:`mnemon_ls.semantic.one_shot`)."""
    from .semantic import one_shot

    if not (seconds >= 0 and seconds <= 86400):  # also refuses NaN
        raise InvalidInput("embed-seconds", "must be a number of seconds 0..86400")
    one_shot(host.semantic, lambda line: print(f"mnemon-ls: {line}", file=sys.stderr, flush=True), seconds)


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if isinstance(data, dict) and data.get("redacted"):
        from .redact import describe

        text = text.rstrip("\n") + "\n" + describe(data["redacted"])
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _repair_lines(repairs: Sequence[Any]) -> list[str]:
    """One line per repaired projection: the hand-edit result when there is one (imported, rejected with
    the item and rule, crash leftover), else what was rebuilt."""
    lines = []
    for store, report in repairs:
        for name in report.repaired:
            result = report.hand_edits.get(name)
            if result is not None:
                lines.append(f"{store.runtime_dir / name}: {result['message']}" if result["status"] != "imported"
                             else f"{result['message']} ({store.runtime_dir / name}; your edit is saved at "
                                  f"{result['savedAs']})")
                continue
            saved = report.preserved.get(name)
            lines.append(f"repaired {store.runtime_dir / name}" + (f" (your edit is saved at {saved})" if saved else ""))
    return lines


def _absorb_hand_edits(host: WorkspaceHost) -> list[Any]:
    """Import (or repair) hand edits of USER.md / MEMORY.md before a runtime command reads or writes
    (:meth:`RuntimeSource.repair`); each result is printed on stderr. Returns the repair reports."""
    repairs = host.runtime.repair(rebuild_missing=False)
    for line in _repair_lines(repairs):
        print(f"mnemon-ls: {line}", file=sys.stderr)
    return repairs


def _read_content(value: str) -> str:
    """``value``, or standard input decoded as UTF-8 when ``value`` is ``-``."""
    if value != "-":
        return value
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput("content", f"standard input must be valid UTF-8 (byte 0x{data[exc.start]:02x} at "
                                      f"position {exc.start})") from None


def cmd_doctor(args: argparse.Namespace) -> int:
    """``mnemon-ls doctor`` (:func:`mnemon_ls.cli_doctor.cmd_doctor`)."""
    from . import cli_doctor

    return cli_doctor.cmd_doctor(args, _host, _emit)


def cmd_migrate(args: argparse.Namespace) -> int:
    """``mnemon-ls migrate --from global|workspace|DIR [--dry-run]``: copy another root's memory into this
    workspace's root, verified (:mod:`mnemon_ls.migrate`); prints the receipt (``--json``: the receipt dict)."""
    from .migrate import migrate, resolve_source

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
    """``mnemon-ls mcp``: serve MCP over stdio (``--workspace`` fixes the workspace; else the client's roots,
    else the current directory)."""
    from .mcp.server import run  # imported lazily: the other commands never load the MCP SDK

    workspace = os.path.abspath(os.path.expanduser(args.workspace)) if args.workspace else None
    return run(workspace, _settings_from(args), write_enabled=not args.read_only)


def cmd_serve(args: argparse.Namespace) -> int:
    """``mnemon-ls serve``: run the language server."""
    from .lsp.server import run  # imported lazily: the other commands never load pygls

    return run(tcp=args.tcp, log_file=args.log_file, verbose=args.verbose)


def _run_released(handler: Any, args: argparse.Namespace) -> int:
    """``handler(args)``, then close every host it built (:func:`_close_opened`, still under the gate) and
    release their pack gates (:data:`_GATED`)."""
    try:
        return handler(args)
    finally:
        try:
            _close_opened()
        finally:
            while _GATED:
                _GATED.pop().release_pack_gate()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mnemon-ls`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("serve", "mcp"):  # the servers install it with their own log level
        output.install()  # what provider engines print, warn or log stays out of our output (mnemon_ls.output)
    handlers = {"doctor": cmd_doctor, "migrate": cmd_migrate, "redact": cmd_redact, "serve": cmd_serve,
                "mcp": cmd_mcp,
                "setup": lambda a: cli_clients.cmd_setup(a, _emit),
                "hook": lambda a: cli_clients.cmd_hook(a, _host, _settings_from)}
    if getattr(args, "operation", None) is not None:
        handler = lambda a: cli_ops.run(a, _host, _emit, _read_content, _absorb_hand_edits)  # noqa: E731
    else:
        handler = handlers[args.command]
    try:
        check_text_arguments(parser, args)  # bytes that are not UTF-8 in a text argument (mnemon_ls.cli_argv)
        return _run_released(handler, args)
    except MnemonError as exc:
        print(f"mnemon-ls: error: {cli_ops.message(exc, args)}", file=sys.stderr)
        if getattr(args, "json", False):
            sys.stdout.write(json.dumps({"error": exc.to_dict()}, ensure_ascii=False) + "\n")
        return exc.exit_code
    except OSError as exc:
        mapped = storage_error(exc)  # ENOSPC, EROFS, EISDIR...: the stable code and exit code 4
        if mapped is not None:
            print(f"mnemon-ls: error: {mapped.message}", file=sys.stderr)
            if getattr(args, "json", False):
                sys.stdout.write(json.dumps({"error": mapped.to_dict()}, ensure_ascii=False) + "\n")
            return mapped.exit_code
        where = f" {exc.filename}" if exc.filename else ""
        print(f"mnemon-ls: error:{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    except RecursionError:  # JSON input (--plan, --entries, --routes, --pending, a pack manifest) nested absurdly
        error = InvalidInput("input", "is nested too deeply (JSON arrays or objects inside each other)")
        print(f"mnemon-ls: error: {error.message}", file=sys.stderr)
        if getattr(args, "json", False):
            sys.stdout.write(json.dumps({"error": error.to_dict()}, ensure_ascii=False) + "\n")
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
