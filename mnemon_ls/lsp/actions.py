"""Code actions and commands: "Remember selection" (MEMORY.md, for the branch, in an active space),
"Show wake snapshot" and "Create document from file" (``textDocument/codeAction``,
``workspace/executeCommand`` of ``mnemon.server.*``).

Commands never fail with a JSON-RPC error: every failure answers ``{success: false, error}`` and shows a
message, because clients run them from menus where an error response is lost.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import shlex
from pathlib import Path
from urllib.parse import unquote
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from ..packgate import run_held
from ..errors import InvalidInput, MnemonError, storage_error
from ..host import FolderState, uri_to_path
from . import fileactions as file_actions
from . import protocol as P
from .feature import Feature

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


def _as_domain_error(exc: Exception) -> MnemonError:
    """``exc`` as a :class:`MnemonError` (an unexpected one becomes ``internal-error``, logged here)."""
    if isinstance(exc, MnemonError):
        return exc
    if isinstance(exc, P.ValidationError):
        return P.invalid_input_from(exc)
    mapped = storage_error(exc)
    if mapped is not None:
        return mapped
    log.exception("command failed")
    error = MnemonError(f"internal error: {type(exc).__name__}: {exc}")
    return error


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
    it), or with ``spaceId`` remember it in that Memory Space. The server's observers hear of the write as
    of a ``mnemon/runtime/mutate`` or ``mnemon/remember`` (a maintenance receipt, hand edits saved aside)."""
    from ..ops.registry import operations
    from ..runtime import ops

    a = state = operation = None
    try:
        a = _command_arg(P.RememberArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        text = selection_text(ls, a)
        operation = operations()["spaces.remember" if a.space_id is not None else "runtime.mutate"]
        if a.space_id is not None:
            data = await _remember_in_space(ls, state, a, text)
            ls.observe(state, operation, data, None)
            return data
        request = ops.validate_request("add", "memory", text, None, a.importance, a.branches)
        receipt = await asyncio.to_thread(run_held, state.host, state.host.mutate_runtime, request)
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        if state is not None and operation is not None:
            ls.observe(state, operation, None, exc)
        exc = _as_domain_error(exc)
        if not (a is not None and a.quiet):
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: not remembered: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    data = receipt.to_dict() | {"workspace": state.uri}
    ls.observe(state, operation, data, None)
    if not a.quiet:
        scope = f" for branch {', '.join(request.branches)}" if request.branches and receipt.changed else ""
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Info,
            f"mnemon: {receipt.message} MEMORY.md{scope}: {receipt.entry_count} "
            f"{'entry' if receipt.entry_count == 1 else 'entries'}, {receipt.used}/{receipt.limit} bytes"))
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
    """The space target of "Remember selection": whitespace-normalized ``text`` into Memory Space ``a.space_id``."""
    from ..ops.humantext import activation_note
    from ..runtime.model import normalize_text, validate_branches

    branches = validate_branches(a.branches, "memory", "branches")  # same rules and field names as MEMORY.md
    if len(branches) > 1:
        raise InvalidInput("branches", "a Memory Space item is scoped to one branch (got several)")
    branch = branches[0] if branches else None
    importance = {"critical": 5, "normal": 3, "low": 1}.get(a.importance or "normal")
    receipt = await asyncio.to_thread(run_held, state.host, functools.partial(
        state.host.spaces.remember, normalize_text(text), space_id=a.space_id, importance=importance, source="user",
        branch=branch))
    data = receipt.to_dict()
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
    """``mnemon.server.showWakeSnapshot {uri}``: write a read-only rendering under ``state/`` and show it."""
    try:
        a = _command_arg(P.ShowWakeArgs, args)
        state = ls.registry.resolve(a.uri, "uri")
        snapshot = await ls.wake_for(state)
        path = await asyncio.to_thread(_write_wake_file, state, snapshot["text"])
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = _as_domain_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    uri = from_fs_path(str(path)) or path.as_uri()
    shown = await _show_document(ls, uri)
    return {"success": True, "text": snapshot["text"], "path": str(path), "uri": uri, "shown": shown,
            "revision": snapshot["revision"], "storeRevision": snapshot["storeRevision"]}


@feature.command(P.CMD_CREATE_DOCUMENT)
async def create_document_from_file(ls: LanguageServer, *args: Any) -> dict[str, Any]:
    """``mnemon.server.createDocumentFromFile {uri, title?}``: a managed document from a workspace file,
    then opened (``window/showDocument`` when supported; otherwise the result's ``path``/``uri``)."""
    try:
        a = _command_arg(P.CreateDocumentArgs, args)
        path = uri_to_path(a.uri, "uri")
        state = ls.registry.resolve(a.uri, "uri")
        file_actions.refuse_storage_file(state, path)  # the wake file, USER.md/MEMORY.md: memory, not a source
        result = await ls.maintenance_feature.run(state, "Archiving documents", None, functools.partial(
            _cold_from_file, state.host, path, a.title))  # cold archival when the Documents are full
    except Exception as exc:  # every failure answers {success: false}, never a traceback
        exc = _as_domain_error(exc)
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"mnemon: no document created: {exc.message}"))
        return {"success": False, "error": exc.to_dict()}
    data = result
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


def _cold_from_file(host: Any, path: Any, title: Any, progress: Any) -> Any:
    """"Create document from file" through cold archival (:mod:`mnemon_ls.maintenance.documents`)."""
    from ..maintenance import documents as cold

    return cold.create_document_from_file(host, path, title=title, progress=progress)
