"""Strict checking of MCP requests and tool arguments, in the project's words (``field: rule``).

Two layers, following the MCP specification (2025-11-25, "Tools / Error Handling", SEP-1303):

- **Protocol errors** (a JSON-RPC error, code ``-32602`` Invalid params): a request whose params do not fit
  the method's own schema (``tools/call`` without a string ``name``, ``arguments`` that is not an object,
  a ``tools/list`` cursor that is a number, ...) and a call of a tool this server does not offer
  (``Unknown tool: <name>``), an unknown prompt likewise. The message names the field:
  ``Invalid params: name: input should be a valid string``.
- **Tool execution errors** (a ``CallToolResult`` with ``isError: true``, so the model reads them and
  corrects the call): arguments that do not fit the tool's input schema. The text is
  ``Error executing tool <name>: invalid-input: <field>: <rule>[; <field>: <rule>...]``, every problem of
  the call, never the rejected value (it may be megabytes).

Arguments are checked *strictly*, as JSON: no string becomes a number (``"5"`` for ``limit``), no boolean a
number (``true`` is not ``1``), no number a boolean, no fraction an integer (``3.0`` is ``3``, as JSON
means it; ``3.5`` is refused: ``must be an integer (got 3.5)``), no ``null`` where the published type does
not take it (``must be a string, not null``: an optional argument is left out), and no string is
parsed as JSON (the SDK's ``pre_parse_json`` turned the text ``[1, 2]`` or ``null`` into a list or
``None``, so such a Runtime entry or Document text was refused or lost). An argument the tool does not
take is refused naming it. Nothing reaches a tool function, so a refused call changes nothing on disk.

The SDK (``mcp`` 2.3.0) validates a call with each tool's ``fn_metadata`` (lax pydantic, after
``pre_parse_json``): :func:`make_strict` replaces that by :class:`StrictMetadata`, and the
:class:`StrictArguments` server middleware (it runs before the SDK parses the request) answers every
error above before the SDK sees the call.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

from ..errors import InvalidInput, type_rule
from ..ops.base import validation_problems
from ..ops.jsonargs import read_arguments

#: Longest tool error text, characters (a rejected 10 MB value is never echoed back whole).
ERROR_TEXT_LIMIT = 2000
#: Most problems listed in one argument error.
MAX_PROBLEMS = 8

def bounded_error(text: str) -> str:
    """``text`` cut to :data:`ERROR_TEXT_LIMIT` characters, saying how much was cut."""
    if len(text) <= ERROR_TEXT_LIMIT:
        return text
    return f"{text[:ERROR_TEXT_LIMIT]}... ({len(text) - ERROR_TEXT_LIMIT} characters cut)"


def argument_problems(error: ValidationError, model: Any = None) -> list[tuple[str, str]]:
    """``[(field, rule)]`` of a pydantic ``ValidationError`` of tool arguments, in the wording of every surface
    (:func:`mnemon_ls.ops.base.validation_problems`; ``model`` the arguments model, for a range's both
    bounds): ``tags[2]: input should be a valid string, not an integer``, ``limit: must be an integer in 1..12
    (got 0)``; the empty location is ``arguments``."""
    return validation_problems(error, whole="arguments", model=model)


def argument_problem(error: ValidationError, model: Any = None) -> tuple[str, str]:
    """The first ``(field, rule)`` of :func:`argument_problems`."""
    return argument_problems(error, model)[0]


def problems_text(problems: list[tuple[str, str]]) -> str:
    """``field: rule; field: rule`` (at most :data:`MAX_PROBLEMS`, then how many more)."""
    shown = "; ".join(f"{field}: {rule}" for field, rule in problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


class StrictMetadata(FuncMetadata):
    """A tool's ``fn_metadata`` that validates arguments strictly as JSON (module docstring): no
    ``pre_parse_json`` (a string argument stays the string sent) and pydantic ``strict`` mode, after the
    arguments are read as the ``published`` input schema says (:func:`mnemon_ls.ops.jsonargs.read_arguments`:
    ``1.0`` for an integer is ``1``; ``1.5`` and a ``null`` the schema's type does not take raise
    :class:`~mnemon_ls.errors.InvalidInput` naming the argument)."""

    published: dict[str, Any] | None = None

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:  # noqa: D102 - SDK hook
        return dict(data)

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:  # noqa: D102
        arguments = dict(arguments_to_validate)
        if self.published is not None:
            arguments = read_arguments(arguments, self.published)
        model = self.arg_model.model_validate(arguments, strict=True)
        return model.model_dump_one_level()


def make_strict(tool: Any) -> None:
    """Give the SDK ``Tool`` strict argument validation (:class:`StrictMetadata`) and an input schema that
    says so (``additionalProperties: false``: an unknown argument is refused)."""
    metadata = tool.fn_metadata
    schema = {**tool.parameters, "additionalProperties": False}
    schema["properties"] = {name: plain_optional(prop) for name, prop in schema.get("properties", {}).items()}
    tool.parameters = schema
    tool.fn_metadata = StrictMetadata(arg_model=metadata.arg_model, output_schema=metadata.output_schema,
                                      output_model=metadata.output_model, wrap_output=metadata.wrap_output,
                                      published=schema)


def plain_optional(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema ``{"anyOf": [<one typed schema>, {"type": "null"}], ...}`` as the typed
    schema itself (the argument may still be left out, and an explicit ``null`` counts as left out:
    :class:`StrictMetadata`). Clients that
    convert typed text by the schema's top-level ``type`` (the MCP Inspector's ``--tool-arg limit=3``, which
    sent the string ``"3"`` for an ``anyOf``) then send a number, a boolean or JSON. Other schemas unchanged."""
    variants = schema.get("anyOf")
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return schema
    typed = next(v for v in variants if v != {"type": "null"})
    if "type" not in typed:
        return schema
    return {**{k: v for k, v in schema.items() if k != "anyOf"}, **typed}


