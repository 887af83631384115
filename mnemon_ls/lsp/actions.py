"""Code actions and commands: "Remember selection" (MEMORY.md, for the branch, in an active space),
"Show wake snapshot" and "Create document from file" (``textDocument/codeAction``,
``workspace/executeCommand`` of ``mnemon.server.*``).

A command maps its argument object (:mod:`.params`: a file URI, the selected text, ...) onto the params of one
operation of :mod:`mnemon_ls.ops` and runs it as that operation's ``mnemon/*`` request runs
(:func:`.operations.run_operation`: ``runtime.mutate``, ``spaces.remember``, ``workspace.wake``,
``documents.create``, ``documents.updateFromFile``); what it adds is the editor's side: the text of a selected
comment, the file a rendering is written to, ``window/showDocument``, the message shown.

Commands never fail with a JSON-RPC error: every failure answers ``{success: false, error}`` (the error as
:func:`mnemon_ls.ops.errors.as_error` maps it, :func:`command_error`) and shows a message, because clients run
them from menus where an error response is lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import shlex
from pathlib import Path
from urllib.parse import unquote
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from ..errors import InvalidInput, MnemonError
from ..host import FolderState, uri_to_path
from ..ops.errors import as_error
from . import fileactions as file_actions
from . import protocol as P
from .feature import Feature
from .operations import run_operation

if TYPE_CHECKING:
    from .core import MnemonLanguageServer

# pygls reads the annotations of feature and command handlers at registration: those say
# ``LanguageServer`` (the server is a :class:`~.server.MnemonLanguageServer`, which imports this module).

log = logging.getLogger("mnemon_ls.lsp")

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


@feature.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[P.CODE_ACTION_KIND]))
def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: Remember selection (MEMORY.md, for the branch, in an active space), Show wake snapshot, Create document from file; none on automatic triggers."""
    from ..runtime.model import normalize_text

    only = params.context.only
    if only and not any(str(kind) in ("", P.CODE_ACTION_KIND) or P.CODE_ACTION_KIND.startswith(f"{kind}.")
                        for kind in only):
        return []
    # Automatic requests (VS Code asks on every cursor move) get nothing: a light bulb on every line
    # would be noise. Explicit requests (menu, keybinding) and requests asking for our kind get actions.
    if params.context.trigger_kind == types.CodeActionTriggerKind.Automatic and not only:
        return []
    uri = params.text_document.uri
    try:
        state = ls.registry.resolve(uri)
    except MnemonError:
        return []
    actions: list[types.CodeAction] = []
    selection = params.range
    if selection.start != selection.end:
        document = ls.workspace.get_text_document(uri)
        try:
            text = document.text_in_client_range(selection)
        except Exception:
            text = ""
        if normalize_text(text):
            base = {"uri": uri, "text": text}
            actions.append(_action("Remember selection", P.CMD_REMEMBER, base))
            if state.branch.branch:
                actions.append(_action(f"Remember selection for branch {state.branch.branch}", P.CMD_REMEMBER,
                                       base | {"branches": [state.branch.branch]}))
            writable = [s for s in _active_spaces(state) if s.get("available")
                        and (s.get("capabilities") or {}).get("write") in ("exact", "async-extracting")]
            for space in writable[:3]:  # a provider that is not usable, or cannot write, offers nothing
                actions.append(_action(f"Remember selection in space {space['name']}", P.CMD_REMEMBER,
                                       base | {"spaceId": space["id"]}))
    actions.append(_action("Show wake snapshot", P.CMD_SHOW_WAKE, {"uri": uri}))
    file_action = file_actions.document_action(state, uri, _action)  # create, or update; none in a storage root
    if file_action is not None:
        actions.append(file_action)
    return actions


def _active_spaces(state: FolderState) -> list[dict[str, Any]]:
    """Active Memory Spaces of a folder (``[]`` before the root has any), cheap enough for code actions."""
    if not (state.host.root / "data").is_dir():
        return []
    try:
        return [v.to_dict() for v in state.host.spaces.list_spaces(active_only=True)]
    except MnemonError:
        return []


