"""The language server's binding of the editor commands (``workspace/executeCommand``): one handler for every
:class:`~mnemon_ls.ops.surfaces.LspCommand` of the operation layer, registered in one loop (:func:`bind`).

The ids are :data:`mnemon_ls.ops.command_ids.COMMANDS`, registered before ``initialize`` so that its answer
advertises them (``executeCommandProvider.commands``); the bindings themselves come from the registry on the
first command (after ``initialize``: the registry imports pydantic, which the start path keeps out). A
command runs as :func:`run_command` says, the same for every command:

1. the one argument object is validated with the binding's ``args`` (:func:`command_argument`);
2. a command several operations bind picks its operation by the bindings' ``when``;
3. ``uri`` picks the folder (and, for a binding with ``file``, the workspace file, refused in a storage
   root: :func:`.fileactions.refuse_storage_file`);
4. the argument object is mapped onto the operation's params (:func:`params_of`) and the operation runs as its
   ``mnemon/*`` request runs (:func:`.operations.run_operation`: pack gate, observers, ``$/progress``);
5. the answer and the editor's side (a rendering under ``state/``, ``window/showDocument``,
   ``window/showMessage``) follow the binding's declaration.

Commands never fail with a JSON-RPC error: every failure answers ``{success: false, error}`` (the operation
layer's one mapping, :func:`command_error`) and shows a message, because clients run them from menus where an
error response is lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from ..errors import InvalidInput, MnemonError, type_rule
from ..folders import FolderState, uri_to_path
from ..ops.command_ids import COMMANDS
from ..ops.errors import as_error
from .fileactions import refuse_storage_file
from .operations import run_operation

# pygls reads the annotations of a command handler at registration and when it runs: the server is a
# LanguageServer (``ls``), the arguments ``*args``.

log = logging.getLogger("mnemon_ls.lsp")


def command_argument(model: type, arguments: tuple[Any, ...]) -> Any:
    """The one argument object of a command, validated with ``model``; raises :class:`InvalidInput`
    (field ``arguments`` for a missing, ``null`` or extra argument, ``arguments[0]`` for a non-object, else
    the argument field and its rule)."""
    from ..ops.base import parse_params

    if len(arguments) != 1:
        raise InvalidInput("arguments", f"must hold exactly one argument object (got {len(arguments)})")
    if not isinstance(arguments[0], dict):
        raise InvalidInput("arguments[0]", type_rule("an object", arguments[0]))
    return parse_params(model, arguments[0])


def command_error(exc: Exception) -> MnemonError:
    """``exc`` as the :class:`MnemonError` a command answers: the operation layer's one mapping
    (:func:`mnemon_ls.ops.errors.as_error`); an exception it does not know is a bug, logged here and answered
    as ``internal-error``."""
    mapped = as_error(exc)
    if mapped is not None:
        return mapped
    log.exception("command failed")
    return MnemonError(f"internal error: {type(exc).__name__}: {exc}")


def selection_text(ls: Any, a: Any, text: str) -> str:
    """``text``, selected in the document ``a.uri``, as a command maps it: a comment without its markers
    (:func:`mnemon_ls.comments.strip_comment_markers`) by ``a.language_id``, else the language id the client
    opened ``a.uri`` with, else the file name's; any other text as given."""
    from ..comments import language_for, strip_comment_markers

    language = a.language_id
    if language is None:
        opened = ls.workspace.text_documents.get(unquote(a.uri))  # pygls keys its documents by unquoted URI
        language = getattr(opened, "language_id", None) or language_for(unquote(a.uri))
    return strip_comment_markers(text, language)


def params_of(ls: Any, operation: Any, command: Any, a: Any, state: FolderState, path: Path | None) -> dict[str, Any]:
    """The raw params (camelCase, as the operation's ``mnemon/*`` request takes them) of ``operation`` for the
    argument object ``a`` (:class:`~mnemon_ls.ops.surfaces.LspCommand` ``command``): ``workspace`` the folder's
    URI, ``fixed``, each of ``fields`` (a ``comment`` field's text without comment markers, then ``convert``),
    ``file`` the path of ``uri``. Raises what a ``convert`` raises (:class:`InvalidInput` naming the argument)."""
    fields = operation.params_for("lsp").model_fields

    def wire(name: str) -> str:
        return fields[name].alias or name

    raw: dict[str, Any] = {"workspace": state.uri}
    raw |= {wire(name): value for name, value in command.fixed.items()}
    for name, source in command.fields.items():
        value = getattr(a, source)
        if source == command.comment:
            value = selection_text(ls, a, value)
        if name in command.convert:
            value = command.convert[name](value)
        raw[wire(name)] = value
    if command.file is not None:
        raw[wire(command.file)] = str(path)
    if command.cite is not None and getattr(a, command.cite) is not None:
        cite = selection_cite(ls, state, a.uri, getattr(a, command.cite))
        if cite is not None:
            raw[wire("cites")] = [cite]
    return raw


