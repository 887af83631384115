"""The assistant tools: how a tool call (an MCP tool, or the VS Code language-model tool of the same name
through ``mnemon/tool``) becomes an operation and its raw params.

A tool is one operation that declares an :class:`~mnemon_ls.ops.base.McpTool`, or several that share one
tool name and are picked by its ``action`` argument. :func:`tools` builds every :class:`Tool` from the
registry once: its keyword parameters (:meth:`Tool.parameters`: the offered params fields, renamed, narrowed,
with the tool's defaults; for an action tool the union, every one optional but those every action requires)
from which the MCP SDK builds the JSON schema and :meth:`Tool.arguments_model` validates a call; and
:meth:`Tool.resolve`, which picks the operation and maps the arguments to its raw params (``rename``,
``single``, ``fixed``, ``defaults``). The operation's params model then validates the call as on every
surface (:func:`mnemon_ls.ops.execute.parse`).

Imports pydantic and the registry, never the ``mcp`` SDK.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..errors import InvalidInput, type_rule
from .base import Operation


def tool_signature(model: type[BaseModel], only: Sequence[str] | None = None, *,
                   narrow: Mapping[str, Any] | None = None,
                   defaults: Mapping[str, Any] | None = None) -> inspect.Signature:
    """Keyword parameters for the fields ``only`` (default: every field, in model order) of ``model``, each
    ``Annotated[type, *constraints, Field(description=...)]`` with the model's default (or the tool's own, from
    ``defaults``): the field's own constraints (bounds, lengths, pattern, strictness; :func:`_constraints`) go
    with it, so the tool's JSON schema publishes them and its arguments model checks them; a narrowed
    annotation (``narrow``) takes the field's place whole, with its own constraints and description. The limits
    a field publishes for its validator (its ``json_schema_extra``, :func:`mnemon_ls.ops.published.limits`) go
    with it into the schema only. Raises ``KeyError`` for an unknown field name."""
    names = list(only) if only is not None else list(model.model_fields)
    narrow = dict(narrow or {})
    parameters = []
    for name in names:
        field = model.model_fields[name]
        narrowed = name in narrow
        annotation = narrow.pop(name, field.annotation)
        own = narrowed and any(getattr(m, "description", None) for m in typing.get_args(annotation)[1:])
        given: dict[str, Any] = {}  # only what is set: a Field(description=None) would hide a narrowed one's own
        if field.description and not own:
            given["description"] = field.description
        if not narrowed and field.json_schema_extra is not None:
            given["json_schema_extra"] = field.json_schema_extra
        info = Field(**given)
        constraints = () if narrowed else _constraints(field.metadata)
        default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        if defaults and name in defaults:
            default = defaults[name]
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=Annotated[annotation, *constraints, info]))
    if narrow:
        raise KeyError(f"narrowed fields not offered: {sorted(narrow)}")
    return inspect.Signature(parameters, return_annotation=str)


def _constraints(metadata: Sequence[Any]) -> tuple[Any, ...]:
    """The declarative constraints of a field's pydantic ``metadata`` (bounds, lengths, pattern, strictness:
    each an ``annotated_types`` constraint), which a JSON schema states; its validators (functions that may
    raise the project's own errors) are left to the operation's params model."""
    from annotated_types import BaseMetadata

    return tuple(item for item in metadata if isinstance(item, BaseMetadata))


def _required(annotation: Any) -> Any:
    """``annotation`` (an ``Annotated[...]`` or a plain type) without ``None``."""
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation
    args = [a for a in typing.get_args(base) if a is not type(None)]
    return args[0] if typing.get_origin(base) in (typing.Union, types.UnionType) and len(args) == 1 else base


def _optional(annotation: Any) -> Any:
    """``annotation`` (an ``Annotated[...]`` or a plain type) with ``None`` allowed."""
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation
    return base | None


def _metadata(annotation: Any) -> tuple[Any, ...]:
    """The ``Annotated`` metadata of ``annotation`` (``()`` for a plain type; a ``Field()`` at least)."""
    if typing.get_origin(annotation) is Annotated:
        return tuple(annotation.__metadata__)
    return (Field(),)


def operation_parameters(operation: Operation) -> list[inspect.Parameter]:
    """The tool arguments of one ``operation``: its offered fields (:meth:`McpTool.offered`) as keyword
    parameters, renamed (``rename``), narrowed (``narrow``), with the tool's defaults and its required
    arguments (``required``)."""
    spec = operation.mcp
    offered = spec.offered(operation.params)
    signature = tool_signature(operation.params, offered, defaults=spec.defaults,
                               narrow={k: v for k, v in spec.narrow.items() if k in offered})
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.name in spec.required:
            parameter = parameter.replace(default=inspect.Parameter.empty, annotation=Annotated[
                _required(parameter.annotation), *_metadata(parameter.annotation)])
        parameters.append(parameter.replace(name=spec.argument(parameter.name)))
    return parameters


def _raw(operation: Operation, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as the operation's raw params (field names, ``single`` lists, ``fixed`` values)."""
    spec = operation.mcp
    back = {argument: field for field, argument in spec.rename.items()}
    raw = {**spec.fixed, **{back.get(name, name): value for name, value in arguments.items()}}
    for name in spec.single:
        if raw.get(name) is not None:
            raw[name] = [raw[name]]
    return raw


def argument_name(field: str, rename: Mapping[str, str] | None = None) -> str:
    """The tool argument an error's ``field`` names: its head in snake_case (``spaceId`` -> ``space_id``), then
    the tool's own name for it (``rename``: field -> argument); what follows the head names keys inside the
    JSON the caller wrote and keeps their spelling (``merge[0].sourceIndexes``, ``routes[0].spaceId``)."""
    import re

    head, rest = re.match(r"([^.\[]*)(.*)", field, re.S).groups()
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), head)
    return (rename or {}).get(snake, snake) + rest


