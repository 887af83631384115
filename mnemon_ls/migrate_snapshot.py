"""The private read-only snapshot ``mnemon-ls migrate`` reads a source storage root's Documents and Spaces from.

Owns reading the source (:class:`Snapshot`): the Documents index and files are copied, each native
``mnemon.db`` through SQLite's backup API from a read-only connection (:func:`copy_sqlite`), into a temporary
directory, because their readers may repair, index or journal what they open; the source is never written. A
damaged or newer-format source is an error naming the source's own file. Planning and writing the copy is
:mod:`mnemon_ls.migrate`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from . import fsio
from .errors import FormatTooNew, MnemonError, UnreadableStore

_SQLITE_HEADER = b"SQLite format 3\x00"


class Snapshot:
    """A private read-only copy of the source's Documents and Memory Spaces files (module doc)."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.dir: Path | None = None
        self._host_spaces: Any = None
        self._documents: Any = None

    def __enter__(self) -> "Snapshot":
        self.dir = Path(tempfile.mkdtemp(prefix="mnemon-migrate-"))
        return self

    def __exit__(self, *exc: object) -> None:
        for store in (self._documents, self._host_spaces):
            if store is not None:
                with contextlib.suppress(Exception):
                    store.close()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _source_path(self, path: str | os.PathLike[str]) -> str:
        """A path inside the snapshot, spelled as the source file it was copied from."""
        assert self.dir is not None
        text = os.fspath(path)
        prefix = str(self.dir)
        return str(self.source) + text[len(prefix):] if text.startswith(prefix) else text

    def _damaged(self, exc: MnemonError, what: str) -> UnreadableStore:
        file = self._source_path(exc.data.get("file") or "")
        reason = str(exc.data.get("reason") or exc.message)
        message = self._source_path(exc.message).replace(str(self.dir), str(self.source))
        return UnreadableStore(f"the source's {what} is damaged: {message}; nothing was copied",
                               file=file or str(self.source), reason=reason)

    def documents(self) -> list[tuple[Any, str]]:
        """``[(record, body)]`` of every source document, in index order."""
        from .documents import DocumentStore

        assert self.dir is not None
        index = self.source / "documents" / "index.json"
        if not index.is_file():
            return []
        for relative in ("documents/index.json",):
            copy_file(self.source / relative, self.dir / relative)
        for status in ("active", "archived"):
            folder = self.source / "documents" / status
            if folder.is_dir():
                for entry in os.scandir(folder):
                    if entry.is_file(follow_symlinks=False):
                        copy_file(Path(entry.path), self.dir / "documents" / status / entry.name)
        store = DocumentStore(self.dir, None)
        self._documents = store
        state = store.read()
        if state.problem:
            raise UnreadableStore(
                f"the source's Documents index is damaged: {self._source_path(state.problem)}; nothing was "
                f"copied. Repair it with `mnemon-ls doc recover --data-dir {self.source}`",
                file=str(index), reason=state.problem)
        out = []
        catalog = store.list()
        for entry in catalog.documents:
            if not entry.healthy:
                raise UnreadableStore(
                    f"the source's document {entry.record.title!r} ({self.source / entry.record.relative_path}) "
                    f"is damaged: {self._source_path(entry.problem or 'unreadable')}; nothing was copied",
                    file=str(self.source / entry.record.relative_path), reason=entry.problem or "unreadable")
            try:
                view = store.get(entry.record.id)
            except MnemonError as exc:
                raise self._damaged(exc, f"document {entry.record.title!r}") from None
            out.append((entry.record, view.content))
        return out

    def spaces(self) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        """``([{record, items, edges}], [not copied: {id, name, reason}])`` of the source's spaces."""
        from .spaces import SpacesService
        from .spaces.registry_model import LAST_GOOD_FILE, NATIVE_FILE

        assert self.dir is not None
        data = self.source / "data"
        if not data.is_dir():
            return [], []
        for relative in (f"data/{NATIVE_FILE}", f"state/{LAST_GOOD_FILE}", "active"):
            if (self.source / relative).is_file():
                copy_file(self.source / relative, self.dir / relative)
        for entry in sorted(os.scandir(data), key=lambda e: e.name):
            db = Path(entry.path) / "mnemon.db"
            if entry.is_dir(follow_symlinks=False) and db.is_file():
                copy_sqlite(db, self.dir / "data" / entry.name / "mnemon.db")
        service = SpacesService(self.dir)
        self._host_spaces = service
        state = service.state()
        refused = state.native_refused or state.providers_refused
        if refused is not None:  # written by a newer version: not damaged, and not readable here
            where = self._source_path(refused.data["file"])
            raise FormatTooNew(
                f"the source's Memory Spaces registry {where} was written by a newer version of mnemon-ls "
                f"({refused.data['reason']}); nothing was copied. Upgrade mnemon-ls to migrate it",
                **(refused.data | {"file": where}))
        if service.registry.notices:
            problem = service.registry.notices[0]
            raise UnreadableStore(
                f"the source's Memory Spaces registry {self._source_path(problem.file)} is damaged: {problem.reason}; "
                "nothing was copied. Open the source once with mnemon-ls (e.g. `mnemon-ls space list --data-dir "
                f"{self.source}`) to repair it, then migrate again",
                file=self._source_path(problem.file), reason=problem.reason)
        spaces, not_copied = [], []
        for record in state.all:
            if not record.native:
                not_copied.append({"id": record.id, "name": record.name,
                                   "reason": f"a {record.provider_id} space: its data lives with that provider"})
                continue
            try:
                items, edges = service.provider(record).export_items()
            except MnemonError as exc:
                raise self._damaged(exc, f"Memory Space {record.id}") from None
            except sqlite3.DatabaseError as exc:
                raise UnreadableStore(f"the source's Memory Space {record.id} is damaged: {exc}; nothing was copied",
                                      file=str(data / record.id / "mnemon.db"), reason=str(exc)) from None
            spaces.append({"record": record, "items": items, "edges": edges})
        return spaces, not_copied


def copy_file(source: Path, target: Path) -> None:
    fsio.ensure_dir(target.parent)  # 0700 each (mkdir(parents=True) gives the parents the umask's mode)
    with open(source, "rb") as handle:
        data = handle.read()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of the SQLite database ``source`` (backup API), never writing beside it.

    Without a ``-wal`` file the main file holds every committed page, so it is opened ``immutable``
    (no lock files, no journal); with one, read-only through the existing WAL."""
    with open(source, "rb") as handle:
        header = handle.read(len(_SQLITE_HEADER))
    if header != _SQLITE_HEADER:
        raise UnreadableStore(f"the source's {source} is not a SQLite database; nothing was copied",
                              file=str(source), reason="not a SQLite database")
    fsio.ensure_dir(target.parent)
    # 0600 before SQLite opens it (it would create 0644 under umask 022; its journal takes this mode)
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | fsio.O_NOFOLLOW, fsio.FILE_MODE))
    quoted = source.as_posix().replace("?", "%3f").replace("#", "%23")
    wal = source.with_name(source.name + "-wal")
    uri = f"file:{quoted}?mode=ro" if wal.exists() else f"file:{quoted}?immutable=1"
    try:
        reader = sqlite3.connect(uri, uri=True)
        try:
            writer = sqlite3.connect(str(target))
            try:
                reader.backup(writer)
            finally:
                writer.close()
        finally:
            reader.close()
    except sqlite3.DatabaseError as exc:
        raise UnreadableStore(f"the source's {source} cannot be read: {exc}; nothing was copied",
                              file=str(source), reason=str(exc)) from None
