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


#: The limits the validators enforce, as the real server publishes them (tool -> argument -> constraints).
VALIDATOR_LIMITS = {
    "mnemon_document_create": {"title": {"maxLength": 160}, "description": {"maxLength": 600},
                               "cites": {"maxItems": 32, "items": {}}},
    "mnemon_document_manage": {"id": {"maxLength": 300}, "title": {"maxLength": 160},
                               "description": {"maxLength": 600}},
    "mnemon_document_search": {"query": {"maxLength": 2000}},
    "mnemon_records_search": {"query": {"maxLength": 2000}},
    "mnemon_records_propose": {"title": {"maxLength": 200}, "content": {"maxLength": 65536},
                               "tags": {"maxItems": 32, "items": {"maxLength": 64}}},
    "mnemon_citations": {"path": {"maxLength": 4096}},
    "mnemon_runtime_memory": {"branches": {"maxItems": 16,
                                           "items": {"maxLength": 128, "pattern": "^[A-Za-z0-9._/-]+$"}}},
    "mnemon_memory_spaces": {"name": {"maxLength": 100}, "description": {"maxLength": 1000},
                             "space_id": {"maxLength": 128}},
    "mnemon_remember": {"space_id": {"maxLength": 128}, "tags": {"maxItems": 20, "items": {}},
                        "entities": {"maxItems": 50, "items": {}}},
    "mnemon_recall": {"query": {"maxLength": 2000}, "spaces": {"items": {"maxLength": 128}}},
    "mnemon_related": {"space_id": {"maxLength": 128}, "id": {"maxLength": 200}},
    "mnemon_link": {"space_id": {"maxLength": 128}, "source_id": {"maxLength": 200}, "target_id": {"maxLength": 200}},
    "mnemon_forget": {"space_id": {"maxLength": 128}, "id": {"maxLength": 200}},
    "mnemon_wake": {"branch": {"maxLength": 128, "pattern": "^[A-Za-z0-9._/-]+$"}},
}

#: Limits in UTF-8 bytes (JSON schema has no keyword for them): the argument's description says them.
BYTE_LIMITS = {("mnemon_remember", "content"): "at most 8000 UTF-8 bytes",
               ("mnemon_remember", "tags"): "at most 20 tags, each at most 100 UTF-8 bytes",
               ("mnemon_remember", "entities"): "each at most 200 bytes",
               ("mnemon_runtime_memory", "content"): "at most 8192 UTF-8 bytes"}


async def test_the_validators_limits_are_published(workspace: Path, data_dir: Path) -> None:
    """Each limit a Source's validator enforces (title 160 characters, query 2,000, tags 20, cites 32, branch
    128 and its characters, ids 200/300, ...) is in the schema the real server lists; a limit in bytes is in the
    argument's description; a cite's path and symbol carry theirs in the cite object's schema."""
    async with mcp_session(args_for(workspace, data_dir)) as session:
        published = {t.name: t.input_schema for t in (await session.list_tools()).tools}
    for name, arguments in VALIDATOR_LIMITS.items():
        for argument, wanted in arguments.items():
            assert constraints(published[name]["properties"][argument]) == wanted, (name, argument)
    for (name, argument), words in BYTE_LIMITS.items():
        assert words in published[name]["properties"][argument]["description"], (name, argument)
    # a narrowed argument keeps its own description (the published limits do not replace it)
    assert published["mnemon_records_search"]["properties"]["record_scope"]["description"] == \
        "one scope; default every scope of this workspace"
    cite = published["mnemon_remember"]["$defs"]["CiteParam"]["properties"]
    assert constraints(cite["path"]) == {"maxLength": 4096}
    assert constraints(cite["symbol"]) == {"maxLength": 200}
