"""What every ``mnemon-ls`` command shares, light enough for the commands assistants wait on.

How the settings flags (:func:`mnemon_ls.cli.parser.settings_parent`) become
:class:`~mnemon_ls.settings.Settings` (:func:`settings_from`), the command's one host (:func:`open_host`, closed and its
pack gate released by :func:`run_released`), printing a result (:func:`emit`) and the one mapping of an error to its
line and exit code (:func:`guarded`). :mod:`mnemon_ls.cli.full` (every command) and :mod:`mnemon_ls.cli.light` (``hook``
and ``wake`` before the operation registry and pydantic are imported) both use them. Imports nothing heavy: json and
:mod:`mnemon_ls.errors` (not even argparse or typing: ``hook prompt`` runs at every prompt).
"""

from __future__ import annotations

import errno
import json
import os
import sys

from ..errors import EXIT_FAILURE, InvalidInput, MnemonError, echo_repr, echo_value, range_rule, storage_error

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable, Sequence


#: Where :func:`mnemon_ls.cli.parser.settings_parent` puts each settings flag (``--json`` apart): the attributes
#: :func:`settings_from` reads, all ``None`` when no flag is given (``tests/cli/test_light.py`` holds them equal).
SETTINGS_DESTS = ("workspace", "scope", "data_dir", "runtime_user_scope", "user_limit_bytes", "memory_limit_bytes",
                  "memory_maintenance", "detached_head_policy", "worktree_sharing", "recall_mode", "writeback_mode",
                  "secrets", "hand_edits")

#: The setting (``Settings.with_overrides`` key) each settings flag's dest sets; ``--scope`` apart (``--data-dir``
#: alone implies ``custom``). The option is its dest in dashes: an invalid value is named so (``--user-limit-bytes``).
SETTING_DESTS = {"dataDir": "data_dir", "runtimeUserScope": "runtime_user_scope", "userLimitBytes": "user_limit_bytes",
                 "memoryLimitBytes": "memory_limit_bytes", "runtimeMaintenance": "memory_maintenance",
                 "detachedHeadPolicy": "detached_head_policy", "worktreeSharing": "worktree_sharing",
                 "recallMode": "recall_mode", "writebackMode": "writeback_mode", "secrets": "secrets",
                 "handEdits": "hand_edits"}


def settings_from(args: argparse.Namespace) -> Any:
    """Defaults, then the ``MNEMON_*`` environment (:data:`mnemon_ls.settings.ENVIRONMENT_SETTINGS`), then
    the flags (the same for every command, the MCP server included). Raises :class:`InvalidInput` naming the
    option for a bad flag: an empty ``--data-dir``, ``--data-dir`` with ``--scope workspace`` (whose root it would
    not be), ``--scope custom`` without ``--data-dir``."""
    from ..errors import InvalidInput, echo_repr
    from ..settings import ENVIRONMENT_SETTINGS, load_settings, settings_from_environment

    if args.data_dir is not None and not args.data_dir.strip():  # a setting left blank is unset; a flag is typed
        raise InvalidInput("--data-dir", f"must not be empty (got {echo_repr(args.data_dir)})")
    if args.scope == "workspace" and args.data_dir is not None:  # it would be ignored: the root is in the repository
        raise InvalidInput("--data-dir", "is not used with --scope workspace (its storage root is the workspace's "
                                         ".mnemon/); leave one of them out, or give --scope custom for this root")
    scope = args.scope or ("custom" if args.data_dir else None)  # --data-dir alone means that root
    try:
        base = load_settings({}).with_overrides(**settings_from_environment(os.environ))
    except InvalidInput as exc:  # name the variable the person set, beside the setting it stands for
        named = [v for v, key in ENVIRONMENT_SETTINGS.items()
                 if key == exc.field.rsplit(".", 1)[-1] and os.environ.get(v, "").strip()]
        if not named:
            raise
        raise InvalidInput(f"{named[0]} ({exc.field})", exc.rule) from None
    flags = {key: getattr(args, dest, None) for key, dest in SETTING_DESTS.items()}
    try:
        return base.with_overrides(**flags, storageScope=scope)
    except InvalidInput as exc:  # name the option the person typed (--user-limit-bytes), not the setting
        key = "runtimeMaintenance" if exc.field == "runtimeMemory.maintenance" else exc.field.rsplit(".", 1)[-1]
        if exc.field == "dataDir" and args.scope == "custom" and args.data_dir is None:  # no root given for it
            raise InvalidInput("--data-dir", "is required with --scope custom (the root to use)") from None
        if flags.get(key) is None:
            raise
        typed = flags[key]  # the value refused and the setting it gives, as a refused --limit has them
        raise InvalidInput("--" + SETTING_DESTS[key].replace("_", "-"), exc.rule, param=exc.field,
                           value=typed if isinstance(typed, int) else echo_value(str(typed))) from None