@dataclass(frozen=True)
class Tool:
    """One assistant tool: ``name``, model-facing ``description``, its operations by ``action`` (``None``
    for a tool of one operation), the ``default_action`` taken when a call names none."""

    name: str
    description: str
    by_action: Mapping[str | None, Operation]
    default_action: str | None = None

    @property
    def effect(self) -> str:
        """``destroy``, ``write`` (one of its operations writes) or ``read``."""
        effects = {op.effect for op in self.by_action.values()}
        return "destroy" if effects == {"destroy"} else "write" if effects - {"read"} else "read"

    def available(self, write_enabled: bool) -> bool:
        """Whether the tool is offered (a tool whose every operation writes is not, when writes are off)."""
        return write_enabled or any(not op.writes for op in self.by_action.values())

    @functools.cached_property
    def _declared_defaults(self) -> dict[str, Any]:
        """Each parameter's declared default by name (``inspect.Parameter.empty`` for a required one): built once,
        read by every :meth:`resolve`."""
        return {p.name: p.default for p in self.parameters}

    @functools.cached_property
    def parameters(self) -> tuple[inspect.Parameter, ...]:
        """The tool's keyword parameters (module doc); ``workspace`` last."""
        if None in self.by_action:
            return tuple(operation_parameters(self.by_action[None]))
        operations = list(self.by_action.values())
        default = self.default_action if self.default_action is not None else inspect.Parameter.empty
        found = [inspect.Parameter("action", inspect.Parameter.KEYWORD_ONLY, default=default,
                                   annotation=Annotated[Literal[tuple(self.by_action)], Field()])]  # type: ignore[misc]
        seen = {"action"}
        each = [{p.name for p in operation_parameters(op) if p.default is inspect.Parameter.empty} for op in operations]
        always = set.intersection(*each)  # required by every action: required by the tool
        for operation in operations:
            for parameter in operation_parameters(operation):
                if parameter.name in seen:
                    continue
                seen.add(parameter.name)
                optional = parameter if parameter.default is not inspect.Parameter.empty or parameter.name in always \
                    else parameter.replace(
                    default=None,
                    annotation=Annotated[_optional(parameter.annotation), *_metadata(parameter.annotation)])
                found.append(optional)
        found.sort(key=lambda parameter: parameter.name == "workspace")  # the workspace last, as every tool has it
        return tuple(found)

    @functools.cached_property
    def arguments_model(self) -> type[BaseModel]:
        """A pydantic model of the arguments (strict JSON types, unknown arguments refused), as the MCP
        server validates a call: for ``mnemon/tool``, which has no SDK in front of it."""
        fields: dict[str, Any] = {}
        for parameter in self.parameters:
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (parameter.annotation, default)
        return create_model(f"{self.name}Arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """``arguments`` checked with :attr:`arguments_model`: the given ones (defaults not added). Raises
        :class:`InvalidInput` naming ``arguments.<name>``."""
        from pydantic import ValidationError

        from .base import invalid_input_from

        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidInput("arguments", type_rule("an object", arguments))
        try:
            checked = self.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            raise invalid_input_from(exc, "arguments.", model=self.arguments_model) from None
        return {name: getattr(checked, name) for name in arguments}

    def resolve(self, arguments: Mapping[str, Any], *, write_enabled: bool = True) -> tuple[Operation, dict[str, Any]]:
        """The operation a call runs and its raw params. ``arguments`` are the tool's (already type-checked);
        ``None`` values of an action tool count as not given, and so do values equal to a parameter's declared
        default (the SDK fills those in). Raises :class:`InvalidInput` (``action`` disabled in read-only mode; an
        argument the chosen action requires is missing; one that only another action takes is given)."""
        if None in self.by_action:
            operation = self.by_action[None]
            return operation, _raw(operation, arguments)
        arguments = dict(arguments)
        action = arguments.pop("action", self.default_action)
        operation = self.by_action[action]
        if operation.writes and not write_enabled:
            readable = ", ".join(a for a, op in self.by_action.items() if not op.writes)
            raise InvalidInput("action", f"{action} is disabled in read-only mode (mnemon-ls mcp --read-only); "
                                         f"available: {readable}")
        spec = operation.mcp
        offered = {spec.argument(name) for name in spec.offered(operation.params)}
        given = {k: v for k, v in arguments.items() if k in offered and v is not None}
        defaults = self._declared_defaults
        ignored = sorted(k for k, v in arguments.items() if k not in offered and v is not None
                         and not (k in defaults and v == defaults[k]))  # the SDK fills in declared defaults
        if ignored:  # another action's argument would be dropped silently (action=get with a revision)
            raise InvalidInput(ignored[0], f"is not an argument of action={action} (it takes "
                                           f"{', '.join(['action', *sorted(offered)])})")
        for field_name, info in operation.params.model_fields.items():
            name = spec.argument(field_name)
            if (info.is_required() or field_name in spec.required) and name in offered and name not in given:
                raise InvalidInput(name, f"is required for action={action}")
        return operation, {**spec.defaults, **_raw(operation, given)}


@functools.cache
def tools() -> dict[str, Tool]:
    """Every tool by name, in registry order (an action tool where its first operation stands)."""
    from .registry import by_mcp_tool

    grouped: dict[str, list[Operation]] = {}
    for operation in by_mcp_tool().values():
        grouped.setdefault(operation.mcp.name, []).append(operation)
    found: dict[str, Tool] = {}
    for name, operations in grouped.items():
        if len(operations) == 1 and operations[0].mcp.action is None:
            found[name] = Tool(name, operations[0].mcp.description, {None: operations[0]})
            continue
        # the action whose operation describes the tool first, the others in registry order
        operations = sorted(operations, key=lambda op: not op.mcp.description)
        default = next((op.mcp.action for op in operations if op.mcp.default_action), None)
        description = next(op.mcp.description for op in operations if op.mcp.description)
        found[name] = Tool(name, description, {op.mcp.action: op for op in operations}, default)
    return found
