"""Workspace memory records in the language server: ``mnemon/records/*``, the auto-writer, review cues.

Registered from :mod:`.server` with :func:`register` (the first of the server's feature modules).

- The requests ``mnemon/records/*`` are operations (:mod:`mnemon_ls.ops.records`) run with this server's
  session of the folder (:meth:`RecordsFeature.session_id`) for the ``session`` scope. A proposal sends
  ``mnemon/recordProposed`` ``{workspace, id, scope, title, pending}`` (an observer of ``records.propose``).
- The auto-writer (seed 002 section 4): the client's own events, ``textDocument/didSave``,
  ``workspace/didCreateFiles``, ``didDeleteFiles`` and ``didRenameFiles``, feed one
  :class:`~mnemon_ls.records.autowriter.SessionFiles` per folder (a session is this server's lifetime in
  that folder). ``workspace/didChangeWatchedFiles`` does not: a file watcher also sees what a branch
  switch, a rebase, a pull or a stash in a terminal changes, which this session did not do (the server
  does not ask the client to watch the workspace either). 500 ms after the last event (at most 2 s after
  the first) the digest is written and ``mnemon/records/autoWritten`` ``{workspace, id, status,
  archived}`` is sent. Errors never interrupt anything: they are logged and shown in ``mnemon/status``
  (``records.autoWriter.lastError``). Setting ``records.autoWriter`` (default true).
- Review (reference 8.2-8.3): ``mnemon/turn/end`` (the operation ``session.turnEnd``, :mod:`mnemon_ls.ops.session`,
  through the server's session hooks, :mod:`.session`) hands its ``activity`` to :meth:`RecordsFeature.turn_ended`,
  which accumulates it per workspace (persisted) and, when the score is eligible and admitted, arms an
  ``idleReviewMs`` timer; a new turn (``mnemon/turn/begin`` or another ``turn/end``) cancels it. On fire:
  ``mnemon/reviewSuggested`` ``{workspace, score, eligible, parts, reasons, signals, admitted, activity}``,
  then the accumulation starts again. Needs ``lifecycleEnabled`` and ``writebackMode: guided``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from ..errors import MnemonError
from ..folders import FolderState, uri_to_path
from . import protocol as P

if TYPE_CHECKING:
    from ..records import RecordsSource

# The records modules (pydantic models) are imported where they are used, after ``initialize``
# (tests/lsp/test_startup.py).
    from .core import MnemonLanguageServer

log = logging.getLogger("mnemon_ls.lsp.records")

#: Longest the auto-writer waits after the first of a burst of events, milliseconds.
MAX_WAIT_MS = 2000

# ------------------------------------------------------------------ per-folder state


class FolderRecords:
    """One folder's session: its id, Records Source, touched files, debounce and review timers."""

    def __init__(self, state: FolderState, session_id: str) -> None:
        from ..records.activity import ActivityStore
        from ..records.autowriter import SessionFiles
        from ..records.paths import project_dir, records_home
        from ..roots import workspace_hash

        self.uri = state.uri
        self.state = state
        self.session_id = session_id
        self.source: RecordsSource = state.host.open_records(session_id)
        ignored = [state.host.root, state.host.resolution.user_root, project_dir(state.path)]
        try:
            # $DSH_HOME, the data directory or ~/.dsh: never session work
            ignored.append(records_home(state.host.global_env))
        except MnemonError:
            pass
        self.files = SessionFiles(state.path, ignored)
        self.flush_handle: asyncio.TimerHandle | None = None
        self.first_event_at: float | None = None
        self.writing: asyncio.Task[None] | None = None
        self.dirty = False
        self.last: dict[str, Any] | None = None
        self.last_error: dict[str, Any] | None = None
        self.review_handle: asyncio.TimerHandle | None = None
        self.review_due: float | None = None
        self.turn_seq = 0
        digest = workspace_hash(Path(state.path))[:16]
        self.activity = ActivityStore(state.host.root / "state" / f"review-activity-{digest}.json")

    def cancel_review(self) -> None:
        """Disarm the idle review timer (a new turn began or ended)."""
        if self.review_handle is not None:
            self.review_handle.cancel()
        self.review_handle = None
        self.review_due = None