def workspace_of(args: argparse.Namespace) -> Any:
    """The command's workspace: ``--workspace`` made absolute, else :func:`mnemon_ls.host.default_workspace`
    (``None``: no workspace); ``~`` and ``~/`` expand to your home. Raises :class:`InvalidInput` for an empty
    ``--workspace`` or one that starts with ``~name`` (another user's home:
    :func:`mnemon_ls.settings.own_home_path`)."""
    if args.workspace is None:
        from ..host import default_workspace

        return default_workspace()
    if not args.workspace.strip():
        raise InvalidInput("--workspace", f"must not be empty (got {echo_repr(args.workspace)})")
    from ..settings import INSTEAD_CWD, own_home_path  # only ~ and ~/ (your own home), as every configured path

    return os.path.abspath(own_home_path(args.workspace, "--workspace", INSTEAD_CWD))


#: Commands whose host never embeds nor recalls: no semantic engine is set up for them (it is the
#: ``semantic`` package's import, ~80 ms, even when the extra is not installed).
WITHOUT_SEMANTIC = frozenset({"wake", "hook"})

#: Hosts :func:`open_host` made in this process. :func:`run_released` closes them when the command ends:
#: closing the last connection to a SQLite store in WAL mode checkpoints it and removes ``mnemon.db-wal``/
#: ``-shm``, so a read (``doctor``, ``space status``, ``recall``, ``wake``) leaves the store's directory as it
#: found it, and a Mnemon CLI or ``pack export`` finds no un-checkpointed WAL afterwards.
OPENED: list[Any] = []
#: Hosts of the running command that hold the pack gate (released by :func:`run_released`).
GATED: list[Any] = []


def open_host(args: argparse.Namespace) -> Any:
    """The command's one :class:`~mnemon_ls.host.WorkspaceHost` (settings from :func:`settings_from`,
    workspace from :func:`workspace_of`), holding the pack gate unless the command is ``pack`` (one command,
    one view of the root: a pack import waits, :mod:`mnemon_ls.packgate`); closed by :func:`run_released`.
    A command that may embed or recall gets the one-shot semantic set-up (:func:`one_shot_semantic`)."""
    from ..host import WorkspaceHost

    settings = settings_from(args)
    host = root_flags_named(args, lambda: WorkspaceHost(workspace_of(args), settings, one_shot=True))
    OPENED.append(host)  # closed by run_released() after the command, whatever the command did with it
    if args.command not in WITHOUT_SEMANTIC:
        one_shot_semantic(host, getattr(args, "embed_seconds", 3.0))  # every command here is one process
    if args.command != "pack":
        host.hold_pack_gate()
        GATED.append(host)  # released when the command returns, also by a handler that never closes its host
    return host


#: The setting a root error names (``dataDir: /dev/null is a file...``) and the flag's dest that gave it.
_ROOT_FLAGS = {"dataDir": "data_dir", "workspace": "workspace"}


def root_flags_named(args: argparse.Namespace, resolve: Callable[[], Any]) -> Any:
    """``resolve()`` (what resolves the storage root, :func:`mnemon_ls.roots.resolve_root`), but an
    :class:`InvalidInput` or :class:`~mnemon_ls.errors.NotFound` it raises about ``dataDir`` or ``workspace``
    names the option typed instead (``--data-dir: /dev/null is a file, but ...``) when that flag was given; a
    workspace scope with no workspace found (no ``--workspace``, none from the current directory upward) is said
    in the command line's words (:func:`no_workspace`); other errors pass unchanged."""
    try:
        return resolve()
    except MnemonError as exc:
        field = exc.data.get("field")
        if field == "workspace" and args.workspace is None and str(exc.data.get("rule")).startswith(
                "is required when storageScope is "):
            raise no_workspace(args) from None
        dest = _ROOT_FLAGS.get(field) if isinstance(field, str) else None
        if dest is None or getattr(args, dest, None) is None or not exc.message.startswith(f"{field}: "):
            raise
        flag = "--" + dest.replace("_", "-")
        exc.message = flag + exc.message[len(field):]
        exc.args = (exc.message,)
        exc.data["field"] = flag
        if isinstance(exc, InvalidInput):
            exc.field = flag
        raise


def no_workspace(args: argparse.Namespace) -> InvalidInput:
    """The error of a storage scope kept in the workspace (``--scope workspace``, or ``MNEMON_STORAGE_SCOPE``) when
    the command has none: no ``--workspace`` and no directory from the current one upward holds ``.git`` or
    ``.mnemon`` (:func:`mnemon_ls.host.default_workspace`). Names what the person set and what to do, where the
    layer below names the setting (``workspace: is required when storageScope is workspace``)."""
    chosen = "--scope workspace" if args.scope == "workspace" else "MNEMON_STORAGE_SCOPE=workspace"
    return InvalidInput("--workspace", f"{chosen} needs a workspace, and no directory from here upward holds .git "
                                       "or .mnemon: pass --workspace DIR, or run inside a git repository")


def one_shot_semantic(host: Any, seconds: float = 3.0) -> None:
    """This process ends after one command: semantic recall embeds in it for at most ``seconds`` per space,
    progress on stderr (:func:`mnemon_ls.semantic.one_shot`)."""
    from ..semantic import one_shot

    if not (seconds >= 0 and seconds <= 86400):  # also refuses NaN
        raise InvalidInput("--embed-seconds", range_rule("number", {"ge": 0, "le": 86400}, seconds))
    one_shot(host.semantic, lambda line: print(f"mnemon-ls: {line}", file=sys.stderr, flush=True), seconds)


