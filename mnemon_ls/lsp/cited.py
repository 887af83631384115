"""Memory where the code is (issue 24 item 5): ``textDocument/codeLens`` puts one lens on each range of a file
that memories cite ("2 memories cite this"; "... (1 changed)"), whose command
(``mnemon.server.showCitingMemories``, the ``citations.file`` operation's editor command) renders those memories
and opens them; ``textDocument/hover`` inside a cited range shows each memory (its Source, content, age and
freshness). Both run the ``citations.file`` operation (:mod:`mnemon_ls.ops.review`) on the file as it is on
disk; a file of no folder, or a failure, answers nothing (a lens or hover never shows an error).

The lenses change when the code or the memory does, which the client cannot tell: the server asks it to
request them again (``workspace/codeLens/refresh``, when the client supports it; :func:`.lensrefresh.refresh_lenses`)
after a file it reports saved or changed, a Source's truth changed on disk (``mnemon/memoryChanged``), a branch change,
and every write operation this server ran (an observer: a re-anchor writes only the side file).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..ops.command_ids import SHOW_CITING_MEMORIES
from .feature import Feature
from .lensrefresh import refresh_lenses

log = logging.getLogger("mnemon_ls.lsp")

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


async def cited(ls: Any, uri: str, line: int | None = None) -> dict[str, Any] | None:
    """``citations.file`` of the document ``uri`` (only the ranges holding ``line``, 1-based, when given), or
    ``None`` when the file is in no folder or the operation fails (logged)."""
    from ..errors import MnemonError
    from ..ops.execute import parse
    from ..ops.registry import operations
    from .operations import run_operation

    try:
        await asyncio.wait_for(ls.ready().wait(), timeout=10)
    except asyncio.TimeoutError:
        pass
    try:
        state = ls.registry.resolve(uri)
    except MnemonError:
        return None
    if not uri.startswith("file:"):
        return None
    operation = operations()["citations.file"]
    raw: dict[str, Any] = {"workspace": state.uri, "path": uri}
    if line is not None:
        raw["line"] = line
    try:
        _, data = await run_operation(ls, operation, parse(operation, raw, "lsp"))
    except Exception as exc:  # a lens or a hover never fails the editor
        log.info("citations of %s: %s", uri, exc)
        return None
    return data


def register(server: Any) -> None:
    """Attach the handlers and the observer that refreshes the lenses after every write operation."""
    feature.attach(server)

    def observe(_state: Any, operation: Any, _data: Any, error: Exception | None) -> None:
        if error is None and operation.writes:
            refresh_lenses(server)

    server.observers.append(observe)


def start_watch(ls: Any) -> None:
    """Start this server's cited-file watch (:class:`mnemon_ls.citations.watch.CitedWatch`, on a thread of its
    own; kept as ``ls.cited_watch``): citation views of watched files cost no system call, and a change it sees
    in a cited file's directory asks the client for its lenses again. Called on the running loop (``initialized``);
``MNEMON_WATCH_CITED_FILES=0`` leaves it off (:data:`mnemon_ls.citations.watch.ENV`)."""
    from ..citations.watch import CitedWatch, enabled

    if getattr(ls, "cited_watch", None) is not None or not enabled():
        return
    loop = asyncio.get_running_loop()

    def changed(_paths: set[str]) -> None:
        try:
            loop.call_soon_threadsafe(refresh_lenses, ls)
        except RuntimeError:  # the loop closed: the server is going away
            pass

    ls.cited_watch = CitedWatch(on_change=changed)
    ls.cited_watch.start()


async def stop_watch(ls: Any) -> None:
    """Stop the cited-file watch (``shutdown``); nothing stays trusted."""
    watch = getattr(ls, "cited_watch", None)
    ls.cited_watch = None
    if watch is not None:
        await asyncio.to_thread(watch.stop)


def lens_title(memories: list[dict[str, Any]]) -> str:
    """``"1 memory cites this"``, ``"2 memories cite this (1 changed)"``: the count, then how many need review."""
    count = len(memories)
    title = f"{count} memory cites this" if count == 1 else f"{count} memories cite this"
    needs = [m for m in memories if m["freshness"] in ("changed", "gone")]
    return title + (f" ({len(needs)} changed)" if needs else "")


def hover_text(ranges: list[dict[str, Any]]) -> str:
    """The Markdown of a hover over cited lines: per range, each memory's Source, age, freshness and content."""
    out = []
    for found in ranges:
        start, end = found["startLine"], found["endLine"]
        lines = f"line {start}" if start == end else f"lines {start}-{end}"
        out.append(f"**{lens_title(found['memories'])}** ({lines})\n")
        for memory in found["memories"]:
            out.append(f"- *{memory['label']}* · {memory['age']} · {memory['freshness']}: {memory['preview']}")
    return "\n".join(out)


@feature.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
async def code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """``textDocument/codeLens``: one lens per cited range (0-based lines, the whole lines), running
    ``mnemon.server.showCitingMemories {uri, line}``."""
    uri = params.text_document.uri
    data = await cited(ls, uri)
    lenses = []
    for found in (data or {}).get("ranges", ()):
        start, end = found["startLine"] - 1, found["endLine"] - 1
        title = lens_title(found["memories"])
        lenses.append(types.CodeLens(
            range=types.Range(types.Position(start, 0), types.Position(end, 0)),
            command=types.Command(title=title, command=SHOW_CITING_MEMORIES,
                                  arguments=[{"uri": uri, "line": found["startLine"]}])))
    return lenses


@feature.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
    """``textDocument/hover``: inside a cited range, the memories citing it (:func:`hover_text`); else nothing."""
    data = await cited(ls, params.text_document.uri, params.position.line + 1)
    ranges = (data or {}).get("ranges")
    if not ranges:
        return None
    first, last = min(r["startLine"] for r in ranges), max(r["endLine"] for r in ranges)
    return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, hover_text(ranges)),
                       range=types.Range(types.Position(first - 1, 0), types.Position(last - 1, 0)))
