"""``mnemon-ls hook EVENT``, ``mnemon-ls wake`` and ``mnemon-ls mcp`` without the full command line: the
commands assistants wait on at every prompt and session start.

The full parser (:func:`mnemon_ls.cli.full.build_parser`) is built from the operation registry, which imports every
operation module and pydantic: more CPU than everything ``hook`` and ``wake`` do. :func:`main` parses these
commands with a parser of their own arguments only, built from the same declarations: the settings flags
(:func:`mnemon_ls.cli.parser.settings_parent`), the ``hook`` command (:func:`mnemon_ls.cli.hooks.add_hook_parser`),
the ``mcp`` command (:func:`mnemon_ls.cli.parser.add_mcp_parser`), the wake operation's command
(:data:`mnemon_ls.ops.wake.COMMAND` through :func:`mnemon_ls.cli.ops.add_parser`, typed by
:class:`~mnemon_ls.ops.wake.WakeRequest`); the hooks exactly as ``mnemon-ls setup`` writes them need no parser
at all (:func:`as_written`). Whatever it does not run as the full command line would,
it hands back (``None``) and :mod:`mnemon_ls.__main__` runs the full command line on the same arguments: a
usage error, ``--help``, an argument that is not UTF-8. So errors and help read exactly as before.

``wake`` here runs the ``workspace.wake`` operation's own run function (:func:`mnemon_ls.ops.wake.run`, the
one every surface runs) on the command's host, with its params as a :class:`~mnemon_ls.ops.wake.WakeRequest`
instead of the pydantic ``WakeParams`` (the Host validates both values), and prints the result as the
operation's command says (:func:`mnemon_ls.cli.ops.present`): the same operation, without its params model.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import argparse
    from typing import Any, Sequence

#: The commands :func:`main` runs.
COMMANDS = ("hook", "wake", "mcp")
#: The hook commands ``mnemon-ls setup`` writes into the clients' configuration (:mod:`mnemon_ls.clients`):
#: run without building a parser at all (:func:`as_written`).
WRITTEN_HOOKS = (("hook", "session-start"), ("hook", "prompt"))


class _Delegate(Exception):
    """The full command line must run these arguments (a usage error: its parser words the message)."""


def as_written(argv: Sequence[str]) -> Any:
    """The parsed arguments of ``argv`` when it is a hook command exactly as ``mnemon-ls setup`` writes it
    (:data:`WRITTEN_HOOKS`, optionally ``--json``), else ``None``: what the parser would give, every settings
    flag unset (:data:`mnemon_ls.cli.common.SETTINGS_DESTS`), without importing argparse."""
    from types import SimpleNamespace

    from .common import SETTINGS_DESTS

    if tuple(argv[:2]) not in WRITTEN_HOOKS or list(argv[2:]) not in ([], ["--json"]):
        return None
    return SimpleNamespace(command="hook", event=argv[1], json=len(argv) == 3, **dict.fromkeys(SETTINGS_DESTS))


def _fields(params: type) -> dict[str, Any]:
    """``model_fields``-like rows (``annotation``, ``description``) of a params dataclass."""
    import argparse
    import dataclasses
    import typing

    hints = typing.get_type_hints(params)
    return {f.name: argparse.Namespace(annotation=hints[f.name], description=None) for f in dataclasses.fields(params)}


def build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (one of :data:`COMMANDS`) alone, with the full command line's arguments."""
    from .parser import Parser, settings_parent

    class _LightParser(Parser):
        def error(self, message: str) -> None:  # type: ignore[override]
            """Hand the arguments to the full command line, which reports the error in its words."""
            raise _Delegate(message)

    parser = _LightParser(prog="mnemon-ls", add_help=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = settings_parent()
    if command == "hook":
        from .hooks import add_hook_parser

        add_hook_parser(commands, common)
    elif command == "mcp":
        from .parser import add_mcp_parser

        add_mcp_parser(commands, common)
    else:
        from . import ops as cli_ops
        from ..ops import wake

        cli_ops.add_parser(commands, {}, common, None, wake.COMMAND, fields=_fields(wake.WakeRequest))
    return parser


def main(argv: Sequence[str]) -> int | None:
    """Run ``argv`` (without the program name) when it is a ``hook`` or ``wake`` command this module runs as
    the full command line would; its exit code, or ``None``: run the full command line (module doc)."""
    argv = list(argv)
    if not argv or argv[0] not in COMMANDS or any(a in ("-h", "--help") for a in argv):
        return None
    if any(_not_text(a) for a in argv):  # the full command line names the argument and the byte
        return None
    args = as_written(argv)
    if args is None:
        parser = build_parser(argv[0])
        try:
            args = parser.parse_args(argv)
        except _Delegate:
            return None
        args.cli_parser = parser  # the options an error may name (mnemon_ls.cli.ops.typed_options)
    from .common import guarded, run_released

    # No mnemon_ls.output.install(): neither command opens a provider engine, whose output it reroutes (and a
    # warning a Source logs reaches stderr through logging's last resort, as the handler install adds would).
    if args.command == "hook":
        from .hooks import cmd_hook

        return guarded(args, lambda: run_released(cmd_hook, args))
    from .ops import explain

    if args.command == "mcp":
        from .common import run_mcp

        return guarded(args, lambda: run_released(run_mcp, args), explain)

    return guarded(args, lambda: run_released(run_wake, args), explain)


def _not_text(argument: str) -> bool:
    """Whether ``argument`` holds bytes that are not UTF-8 (decoded by Python as lone surrogates)."""
    try:
        argument.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def run_wake(args: argparse.Namespace) -> int:
    """``mnemon-ls wake``: the ``workspace.wake`` operation (module doc) on the command's host."""
    from . import ops as cli_ops
    from .common import emit, open_host, read_content
    from ..ops import wake
    from ..ops.execute import vocabulary
    from ..ops.surfaces import Call

    command = wake.COMMAND
    params = wake.WakeRequest(**cli_ops.params_from(command, args, read_content))
    host = open_host(args)
    try:
        with vocabulary():  # ops.execute.call with the gate held: the command's host holds it
            data = wake.run(Call(host, "cli"), params)
        return cli_ops.present(args, command, data, cli_ops.invocation_of(args, command, host), params, emit)
    finally:
        host.close()
