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

:mod:`mnemon_ls.ops.execute` runs every operation for every surface (``parse``, ``call``, ``execute_async``); the
surfaces (``lsp/``, ``mcp/``, ``cli``) bind :data:`mnemon_ls.ops.registry` in a loop and declare no handler, params
model or error mapping of their own. This module imports pydantic and nothing of the project above
:mod:`mnemon_ls.errors`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidInput, not_a_choice, not_sent, range_rule, type_rule
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


#: pydantic's error types of a number out of its bounds, and the bound each names in its ``ctx``.
_BOUND_KINDS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def _bound_rule(item: Any, model: Any) -> str:
    """:func:`~mnemon_ls.errors.range_rule` of one pydantic bound error: both bounds from the field's constraints in
    ``model`` (found by the error's location), else the one bound the error names."""
    ctx = item.get("ctx") or {}
    info = _field_info(model, item.get("loc", ()))
    bounds = _bounds(info)
    if not bounds:
        key = _BOUND_KINDS[str(item.get("type"))]
        bounds = {key: ctx.get(key)}
    sent = item.get("input")
    floats = isinstance(sent, float) or (info is not None and float in _leaves(info.annotation))
    return range_rule("number" if floats else "integer", bounds, sent)


def _bounds(info: Any) -> dict[str, Any]:
    """The ``ge``/``gt``/``le``/``lt`` constraints of a pydantic ``FieldInfo`` (``{}`` for ``None`` or none)."""
    return {key: getattr(meta, key) for meta in (info.metadata if info is not None else ())
            for key in ("ge", "gt", "le", "lt") if getattr(meta, key, None) is not None}


def _huge_number_rule(item: Any, model: Any) -> str:
    """A JSON integer too large for a number field (``10**400`` has no float): the field's range
    (:func:`~mnemon_ls.errors.range_rule`), else the range a float holds."""
    import sys

    limit = f"{sys.float_info.max:.4g}"
    bounds = _bounds(_field_info(model, item.get("loc", ()))) or {"ge": f"-{limit}", "le": limit}
    return range_rule("number", bounds, item.get("input"))


def _leaves(annotation: Any) -> list[Any]:
    """The types an annotation holds: ``int | None`` -> ``[int, NoneType]``; ``list[Cite] | None`` ->
    ``[Cite, NoneType]``; ``Annotated[...]`` unwrapped."""
    import typing

    args = typing.get_args(annotation)
    if not args:
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:
        return _leaves(args[0])
    return [leaf for arg in args for leaf in _leaves(arg)]


def _field_info(model: Any, loc: Any) -> Any:
    """The pydantic ``FieldInfo`` an error location names in ``model`` (by field name or alias, through nested
    models and lists), or ``None``."""
    info = None
    current = [model]
    for part in loc:
        if isinstance(part, int):
            continue
        models = [m for m in current if isinstance(m, type) and issubclass(m, BaseModel)]
        info = next((f for m in models for name, f in m.model_fields.items() if part in (name, f.alias)), None)
        if info is None:
            return None
        current = _leaves(info.annotation)
    return info


def _wire_loc(model: Any, loc: Any) -> tuple[Any, ...]:
    """A pydantic error location with each field named as the wire names it (its alias: ``documentRevision``), as
    the error names it however the params were populated (the command line and MCP give Python names,
    ``document_revision``, and pydantic's location repeats the key given). Parts ``model`` (a pydantic model; nested
    models and lists followed) does not know are kept; ``model`` ``None``: ``loc`` unchanged."""
    if model is None:
        return tuple(loc)
    named: list[Any] = []
    current = [model]
    for part in loc:
        models = [m for m in current if isinstance(m, type) and issubclass(m, BaseModel)]
        found = None if isinstance(part, int) else next(
            ((name, f) for m in models for name, f in m.model_fields.items() if part in (name, f.alias)), None)
        if found is not None:
            named.append(found[1].alias or found[0])
            current = _leaves(found[1].annotation)
        else:
            named.append(part)
            current = current if isinstance(part, int) else []
    return tuple(named)