class RecordsFeature:
    """The records features of one :class:`MnemonLanguageServer` (see the module doc)."""

    def __init__(self, server: "MnemonLanguageServer") -> None:
        self.server = server
        self.folders: dict[str, FolderRecords] = {}
        self.sessions: dict[str, str] = {}  # folder URI -> session id, for the server's lifetime
        self.announced: dict[str, set[str] | None] = {}  # folder URI -> proposal ids known (None: not read yet)

    def folder(self, state: FolderState) -> FolderRecords:
        """The folder's records state (rebuilt when the folder's host was replaced, same session)."""
        current = self.folders.get(state.uri)
        if current is None or current.state is not state:
            session = self.session_id(state.uri)
            fresh = FolderRecords(state, session)
            if current is not None:
                fresh.files, fresh.last, fresh.last_error = current.files, current.last, current.last_error
                current.cancel_review()
                if current.flush_handle is not None:
                    current.flush_handle.cancel()
                    fresh.dirty = True
            self.folders[state.uri] = fresh
            current = fresh
            if fresh.dirty:
                self._schedule(fresh)
        return current

    def session_id(self, uri: str) -> str:
        """The session of folder ``uri``: ``lsp-<16 hex>``, fixed for this server's lifetime."""
        return self.sessions.setdefault(uri, f"lsp-{secrets.token_hex(8)}")

    def source_for(self, workspace: str | None) -> tuple[FolderState, "RecordsSource"]:
        """The folder for a request and its session's Records Source."""
        state = self.server.registry.resolve(workspace)
        return state, self.folder(state).source

    # -------------------------------------------------------------- auto-writer

    def observe(self, events: list[tuple[str, str]]) -> None:
        """Feed ``(kind, uri)`` events (kind created|modified|deleted, or ``renamed`` with ``old\\x00new``).
        Never raises; events outside every folder are ignored."""
        touched: set[str] = set()
        for kind, uri in events:
            try:
                if kind == "renamed":
                    old, new = uri.split("\x00", 1)
                    state = self.server.registry.folder_for_path(uri_to_path(new))
                    if state is None or not state.settings.records.auto_writer:
                        continue
                    if self.folder(state).files.rename(uri_to_path(old), uri_to_path(new)):
                        touched.add(state.uri)
                    continue
                path = uri_to_path(uri)
                state = self.server.registry.folder_for_path(path)
                if state is None or not state.settings.records.auto_writer:
                    continue
                if self.folder(state).files.observe(kind, path):
                    touched.add(state.uri)
            except MnemonError:
                continue  # a non-file URI: not a workspace file
            except Exception:  # never interrupt the session
                log.exception("auto-writer: event %s %s", kind, uri)
        for uri in touched:
            folder = self.folders.get(uri)
            if folder is not None:
                folder.dirty = True
                self._schedule(folder)

    def _schedule(self, folder: FolderRecords) -> None:
        from ..records.autowriter import DEBOUNCE_MS

        loop = asyncio.get_running_loop()
        now = loop.time()
        if folder.first_event_at is None:
            folder.first_event_at = now
        delay = min(DEBOUNCE_MS / 1000, max(0.0, folder.first_event_at + MAX_WAIT_MS / 1000 - now))
        if folder.flush_handle is not None:
            folder.flush_handle.cancel()
        folder.flush_handle = loop.call_later(delay, self._start_flush, folder)

    def _start_flush(self, folder: FolderRecords) -> None:
        folder.flush_handle = None
        folder.first_event_at = None
        if folder.writing is not None and not folder.writing.done():
            self._schedule(folder)  # one write at a time per session; try again after this one
            return
        folder.writing = asyncio.get_running_loop().create_task(self.flush(folder))

    async def flush(self, folder: FolderRecords) -> None:
        """Write the folder's digest now (a worker thread); report, never raise."""
        from ..records.autowriter import write_made_digest

        if not folder.dirty:
            return
        folder.dirty = False
        made = folder.files.digest()
        if made is None:
            return
        try:
            result = await asyncio.to_thread(write_made_digest, folder.source, made[0], made[1],
                                             folder.files.event_seq)
        except Exception as exc:  # reported in mnemon/status, never raised (seed 002 section 4)
            error = exc if isinstance(exc, MnemonError) else MnemonError(f"{type(exc).__name__}: {exc}")
            folder.last_error = {"code": error.code, "message": error.message}
            log.warning("auto-writer for %s failed: %s", folder.uri, error.message)
            return
        folder.last = result
        folder.last_error = None
        self.server.protocol.notify(P.RECORDS_AUTO_WRITTEN, {"workspace": folder.uri, **result})

    # -------------------------------------------------------------- proposals written by other processes

    def watchers_for(self, state: FolderState) -> list[Any]:
        """Watchers of the folder's record files (``<workspace>/.dsh/workspace-memory/`` and
        :func:`~mnemon_ls.records.paths.records_home_dir`): a proposal written by another process (the MCP
        server, the CLI, a DSH tool) is announced with ``mnemon/recordProposed`` too. The ids pending now are read first
        (in a task), so only new ones are announced."""
        from ..records.paths import project_dir, records_home_dir

        from .watch import Watcher

        paths = [project_dir(state.path) / "workspace-memory"]
        try:
            paths.append(records_home_dir())
        except MnemonError:
            pass
        self.announced.setdefault(state.uri, None)
        asyncio.get_running_loop().create_task(self._read_announced(state.uri))

        def accept(path: str) -> bool:
            return path.endswith(".jsonl")

        async def changed(_paths: set[str]) -> None:
            await self.announce_new_proposals(state.uri)

        # One watcher per directory: a Watcher waiting for a missing path ignores its other paths.
        return [Watcher(f"records:{state.uri}:{n}", [path], accept, changed, recursive=False)
                for n, path in enumerate(paths)]

    async def _read_announced(self, uri: str) -> None:
        ids = await self._pending_ids(uri)
        if ids is not None and self.announced.get(uri) is None:
            self.announced[uri] = ids

    async def _pending_ids(self, uri: str) -> set[str] | None:
        state = self.server.registry.folders.get(uri)
        if state is None:
            return None
        source = self.folder(state).source
        try:
            found = await asyncio.to_thread(source.list, proposals=True)
        except Exception as exc:
            log.info("proposals of %s not readable: %s", uri, exc)
            return None
        return {r.id for r in found}

    async def announce_new_proposals(self, uri: str) -> None:
        """Send ``mnemon/recordProposed`` for each pending proposal of folder ``uri`` not announced yet."""
        state = self.server.registry.folders.get(uri)
        if state is None:
            return
        try:
            found = await asyncio.to_thread(self.folder(state).source.list, proposals=True)
        except Exception as exc:
            log.info("proposals of %s not readable: %s", uri, exc)
            return
        known = self.announced.get(uri)
        self.announced[uri] = {r.id for r in found}
        if known is None:
            return  # the first read: what is pending now was there before this session
        for record in reversed(found):  # oldest first
            if record.id not in known:
                self.server.protocol.notify(P.RECORD_PROPOSED, {
                    "workspace": uri, "id": record.id, "scope": record.scope, "title": record.title,
                    "pending": len(found)})

    # -------------------------------------------------------------- review

    def turn_began(self, uri: str) -> None:
        """A new turn: cancel the folder's pending review suggestion."""
        folder = self._known(uri)
        if folder is not None:
            folder.turn_seq += 1
            folder.cancel_review()

    async def turn_ended(self, uri: str, raw_activity: Any) -> dict[str, Any]:
        """Accumulate one turn's activity and arm the idle review timer when eligible and admitted.

        ``raw_activity`` was validated (:func:`~mnemon_ls.records.activity.parse_turn_activity`) first. Returns
        ``{enabled, score, eligible, admitted, reasons, armed, idleReviewMs}`` (``{enabled: false}`` when lifecycle or
        writeback is off)."""
        from ..records.activity import parse_turn_activity

        state = self.server.registry.folders.get(uri)
        if state is None:
            return {"enabled": False}
        folder = self.folder(state)
        folder.turn_seq += 1
        folder.cancel_review()
        settings = state.settings
        if not settings.lifecycle_enabled or settings.writeback_mode != "guided":
            return {"enabled": False}
        turn = parse_turn_activity(raw_activity)
        activity = await asyncio.to_thread(folder.activity.add_turn, turn)
        verdict = activity.evaluate()
        armed = False
        if verdict["admitted"]:
            loop = asyncio.get_running_loop()
            seq = folder.turn_seq
            folder.review_due = loop.time() + settings.idle_review_ms / 1000
            folder.review_handle = loop.call_later(settings.idle_review_ms / 1000,
                                                   lambda: loop.create_task(self._suggest(folder, seq)))
            armed = True
        return {"enabled": True, "score": verdict["score"], "eligible": verdict["eligible"],
                "admitted": verdict["admitted"], "reasons": verdict["reasons"], "armed": armed,
                "idleReviewMs": settings.idle_review_ms}

    async def _suggest(self, folder: FolderRecords, seq: int) -> None:
        folder.review_handle = None
        folder.review_due = None
        if folder.turn_seq != seq:
            return  # a newer turn came in between
        try:
            activity = await asyncio.to_thread(folder.activity.load)
            verdict = activity.evaluate()
            if not verdict["admitted"]:
                return
            await asyncio.to_thread(folder.activity.reset)
        except Exception as exc:
            log.warning("review activity of %s: %s", folder.uri, exc)
            return
        self.server.protocol.notify(P.REVIEW_SUGGESTED, {
            "workspace": folder.uri, "turnSeq": seq, "score": verdict["score"], "eligible": verdict["eligible"],
            "parts": verdict["parts"], "reasons": verdict["reasons"], "signals": verdict["signals"],
            "admitted": verdict["admitted"], "activity": verdict["activity"]})

    def _known(self, uri: str) -> FolderRecords | None:
        state = self.server.registry.folders.get(uri)
        return self.folder(state) if state is not None else None

    # -------------------------------------------------------------- status

    def status_fields(self, state: FolderState) -> dict[str, Any]:
        """``{records: {sessionId, pendingProposals, autoWriter: {enabled, last, lastError, pending},
        review: {armed, dueInMs}}}`` for ``mnemon/status`` (runs in a worker thread; never raises)."""
        folder = self.folders.get(state.uri)
        try:
            pending = (folder.source if folder else state.host.records).pending_proposals()
        except Exception:
            pending = 0
        review: dict[str, Any] = {"armed": False}
        if folder is not None and folder.review_handle is not None and folder.review_due is not None:
            review = {"armed": True}
        return {"records": {
            "sessionId": folder.session_id if folder else self.session_id(state.uri),
            "pendingProposals": pending,
            "autoWriter": {"enabled": state.settings.records.auto_writer,
                           "last": folder.last if folder else None,
                           "lastError": folder.last_error if folder else None,
                           "pending": bool(folder and (folder.dirty or folder.flush_handle))},
            "review": review}}

    async def shutdown(self) -> None:
        """Write what the auto-writer still holds and stop every timer."""
        for folder in list(self.folders.values()):
            folder.cancel_review()
            if folder.flush_handle is not None:
                folder.flush_handle.cancel()
                folder.flush_handle = None
            if folder.writing is not None and not folder.writing.done():
                await folder.writing
            await self.flush(folder)


