"""The command line's binding of the operation layer: argparse parsers built from each operation's
:class:`~mnemon_ls.ops.base.CliCommand`, one handler that runs any of them, and the CLI's words for a field.

A command bound here has no handler of its own: :func:`add_parsers` builds its parser (arguments from its
:class:`~mnemon_ls.ops.base.CliArg` declarations: type and choices from the params model's field, help
from the field's description unless the argument gives one) and :func:`run` executes it through
:func:`mnemon_ls.ops.execute.call` and prints ``text(data, call, params)`` (or the data with ``--json``).
"""

from __future__ import annotations

import argparse
import re
import types
import typing
from typing import Any, Callable, Literal

from .errors import InvalidInput, MnemonError

#: Help of a command group (the first word of a path with two words), by word.
GROUP_HELP = {
    "space": "Memory Spaces (long-term stores; the default is an embedded mnemon.db)",
}


def _field_type(annotation: Any) -> tuple[Any, tuple[str, ...] | None]:
    """``(argparse type, choices)`` of a params field's annotation (``int | None`` -> ``int``; a ``Literal``
    of strings -> its values as choices; a list -> its element's)."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _field_type(inner[0]) if len(inner) == 1 else (str, None)
    if origin is list:
        return _field_type(args[0]) if args else (str, None)
    if origin is Literal:
        return str, tuple(str(a) for a in args)
    if annotation in (int, float):
        return annotation, None
    return str, None


def add_parser(commands: Any, groups: dict[str, Any], common: argparse.ArgumentParser, operation: Any) -> None:
    """Add ``operation``'s command to the top-level ``commands`` subparsers (a two-word path goes under its
    group's subparsers, made on first use and kept in ``groups``)."""
    cli = operation.cli
    if len(cli.path) == 1:
        parser = commands.add_parser(cli.path[0], parents=[common], help=cli.help)
    else:
        group = groups.get(cli.path[0])
        if group is None:
            holder = commands.add_parser(cli.path[0], help=GROUP_HELP.get(cli.path[0]))
            group = groups[cli.path[0]] = holder.add_subparsers(dest="action", metavar="ACTION", required=True)
        parser = group.add_parser(cli.path[1], parents=[common], help=cli.help)
    fields = operation.params.model_fields
    for arg in cli.args:
        info = fields[arg.field]
        kind, choices = _field_type(info.annotation)
        help_text = arg.help if arg.help is not None else info.description
        options: dict[str, Any] = {"help": help_text}
        if arg.kind == "flag":
            options["action"] = "store_false" if arg.default is True else "store_true"
            parser.add_argument(arg.flag, dest=arg.field, **options)
            continue
        if kind is not str:
            options["type"] = kind
        if arg.choices or choices:
            options["choices"] = arg.choices or choices
        if arg.metavar:
            options["metavar"] = arg.metavar
        if arg.default is not None:
            options["default"] = arg.default
        if arg.flag is None:
            if arg.repeat:
                options["nargs"] = "+"
            parser.add_argument(arg.dest or arg.field, **options)
            continue
        if arg.repeat:
            options["action"] = "append"
        if arg.required:
            options["required"] = True
        parser.add_argument(arg.flag, dest=arg.field, **options)
    for flag, options in cli.extra.items():
        parser.add_argument(flag, **options)
    parser.set_defaults(operation=operation)


def params_from(operation: Any, args: argparse.Namespace, read_content: Callable[[str], str]) -> dict[str, Any]:
    """The raw params (Python names) an invocation's ``args`` give; an unset option is left out (the params
    model's default applies); ``-`` of a standard-input argument is read with ``read_content``."""
    raw: dict[str, Any] = {}
    for arg in operation.cli.args:
        value = getattr(args, arg.dest or arg.field if arg.flag is None else arg.field, None)
        if value is None:
            continue
        if arg.stdin and isinstance(value, str):
            value = read_content(value)
        raw[arg.field] = value
    return raw


def run(args: argparse.Namespace, host_for: Callable[[argparse.Namespace], Any],
        emit: Callable[[argparse.Namespace, Any, str], None], read_content: Callable[[str], str]) -> int:
    """Execute the operation ``args`` chose (:func:`add_parser` set it) on this command's one host and print
    its result; returns the exit code (errors propagate to :func:`mnemon_ls.cli.main`)."""
    from .ops.base import Call
    from .ops.execute import call, parse
    from .ops.humantext import plain

    operation = args.operation
    host = host_for(args)
    try:
        params = parse(operation, params_from(operation, args, read_content))
        data = call(operation, host, params, surface="cli", gate_held=True)
        text = operation.cli.text
        emit(args, data, text(data, Call(host, "cli"), params) if text is not None else "\n".join(plain(data)))
        return 0
    finally:
        host.close()


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def message(error: MnemonError, args: argparse.Namespace) -> str:
    """``error.message`` in the command line's words: a field the command takes through an option of another
    name is named as that option (``spaceId`` -> ``--space``, ``spaces[1]`` -> ``--space NAME``,
    ``scopeToBranch`` -> ``--for-branch``). ``--json``'s ``error.data`` keeps the operation's field names."""
    operation = getattr(args, "operation", None)
    if not isinstance(error, InvalidInput) or operation is None:
        return error.message
    match = re.fullmatch(r"([A-Za-z_]+)(?:\[(\d+)\])?", error.field)
    if match is None:
        return error.message
    name = _snake(match.group(1))
    flag = operation.cli.flag_of(name)
    if flag is None or flag.lstrip("-").replace("-", "_") == name:
        return error.message
    if match.group(2) is None:
        return f"{flag}: {error.rule}"
    given = getattr(args, name, None) or []
    index = int(match.group(2))
    if "kind" in error.data:  # a refused credential: named by its place, never echoed
        return f"{flag} (the {_ordinal(index + 1)} one): {error.rule}"
    return f"{flag} {given[index]}: {error.rule}" if index < len(given) else f"{flag}: {error.rule}"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