def field_path(loc: Any, prefix: str = "") -> str:
    """A pydantic error location as the project names a field: ``cites[0].startLine``, ``tags[2]``
    (``prefix`` before it, e.g. ``arguments.``); ``""`` for an empty location."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return prefix + path if path else ""


def validation_problems(error: ValidationError, prefix: str = "", whole: str | None = None,
                        model: Any = None) -> list[tuple[str, str]]:
    """``[(field, rule)]`` of a pydantic ``ValidationError``, in field order: the one wording of every surface
    (the command line, the language server, MCP). The field is a path (:func:`field_path`:
    ``cites[0].startLine``, ``prefix`` before it; the empty location is ``whole``, else ``prefix`` without its
    dot, or ``params``); the rule is in words that start lower-case, never echo the whole rejected value (it may
    be megabytes), name JSON's types (``an object``, ``an array``) and, when the type is wrong, the JSON type and
    the start of the value that was sent (:func:`mnemon_ls.errors.not_sent`: ``input should be a valid integer,
    not a string (got 'ten')``; ``input should be 'user' or 'memory' (got 'x')`` for a string that is none of them:
    :func:`mnemon_ls.errors.not_a_choice`); an
    unknown field ``is not a known field``, a missing one ``is required``. With ``model`` a field is named by its
    alias however the params were populated (:func:`_wire_loc`: ``documentRevision``, not ``document_revision``).
    A number out of its range is worded as every range check of the project words it, with the number sent
    (short; :func:`mnemon_ls.errors.range_rule`): ``must be an integer in 1..50 (got 0)``, both bounds from the field's
    constraints when ``model`` (the pydantic model validated) is given, else the bound it broke
    (``must be an integer >= 1 (got 0)``); so is an integer too large for a number field (``10**400`` for a
    weight: ``must be a number in 0..1 (got 1000...)``)."""
    problems: list[tuple[str, str]] = []
    for item in error.errors():
        field = field_path(_wire_loc(model, item.get("loc", ())), prefix) or whole or prefix.rstrip(".") or "params"
        kind = str(item.get("type", ""))
        if kind == "missing":
            problems.append((field, "is required"))
            continue
        if kind == "extra_forbidden":
            problems.append((field, "is not a known field"))
            continue
        if kind in _BOUND_KINDS:
            problems.append((field, _bound_rule(item, model)))
            continue
        sent = item.get("input")
        if kind == "float_type" and isinstance(sent, int) and not isinstance(sent, bool):  # past a float's range
            problems.append((field, _huge_number_rule(item, model)))
            continue
        message = str(item.get("msg", "is invalid")).removeprefix("Value error, ")
        rule = message[:1].lower() + message[1:]
        for python, wire in _JSON_WORDS:
            rule = rule.replace(python, wire)
        rule = _CLASS_WORDS.sub("", rule)  # "an object or instance of CiteParam": a Python class, not a JSON type
        if kind in ("literal_error", "enum"):
            rule += not_a_choice(sent)  # none of the choices: what came, a string shown as sent
        elif kind.endswith("_type"):
            rule += not_sent(sent)
        problems.append((field, rule))
    return problems


def invalid_input_from(error: ValidationError, prefix: str = "", model: Any = None) -> InvalidInput:
    """The first problem of a pydantic ``ValidationError`` (:func:`validation_problems`; ``model`` the model
    validated, for a range's both bounds) as :class:`InvalidInput`: ``cites[0].startLine: must be an integer
    >= 1 (got 0)``; a number out of its range also carries it as ``value`` (``data.value``: ``0``), as every range
    check of a number does, when JSON holds it exactly (an integer within 2**53, a finite float)."""
    import math

    first = error.errors()[0]
    sent = first.get("input")
    number = str(first.get("type")) in _BOUND_KINDS and not isinstance(sent, bool) and (
        (isinstance(sent, int) and abs(sent) <= 2**53) or (isinstance(sent, float) and math.isfinite(sent)))
    return InvalidInput(*validation_problems(error, prefix, model=model)[0], **({"value": sent} if number else {}))


def parse_params(model: type[BaseModel], params: Any) -> Any:
    """Validate raw ``params`` (a dict or None) with ``model``; raises :class:`InvalidInput` naming the field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidInput("params", type_rule("an object", params))
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise invalid_input_from(exc, model=model) from None
