"""The language server's binding of the operation layer: one ``mnemon/*`` request per operation that
declares an :class:`~mnemon_ls.ops.base.LspMethod`, all served by one handler.

The handler parses the raw params with the operation's model, resolves the folder (``workspace``, or the
only one), runs the operation in a worker thread through :func:`mnemon_ls.ops.execute.call` (pack gate,
error mapping) and answers the result data plus ``workspace`` (a list result as ``{<listKey>: [...],
workspace}``). An operation that reports progress (:attr:`~mnemon_ls.ops.base.Operation.progress`) also
takes ``workDoneToken`` and reports ``$/progress`` (:class:`.progress.Progress`). After each request the
server's observers hear of the result or the error (:meth:`.server.MnemonLanguageServer.observe`): that is
how a maintenance receipt or a full USER.md becomes a notification. Errors leave through the server's
``mnemon_request`` wrapper (:func:`.protocol.to_rpc_error`).

A request the operation's :class:`~mnemon_ls.ops.base.LspMethod` declares ``session`` (the wake, the turn
Views, the status of every folder) is parsed with the method's own params model when it has one, resolves no
folder and runs, in a worker thread, with the server's session as ``call.client``
(:class:`.session.LspSession`); its answer is the result data as it is, and no observer hears of it.

Bound by :func:`bind` right after ``initialize`` is answered (the registry imports pydantic, which the
server keeps off its start path).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

from . import protocol as P
from .progress import Progress


async def _run(ls: Any, operation: Any, parsed: Any, surface: str, progress: Any = None) -> tuple[Any, Any]:
    """Resolve the folder of ``parsed``, run the operation in a worker thread with this server's session of
    the folder, and tell the observers of the result or the error. Returns ``(folder state, data)``;
    re-raises what the call raised (after ``progress.finish("failed")``)."""
    from ..ops.execute import call

    state = ls.registry.resolve(parsed.workspace)
    try:
        data = await asyncio.to_thread(functools.partial(
            call, operation, state.host, parsed, surface=surface, session=ls.session_for(state.uri),
            progress=progress.callback if progress is not None else None))
    except Exception as exc:
        if progress is not None:
            await progress.finish("failed")
        ls.observe(state, operation, None, exc)
        raise
    if progress is not None:
        receipt = data.get("maintenance") if isinstance(data, dict) else None
        await progress.finish(receipt.get("summary") if isinstance(receipt, dict) else None)
    ls.observe(state, operation, data, None)
    return state, data


async def run_operation(ls: Any, operation: Any, parsed: Any, token: Any = None) -> tuple[Any, Any]:
    """``operation`` run on ``parsed`` params (its request's params model: :func:`mnemon_ls.ops.execute.parse`
    with ``"lsp"``) as its ``mnemon/*`` request runs it: a session operation in a worker thread with the
    server's session as ``call.client``; any other on its folder (:func:`_run`: observers, the folder's
    session), with ``$/progress`` when the operation reports progress (``token``: the request's
    ``workDoneToken``, else a server-created one). The request handler and the ``workspace/executeCommand``
    commands of :mod:`.actions` (after mapping their argument object onto the params) call it. Returns
    ``(folder state, data)``, ``(None, data)`` for a session operation; raises what the operation raised
    (mapped)."""
    if operation.lsp is not None and operation.lsp.session:
        from ..ops.execute import call
        from .session import LspSession

        client = LspSession(ls, asyncio.get_running_loop())
        return None, await asyncio.to_thread(functools.partial(call, operation, None, parsed, surface="lsp",
                                                               client=client))
    progress = Progress(ls, operation.progress_title(parsed), token) if operation.progress is not None else None
    return await _run(ls, operation, parsed, "lsp", progress)


def _handler(operation: Any) -> Callable[..., Any]:
    from ..ops.execute import notes, parse
    from ..ops.surfaces import Call

    async def handle(ls: Any, params: Any) -> Any:
        token = None
        if operation.progress is not None and isinstance(params, dict) and "workDoneToken" in params:
            token = params["workDoneToken"]
            params = {k: v for k, v in params.items() if k != "workDoneToken"}
        state, data = await run_operation(ls, operation, parse(operation, params, "lsp"), token)
        if state is None:  # a session operation: the data as it is
            return data
        answer = {operation.lsp.list_key: data} if isinstance(data, list) else dict(data)
        said = await asyncio.to_thread(notes, operation, data, Call(state.host, "lsp")) if operation.notes else []
        if said:  # what every surface says beside the result (a rebuilt space registry, ...)
            answer["notes"] = said
        return answer | {"workspace": state.uri}

    handle.__name__ = handle.__qualname__ = operation.name.replace(".", "_")
    handle.__doc__ = f"``{operation.lsp.method}``: {operation.summary}"
    return handle


#: The one request behind the VS Code language-model tools (and any client's assistant tools).
TOOL = "mnemon/tool"
_TOOL_KEYS = frozenset({"workspace", "name", "arguments"})


async def tool_call(ls: Any, params: Any) -> dict[str, Any]:
    """``mnemon/tool`` ``{workspace?, name, arguments?}`` -> ``{text, workspace}``: the assistant tool ``name``
    (an MCP tool of :func:`mnemon_ls.ops.tools.tools`, the same names and arguments) run as the MCP server
    runs it, answered with the operation's model-facing text. The client asks the person before a write
    (the request does not). Errors name the tool's arguments (``arguments.limit``, ``content``)."""
    from ..errors import InvalidInput, choice_rule, type_rule
    from ..ops.execute import model_text_async, parse
    from ..ops.surfaces import Call
    from ..ops.tools import argument_name, tools

    if not isinstance(params, dict):
        raise InvalidInput("params", type_rule("an object", params))
    unknown = sorted(set(params) - _TOOL_KEYS)
    if unknown:
        raise InvalidInput(unknown[0], "is not a known field (workspace, name, arguments)")
    known = tools()
    tool = known.get(params.get("name")) if isinstance(params.get("name"), str) else None
    if tool is None:
        raise InvalidInput("name", choice_rule(known, params.get("name")))
    arguments = tool.validate(params.get("arguments"))
    if params.get("workspace") is not None and arguments.get("workspace") is None:
        arguments["workspace"] = params["workspace"]
    operation, raw = tool.resolve(arguments)
    try:
        state, data = await _run(ls, operation, parse(operation, raw), "tool")
    except InvalidInput as exc:  # named as the tool's argument, as the MCP server names it
        raise InvalidInput(argument_name(exc.field, operation.mcp.rename), exc.rule, **{
            k: v for k, v in exc.data.items() if k not in ("field", "rule", "code")}) from None
    text = await model_text_async(operation, data, Call(state.host, "tool"), to_thread=asyncio.to_thread)
    return {"text": text, "workspace": state.uri}


def bind(mnemon_request: Callable[[str], Callable[[Any], Any]]) -> None:
    """Register every operation's ``mnemon/*`` method and ``mnemon/tool`` through ``mnemon_request`` (once
    per process)."""
    from ..ops.registry import by_lsp_method

    for method, operation in by_lsp_method().items():
        if method in P.MnemonProtocol.bound_requests:
            continue
        mnemon_request(method)(_handler(operation))
        P.MnemonProtocol.bound_requests.add(method)
    if TOOL not in P.MnemonProtocol.bound_requests:
        mnemon_request(TOOL)(tool_call)
        P.MnemonProtocol.bound_requests.add(TOOL)
