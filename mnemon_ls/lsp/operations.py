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

Bound by :func:`bind` right after ``initialize`` is answered (the registry imports pydantic, which the
server keeps off its start path).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

from . import protocol as P
from .progress import Progress


def _handler(operation: Any) -> Callable[..., Any]:
    from ..ops.execute import call, parse

    async def handle(ls: Any, params: Any) -> Any:
        token = None
        if operation.progress is not None and isinstance(params, dict) and "workDoneToken" in params:
            token = params["workDoneToken"]
            params = {k: v for k, v in params.items() if k != "workDoneToken"}
        parsed = parse(operation, params)
        state = ls.registry.resolve(parsed.workspace)
        progress = Progress(ls, operation.progress_title(parsed), token) if operation.progress is not None else None
        try:
            data = await asyncio.to_thread(functools.partial(
                call, operation, state.host, parsed, surface="lsp", session=ls.session_for(state.uri),
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
        if isinstance(data, list):
            return {operation.lsp.list_key: data, "workspace": state.uri}
        return data | {"workspace": state.uri}

    handle.__name__ = handle.__qualname__ = operation.name.replace(".", "_")
    handle.__doc__ = f"``{operation.lsp.method}``: {operation.summary}"
    return handle


def bind(mnemon_request: Callable[[str], Callable[[Any], Any]]) -> None:
    """Register every operation's ``mnemon/*`` method through ``mnemon_request`` (once per process)."""
    from ..ops.registry import by_lsp_method

    for method, operation in by_lsp_method().items():
        if method in P.MnemonProtocol.bound_requests:
            continue
        mnemon_request(method)(_handler(operation))
        P.MnemonProtocol.bound_requests.add(method)