def command_error(exc: Exception) -> MnemonError:
    """``exc`` as the :class:`MnemonError` a command answers: the operation layer's one mapping
    (:func:`mnemon_ls.ops.errors.as_error`); an exception it does not know is a bug, logged here and answered
    as ``internal-error``."""
    mapped = as_error(exc)
    if mapped is not None:
        return mapped
    log.exception("command failed")
    return MnemonError(f"internal error: {type(exc).__name__}: {exc}")


def _parsed(name: str, raw: dict[str, Any]) -> tuple[Any, Any]:
    """``(operation, params)``: the operation ``name`` and ``raw`` parsed with its request's params model."""
    from ..ops.execute import parse
    from ..ops.registry import operations

    operation = operations()[name]
    return operation, parse(operation, raw, "lsp")


def _action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(title=title, kind=P.CODE_ACTION_KIND,
                            command=types.Command(title=title, command=command, arguments=[argument]))


def _command_arg(model: type, arguments: tuple[Any, ...]) -> Any:
    """The one argument object of a command, validated with ``model``; raises :class:`InvalidInput`
    (field ``arguments`` for a missing, ``null`` or extra argument, ``arguments[0]`` for a non-object)."""
    if len(arguments) != 1:
        raise InvalidInput("arguments", f"must hold exactly one argument object (got {len(arguments)})")
    if not isinstance(arguments[0], dict):
        raise InvalidInput("arguments[0]", "must be an object")
    return P.parse_params(model, arguments[0])


@feature.command(P.CMD_REMEMBER)
async def remember_selection(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.rememberSelection {uri, text, branches?, importance?, spaceId?, languageId?, quiet?}``:
    add the text (a comment without its markers, :func:`selection_text`) to MEMORY.md (``branches`` scopes
    it; the operation ``runtime.mutate``), or with ``spaceId`` remember it in that Memory Space
    (:func:`_remember_in_space`). The server's observers hear of the write as of a ``mnemon/runtime/mutate``
    or ``mnemon/remember`` (a maintenance receipt, hand edits saved aside)."""
    a = None
    try:
        a = _command_arg(P.RememberArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        text = selection_text(ls, a)
        if a.space_id is not None:
            return await _remember_in_space(ls, state, a, text)
        operation, params = _parsed("runtime.mutate", {
            "workspace": state.uri, "action": "add", "target": "memory", "content": text,
            "importance": a.importance, "branches": a.branches})
        _, receipt = await run_operation(ls, operation, params)
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = command_error(exc)
        if not (a is not None and a.quiet):
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: not remembered: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    data = receipt | {"workspace": state.uri}
    if not a.quiet:
        branches = params.request.branches
        scope = f" for branch {', '.join(branches)}" if branches and receipt["changed"] else ""
        count, usage = receipt["entryCount"], receipt["usage"]
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Info,
            f"mnemon: {receipt['message']} MEMORY.md{scope}: {count} "
            f"{'entry' if count == 1 else 'entries'}, {usage['used']}/{usage['limit']} bytes"))
    return data


def selection_text(ls: Any, a: Any) -> str:
    """The text ``a`` (:class:`~.params.RememberArgs`) asks to remember: a selection that is a comment without
    its markers (:func:`mnemon_ls.comments.strip_comment_markers`), by ``a.language_id``, else the language
    id the client opened ``a.uri`` with, else the file name's; any other text as given."""
    from ..comments import language_for, strip_comment_markers

    language = a.language_id
    if language is None:
        opened = ls.workspace.text_documents.get(unquote(a.uri))  # pygls keys its documents by unquoted URI
        language = getattr(opened, "language_id", None) or language_for(unquote(a.uri))
    return strip_comment_markers(a.text, language)


async def _remember_in_space(ls: MnemonLanguageServer, state: FolderState, a: Any, text: str) -> dict[str, Any]:
    """The space target of "Remember selection": whitespace-normalized ``text`` into Memory Space ``a.space_id``
    (the operation ``spaces.remember``, ``source`` ``user``), tagged with the one branch ``a.branches`` may name
    (checked by MEMORY.md's rules and field names); ``a.importance`` critical/normal/low is 5/3/1."""
    from ..ops.humantext import activation_note
    from ..runtime.model import normalize_text, validate_branches

    branches = validate_branches(a.branches, "memory", "branches")  # same rules and field names as MEMORY.md
    if len(branches) > 1:
        raise InvalidInput("branches", "a Memory Space item is scoped to one branch (got several)")
    importance = {"critical": 5, "normal": 3, "low": 1}.get(a.importance or "normal")
    operation, params = _parsed("spaces.remember", {
        "workspace": state.uri, "content": normalize_text(text), "spaceId": a.space_id, "importance": importance,
        "source": "user", "branch": branches[0] if branches else None})
    _, data = await run_operation(ls, operation, params)
    if not a.quiet:
        name = shlex.quote(str(data.get("spaceName") or data.get("spaceId")))
        note = activation_note(data, plain_write="a remember that names no space", name_it=f"name {name}",
                               deactivate=f"`mnemon-ls space deactivate {name}`")
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Info, f"mnemon: {data.get('message') or data['status']} (space {data.get('spaceName')})"
                                    + (f" {note}" if note else "")))
    return data | {"success": True, "workspace": state.uri}