def close_opened() -> None:
    """Close every host :func:`open_host` made (soft state flushed first; safe when a command closed it already)."""
    while OPENED:
        OPENED.pop().close()


def run_released(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``handler(args)``, then close every host it built (:func:`close_opened`, still under the gate) and
    release their pack gates (:data:`GATED`)."""
    try:
        return handler(args)
    finally:
        try:
            close_opened()
        finally:
            while GATED:
                GATED.pop().release_pack_gate()


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print a result: ``text`` (and a line on redacted values), or with ``--json`` the data as JSON."""
    if isinstance(data, dict) and data.get("redacted"):
        from ..redact import describe

        text = text.rstrip("\n") + "\n" + describe(data["redacted"])
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def read_content(value: str) -> str:
    """``value``, or standard input decoded as UTF-8 when ``value`` is ``-``."""
    if value != "-":
        return value
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput("content", f"standard input must be valid UTF-8 (byte 0x{data[exc.start]:02x} at "
                                      f"position {exc.start})") from None


def _error_json(args: argparse.Namespace, error: dict[str, Any]) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"error": error}, ensure_ascii=False) + "\n")


def guarded(args: argparse.Namespace, run: Callable[[], int],
            explain: Callable[[MnemonError, argparse.Namespace], tuple[str, dict[str, Any]]] =
            lambda exc, _args: (exc.message, exc.to_dict())) -> int:
    """``run()``'s exit code, or an error's: a :class:`MnemonError` (its line and error object
    ``explain(exc, args)``: :func:`mnemon_ls.cli.ops.explain` names the options typed), an ``OSError`` (the
    storage code of :func:`~mnemon_ls.errors.storage_error`, else ``internal-error`` and exit 1), JSON nested
    too deeply (``invalid-input``), Ctrl-C (130). The line goes to stderr; with ``--json`` the error object is
    also printed to stdout as ``{"error": {...}}``."""
    try:
        return run()
    except MnemonError as exc:
        line, error = explain(exc, args)
        print(f"mnemon-ls: error: {line}", file=sys.stderr)
        _error_json(args, error)
        return exc.exit_code
    except OSError as exc:
        mapped = storage_error(exc)  # ENOSPC, EROFS, EISDIR...: the stable code and exit code 4
        if mapped is not None:
            print(f"mnemon-ls: error: {mapped.message}", file=sys.stderr)
            _error_json(args, mapped.to_dict())
            return mapped.exit_code
        shown = echo_value(exc.filename) if exc.filename else None
        reason = exc.strerror or exc
        message = f"{shown}: {reason}" if shown else f"{reason}"
        print(f"mnemon-ls: error:{' ' + shown if shown else ''}: {reason}", file=sys.stderr)
        _error_json(args, {"code": "internal-error", "message": message, "file": shown,
                           "errno": errno.errorcode.get(exc.errno or 0)})
        return EXIT_FAILURE
    except RecursionError:  # JSON input (--plan, --entries, --routes, --pending, a pack manifest) nested absurdly
        error = InvalidInput("input", "is nested too deeply (JSON arrays or objects inside each other)")
        print(f"mnemon-ls: error: {error.message}", file=sys.stderr)
        _error_json(args, error.to_dict())
        return error.exit_code
    except KeyboardInterrupt:
        return 130


def repair_lines(repairs: Sequence[Any]) -> list[str]:
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
            lines.append(f"repaired {store.runtime_dir / name}"
                         + (f" (your edit is saved at {saved})" if saved else ""))
    return lines


def absorb_hand_edits(host: Any) -> list[Any]:
    """Import (or repair) hand edits of USER.md / MEMORY.md before a runtime command reads or writes
    (:meth:`RuntimeSource.repair`); each result is printed on stderr. Returns the repair reports."""
    repairs = host.runtime.repair(rebuild_missing=False)
    for line in repair_lines(repairs):
        print(f"mnemon-ls: {line}", file=sys.stderr)
    return repairs


def run_mcp(args: argparse.Namespace) -> int:
    """``mnemon-ls mcp``: serve MCP over stdio (``--workspace`` fixes the workspace; else the client's roots,
    else the current directory) until the client closes; the exit code."""
    from ..mcp.server import run  # imported here: the other commands never load the MCP SDK

    from ..roots import check_workspace, global_root
    from ..roots_checks import check_data_dir

    workspace = None if args.workspace is None else workspace_of(args)  # an empty --workspace is refused
    settings = settings_from(args)

    def check() -> None:  # refused at start, as every other command does, not by every request
        if workspace is not None:
            check_workspace(workspace)
        check_data_dir(settings)

    root_flags_named(args, check)
    global_root()  # so is a relative (or NUL-holding) MNEMON_DATA_DIR, named as the variable
    return root_flags_named(args, lambda: run(workspace, settings, write_enabled=not args.read_only))
