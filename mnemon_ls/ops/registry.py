"""The registry of operations: every :class:`~mnemon_ls.ops.base.Operation` of every tier module.

A tier module of :mod:`mnemon_ls.ops` (``spaces.py``, ``runtime.py`` ...) lists its operations in a
module-level ``OPERATIONS`` tuple; :func:`operations` imports every module of the package that has one
(found by name, so adding an operation to a tier, or a tier file, is all it takes to reach every surface)
and checks the declarations against each other once: names, LSP methods, MCP tool names and CLI command
paths are each unique, every field a surface exposes exists in the params model, an LSP method's own
params model extends the operation's, and an editor command's argument object maps onto the params of the
operations it runs (:func:`_check_command`) and its id is one the language server advertises
(:data:`.command_ids.COMMANDS`).

Loading imports pydantic and the tier modules (not the Sources: operations import them when they run), so
the language server loads it after answering ``initialize``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Iterable

from .base import LspCommand, Operation

#: Modules of the package that hold machinery, not operations.
_MACHINERY = frozenset({"base", "errors", "execute", "registry", "modeltext", "humantext", "tools",
                        "surfaces", "wake", "client", "command_ids", "command_args"})


@functools.cache
def operations() -> dict[str, Operation]:
    """Every operation by name, in tier-module order then declaration order. Raises ``ValueError`` when two
    declarations collide or a surface names a field its params model lacks (a programming error)."""
    from .. import ops as package

    found: dict[str, Operation] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in _MACHINERY or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for operation in getattr(module, "OPERATIONS", ()):
            if operation.name in found:
                raise ValueError(f"operation {operation.name} is declared twice")
            found[operation.name] = operation
    _check(found.values())
    _check_advertised(found.values())
    return found


def _check_advertised(declared: Iterable[Operation], advertised: tuple[str, ...] | None = None) -> None:
    """Raise ``ValueError`` unless the editor commands the operations bind are exactly the ids the language
    server advertises before it loads the registry (``advertised``, default :data:`.command_ids.COMMANDS`)."""
    from .command_ids import COMMANDS

    advertised = COMMANDS if advertised is None else advertised
    bound = {command.command for operation in declared for command in operation.lsp_commands}
    unlisted = sorted(bound - set(advertised))
    if unlisted:
        raise ValueError(f"LSP command {unlisted[0]} is not in command_ids.COMMANDS (initialize would not "
                         "advertise it)")
    unbound = [command_id for command_id in advertised if command_id not in bound]
    if unbound:
        raise ValueError(f"LSP command {unbound[0]} of command_ids.COMMANDS is bound by no operation")


def _check(declared: Iterable[Operation]) -> None:
    seen: dict[tuple[str, object], str] = {}
    commands: dict[str, list[tuple[Operation, LspCommand]]] = {}
    for operation in declared:
        fields = operation.params.model_fields
        keys: list[tuple[str, object]] = []
        if operation.lsp is not None:
            keys.append(("LSP method", operation.lsp.method))
            wire = operation.lsp.params
            if wire is not None and not (isinstance(wire, type) and issubclass(wire, operation.params)):
                raise ValueError(f"{operation.name}: LSP params {getattr(wire, '__name__', wire)} is not a subclass "
                                 f"of {operation.params.__name__}")
        if operation.mcp is not None:
            keys.append(("MCP tool", operation.mcp.name if operation.mcp.action is None
                         else f"{operation.mcp.name} action={operation.mcp.action}"))
            for name in (*(operation.mcp.fields or ()), *operation.mcp.narrow):
                if name not in fields:
                    raise ValueError(f"{operation.name}: MCP field {name} is not in {operation.params.__name__}")
        for bound in operation.lsp_commands:
            keys.append(("LSP command", bound.command if bound.when is None else f"{bound.command} when {bound.when}"))
            _check_command(operation, bound)
            commands.setdefault(bound.command, []).append((operation, bound))
        for command in operation.commands:
            keys.append(("CLI command", command.path))
            for arg in command.args:
                if arg.field not in fields:
                    raise ValueError(f"{operation.name}: CLI field {arg.field} is not in {operation.params.__name__}")
        for key in keys:
            if key in seen:
                raise ValueError(f"{key[0]} {key[1]} is bound by {seen[key]} and {operation.name}")
            seen[key] = operation.name
    for command_id, bindings in commands.items():
        first = bindings[0][1]
        for operation, bound in bindings[1:]:
            for name in ("args", "quiet", "failure"):
                if getattr(bound, name) != getattr(first, name):
                    raise ValueError(f"LSP command {command_id}: {operation.name} declares another {name} than "
                                     f"{bindings[0][0].name} (one argument object, one failure message)")
        if sum(1 for _, bound in bindings if bound.when is None) != 1:
            raise ValueError(f"LSP command {command_id}: exactly one binding runs it without `when` "
                             f"({', '.join(op.name for op, _ in bindings)})")


def _check_command(operation: Operation, command: LspCommand) -> None:
    """Raise ``ValueError`` unless ``command``'s argument object maps onto ``operation``'s params: its names
    exist in the argument model and the params model (which takes ``workspace``), ``convert`` converts mapped
    fields, and every field the params model requires is set (mapped, fixed or the ``file``)."""
    where = f"{operation.name}: LSP command {command.command}"
    args = getattr(command.args, "model_fields", None)
    if not isinstance(args, dict):
        raise ValueError(f"{where}: args {getattr(command.args, '__name__', command.args)} is not a params model")
    language = ("language_id",) if command.comment is not None else ()
    for name in ("uri", *command.fields.values(), command.when, command.quiet, command.comment, command.cite,
                 *language):
        if name is not None and name not in args:
            raise ValueError(f"{where}: argument field {name} is not in {command.args.__name__}")
    model = operation.params_for("lsp")
    fields = model.model_fields
    for name in ("workspace", *command.fields, *command.fixed, *command.convert, command.file,
                 "cites" if command.cite else None):
        if name is not None and name not in fields:
            raise ValueError(f"{where}: field {name} is not in {model.__name__}")
    for name in command.convert:
        if name not in command.fields:
            raise ValueError(f"{where}: convert {name} names no field of `fields`")
    given = {"workspace", *command.fields, *command.fixed, *((command.file,) if command.file else ())}
    for name, info in fields.items():
        if info.is_required() and name not in given:
            raise ValueError(f"{where}: the required field {name} of {model.__name__} is never set")


def by_lsp_method() -> dict[str, Operation]:
    """Operations the language server exposes, by ``mnemon/*`` method."""
    return {op.lsp.method: op for op in operations().values() if op.lsp is not None}


def by_lsp_command() -> dict[str, tuple[tuple[Operation, LspCommand], ...]]:
    """The editor commands (``workspace/executeCommand``) by id: the ``(operation, binding)`` pairs that run
    each, in the order of :data:`.command_ids.COMMANDS` (a command several operations bind picks one by its
    bindings' ``when``)."""
    from .command_ids import COMMANDS

    found: dict[str, list[tuple[Operation, LspCommand]]] = {command_id: [] for command_id in COMMANDS}
    for operation in operations().values():
        for command in operation.lsp_commands:
            found[command.command].append((operation, command))
    return {command_id: tuple(bindings) for command_id, bindings in found.items()}


def by_mcp_tool() -> dict[str, Operation]:
    """Operations the MCP server exposes, by tool name (``<tool> action=<action>`` for the operations that
    share one tool through its ``action`` argument)."""
    return {op.mcp.name if op.mcp.action is None else f"{op.mcp.name} action={op.mcp.action}": op
            for op in operations().values() if op.mcp is not None}


def by_cli_path() -> dict[tuple[str, ...], Operation]:
    """Operations the command line exposes, by command path (``("space", "create")``)."""
    return {command.path: op for op in operations().values() for command in op.commands}
