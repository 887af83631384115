"""How every surface runs every operation (parse, resolve, gate, call, map errors).

The steps, the same for the language server, the MCP server, the command line and the VS Code
language-model tools:

1. **parse** the raw params with the operation's params model (:func:`parse`): a dict keyed by the LSP
   wire's camelCase names or by Python names (MCP arguments, CLI options); a problem is
   :class:`~mnemon_ls.errors.InvalidInput` naming the field and the rule, raised before anything is read;
2. **resolve** the workspace: the surface's own ``host_for(workspace)`` (which folder, which roots: that is
   what differs between surfaces), called with the params' ``workspace``;
3. **gate**: hold the pack gate of the host's roots shared for the call, after finishing a pack swap a killed
   import left (:meth:`~mnemon_ls.host.WorkspaceHost.pack_gate`), unless the host already holds it for its
   whole life (the CLI's one-command host) or the operation takes it itself (pack import);
4. **call** ``operation.run(call, params)``;
5. **map** what it raised to the error vocabulary (:func:`mnemon_ls.ops.errors.as_error`): the surfaces
   present a :class:`~mnemon_ls.errors.MnemonError`, never decide which one it is. An exception that maps
   to nothing is a bug and propagates unchanged (the surface answers ``internal-error`` and logs it).

Blocking: run it in a worker thread from an event loop (:func:`execute_async` does). Importing this module
does not import pydantic (:func:`parse` does, on first use).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Awaitable, Callable, Iterator

from .. import nowait
from .errors import as_error
from .surfaces import Call, Operation, Surface


@contextmanager
def vocabulary() -> Iterator[None]:
    """Raise what the body raises as its :class:`~mnemon_ls.errors.MnemonError` (step 5,
    :func:`mnemon_ls.ops.errors.as_error`); an exception that maps to nothing propagates unchanged."""
    try:
        yield
    except Exception as exc:
        mapped = as_error(exc)
        if mapped is None or mapped is exc:
            raise
        raise mapped from None


def parse(operation: Operation, raw: Any, surface: Surface | None = None) -> Any:
    """``operation``'s params model (for ``surface``: :meth:`~.surfaces.Operation.params_for`) validated from
    ``raw`` (a dict or ``None``); raises :class:`~mnemon_ls.errors.InvalidInput` naming the field."""
    from .base import parse_params  # pydantic: not imported by a light path that only calls (mnemon_ls.cli.light)

    with vocabulary():
        return parse_params(operation.params_for(surface), raw)


def call(operation: Operation, host: Any, params: Any, *, surface: Surface, session: str | None = None,
         gate_held: bool = False, progress: Callable[[str, int | None], None] | None = None,
         user: str | None = None, client: Any = None) -> Any:
    """Run parsed ``params`` on ``host`` (steps 3-5 of the module docstring); returns the result data.
    ``progress`` receives the operation's progress reports, ``session`` and ``user`` identify the caller,
    ``client`` is the language server's session of a session request (:class:`~.base.Call`; ``host`` is then
    ``None`` and no gate is held here: the operation holds the gate of each folder it resolves). Raises
    :class:`~mnemon_ls.errors.MnemonError` (mapped) or, for a bug, the original exception."""
    invocation = Call(host=host, surface=surface, session=session, progress=progress, user=user, client=client)
    with vocabulary():
        if operation.gated and not gate_held and host is not None:
            with host.pack_gate():
                return operation.run(invocation, params)
        return operation.run(invocation, params)


def notes(operation: Operation, data: Any, invocation: Call) -> list[str]:
    """The lines about ``data`` (a result of ``operation`` run as ``invocation``) that every surface shows beside
    it (:attr:`~.surfaces.Operation.notes`); ``[]`` for an operation that declares none."""
    return list(operation.notes(data, invocation)) if operation.notes is not None else []


def model_text(operation: Operation, data: Any, invocation: Call) -> str:
    """What an assistant tool answers for ``data``: ``operation.text(data)`` (``(data, invocation)`` when it
    :attr:`~.surfaces.Operation.text_takes_call`; else the data as bounded text),
    followed by one ``note: <line>`` per :func:`notes` line. The MCP server and ``mnemon/tool`` answer it."""
    from .modeltext import bounded

    if operation.text is None:
        text = bounded(str(data))
    else:
        text = operation.text(data, invocation) if operation.text_takes_call else operation.text(data)
    lines = notes(operation, data, invocation)
    return "\n".join([text, *(f"note: {line}" for line in lines)]) if lines else text


async def model_text_async(operation: Operation, data: Any, invocation: Call, *,
                           to_thread: Callable[..., Awaitable[Any]]) -> str:
    """:func:`model_text` for an event loop: on the loop when ``operation`` declares no notes (its text reads no
    file), else through ``to_thread(fn)`` (the server's worker-thread runner, as :func:`execute_async` takes it:
    the notes may read the disk)."""
    if operation.notes is None:
        return model_text(operation, data, invocation)
    return await to_thread(lambda: model_text(operation, data, invocation))


async def execute_async(operation: Operation, raw: Any, host_for: Callable[[str | None], Awaitable[Any]], *,
                        surface: Surface, session: str | None = None,
                        to_thread: Callable[..., Awaitable[Any]]) -> tuple[Any, Any]:
    """Every step of the module docstring for an event loop: ``host_for`` is awaited on the loop (it may ask
    the client, e.g. MCP roots), the call runs through ``to_thread(fn)`` (the server's worker-thread runner:
    ``asyncio.to_thread`` or anyio's, which must not cancel a write once started). Returns ``(host, data)``.
    The language server and the command line run :func:`parse` and :func:`call` themselves (the CLI imports
    hand edits between the two)."""
    params = parse(operation, raw)
    with vocabulary():
        host = await host_for(getattr(params, "workspace", None))
    if operation.inline:
        try:
            with nowait.no_wait():
                return host, call(operation, host, params, surface=surface, session=session)
        except nowait.WouldWait:
            pass  # it would wait or write: run it again, whole, in a worker thread
    data = await to_thread(lambda: call(operation, host, params, surface=surface, session=session))
    return host, data
