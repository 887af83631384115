"""Code actions (``textDocument/codeAction``): "Remember selection" (MEMORY.md, for the branch, in an active
space), "Show wake snapshot", and "Create document from file" or "Update document from file"
(:mod:`.fileactions`).

Each action runs an editor command (``workspace/executeCommand``) with one argument object: the ids are the
operation layer's (:mod:`mnemon_ls.ops.command_ids`), each bound to the operations it runs by an
:class:`~mnemon_ls.ops.surfaces.LspCommand` (:mod:`.commands` registers them all in one loop).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..errors import MnemonError
from ..folders import FolderState
from ..ops.command_ids import REMEMBER_SELECTION, SHOW_WAKE_SNAPSHOT
from . import fileactions as file_actions
from . import protocol as P
from .feature import Feature

# pygls reads the annotations of feature handlers at registration: those say ``LanguageServer`` (the server
# is a :class:`~.server.MnemonLanguageServer`, which imports this module).

#: The handlers of this module; :mod:`.server` attaches them.
feature = Feature()


@feature.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[P.CODE_ACTION_KIND]))
def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """``textDocument/codeAction``: Remember selection (MEMORY.md, for the branch, in an active space), Show wake
    snapshot, Create document from file; none on automatic triggers."""
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
            base = {"uri": uri, "text": text, "range": {"start": {"line": selection.start.line,
                                                                  "character": selection.start.character},
                                                        "end": {"line": selection.end.line,
                                                                "character": selection.end.character}}}
            actions.append(_action("Remember selection", REMEMBER_SELECTION, base))
            if state.branch.branch:
                actions.append(_action(f"Remember selection for branch {state.branch.branch}", REMEMBER_SELECTION,
                                       base | {"branches": [state.branch.branch]}))
            writable = [s for s in _active_spaces(state) if s.get("available")
                        and (s.get("capabilities") or {}).get("write") in ("exact", "async-extracting")]
            for space in writable[:3]:  # a provider that is not usable, or cannot write, offers nothing
                actions.append(_action(f"Remember selection in space {space['name']}", REMEMBER_SELECTION,
                                       base | {"spaceId": space["id"]}))
    actions.append(_action("Show wake snapshot", SHOW_WAKE_SNAPSHOT, {"uri": uri}))
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


def _action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(title=title, kind=P.CODE_ACTION_KIND,
                            command=types.Command(title=title, command=command, arguments=[argument]))
