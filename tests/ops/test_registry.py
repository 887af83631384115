"""The registry of operations (``mnemon_ls/ops/registry.py``): declarations checked against each other, and
every surface bound from them."""

from __future__ import annotations

import argparse

import pytest
from pydantic import Field

from mnemon_ls.ops import registry
from mnemon_ls.ops.base import CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, Params, WorkspaceParams


class _Params(WorkspaceParams):
    query: str = Field(description="what to find")


class _Args(Params):
    uri: str
    text: str
    mode: str | None = None


def _cmd(**binding: object) -> LspCommand:
    return LspCommand("mnemon.server.x", _Args, **binding)  # type: ignore[arg-type]


def _op(name: str, **surfaces: object) -> Operation:
    return Operation(name, _Params, lambda call, p: {"query": p.query}, f"{name} summary", **surfaces)  # type: ignore[arg-type]


def test_every_declaration_is_complete_and_unique() -> None:
    operations = registry.operations()
    assert len(operations) >= 15
    for name, operation in operations.items():
        assert name == operation.name and "." in name, name
        assert operation.summary and operation.effect in ("read", "write", "destroy")
        assert operation.lsp or operation.mcp or operation.cli, f"{name} is exposed nowhere"
        if operation.mcp is not None:
            assert operation.text is not None, f"{name}: an MCP tool needs a model-facing text"
            tool = [op for op in operations.values() if op.mcp is not None and op.mcp.name == operation.mcp.name]
            assert operation.mcp.name.startswith("mnemon_") and max(len(op.mcp.description) for op in tool) > 40
            assert len(tool) == 1 or all(op.mcp.action for op in tool), f"{operation.mcp.name} is shared without actions"
        if operation.lsp is not None:
            assert operation.lsp.method.startswith("mnemon/")
    assert registry.by_mcp_tool()["mnemon_recall"].name == "spaces.recall"
    assert registry.by_lsp_method()["mnemon/recall"] is registry.by_mcp_tool()["mnemon_recall"]
    assert registry.by_cli_path()[("recall",)] is registry.by_mcp_tool()["mnemon_recall"]


