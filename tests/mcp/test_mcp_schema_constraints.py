"""Every argument the real ``mnemon-ls mcp`` publishes carries the constraints of the params field behind it
(bounds, lengths, pattern, choices), so a model reads the same rule the operation enforces: an action tool
(``mnemon_citations``' ``line``, made optional when the tools' actions were merged) published ``line`` with no
``minimum``/``maximum`` and ``key`` with no lengths, while the operation refused ``0`` and ``10**9 + 1``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemon_ls.citations.model import MAX_LINE
from mnemon_ls.ops.tools import tools
from tests.mcp.conftest import mcp_session, text
from tests.mcp.test_mcp_server import args_for

#: The JSON schema keywords that constrain a value (the type aside).
CONSTRAINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
               "pattern", "format", "enum", "const", "minItems", "maxItems", "uniqueItems")


def _typed(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional value's schema (``anyOf`` of one typed schema and null) as the typed schema."""
    variants = [v for v in schema.get("anyOf", ()) if v != {"type": "null"}]
    return variants[0] if len(variants) == 1 else schema


def constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """The constraining keywords of ``schema`` (an optional one's typed branch), an array's items' under
    ``items``."""
    typed = _typed(schema)
    found = {key: typed[key] for key in CONSTRAINTS if key in typed}
    if isinstance(typed.get("items"), dict):
        found["items"] = constraints(typed["items"])
    return found


def expected_constraints() -> dict[str, dict[str, list[tuple[str, dict[str, Any]]]]]:
    """tool -> argument -> ``[(operation, constraints of its params field)]``, for every argument an
    operation offers as its params model declares it (narrowed fields, the tool's own declaration, left out)."""
    found: dict[str, dict[str, list[tuple[str, dict[str, Any]]]]] = {}
    for name, tool in tools().items():
        for operation in tool.by_action.values():
            spec = operation.mcp
            properties = operation.params.model_json_schema(by_alias=True)["properties"]
            for field_name in spec.offered(operation.params):
                if field_name in spec.narrow:
                    continue
                info = operation.params.model_fields[field_name]
                field_schema = properties[info.alias or field_name]
                found.setdefault(name, {}).setdefault(spec.argument(field_name), []).append(
                    (operation.name, constraints(field_schema)))
    return found


async def test_every_published_argument_carries_its_fields_constraints(workspace: Path, data_dir: Path) -> None:
    async with mcp_session(args_for(workspace, data_dir)) as session:
        published = {t.name: t.input_schema for t in (await session.list_tools()).tools}
        (workspace / "f.py").write_text("print(1)\n", encoding="utf-8")
        refused = [await session.call_tool("mnemon_citations", {"action": "file", "path": "f.py", "line": line})
                   for line in (0, MAX_LINE + 1)]
    expected = expected_constraints()
    assert set(published) == set(expected)
    checked = 0
    for name, arguments in expected.items():
        properties = published[name]["properties"]
        for argument, fields in arguments.items():
            for operation, wanted in fields:
                assert constraints(properties[argument]) == wanted, (name, argument, operation)
                checked += 1
    assert checked > 40
    line = constraints(published["mnemon_citations"]["properties"]["line"])
    assert line == {"minimum": 1, "maximum": MAX_LINE}
    key = constraints(published["mnemon_citations"]["properties"]["key"])
    assert key == {"minLength": 1, "maxLength": 4200}
    for result, line in zip(refused, (0, MAX_LINE + 1)):
        assert result.is_error and text(result) == ("Error executing tool mnemon_citations: invalid-input: line: "
                                                     f"must be an integer in 1..{MAX_LINE} (got {line})"), text(result)