def selection_cite(ls: Any, state: FolderState, uri: str, selection: Any) -> dict[str, Any] | None:
    """The citation ``{path, startLine, endLine}`` (1-based, inclusive) of the lines ``selection`` (an LSP range,
    :class:`~mnemon_ls.ops.command_args.LspRange`) covers in the document ``uri``, or ``None`` when they cannot be
    cited as the person sees them: a file outside the folder or that the citation rules refuse (a directory, binary,
    over 2 MiB, in the storage root or ``.git``: :func:`mnemon_ls.citations.model.resolve`), or lines on disk that
    differ from the editor's (the document is not saved). Reads the file; writes nothing."""
    from ..citations.model import hash_lines

    start = selection.start.line + 1
    end = max(start, selection.end.line + (0 if selection.end.character == 0 else 1))
    try:
        path = uri_to_path(uri, "uri")
        try:
            relative = path.relative_to(state.path).as_posix()
        except ValueError:  # a folder or file reached through a link: compare where they are
            relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(state.path)).as_posix()
        cite = {"path": relative, "startLine": start, "endLine": end}
        resolved = state.host.citations.resolve([cite])[0]
    except (MnemonError, ValueError, OSError):
        return None
    opened = ls.workspace.text_documents.get(unquote(uri))
    if opened is not None:
        shown = opened.lines[start - 1:end]
        if len(shown) != end - start + 1 or hash_lines([line.rstrip("\r\n") for line in shown]) != resolved.sha256:
            return None
    return cite


def _route(bindings: tuple[tuple[Any, Any], ...], a: Any) -> tuple[Any, Any]:
    """The ``(operation, binding)`` that runs a command for ``a``: the one whose ``when`` field ``a`` sets, else
    the one without ``when`` (the registry checks there is exactly one)."""
    for operation, command in bindings:
        if command.when is not None and getattr(a, command.when) is not None:
            return operation, command
    return next((operation, command) for operation, command in bindings if command.when is None)


def _dotted(data: Any, key: str) -> Any:
    for part in key.split("."):
        data = data[part]
    return data


async def run_command(ls: Any, command_id: str, arguments: tuple[Any, ...]) -> dict[str, Any]:
    """Run the editor command ``command_id`` on ``arguments`` (module docstring). Returns the answer: the
    result data plus ``success: true`` and ``workspace`` (as the binding declares), or ``{success: false,
    error}``; never raises."""
    from ..ops.execute import parse
    from ..ops.registry import by_lsp_command

    bindings = by_lsp_command()[command_id]
    declared = bindings[0][1]  # args, quiet and failure are the command's (the registry checks they agree)
    a = rendered = None
    try:
        a = command_argument(declared.args, arguments)
        operation, command = _route(bindings, a)
        path = uri_to_path(a.uri, "uri") if command.file is not None else None
        state = ls.registry.resolve(a.uri, "uri")
        if path is not None:
            refuse_storage_file(state, path)  # the wake file, USER.md/MEMORY.md: memory, not a source
        params = parse(operation, params_of(ls, operation, command, a, state, path), "lsp")
        _, data = await run_operation(ls, operation, params)
        if command.render is not None:
            rendered = await asyncio.to_thread(_write_rendering, state, command.render, data["text"])
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        error = command_error(exc)
        if not _quiet(declared, a):
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                           f"mnemon: {declared.failure}{error.message}"))
        return {"success": False, "error": error.to_dict()}
    if command.answer is None:
        answer = data | {"success": True, "workspace": state.uri}
    else:
        answer = {"success": True} | {key: data[key] for key in command.answer}
    if rendered is not None or command.path is not None:
        answer["path"] = str(rendered) if rendered is not None else _dotted(data, command.path)
    if command.show:
        uri = from_fs_path(answer["path"]) or Path(answer["path"]).as_uri()
        answer |= {"uri": uri, "shown": await _show_document(ls, uri)}
    text = command.message(data, params) if command.message is not None and not _quiet(declared, a) else None
    if text:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"mnemon: {text}"))
    return answer


def _quiet(command: Any, a: Any) -> bool:
    return command.quiet is not None and a is not None and bool(getattr(a, command.quiet))


async def _show_document(ls: Any, uri: str) -> bool:
    """Ask the client to open ``uri`` (``window/showDocument``); ``False`` when it cannot or did not (the
    command's result then carries ``path``/``uri`` for the plugin to open)."""
    if not ls.supports("window.show_document.support"):
        return False
    try:
        result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    except Exception as exc:
        log.warning("window/showDocument failed: %s", exc)
        return False
    return bool(result and result.success)


def _write_rendering(state: FolderState, name: str, text: str) -> Path:
    """``<root>/state/<name>-<12 hex of the workspace path>.md`` (0400) holding ``text``, replaced atomically."""
    from .. import fsio

    state_dir = state.host.root / "state"
    fsio.ensure_dir(state_dir)
    digest = hashlib.sha256(str(state.path).encode()).hexdigest()[:12]
    path = state_dir / f"{name}-{digest}.md"
    fsio.write_file_atomically(path, text.encode("utf-8") + b"\n", mode=0o400)
    return path


def _handler(command_id: str) -> Callable[..., Any]:
    async def execute(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        return await run_command(ls, command_id, args)

    execute.__name__ = execute.__qualname__ = command_id.rsplit(".", 1)[-1]
    execute.__doc__ = f"``{command_id}``: the operation its LspCommand binds (mnemon_ls.ops)."
    return execute


def bind(server: Any) -> None:
    """Register every editor command (:data:`~mnemon_ls.ops.command_ids.COMMANDS`) on ``server``, in that
    order: the one place a ``workspace/executeCommand`` handler is registered (before ``initialize``, so that
    its answer advertises them)."""
    for command_id in COMMANDS:
        server.command(command_id)(_handler(command_id))