@pytest.mark.parametrize("declared, said", [
    ((_op("a.one", lsp=LspMethod("mnemon/x")), _op("a.two", lsp=LspMethod("mnemon/x"))),
     "LSP method mnemon/x is bound by a.one and a.two"),
    ((_op("a.one", mcp=McpTool("mnemon_x", "d" * 50)), _op("a.two", mcp=McpTool("mnemon_x", "d" * 50))),
     "MCP tool mnemon_x is bound by a.one and a.two"),
    ((_op("a.one", mcp=McpTool("mnemon_x", "d" * 50, fields=("querry",))),), "MCP field querry is not in _Params"),
    ((_op("a.one", cli=CliCommand(("x",), "x", (CliArg("nope"),))),), "CLI field nope is not in _Params"),
    ((_op("a.one", lsp=LspMethod("mnemon/x", params=WorkspaceParams)),),
     "LSP params WorkspaceParams is not a subclass of _Params"),
    # An editor command's argument object must map onto the params of the operation it runs.
    ((_op("a.one", lsp_command=_cmd(fields={"query": "txt"})),),
     "a.one: LSP command mnemon.server.x: argument field txt is not in _Args"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text", "querry": "text"})),), "field querry is not in _Params"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"}, fixed={"limit": 3})),), "field limit is not in _Params"),
    ((_op("a.one", lsp_command=_cmd()),), "the required field query of _Params is never set"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"}, convert={"workspace": str})),),
     "convert workspace names no field of `fields`"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"}, comment="text")),),
     "argument field language_id is not in _Args"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"})),
      _op("a.two", lsp_command=_cmd(fields={"query": "text"}))),
     "LSP command mnemon.server.x is bound by a.one and a.two"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"})),
      _op("a.two", lsp_command=_cmd(fields={"query": "text"}, when="mode", failure="not found: "))),
     "LSP command mnemon.server.x: a.two declares another failure than a.one"),
    ((_op("a.one", lsp_command=_cmd(fields={"query": "text"}, when="mode")),),
     "LSP command mnemon.server.x: exactly one binding runs it without `when`"),
])
def test_colliding_or_dangling_declarations_are_refused(declared: tuple[Operation, ...], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        registry._check(declared)


def test_every_editor_command_is_advertised_and_every_advertised_one_bound() -> None:
    """The language server advertises :data:`~mnemon_ls.ops.command_ids.COMMANDS` before it loads the registry:
    an operation binding another id, or an id no operation binds, is refused."""
    one = _op("a.one", lsp_command=_cmd(fields={"query": "text"}))
    registry._check_advertised([one], ("mnemon.server.x",))
    with pytest.raises(ValueError, match="LSP command mnemon.server.x is not in command_ids.COMMANDS"):
        registry._check_advertised([one], ("mnemon.server.y",))
    with pytest.raises(ValueError, match="mnemon.server.y of command_ids.COMMANDS is bound by no operation"):
        registry._check_advertised([one], ("mnemon.server.x", "mnemon.server.y"))
    remember = registry.by_lsp_command()["mnemon.server.rememberSelection"]
    assert [(op.name, command.when) for op, command in remember] == [("runtime.mutate", None),
                                                                      ("spaces.remember", "space_id")]


def test_every_mnemon_request_of_the_language_server_is_an_operation() -> None:
    """No ``mnemon/*`` request is handled by a handler of its own (issue 29 item 1): after binding, the server's
    ``mnemon/*`` features are exactly the operations' LSP methods and ``mnemon/tool`` (which runs the same
    operations as assistant tools); the session requests are among them, with their own wire params."""
    from mnemon_ls.lsp import operations as binding
    from mnemon_ls.lsp.server import mnemon_request, server
    from mnemon_ls.ops.workspace import LspWakeParams, WakeParams

    binding.bind(mnemon_request)
    handled = {method for method in server.protocol.fm.features if method.startswith("mnemon/")}
    bound = registry.by_lsp_method()
    assert handled == set(bound) | {binding.TOOL}
    sessions = {method for method, operation in bound.items() if operation.lsp.session}
    assert sessions == {"mnemon/wake", "mnemon/turn/begin", "mnemon/turn/end", "mnemon/status"}
    wake = bound["mnemon/wake"]
    assert wake is registry.by_mcp_tool()["mnemon_wake"] is registry.by_cli_path()[("wake",)]
    assert wake.params is WakeParams and wake.params_for("lsp") is LspWakeParams and wake.params_for("mcp") is WakeParams


def test_the_command_line_is_built_from_the_declarations() -> None:
    """Type, choices, repeatability and help come from the params model unless the argument says otherwise."""
    from mnemon_ls.cli.full import build_parser

    parser = build_parser()
    args = parser.parse_args(["recall", "retry policy", "--space", "Team", "--space", "default", "--limit", "3",
                              "--mode", "keyword"])
    assert (args.operation.name, args.query, args.spaces, args.limit, args.mode) == (
        "spaces.recall", "retry policy", ["Team", "default"], 3, "keyword")
    merge = parser.parse_args(["space", "merge", "a", "b", "--into", "c", "--keep-active"])
    assert (merge.sources, merge.target_id, merge.deactivate_sources) == (["a", "b"], "c", False)
    with pytest.raises(SystemExit):
        parser.parse_args(["recall", "x", "--mode", "fuzzy"])  # choices from the Literal of RecallParams.mode


def test_cli_errors_name_the_option_a_field_is_given_by() -> None:
    from mnemon_ls.cli.ops import explain
    from mnemon_ls.errors import InvalidInput

    def message(error: InvalidInput, args: argparse.Namespace) -> str:
        return explain(error, args)[0]  # the line; explain also gives the --json object

    def spec(*path: str) -> object:
        return next(c for c in registry.by_cli_path()[path].commands if c.path == path)

    args = argparse.Namespace(command_spec=spec("recall"), spaces=["Team", "Nope"])
    assert message(InvalidInput("spaces[1]", "no such space"), args) == "--space Nope: no such space"
    assert message(InvalidInput("limit", "must be an integer 1..50"), args) == "limit: must be an integer 1..50"
    assert message(InvalidInput("scopeToBranch", "no branch is checked out (detached)"),
                   argparse.Namespace(command_spec=spec("remember"))) == "--for-branch: no branch is checked out (detached)"
    # a field whose option is its own word keeps the field's name, as before (branches, not --branch)
    assert message(InvalidInput("branches", "applies to target=memory only"),
                   argparse.Namespace(command_spec=spec("runtime", "add"))) == "branches: applies to target=memory only"
