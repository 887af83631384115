"""The command line's binding of the operation layer: argparse parsers built from each operation's
:class:`~mnemon_ls.ops.base.CliCommand`, one handler that runs any of them, and the CLI's words for a field.

A command bound here has no handler of its own: :func:`add_parsers` builds its parser (arguments from its
:class:`~mnemon_ls.ops.base.CliArg` declarations: type and choices from the params model's field, help
from the field's description unless the argument gives one) and :func:`run` executes it through
:func:`mnemon_ls.ops.execute.call` and prints ``text(data, call, params)`` (or the data with ``--json``).
"""

from __future__ import annotations

import argparse
import os
import re
import types
import typing
from typing import Any, Callable, Literal

from ..errors import InvalidInput, MnemonError, echo_value, rename_fields
from ..settings import INSTEAD_CWD, own_home_path
from .parser import integer_type

#: Help of a command group (the first word of a path with two words), by word.
GROUP_HELP = {
    "runtime": "Runtime memory (USER.md / MEMORY.md)",
    "doc": "Project Documents (managed Markdown with an index and search)",
    "space": "Memory Spaces (long-term stores; the default is an embedded mnemon.db)",
    "provider": "third-party Memory Space providers (installed packages)",
    "pack": "Mnemon Packs: back up, move or share a whole memory as one ZIP",
    "records": "workspace memory records (decisions, conventions, preferences and facts with a review state): "
               "proposals, review, export/import",
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


def group(commands: Any, groups: dict[str, Any], word: str) -> Any:
    """The subparsers of command group ``word`` (``runtime``, ``doc``, ``space``), made on first use."""
    if word not in groups:
        holder = commands.add_parser(word, help=GROUP_HELP.get(word))
        groups[word] = holder.add_subparsers(dest="action", metavar="ACTION", required=True)
    return groups[word]


def add_parsers(commands: Any, groups: dict[str, Any], common: argparse.ArgumentParser, *,
                first_word: str | None = None, skip: tuple[str, ...] = ()) -> None:
    """Add every operation's commands (:func:`add_parser`) whose first word is ``first_word`` (default: every
    first word not in ``skip``), in registry order."""
    from ..ops.registry import operations

    for operation in operations().values():
        for command in operation.commands:
            word = command.path[0]
            if (first_word is not None and word != first_word) or (first_word is None and word in skip):
                continue
            add_parser(commands, groups, common, operation, command)


def add_parser(commands: Any, groups: dict[str, Any], common: argparse.ArgumentParser, operation: Any,
               command: Any, fields: Any = None) -> None:
    """Add one command of ``operation`` to the top-level ``commands`` subparsers (a two-word path goes under
    its group's subparsers, :func:`group`). ``fields`` (default the params model's ``model_fields``) gives each
    argument's field ``annotation`` and ``description``: the light path (:mod:`mnemon_ls.cli.light`) passes
    them from a params object built without pydantic."""
    cli = command
    if len(cli.path) == 1:
        parser = commands.add_parser(cli.path[0], parents=[common], help=cli.help)
    else:
        parser = group(commands, groups, cli.path[0]).add_parser(cli.path[1], parents=[common], help=cli.help)
    if fields is None:
        fields = operation.params.model_fields
    for arg in cli.args:
        info = fields[arg.field]
        kind, choices = _field_type(info.annotation)
        help_text = arg.help if arg.help is not None else info.description
        options: dict[str, Any] = {"help": help_text or None}
        if arg.member is not None:
            lead = _lead(cli, arg.field)
            action = parser.add_argument(arg.flag, dest=_dest(arg), action=_Member, member=arg.member,
                                         lead=lead.flag, starts=arg is lead, metavar=arg.metavar, choices=arg.choices,
                                         **options)
            action.param = _param(info, arg.field)  # type: ignore[attr-defined]
            continue
        if arg.kind == "flag":
            if arg.default is None or isinstance(arg.default, bool):
                options["action"] = "store_false" if arg.default is True else "store_true"
            else:
                options.update(action="store_const", const=arg.default)
            parser.add_argument(*_option_strings(arg), dest=arg.field, **options)
            continue
        if arg.kind == "clear":
            parser.add_argument(arg.flag, dest=_clear_dest(arg), action="store_true", **options)
            continue
        if kind is int and arg.convert is None:  # ASCII digits only, refused in the field's range words
            options["type"] = integer_type(_bounds(info))
        elif kind is not str and arg.convert is None:
            options["type"] = kind
        if arg.choices or choices:
            options["choices"] = arg.choices or choices
        if arg.metavar:
            options["metavar"] = arg.metavar
        elif arg.flag is not None and "choices" not in options:  # the option's own word, as argparse would
            options["metavar"] = arg.flag.lstrip("-").upper().replace("-", "_")
        if arg.default is not None:
            options["default"] = arg.default
        if arg.flag is None:
            if arg.repeat:
                options["nargs"] = "+"
            parser.add_argument(_dest(arg), **options).param = _param(info, arg.field)  # type: ignore[attr-defined]
            continue
        if arg.repeat:
            options["action"] = "append"
        if arg.required:
            options["required"] = True
        action = parser.add_argument(*_option_strings(arg), dest=_dest(arg), **options)
        action.param = _param(info, arg.field)  # type: ignore[attr-defined]
    for flag, options in cli.extra.items():
        parser.add_argument(flag, **options)
    if cli.to_file is not None:
        parser.add_argument("--output", metavar="FILE", dest="output_file",
                            help="write it to FILE (mode 0600) instead of standard output")
    parser.set_defaults(operation=operation, command_spec=command)


def _param(info: Any, field_name: str) -> str:
    """The operation's name of params field ``field_name`` (``info`` its field): its alias (``documentRevision``), else
    the name (``limit``). The ``param`` of a usage error about the argument (:class:`mnemon_ls.cli.parser.Parser`),
    as an error of the operation names it."""
    return getattr(info, "alias", None) or field_name


def _bounds(info: Any) -> dict[str, Any]:
    """The range of a params field (``{"ge": 1, "le": 50}``) from its constraints, else from the integer its JSON
    schema shows (``minimum``/``maximum``: a range the service checks, ``recall``'s ``limit``); ``{}`` when it
    has none."""
    bounds = {}
    for item in getattr(info, "metadata", None) or ():
        for key in ("ge", "gt", "le", "lt"):
            if isinstance(getattr(item, key, None), int):
                bounds[key] = getattr(item, key)
    extra = getattr(info, "json_schema_extra", None)
    for schema in (extra.get("anyOf") or [extra]) if isinstance(extra, dict) and not bounds else ():
        if isinstance(schema, dict) and schema.get("type") == "integer":
            bounds.update({key: schema[word] for key, word in (("ge", "minimum"), ("le", "maximum"))
                           if isinstance(schema.get(word), int)})
    return bounds


def _extra_dest(flag: str, spec: Any) -> str:
    """Where argparse keeps an ``extra`` option's value: its ``dest``, else the flag's own word."""
    return spec.get("dest") or flag.lstrip("-").replace("-", "_")


def _clear_dest(arg: Any) -> str:
    return arg.flag.lstrip("-").replace("-", "_")


def _dest(arg: Any) -> str:
    """Where argparse keeps an argument's value: its ``dest``, default its field."""
    return arg.dest or arg.field


def _option_strings(arg: Any) -> tuple[str, ...]:
    """An option's strings in the order argparse shows them: a short alias first (``-o, --output``), then the
    option's own flag, then a long alias (``--confirm, --yes``): the usage line shows the first."""
    short = tuple(a for a in arg.aliases if not a.startswith("--"))
    return (*short, arg.flag, *(a for a in arg.aliases if a.startswith("--")))


def _lead(command: Any, field_name: str) -> Any:
    """The option that starts the objects of list field ``field_name`` (its first with a ``member``)."""
    return next(a for a in command.args if a.field == field_name and a.member is not None)


class _Member(argparse.Action):
    """Collects ``--merge 2,3 --as TEXT`` into ``[{"sourceIndexes": "2,3", "content": "TEXT"}]`` (raw text;
    :attr:`~mnemon_ls.ops.base.CliArg.member`)."""

    def __init__(self, *args: Any, member: str, lead: str, starts: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.member, self.lead, self.starts = member, lead, starts

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        objects = list(getattr(namespace, self.dest, None) or [])
        if self.starts:
            objects.append({self.member: values})
        elif not objects:
            parser.error(f"{option_string} must follow {self.lead} (it belongs to the {self.lead} before it)")
        elif self.member in objects[-1]:
            parser.error(f"{option_string} was given twice for one {self.lead}")
        else:
            objects[-1] = {**objects[-1], self.member: values}
        setattr(namespace, self.dest, objects)


def params_from(command: Any, args: argparse.Namespace, read_content: Callable[[str], str],
                params_model: Any = None) -> dict[str, Any]:
    """The raw params (Python names) an invocation's ``args`` give: the command's ``fixed`` params, then each
    argument that was given (an unset option is left out, so the params model's default applies). ``-`` of
    a standard-input argument is read with ``read_content`` (only one argument may read it); a path is made
    absolute; ``convert`` is applied; a ``clear`` option sets its field to ``[]`` and is refused together with
    another option of the same field. Raises :class:`InvalidInput` naming the field."""
    raw: dict[str, Any] = dict(command.fixed)
    given_by: dict[str, str] = {}
    spread_by: dict[str, Any] = {}  # field -> the spreading option that holds it
    stdin = [arg for arg in command.args if arg.stdin and getattr(args, _dest(arg), None) == "-"]
    if len(stdin) > 1:
        alias = params_model.model_fields[stdin[0].field].alias if params_model is not None else None
        raise InvalidInput(alias or stdin[0].field, f"only one of {' and '.join(a.flag or a.field for a in stdin)} "
                                                    "can read standard input")
    for arg in command.args:
        if arg.member is not None:
            if arg is _lead(command, arg.field) and getattr(args, _dest(arg), None):
                raw[arg.field] = _members(command, arg, getattr(args, _dest(arg)))
            continue
        if arg.spread:
            value = getattr(args, _dest(arg), None)
            if value is None:
                continue
            for name in arg.spread:
                other = next((a for a in command.args if a is not arg and a.field == name and _given(a, args)), None)
                if other is not None:  # before the value is read (it may be standard input)
                    raise _spread_conflict(arg, other.flag or other.field)
                given_by[name], spread_by[name] = arg.flag, arg
            raw.update(arg.convert(value) if arg.convert is not None else value)
            continue
        if arg.kind == "clear":
            if not getattr(args, _clear_dest(arg), False):
                continue
            value: Any = []
        else:
            value = getattr(args, _dest(arg), None)
            if value is None:
                continue
        if arg.field in spread_by:
            raise _spread_conflict(spread_by[arg.field], arg.flag)
        if arg.field in given_by:
            raise InvalidInput(arg.field, f"{arg.flag} cannot be combined with {given_by[arg.field]}"
                               if arg.kind == "clear" else f"{given_by[arg.field]} cannot be combined with {arg.flag}")
        given_by[arg.field] = arg.flag or arg.field
        if arg.stdin and isinstance(value, str):
            value = read_content(value)
        if arg.path == "in-workspace" and isinstance(value, str):
            value = _from_cwd_in_workspace(value, args)
        elif arg.path and isinstance(value, str):
            alias = params_model.model_fields[arg.field].alias if params_model is not None else None
            value = os.path.abspath(own_home_path(value, alias or arg.field, INSTEAD_CWD))  # ~name: another user's home
        if arg.convert is not None and isinstance(value, str):
            value = arg.convert(value)
        elif arg.convert is not None and isinstance(value, list):
            value = [_converted(arg, item, index) for index, item in enumerate(value)]
        raw[arg.field] = value
    return raw


def _from_cwd_in_workspace(value: str, args: argparse.Namespace) -> str:
    """A relative path typed in the command's workspace (the current directory is the workspace or inside it:
    both compared resolved) made relative to the workspace from the current directory, so ``cited app.py`` in
    ``src/`` names ``src/app.py`` (in the workspace's root it is the path as typed); one that leads out of the
    workspace made absolute (the operation's error then names where it leads). Any other value (absolute, a
    ``file:`` URI, typed outside the workspace, no workspace) as it is: the operation takes it relative to the
    workspace."""
    from .common import workspace_of

    if not value or value.startswith("file:") or os.path.isabs(value):
        return value
    workspace = workspace_of(args) if hasattr(args, "workspace") else None
    if workspace is None:
        return value
    cwd, base = os.path.realpath(os.getcwd()), os.path.realpath(str(workspace))
    if cwd != base and not cwd.startswith(base.rstrip(os.sep) + os.sep):
        return value
    relative = os.path.relpath(os.path.join(cwd, value), base)
    return os.path.join(cwd, value) if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _given(arg: Any, args: argparse.Namespace) -> bool:
    """Whether the invocation gave ``arg``."""
    if arg.kind == "clear":
        return bool(getattr(args, _clear_dest(arg), False))
    return getattr(args, _dest(arg), None) is not None


def _spread_conflict(spreading: Any, other: str) -> InvalidInput:
    """``--plan`` (a :attr:`~mnemon_ls.ops.base.CliArg.spread` option) given with ``other``, an option of a field
    it holds."""
    held = list(spreading.spread)
    words = ", ".join(held[:-1]) + f" and {held[-1]}" if len(held) > 1 else held[0]
    return InvalidInput(spreading.dest or spreading.field, f"already holds {words}: do not combine it with {other}")


def _members(command: Any, lead: Any, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects ``--merge 2,3 --as TEXT`` collected (:class:`_Member`), each member converted; an object
    missing a required member is refused naming both options."""
    parts = [a for a in command.args if a.field == lead.field and a.member is not None]
    done = []
    for obj in objects:
        for part in parts:
            if part.required and part.member not in obj:
                raise InvalidInput(part.flag, f"each {lead.flag} needs one {part.flag} after it (missing after "
                                              f"{lead.flag} {obj[lead.member]})")
        done.append({part.member: part.convert(obj[part.member]) if part.convert is not None else obj[part.member]
                     for part in parts if part.member in obj})
    return done


def _converted(arg: Any, value: Any, index: int) -> Any:
    """One value of a repeated argument converted; an :class:`InvalidInput` names its place (``sourceRefs[1]``)."""
    if not isinstance(value, str):
        return value
    try:
        return arg.convert(value)
    except InvalidInput as exc:
        raise InvalidInput(f"{exc.field}[{index}]", exc.rule) from None


def _write_output(name: str, text: str) -> dict[str, Any]:
    """Write a command's text to file ``name`` (mode 0600, replaced atomically); ``{file, bytes}``."""
    from pathlib import Path

    from ..fsio import write_file_atomically

    path = Path(os.path.abspath(own_home_path(name, "--output", INSTEAD_CWD)))  # ~name: refused
    if path.is_dir():
        raise InvalidInput("--output", f"{path} is a directory")
    if not path.parent.is_dir():
        raise InvalidInput("--output", f"{path.parent} does not exist")
    data = (text + "\n").encode("utf-8")
    write_file_atomically(path, data)
    return {"file": str(path), "bytes": len(data)}


def run(args: argparse.Namespace, host_for: Callable[[argparse.Namespace], Any],
        emit: Callable[[argparse.Namespace, Any, str], None], read_content: Callable[[str], str],
        absorb_hand_edits: Callable[[Any], Any]) -> int:
    """Execute the operation ``args`` chose (:func:`add_parser` set it) on this command's one host and print
    its result; returns the exit code (errors propagate to :func:`mnemon_ls.cli.full.main`). The params are
    parsed before the host is opened, so bad input touches no store. A command declared ``host=False``
    opens none (:attr:`~mnemon_ls.ops.surfaces.CliCommand.host`): ``--workspace`` is its params' workspace."""
    from ..ops.execute import call, parse

    operation, command = args.operation, args.command_spec
    raw = params_from(command, args, read_content, operation.params)
    if not command.host and args.workspace is not None:  # it opens no host: the workspace is its params'
        raw["workspace"] = args.workspace
    params = parse(operation, raw) if command.gather is None else None
    host = host_for(args) if command.host else None
    try:
        if params is None:  # arguments gathered with the host's help (provider fields) before the params parse
            params = parse(operation, {**raw, **command.gather(args, host)})
        if command.hand_edits_first:
            absorb_hand_edits(host)
        identity = {"session": getattr(args, "session_id", None), "user": getattr(args, "user_id", None)}
        data = call(operation, host, params, surface="cli", gate_held=True, **identity)
        return present(args, command, data, invocation_of(args, command, host), params, emit, operation)
    finally:
        if host is not None:
            host.close()


def invocation_of(args: argparse.Namespace, command: Any, host: Any) -> Any:
    """The :class:`~mnemon_ls.ops.surfaces.Call` a command's ``text`` and ``warnings`` see: the host, surface
    ``cli``, the caller's session and user, the command's ``extra`` options."""
    from ..ops.surfaces import Call

    options = {_extra_dest(flag, spec): getattr(args, _extra_dest(flag, spec), None)
               for flag, spec in command.extra.items()}
    return Call(host, "cli", options=options, session=getattr(args, "session_id", None),
                user=getattr(args, "user_id", None))


def present(args: argparse.Namespace, command: Any, data: Any, invocation: Any, params: Any,
            emit: Callable[[argparse.Namespace, Any, str], None], operation: Any = None) -> int:
    """Print an operation's result as ``command`` shows it: the ``operation``'s notes
    (:func:`mnemon_ls.ops.execute.notes`) and the command's warnings on stderr, then its ``text`` (or the data
    with ``--json``; or the text into ``--output FILE``); returns the command's exit code."""
    import sys

    from ..ops.execute import notes
    from ..ops.humantext import plain

    for line in notes(operation, data, invocation) if operation is not None else ():
        print(f"mnemon-ls: note: {line}", file=sys.stderr)
    if command.warnings is not None:
        for line in command.warnings(data, invocation):
            print(f"mnemon-ls: {command.warning_prefix}{line}", file=sys.stderr)
    text = command.text
    shown = text(data, invocation, params) if text is not None else "\n".join(plain(data))
    if command.to_file is not None and getattr(args, "output_file", None):
        written = _write_output(args.output_file, shown)
        emit(args, written, command.to_file(data, written["file"]))
    else:
        emit(args, data, shown)
    return command.exit_code(data) if command.exit_code is not None else 0


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def explain(error: MnemonError, args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """``(line, error object)`` of ``error`` in the command line's words: the field an error names (an
    :class:`InvalidInput`, or another error whose ``data.field`` starts its message: ``id: document "x" does not
    exist``) is named as the option the person typed (``documentRevision`` -> ``--revision``, ``spaceId`` ->
    ``--space``, ``spaces[1]`` -> ``--space NAME``, ``cites[0].startLine`` -> ``--cite f.py:0 (startLine)``), a
    positional argument as ``--help`` shows it (``spaceId`` -> ``SPACE``, ``sourceIds[1]`` -> ``SOURCE NAME``),
    and so is a field the rule names (``TARGET_ID: must differ from SOURCE_ID``); a field the layer below names
    otherwise is found through the params' aliases (``from`` -> ``--from``), the argument's
    :attr:`~mnemon_ls.ops.surfaces.CliArg.also` (``pack`` -> ``FILE``) or the option of that word given
    (:func:`typed_options`: ``budget`` -> ``--budget``, ``dataDir`` -> ``--data-dir``). A required field missing
    reads as argparse says it (``the following arguments are required: --title``). The error object (``--json``)
    has that message (the option alone where the line repeats a value typed: ``--tag: ...``) and ``field`` the
    option alone (``--revision``, ``--cite``, ``FILE``); ``param`` keeps the
    operation's field when it differs (``cites[0].startLine``: the name the language server and MCP use). The
    command's ``error_text`` may say the line in a person's words; the object keeps the message."""
    data = error.to_dict()
    named = _named(error, args)
    if named is None:
        text = error.message
    else:
        label, option, rule = named
        text = f"the following arguments are required: {option}" if rule in _MISSING else f"{label}: {rule}"
        typed = label != option and not label.startswith(f"{option} (")  # it repeats a value: data holds values
        data.update(message=f"{option}: {rule}" if typed else text, field=option)
        data["rule"] = rule  # every error about a field has its rule (not-found, revision-conflict too)
        if option != error.data.get("field"):
            data["param"] = error.data.get("field")
    command = getattr(args, "command_spec", None)
    said = command.error_text(error) if command is not None and command.error_text is not None else None
    return (said if said is not None else text), data


#: Rules of a required field left out: pydantic's (``is required``, :func:`mnemon_ls.ops.base.validation_problems`).
_MISSING = ("is required",)


def _field_and_rule(error: MnemonError) -> tuple[str, str] | None:
    """The field an error names and its rule, or ``None`` (an error about no field, or one whose message does
    not start with its field)."""
    if isinstance(error, InvalidInput):
        return error.field, error.rule
    field_name = error.data.get("field")
    if not isinstance(field_name, str) or not error.message.startswith(f"{field_name}: "):
        return None
    return field_name, error.message[len(field_name) + 2:]


def _python_name(args: argparse.Namespace, name: str) -> str:
    """The params field (Python name) an error's field ``name`` is: itself, the field of that alias (``from``
    is ``source`` for ``migrate``), else ``name`` in snake_case (``documentRevision``)."""
    fields = getattr(getattr(getattr(args, "operation", None), "params", None), "model_fields", None) or {}
    if name in fields:
        return name
    return next((python for python, info in fields.items() if getattr(info, "alias", None) == name), _snake(name))


def typed_options(args: argparse.Namespace, every: bool = False) -> dict[str, str]:
    """The options of the command's parsers (``args.cli_parser``, :func:`mnemon_ls.cli.parser.chosen_parsers`)
    the invocation gave (``every``: also those it did not), as ``--help`` shows them, by each word an error may
    name them by: the ``dest`` (``data_dir``), its option's word in snake_case (``budget`` for ``--budget``,
    ``from`` for ``--from``). One table from argparse's own actions: a new option is found without being listed
    anywhere."""
    from .parser import chosen_parsers

    parser = getattr(args, "cli_parser", None)
    table: dict[str, str] = {}
    if parser is None:
        return table
    for current in chosen_parsers(parser, args):
        for action in current._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)) or not action.option_strings:
                continue
            value = getattr(args, action.dest, None)
            if not every and (value is None or value is False or value == action.default):
                continue
            shown = max(action.option_strings, key=len)
            for word in (action.dest, *(o.lstrip("-").replace("-", "_") for o in action.option_strings)):
                table.setdefault(word, shown)
    return table


def _named(error: MnemonError, args: argparse.Namespace) -> tuple[str, str, str] | None:
    """``(label, option, rule)`` of an error about a field an argument of the command gives (:func:`explain`):
    the label as the line names it (``--tag ttt``, ``--as of --merge 4,5``), the option alone, the rule with the
    fields it mentions renamed; ``None``: the field names no argument (it is left as it is)."""
    command = getattr(args, "command_spec", None)
    found = _field_and_rule(error)
    if command is None or found is None:
        return None
    field_name, rule = found
    given = lambda arg: _given(arg, args)  # noqa: E731
    rule = rename_fields(rule, lambda name: command.flag_of(_python_name(args, name), given))
    member = _member_words(command, args, field_name)
    if member is not None:
        return member[0], member[1], rule
    match = re.fullmatch(r"([A-Za-z_]+)(?:\[(\d+)\])?((?:\.[A-Za-z_]+)*)", field_name)
    if match is None:
        return None
    name = _python_name(args, match.group(1))
    needed = rule.startswith(_MISSING)  # about an option not given: named all the same (sessionId -> --session-id)
    flag = command.flag_of(name, given) or (command.flag_of(name) if needed else None)
    if flag is None and match.group(3) and match.group(2) is None:  # governance.sourceRefs: the option of the leaf
        leaf = _python_name(args, match.group(3).rsplit(".", 1)[-1])
        flag = command.flag_of(leaf, given) or command.flag_of(leaf)  # the option that would fill it
        if flag is not None:
            return flag, flag, rule
    if flag is None:
        flag = typed_options(args, every=needed).get(name)
        return (flag, flag, rule) if flag is not None and not match.group(2) and not match.group(3) else None
    inside = f" ({match.group(3)[1:]})" if match.group(3) else ""  # a field of the value: --cite f.py:0 (startLine)
    if match.group(2) is None:
        return f"{flag}{inside}", flag, rule
    values = next((getattr(args, _dest(a)) for a in command.args if a.field == name and a.member is None
                   and a.kind == "value" and _given(a, args)), None) or []  # under its dest (SOURCE: sources)
    if isinstance(values, str):  # one option holding a list (--drop 1,5), or JSON (--entries FILE: the place in it)
        return (f"{flag} ({field_name})" if inside else _typed(flag, values)), flag, rule
    index = int(match.group(2))
    if "kind" in error.data:  # a refused credential: named by its place, never echoed
        return f"{flag} (the {ordinal(index + 1)} one){inside}", flag, rule
    return (f"{_typed(flag, values[index])}{inside}" if index < len(values) else f"{flag}{inside}"), flag, rule


def _typed(flag: str, value: Any) -> str:
    """An option as the person typed it (``--branch a..b``); a blank value (``--branch ""``) as the option
    alone, whose rule says what it got (``--branch: must not be empty (got '')``, not ``--branch : ...``)."""
    return f"{flag} {echo_value(value)}" if str(value).strip() else flag


def _member_words(command: Any, args: argparse.Namespace, field_name: str) -> tuple[str, str] | None:
    """An error's field inside an object of options (``merge[1].content``) as the person typed it
    (``--as of --merge 4,5``) and the option alone (``--as``), or ``None``."""
    match = re.match(r"([A-Za-z_]+)\[(\d+)\](?:\.([A-Za-z]+))?", field_name)
    if match is None:
        return None
    name = _snake(match.group(1))
    parts = [a for a in command.args if a.field == name and a.member is not None]
    objects = getattr(args, name, None) if parts else None
    if not parts or not isinstance(objects, list) or int(match.group(2)) >= len(objects):
        return None
    lead, obj = parts[0], objects[int(match.group(2))]
    typed = _typed(lead.flag, obj.get(lead.member, ''))
    part = next((a for a in parts if a.member == match.group(3)), lead)
    return (typed, lead.flag) if part is lead else (f"{part.flag} of {typed}", part.flag)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``... of ``n`` (a positive integer)."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
