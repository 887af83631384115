"""What an operation is: the one declaration every surface binds (:class:`Operation`), and the params base.

An operation is something a person or an assistant can invoke: ``recall``, ``remember``, ``spaces.create``.
It is declared once, in the ops module of its tier (``mnemon_ls/ops/spaces.py`` ...), as an
:class:`Operation`:

- ``name``: the registry key, ``<tier>.<verb>`` (``spaces.recall``);
- ``params``: a pydantic model (:class:`Params`): the one place for field names (camelCase aliases on the
  LSP wire, snake_case for MCP arguments and Python), bounds, defaults and strictness;
- ``run(call, p)``: the Host call (``call.host`` is a :class:`~mnemon_ls.host.WorkspaceHost`); returns the
  result as JSON data (a dict, or a list for listings);
- ``effect``: ``read``, ``write`` or ``destroy`` (MCP tool annotations, ``--read-only``);
- ``text``: the model-facing text of a result (MCP tools, the VS Code language-model tools);
- ``lsp`` / ``lsp_command`` / ``mcp`` / ``cli``: which surfaces expose it and how (:class:`LspMethod`,
  :class:`LspCommand`, :class:`McpTool`, :class:`CliCommand`).

:mod:`mnemon_ls.ops.execute` runs every operation for every surface (``parse``, ``call``, ``execute_async``); the surfaces
(``lsp/``, ``mcp/``, ``cli``) bind :data:`mnemon_ls.ops.registry` in a loop and declare no handler,
params model or error mapping of their own. This module imports pydantic and nothing of the project
above :mod:`mnemon_ls.errors`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidInput
from .surfaces import Call, CliArg, CliCommand, Effect, LspCommand, LspMethod, McpTool, Operation, Surface

__all__ = ["Call", "CliArg", "CliCommand", "Effect", "LspCommand", "LspMethod", "McpTool", "Operation", "Params",
           "Surface", "WorkspaceParams", "invalid_input_from", "parse_params"]


# ------------------------------------------------------------------ params


class Params(BaseModel):
    """Base of every params model: unknown fields are refused; flags are ``StrictBool`` (only JSON ``true``
    and ``false``: the string ``"false"`` or the number ``0`` is ``invalid-input`` naming the field with the
    rule ``Input should be a valid boolean``, never taken as a flag value). Populated by alias (the LSP
    wire's camelCase) or by name (MCP arguments and Python's snake_case)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, defer_build=True)


class WorkspaceParams(Params):
    """``{workspace?: folder URI, file URI or absolute path}``; optional when exactly one folder is open."""

    workspace: str | None = Field(None, description="The workspace (a directory path, folder URI or file URI) when "
                                                    "there are several; omit it otherwise.")


def invalid_input_from(error: ValidationError, prefix: str = "") -> InvalidInput:
    """The first problem of a pydantic ``ValidationError`` as :class:`InvalidInput` (dotted camelCase field)."""
    first = error.errors()[0]
    name = prefix + ".".join(str(p) for p in first["loc"]) if first["loc"] else (prefix.rstrip(".") or "params")
    rule = "is not a known field" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
    return InvalidInput(name, rule)


def parse_params(model: type[BaseModel], params: Any) -> Any:
    """Validate raw ``params`` (a dict or None) with ``model``; raises :class:`InvalidInput` naming the field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidInput("params", "must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise invalid_input_from(exc) from None
