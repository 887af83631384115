"""Managed Markdown files of a Documents store: where they live, how they are read, what a temp file is.

Owns the on-disk side of ``documents/active/<filename>`` and ``documents/archived/<filename>`` (the body
lives only there; the frontmatter format is :func:`~.model.render_markdown`), the saved copies under
``documents/edits/`` and the names of temp files our writers and the TypeScript plugin's leave behind
(:data:`TEMP_OURS`, :data:`TEMP_PLUGIN`). File signatures (size, mtime, inode, ctime) are how the store
notices a file changed without reading it.

:class:`ManagedFiles` is a part of :class:`~.store.DocumentStore` (a mixin: it uses the store's paths,
clock, lock timeout and file caches, set up in ``DocumentStore.__init__``).
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .. import fsio
from ..errors import NotFound, RevisionConflict
from . import model
from .model import DocumentRecord, Status, decode_markdown, sha256_hex, split_markdown

#: Temp files older than this are removed by repair even when their writer's pid looks alive.
STALE_TEMP_SECONDS = 3600.0
#: Our temp files (:func:`mnemon_ls.fsio.write_file_atomically`): ``.<name>.<pid>.<ms>.<8 hex>.tmp``.
TEMP_OURS = re.compile(r"^\..+\.(?P<pid>\d+)\.(?P<ms>\d+)\.[0-9a-f]{8}\.tmp$")
#: The TypeScript plugin's temp files: ``<name>.<pid>.<uuid>.tmp``.
TEMP_PLUGIN = re.compile(r"^.+\.(?P<pid>\d+)\.[0-9a-f-]{36}\.tmp$")


def file_signature(info: os.stat_result) -> str:
    """``"size:mtime_ns:inode:ctime_ns"`` of a stat result: equal signatures mean an unchanged file."""
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}:{info.st_ctime_ns}"


def stat_signature(path: Path) -> str | None:
    """:func:`file_signature` of ``path`` (following symlinks), ``None`` when it does not exist."""
    try:
        return file_signature(os.stat(path))
    except FileNotFoundError:
        return None


def opposite_status(status: Status) -> Status:
    """``archived`` for ``active`` and ``active`` for ``archived``."""
    return "archived" if status == "active" else "active"


def unlink_quietly(path: Path) -> None:
    """Remove ``path`` and fsync its directory; an ``OSError`` (already gone, ...) is ignored."""
    try:
        os.unlink(path)
        fsio._fsync_dir(path.parent)
    except OSError:
        pass


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (signal 0; another user's process counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ManagedFiles:
    """Paths, reads and bookkeeping of the managed files (module doc); a part of ``DocumentStore``."""

    documents_dir: Path
    edits_dir: Path
    clock: Callable[[], datetime]
    lock_path: Path
    lock_timeout: float
    _dir_strings: dict[str, str]
    _files: dict[str, tuple[str, str]]
    _files_generation: int
    _missing: dict[str, str]
    _changed_archived: set[str]

    def dir_for(self, status: Status) -> Path:
        """``documents/active`` or ``documents/archived``."""
        return self.documents_dir / status

    def path_for(self, record: DocumentRecord) -> Path:
        """The absolute path of ``record``'s managed file (``documents/<status>/<filename>``)."""
        return self.documents_dir / record.status / record.filename

    def _file(self, record: DocumentRecord) -> str:
        """``path_for`` as a string (cheaper on hot paths)."""
        return os.path.join(self._dir_strings[record.status], record.filename)

    def _stamp(self) -> str:
        moment = self.clock().astimezone(timezone.utc)
        return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"

    def _preserve(self, name: str, data: bytes) -> str:
        return str(fsio.copy_file_exclusive(self.edits_dir, f"{self._stamp()}-{name}", data))

    def _locked(self):
        fsio.ensure_dir(self.dir_for("active"))
        fsio.ensure_dir(self.dir_for("archived"))
        return fsio.file_lock(self.lock_path, self.lock_timeout)

    def _listing(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for status in model.STATUSES:
            try:
                out[status] = set(os.listdir(self.dir_for(status)))
            except (FileNotFoundError, NotADirectoryError):
                out[status] = set()
        return out

    def _managed_names(self, listing: dict[str, set[str]]) -> dict[str, list[str]]:
        return {status: sorted(n for n in names if n.endswith(".md") and not n.startswith("."))
                for status, names in listing.items()}

    def _note_file(self, record: DocumentRecord, path: Path | None = None) -> None:
        try:
            sig = file_signature(os.stat(path or self.path_for(record)))
        except OSError:
            return
        self._files[record.id] = (sig, record.content_hash)
        self._files_generation += 1
        self._missing.pop(record.id, None)
        self._changed_archived.discard(record.id)

    def _read_body(self, record: DocumentRecord) -> str | None:
        try:
            with open(self._file(record), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            self._missing[record.id] = "the managed file is missing"
            return None
        except OSError as exc:
            self._missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
            return None
        return split_markdown(decode_markdown(data))[1]

    def _committed_body(self, record: DocumentRecord) -> str:
        """The body of ``record``'s file, which must exist and match the index (else a clear error)."""
        path = self.path_for(record)
        data = fsio.read_bytes_or_none(path)
        if data is None:
            raise NotFound(f"{record.relative_path}: the managed file of document {record.id} is missing",
                           id=record.id, file=str(path))
        body = split_markdown(decode_markdown(data))[1]
        if sha256_hex(body) != record.content_hash:
            raise RevisionConflict(
                f"{record.relative_path} changed on disk after revision {record.revision} (an edit not yet "
                "taken into the index); refresh and retry", id=record.id, expected=record.content_hash,
                actual=sha256_hex(body))
        return body

    def _temp_files(self, listing: dict[str, set[str]] | None = None) -> list[Path]:
        found = []
        listing = listing or self._listing()
        try:
            top = set(os.listdir(self.documents_dir))
        except OSError:
            top = set()
        now_ms = time.time() * 1000
        for directory, names in ((self.documents_dir, top), (self.dir_for("active"), listing["active"]),
                                 (self.dir_for("archived"), listing["archived"])):
            for name in names:
                match = TEMP_OURS.match(name) or TEMP_PLUGIN.match(name)
                if not match:
                    continue
                pid = int(match.group("pid"))
                try:
                    age_ms = now_ms - os.stat(directory / name).st_mtime * 1000
                except OSError:
                    continue
                if pid != os.getpid() and (not pid_alive(pid) or age_ms > STALE_TEMP_SECONDS * 1000):
                    found.append(directory / name)
        return found