def invalid_params(problems: list[tuple[str, str]]) -> MCPError:
    """A ``-32602`` protocol error ``Invalid params: field: rule; ...``."""
    return MCPError(INVALID_PARAMS, bounded_error(f"Invalid params: {problems_text(problems)}"))


class StrictArguments:
    """Server middleware answering malformed requests and bad tool arguments (module docstring).

    ``allowed`` maps tool name -> argument names (filled as tools are registered); ``tools`` looks an SDK
    ``Tool`` up by name; ``params_type`` gives the SDK's params model of a request method (``None``: not
    served); ``prompts`` says whether a prompt name is served; ``prepare`` runs before every request but
    ``initialize`` and ``ping`` (the server registers its tools then, :meth:`MnemonMcp.register`).
    """

    def __init__(self, allowed: dict[str, frozenset[str]], tools: Callable[[str], Any] | None = None,
                 params_type: Callable[[str], Any] | None = None,
                 prompts: Callable[[str], bool] | None = None, prepare: Callable[[], None] | None = None) -> None:
        self.allowed = allowed
        self.tools = tools
        self.params_type = params_type
        self.prompts = prompts
        self.prepare = prepare

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:  # noqa: D102 - SDK hook
        if getattr(ctx, "request_id", None) is None:  # a notification: never answered
            return await call_next(ctx)
        if self.prepare is not None and ctx.method not in ("initialize", "ping"):
            self.prepare()
        params = ctx.params
        self._check_request(ctx.method, params)
        name = params.get("name") if isinstance(params, Mapping) else None
        if ctx.method == "tools/call" and isinstance(name, str):
            answer = self._check_call(name, params.get("arguments"))  # type: ignore[union-attr]
            if answer is not None:
                return answer
        if ctx.method == "prompts/get" and isinstance(name, str) and self.prompts is not None:
            if not self.prompts(name):
                raise MCPError(INVALID_PARAMS, bounded_error(f"Unknown prompt: {name}"))
        return await call_next(ctx)

    def _check_request(self, method: str, params: Any) -> None:
        """Raise ``-32602`` naming the field when ``params`` does not fit ``method``'s params model."""
        model = self.params_type(method) if self.params_type is not None else None
        if model is None:
            return
        if params is not None and not isinstance(params, Mapping):
            raise invalid_params([("params", type_rule("an object", params))])
        try:
            model.model_validate({} if params is None else dict(params), by_name=False)
        except ValidationError as exc:
            raise invalid_params(argument_problems(exc, model)) from None

    def _check_call(self, name: str, arguments: Mapping[str, Any] | None) -> CallToolResult | None:
        names = self.allowed.get(name)
        tool = self.tools(name) if self.tools is not None else None
        if names is None or tool is None:
            raise MCPError(INVALID_PARAMS, bounded_error(f"Unknown tool: {name}"))
        arguments = dict(arguments or {})
        extra = sorted(str(key) for key in arguments if key not in names)
        if extra:
            verb = "is not an argument" if len(extra) == 1 else "are not arguments"
            return self._error(name, f"invalid-input: {', '.join(extra)}: {verb} of {name} "
                                     f"(it takes {', '.join(sorted(names))})")
        try:
            tool.fn_metadata.validate_arguments(arguments)
        except InvalidInput as exc:
            return self._error(name, f"invalid-input: {exc.field}: {exc.rule}")
        except ValidationError as exc:
            problems = argument_problems(exc, tool.fn_metadata.arg_model)
            return self._error(name, f"invalid-input: {problems_text(problems)}")
        return None

    @staticmethod
    def _error(name: str, text: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=bounded_error(
            f"Error executing tool {name}: {text}"))], is_error=True)
