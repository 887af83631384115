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

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidInput, json_type_name
from .surfaces import Call, CliArg, CliCommand, Effect, LspCommand, LspMethod, McpTool, Operation, Surface

__all__ = ["Call", "CliArg", "CliCommand", "Effect", "LspCommand", "LspMethod", "McpTool", "Operation", "Params",
           "Surface", "WorkspaceParams", "field_path", "invalid_input_from", "parse_params",
           "validation_problems"]


# ------------------------------------------------------------------ params


class Params(BaseModel):
    """Base of every params model: unknown fields are refused; flags are ``StrictBool`` (only JSON ``true``
    and ``false``: the string ``"false"`` or the number ``0`` is ``invalid-input`` naming the field with the
    rule ``input should be a valid boolean, not a string``, never taken as a flag value). Populated by alias (the LSP
    wire's camelCase) or by name (MCP arguments and Python's snake_case)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, defer_build=True)


class WorkspaceParams(Params):
    """``{workspace?: folder URI, file URI or absolute path}``; optional when exactly one folder is open."""

    workspace: str | None = Field(None, description="The workspace (a directory path, folder URI or file URI) when "
                                                    "there are several; omit it otherwise.")


#: pydantic's rule words that name a Python type, and the JSON words a client knows.
_JSON_WORDS = (("a valid dictionary", "an object"), ("a valid list", "an array"))


#: pydantic's words naming the Python class a field's model is (``or instance of CiteParam``).
_CLASS_WORDS = re.compile(r" or instance of [A-Za-z_][A-Za-z0-9_.]*")


def _article(name: str) -> str:
    return name if name == "null" else (f"an {name}" if name[0] in "aeiou" else f"a {name}")


def field_path(loc: Any, prefix: str = "") -> str:
    """A pydantic error location as the project names a field: ``cites[0].startLine``, ``tags[2]``
    (``prefix`` before it, e.g. ``arguments.``); ``""`` for an empty location."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return prefix + path if path else ""


def validation_problems(error: ValidationError, prefix: str = "", whole: str | None = None) -> list[tuple[str, str]]:
    """``[(field, rule)]`` of a pydantic ``ValidationError``, in field order: the one wording of every surface
    (the command line, the language server, MCP). The field is a path (:func:`field_path`:
    ``cites[0].startLine``, ``prefix`` before it; the empty location is ``whole``, else ``prefix`` without its
    dot, or ``params``); the rule is in words that start lower-case, never echo the rejected value (it may be
    megabytes), name JSON's types (``an object``, ``an array``) and, when the type is wrong, the JSON type that
    was sent (``input should be a valid integer, not a string``; ``input should be 'user' or 'memory'`` for a
    string that is none of them); an unknown field ``is not a known field``, a missing one ``is required``."""
    problems: list[tuple[str, str]] = []
    for item in error.errors():
        field = field_path(item.get("loc", ()), prefix) or whole or prefix.rstrip(".") or "params"
        kind = str(item.get("type", ""))
        if kind == "missing":
            problems.append((field, "is required"))
            continue
        if kind == "extra_forbidden":
            problems.append((field, "is not a known field"))
            continue
        message = str(item.get("msg", "is invalid")).removeprefix("Value error, ")
        rule = message[:1].lower() + message[1:]
        for python, wire in _JSON_WORDS:
            rule = rule.replace(python, wire)
        rule = _CLASS_WORDS.sub("", rule)  # "an object or instance of CiteParam": a Python class, not a JSON type
        sent = item.get("input")
        if kind.endswith("_type") or (kind in ("literal_error", "enum") and not isinstance(sent, str)):
            rule += f", not {_article(json_type_name(sent))}"  # a string not among the choices: the choices say it
        problems.append((field, rule))
    return problems


def invalid_input_from(error: ValidationError, prefix: str = "") -> InvalidInput:
    """The first problem of a pydantic ``ValidationError`` (:func:`validation_problems`) as
    :class:`InvalidInput`: ``cites[0].startLine: input should be greater than or equal to 1``."""
    return InvalidInput(*validation_problems(error, prefix)[0])


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