# ------------------------------------------------------------------ registration


def register(server: "MnemonLanguageServer") -> None:
    """Attach :class:`RecordsFeature` as ``server.records_feature``, observe ``records.propose`` and register
    the file events of the auto-writer (the ``mnemon/records/*`` requests are operations,
    :mod:`mnemon_ls.ops.records`, bound by :mod:`.operations`)."""
    server.records_feature = RecordsFeature(server)  # type: ignore[attr-defined]

    def feature(ls: Any) -> RecordsFeature:
        return ls.records_feature

    def observe(state: FolderState, operation: Any, data: Any, error: Exception | None) -> None:
        """A proposal made through ``mnemon/records/propose``: ``mnemon/recordProposed`` now (the file watcher
        will not repeat it)."""
        if error is not None or operation.name != "records.propose" or not isinstance(data, dict):
            return
        known = server.records_feature.announced.get(state.uri)
        if known is not None:
            known.add(data["id"])
        server.protocol.notify(P.RECORD_PROPOSED, {"workspace": state.uri, "id": data["id"], "scope": data["scope"],
                                                   "title": data["record"]["title"], "pending": data["pending"]})

    server.observers.append(observe)

    # ---------------------------------------------------------------- file events (auto-writer)

    def forget_cited(uris: list[str]) -> None:
        """Drop the freshness cache of each ``file:`` URI (:func:`mnemon_ls.citations.freshness.invalidate`) and
        ask the client for its code lenses again (:func:`.lensrefresh.refresh_lenses`)."""
        from ..citations import freshness
        from ..errors import InvalidInput
        from ..folders import uri_to_path
        from .lensrefresh import refresh_lenses

        for uri in uris:
            try:
                freshness.invalidate(uri_to_path(uri))
            except InvalidInput:  # a URI that names no local file has nothing cached
                continue
        if uris:
            refresh_lenses(server)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: types.DidSaveTextDocumentParams) -> None:
        """``textDocument/didSave``: the file was modified in this session (and a citation of it is evaluated
        again)."""
        forget_cited([params.text_document.uri])
        feature(ls).observe([("modified", params.text_document.uri)])

    glob = types.FileOperationRegistrationOptions(
        filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"))])

    @server.feature(types.WORKSPACE_DID_CREATE_FILES, glob)
    def did_create(ls: Any, params: types.CreateFilesParams) -> None:
        """``workspace/didCreateFiles``."""
        feature(ls).observe([("created", f.uri) for f in params.files])

    @server.feature(types.WORKSPACE_DID_DELETE_FILES, glob)
    def did_delete(ls: Any, params: types.DeleteFilesParams) -> None:
        """``workspace/didDeleteFiles``."""
        feature(ls).observe([("deleted", f.uri) for f in params.files])

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, glob)
    def did_rename(ls: Any, params: types.RenameFilesParams) -> None:
        """``workspace/didRenameFiles``: the old path deleted, the new one created."""
        feature(ls).observe([("renamed", f"{f.old_uri}\x00{f.new_uri}") for f in params.files])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: Any, params: types.DidChangeWatchedFilesParams) -> None:
        """``workspace/didChangeWatchedFiles``: accepted and not recorded. A watcher reports every change on
        disk, also a ``git checkout``, rebase, pull or stash run outside the editor, which the session did
        not do; the auto-writer counts only the client's own saves and file operations (module doc). A citation
        of a changed file is evaluated again (:func:`forget_cited`)."""
        forget_cited([change.uri for change in params.changes])
