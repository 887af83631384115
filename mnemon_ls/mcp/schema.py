"""One schema per operation: an MCP tool's arguments built from the language server's params model.

The ``mnemon/*`` params models (:mod:`mnemon_ls.lsp.params`, pydantic, camelCase aliases on the LSP wire)
are the one definition of an operation's arguments: names, types, defaults and descriptions. A tool that
takes the same arguments declares ``params=<Model>`` and the subset it offers; :func:`tool_signature` turns
the model's fields into the keyword parameters the SDK builds the tool's JSON schema from (snake_case
field names, as MCP tools name arguments), and :func:`parse_arguments` validates a call's arguments with
the model itself, so both adapters refuse the same values. MCP arguments are first checked strictly as JSON
(:mod:`.arguments`: no ``"5"`` for an integer, no ``true`` for one, unknown arguments refused).

``narrow`` replaces a field's annotation for the tool only where the model's type is wider than a model
should be offered (a closed list of edge types, a lower result cap); the model still validates the call.
"""

from __future__ import annotations

import inspect
import typing
from typing import Annotated, Any, Mapping, Sequence

from pydantic import BaseModel, Field

from ..ops.base import invalid_input_from


def tool_signature(model: type[BaseModel], only: Sequence[str] | None = None, *,
                   narrow: Mapping[str, Any] | None = None, context: Any = None,
                   defaults: Mapping[str, Any] | None = None) -> inspect.Signature:
    """Keyword parameters for the fields ``only`` (default: every field, in model order) of ``model``,
    each ``Annotated[type, Field(description=...)]`` with the model's default (or the tool's own, from
    ``defaults``), then ``ctx: context`` (the SDK's ``Context`` class, so the SDK injects it). Raises
    ``KeyError`` for an unknown field name."""
    names = list(only) if only is not None else list(model.model_fields)
    narrow = dict(narrow or {})
    parameters = []
    for name in names:
        field = model.model_fields[name]
        narrowed = name in narrow
        annotation = narrow.pop(name, field.annotation)
        own = narrowed and any(getattr(m, "description", None) for m in typing.get_args(annotation)[1:])
        info = Field(description=field.description) if field.description and not own else Field()
        default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        if defaults and name in defaults:
            default = defaults[name]
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=Annotated[annotation, info]))
    if narrow:
        raise KeyError(f"narrowed fields not offered: {sorted(narrow)}")
    if context is not None:
        parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=context | None))
    return inspect.Signature(parameters, return_annotation=str)


def parse_arguments(model: type[BaseModel], arguments: Mapping[str, Any]) -> Any:
    """``model`` validated from a tool call's ``arguments`` (snake_case names); raises
    :class:`~mnemon_ls.errors.InvalidInput` naming the field, like :func:`mnemon_ls.lsp.params.parse_params`."""
    from pydantic import ValidationError

    try:
        return model.model_validate(dict(arguments))
    except ValidationError as exc:
        raise invalid_input_from(exc) from None
