"""The registry of operations: every :class:`~mnemon_ls.ops.base.Operation` of every tier module.

A tier module of :mod:`mnemon_ls.ops` (``spaces.py``, ``runtime.py`` ...) lists its operations in a
module-level ``OPERATIONS`` tuple; :func:`operations` imports every module of the package that has one
(found by name, so adding an operation to a tier, or a tier file, is all it takes to reach every surface)
and checks the declarations against each other once: names, LSP methods, MCP tool names and CLI command
paths are each unique, every field a surface exposes exists in the params model, and an LSP method's own
params model extends the operation's.

Loading imports pydantic and the tier modules (not the Sources: operations import them when they run), so
the language server loads it after answering ``initialize``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Iterable

from .base import Operation

#: Modules of the package that hold machinery, not operations.
_MACHINERY = frozenset({"base", "errors", "execute", "registry", "modeltext", "humantext", "tools",
                        "surfaces", "wake", "client"})


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
    return found


def _check(declared: Iterable[Operation]) -> None:
    seen: dict[tuple[str, object], str] = {}
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
        for command in operation.commands:
            keys.append(("CLI command", command.path))
            for arg in command.args:
                if arg.field not in fields:
                    raise ValueError(f"{operation.name}: CLI field {arg.field} is not in {operation.params.__name__}")
        for key in keys:
            if key in seen:
                raise ValueError(f"{key[0]} {key[1]} is bound by {seen[key]} and {operation.name}")
            seen[key] = operation.name


def by_lsp_method() -> dict[str, Operation]:
    """Operations the language server exposes, by ``mnemon/*`` method."""
    return {op.lsp.method: op for op in operations().values() if op.lsp is not None}


def by_mcp_tool() -> dict[str, Operation]:
    """Operations the MCP server exposes, by tool name (``<tool> action=<action>`` for the operations that
    share one tool through its ``action`` argument)."""
    return {op.mcp.name if op.mcp.action is None else f"{op.mcp.name} action={op.mcp.action}": op
            for op in operations().values() if op.mcp is not None}


def by_cli_path() -> dict[tuple[str, ...], Operation]:
    """Operations the command line exposes, by command path (``("space", "create")``)."""
    return {command.path: op for op in operations().values() for command in op.commands}