@feature.command(P.CMD_SHOW_WAKE)
async def show_wake(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.showWakeSnapshot {uri}``: the folder's wake (the operation ``workspace.wake``, as
    ``mnemon/wake`` renders it) written read-only under ``state/`` and shown."""
    try:
        a = _command_arg(P.ShowWakeArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        _, snapshot = await run_operation(ls, *_parsed("workspace.wake", {"workspace": state.uri}))
        path = await asyncio.to_thread(_write_wake_file, state, snapshot["text"])
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = command_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    uri = from_fs_path(str(path)) or path.as_uri()
    shown = await _show_document(ls, uri)
    return {"success": True, "text": snapshot["text"], "path": str(path), "uri": uri, "shown": shown,
            "revision": snapshot["revision"], "storeRevision": snapshot["storeRevision"]}


@feature.command(P.CMD_CREATE_DOCUMENT)
async def create_document_from_file(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.createDocumentFromFile {uri, title?}``: a managed document from a workspace file (the
    operation ``documents.create`` with ``file``: cold archival when the Documents are full, with its
    ``$/progress``), then opened (``window/showDocument`` when supported; otherwise the result's
    ``path``/``uri``)."""
    try:
        a = _command_arg(P.CreateDocumentArgs, args)
        path = uri_to_path(a.uri, "uri")
        state = ls.registry.resolve(a.uri, "uri")
        file_actions.refuse_storage_file(state, path)  # the wake file, USER.md/MEMORY.md: memory, not a source
        _, data = await run_operation(ls, *_parsed("documents.create", {
            "workspace": state.uri, "file": str(path), "title": a.title}))
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = command_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: no document created: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    document = data["document"]
    uri = from_fs_path(document["path"]) or Path(document["path"]).as_uri()
    shown = await _show_document(ls, uri)
    # No success popup: the opened document (or the plugin, with the returned path) is the feedback.
    return data | {"workspace": state.uri, "path": document["path"], "uri": uri, "shown": shown}


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


def _write_wake_file(state: FolderState, text: str) -> Path:
    """``<root>/state/wake-<12 hex of the workspace path>.md`` (0400), replaced atomically."""
    from .. import fsio

    state_dir = state.host.root / "state"
    fsio.ensure_dir(state_dir)
    digest = hashlib.sha256(str(state.path).encode()).hexdigest()[:12]
    path = state_dir / f"wake-{digest}.md"
    fsio.write_file_atomically(path, text.encode("utf-8") + b"\n", mode=0o400)
    return path
