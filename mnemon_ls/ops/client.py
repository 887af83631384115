"""What the language server gives an operation that belongs to the client's session, not to one folder.

Some requests of the language server are about the editor session itself: its turn Views (``mnemon/turn/begin``,
``mnemon/turn/end``, ``mnemon/wake`` with ``viewId``), its branch announcements and every folder it has open
(``mnemon/status``). Their operations are declared like every other (:mod:`.session`, :mod:`.workspace`) and
their :class:`~.surfaces.LspMethod` says ``session=True``: the server then runs them with ``call.host`` ``None``
and ``call.client`` a :class:`ClientSession`, the one hook through which the session's state reaches the
operation (the server's implementation is :class:`mnemon_ls.lsp.session.LspSession`).

A session operation runs in a worker thread like every other; each method of the hook may be called from
there (the server runs what touches its event loop there and waits for it). It resolves the folders it needs
through the hook and holds a folder's pack gate itself (``folder.host.pack_gate()``) around the Host calls.

Light: no pydantic, nothing of the project (the language server imports :data:`PROTOCOL_VERSION` before
``initialize`` is answered).
"""

from __future__ import annotations

from typing import Any, Protocol

#: Version of the ``mnemon/*`` surface; editor plugins compare it with ``mnemon/status``.
PROTOCOL_VERSION = 1


class ClientSession(Protocol):
    """The language server's session as an operation sees it (module doc). A *folder* is the server's
    :class:`~mnemon_ls.folders.FolderState` (``uri``, ``name``, ``path``, ``settings``, ``host``, ``branch``: the
    branch the server last announced).

    - ``views``: the session's turn Views (:class:`~mnemon_ls.view.ViewRegistry`, safe from any thread);
    - ``folder(workspace)``: the folder of a request's ``workspace`` (a folder URI, a file URI or path inside
      one, or ``None`` when exactly one is open); raises :class:`~mnemon_ls.errors.NotInWorkspace` or
      :class:`~mnemon_ls.errors.InvalidInput` naming ``workspace``;
    - ``folders()``: every open folder, in the order they were opened;
    - ``branch(folder)``: probe the folder's branch now and announce a change (``mnemon/branchChanged``);
      returns the :class:`~mnemon_ls.gitstate.BranchState` to render (a newer probe's when one already landed);
    - ``repaired(folder, repairs)``: announce projections a wake repaired (``mnemon/projectionRepaired`` and a
      message; ``repairs`` as :meth:`~mnemon_ls.host.WorkspaceHost.wake` returns them);
    - ``turn_began(uri)`` / ``turn_ended(uri, activity)``: the review cues of the folder ``uri`` hear of a turn
      (:class:`mnemon_ls.lsp.records.RecordsFeature`); ``turn_ended`` returns the ``review`` of
      ``mnemon/turn/end`` (``activity`` was checked by :func:`mnemon_ls.records.activity.parse_turn_activity`);
    - ``status(folder)``: the session's own fields of a folder's status (``{records: {sessionId, ...}}``).
    """

    views: Any

    def folder(self, workspace: str | None) -> Any: ...

    def folders(self) -> list[Any]: ...

    def branch(self, folder: Any) -> Any: ...

    def repaired(self, folder: Any, repairs: list[Any]) -> None: ...

    def turn_began(self, uri: str) -> None: ...

    def turn_ended(self, uri: str, activity: Any) -> dict[str, Any]: ...

    def status(self, folder: Any) -> dict[str, Any]: ...
