"""Managed Markdown files of a Documents store: where they live, how they are read, what a temp file is.

Owns the on-disk side of ``documents/active/<filename>`` and ``documents/archived/<filename>`` (the body
lives only there; the frontmatter format is :func:`~.model.render_markdown`), the saved copies under
``documents/edits/`` and the names of temp files our writers and the TypeScript plugin's leave behind
(:data:`TEMP_OURS`, :data:`TEMP_PLUGIN`). File signatures (size, mtime, inode, ctime) are how the store
notices a file changed without reading it.

:class:`ManagedFiles` is ``store.files`` of a :class:`~.store.DocumentStore`: an object of its own, built
from the paths and the clock it needs, holding what the store knows of each managed file.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .. import fsio
from ..errors import NotFound, RevisionConflict, UnreadableStore
from . import model
from .model import DocumentRecord, Status, sha256_hex, split_markdown

#: Temp files older than this are removed by repair even when their writer's pid looks alive.
STALE_TEMP_SECONDS = 3600.0
#: Our temp files (:func:`mnemon_ls.fsio.write_file_atomically`): ``.<name>.<pid>.<ms>.<8 hex>.tmp``.
TEMP_OURS = re.compile(r"^\..+\.(?P<pid>\d+)\.(?P<ms>\d+)\.[0-9a-f]{8}\.tmp$")
#: The TypeScript plugin's temp files: ``<name>.<pid>.<uuid>.tmp``.
TEMP_PLUGIN = re.compile(r"^.+\.(?P<pid>\d+)\.[0-9a-f-]{36}\.tmp$")
#: Lock staging files of :func:`mnemon_ls.fsio.file_lock` (``<lock>.<pid>.<12 hex>.publish``) for the
#: index lock and the access lock; a killed locker leaves one behind.
LOCK_STAGING = re.compile(r"^\.(?:index|access)\.lock\.(?P<pid>\d+)\.[0-9a-f]{12}\.publish$")
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class SpecialFile(OSError):
    """A path that must be a regular file is something else (a FIFO, a socket, a device, a directory).

    An :class:`OSError` (``errno`` ``EINVAL``; ``strerror`` says what it is, e.g. "is a FIFO (named pipe),
    not a regular file"), so callers that report unreadable files report it the same way.
    """


class FileTooLarge(OSError):
    """A file is larger than the caller's limit (``EFBIG``); ``size`` is its size in bytes when known
    (``None`` for a file whose size the file system does not report, e.g. under ``/proc``), ``limit``
    the limit in bytes."""

    def __init__(self, path: str, size: int | None, limit: int) -> None:
        what = f"is {size} bytes" if size is not None else "is larger than it claims"
        super().__init__(errno.EFBIG, f"{what}; at most {limit} bytes are read", path)
        self.size = size
        self.limit = limit


def read_regular_file(path: Path | str, limit_bytes: int | None = None, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, read without ever blocking on what is not one.

    The file is opened with ``O_NONBLOCK`` (opening a FIFO with no writer returns at once instead of
    waiting for one) and checked with ``fstat`` on the open descriptor (no race with a rename): anything
    but a regular file raises :class:`SpecialFile` before a byte is read. With ``limit_bytes``, a file
    whose size is over it raises :class:`FileTooLarge` unread, and at most ``limit_bytes + 1`` bytes are
    ever read (a file that grows, or a pseudo-file reporting size 0, cannot make the read unbounded). A
    file whose size is 0 but which yields bytes (the pseudo-files of ``/proc``, ``/sys``) raises
    :class:`SpecialFile` too: it is not stored text.
    Raises :class:`FileNotFoundError` and the other :class:`OSError` of ``open``/``read`` (``EAGAIN``
    from a pseudo-file that would block). ``follow_links=False`` opens the final component
    ``O_NOFOLLOW``: a symbolic link raises :class:`SpecialFile` unread.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise SpecialFile(errno.EINVAL, "is a symbolic link, not a regular file (links are never followed "
                                            "under a storage root)", name) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):  # a socket, a device without a driver
            _refuse_special(name, os.stat(name).st_mode)
        raise
    try:
        info = os.fstat(fd)
        _refuse_special(name, info.st_mode)
        if limit_bytes is not None and info.st_size > limit_bytes:
            raise FileTooLarge(name, info.st_size, limit_bytes)
        with open(fd, "rb", buffering=0, closefd=False) as raw:
            # (an unbuffered FileIO returns None where a non-blocking read would wait: EAGAIN)
            if limit_bytes is None:
                read = raw.readall()  # sized from fstat: one read for a regular file
            else:
                chunks: list[bytes] = []
                total, left = 0, min(limit_bytes, info.st_size) + 1
                while left > 0 and (chunk := raw.read(left)):
                    chunks.append(chunk)
                    total += len(chunk)
                    left = limit_bytes + 1 - total
                read = None if chunk is None else b"".join(chunks)
        if read is None:
            raise BlockingIOError(errno.EAGAIN, "would block (a pseudo-file with nothing to read yet)", name)
        data: bytes = read
        total = len(data)
        if total and info.st_size == 0:
            raise SpecialFile(errno.EINVAL, "is a pseudo-file (its size is 0 but it has content, as under /proc or "
                                            "/sys), not a stored file", name)
        if limit_bytes is not None and total > limit_bytes:
            raise FileTooLarge(name, None, limit_bytes)
        return data
    finally:
        os.close(fd)


def _refuse_special(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((label for test, label in _KINDS if test(mode)), "a special file")
        raise SpecialFile(errno.EINVAL, f"is {kind}, not a regular file", name)


def read_managed_or_none(path: Path | str) -> bytes | None:
    """:func:`read_regular_file` of a managed file (no limit), ``None`` when it does not exist. A managed
    file is never read through a symbolic link (invariant 10: a repository could commit one pointing
    anywhere): the final component is opened ``O_NOFOLLOW`` and a link raises :class:`SpecialFile`."""
    try:
        return read_regular_file(path, follow_links=False)
    except FileNotFoundError:
        return None


def redacted_for_search(record: DocumentRecord, body_hash: str, secrets: str) -> bool:
    """Whether search takes the body whose sha256 hex is ``body_hash`` (``record``'s file) with placeholders
    (:func:`searchable`): it is not the adopted body and ``secrets`` is not ``allow``. What search derives from a
    body (the index's terms, the chunk vectors) is keyed by this too, so a change of the setting re-derives it."""
    return secrets != "allow" and body_hash != record.content_hash


def searchable(record: DocumentRecord, body: str, secrets: str) -> str:
    """``body`` (read from ``record``'s file) as search may keep it (:meth:`ManagedFiles.searchable_body`): as it
    is when it is the adopted body (its hash ``record``'s) or ``secrets`` is ``allow``, else with every credential
    replaced by a placeholder (:func:`mnemon_ls.redact.redact_text`)."""
    if not redacted_for_search(record, sha256_hex(body), secrets):
        return body
    from ..redact import redact_text  # on use: most reads never need it

    return redact_text(body)[0]


def as_read(record: DocumentRecord, body: str, secrets: str) -> tuple[str, tuple[str, ...]]:
    """``(body as a read answers it, notices)`` for ``body`` read from ``record``'s file: :func:`searchable` (an
    edit not adopted holds its credentials as placeholders, as search keeps it; the adopted body, or any body
    under ``secrets: allow``, as it is), and, when a placeholder took a value's place, one notice naming the file
    and the kinds of credential (:data:`mnemon_ls.redact_rules.KINDS`), never the value, saying the file keeps it
    until the file is fixed. ``(body, ())`` when nothing was replaced."""
    if not redacted_for_search(record, sha256_hex(body), secrets):
        return body, ()
    from ..redact import redact_text  # on use: most reads never need it
    from ..redact_rules import KINDS

    shown, found = redact_text(body)
    if not found:
        return body, ()
    kinds = ", ".join(sorted({KINDS.get(m.kind, m.kind) for m in found}))
    return shown, (f"{record.relative_path}: the file holds what looks like {kinds} in an edit made outside "
                   "mnemon-ls and not adopted; shown here (as search shows it) with a placeholder in its place; "
                   "the file on disk keeps it as typed until the file is fixed",)


def not_utf8_reason(exc: UnicodeDecodeError) -> str:
    """Why a managed file is left alone: it is not UTF-8 (``exc`` from decoding its bytes)."""
    return (f"the managed file is not UTF-8 text (invalid byte at offset {exc.start}), perhaps re-saved in "
            "another encoding; it is kept byte for byte and left out until it is re-saved as UTF-8 or the "
            "document is updated with new content")


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



class ManagedFiles:
    """The managed files of one Documents store (module doc): their paths, how they are read, the copies
    saved under ``edits/``, the temp files left behind, and what the store knows of each file.

    ``store.files`` of a :class:`~.store.DocumentStore`; built from the paths and the clock it needs
    (``documents_dir``, ``edits_dir``, ``clock`` returning the current UTC time), it holds no reference to
    the store. Not locked itself: callers hold the store's ``mutex`` (and its ``locked()`` file lock to
    write). What it knows of each file, by document id (read and updated by the store's parts):

    - :attr:`signatures`: ``id -> (file signature, sha256 hex of the body)`` as last read from disk
      (:func:`file_signature`); :attr:`generation` grows by one at each change the search index must follow;
    - :attr:`missing`: ``id -> reason`` of a file that is missing or unreadable (left out of search);
    - :attr:`undecodable`: ``id -> (file signature, reason)`` of a file that is not UTF-8 (never adopted
      until its signature changes);
    - :attr:`changed_archived`: ids of archived documents whose file changed outside mnemon-ls (reported once).
    """

    def __init__(self, documents_dir: Path, edits_dir: Path, clock: Callable[[], datetime]) -> None:
        self.documents_dir = documents_dir
        self.edits_dir = edits_dir
        self.clock = clock
        self._dir_strings = {status: str(documents_dir / status) for status in model.STATUSES}
        self.signatures: dict[str, tuple[str, str]] = {}
        self.generation = 0
        self.missing: dict[str, str] = {}
        self.changed_archived: set[str] = set()
        self.undecodable: dict[str, tuple[str, str]] = {}

    def dir_for(self, status: Status) -> Path:
        """``documents/active`` or ``documents/archived``."""
        return self.documents_dir / status

    def path_for(self, record: DocumentRecord) -> Path:
        """The absolute path of ``record``'s managed file (``documents/<status>/<filename>``)."""
        return self.documents_dir / record.status / record.filename

    def fspath(self, record: DocumentRecord) -> str:
        """:meth:`path_for` as a string (cheaper on hot paths: no :class:`Path` is built)."""
        return os.path.join(self._dir_strings[record.status], record.filename)

    def stamp(self) -> str:
        """The current UTC time as a file-name stamp (:func:`mnemon_ls.fsio.file_stamp`) for saved copies."""
        return fsio.file_stamp(self.clock().astimezone(timezone.utc))

    def replace_keeping_saves(self, record: DocumentRecord, path: Path, data: bytes, previous: bytes | None,
                              preserved: dict[str, str] | None) -> None:
        """Durably replace ``record``'s managed file ``path`` with ``data``. With ``preserved`` (an update: relative
        path -> saved path), a save by someone outside the lock that the write displaced (bytes other than
        ``previous``, what the writer read under the lock: :func:`~mnemon_ls.fsio.replace_watching`) is saved
        under ``edits/`` and added; when that save fails, the displaced bytes are put back and the error raised
        (nothing is committed). Raises the :class:`OSError` of the writes."""
        if preserved is None:
            fsio.write_file_atomically(path, data)
            return
        displaced = fsio.replace_watching(path, data, previous)
        if displaced is None:
            return
        key = record.relative_path + (" (saved during the write)" if record.relative_path in preserved else "")
        try:
            preserved[key] = self.preserve(record.filename, displaced)
        except BaseException:
            fsio.write_file_atomically(path, displaced)  # the save stays where it was
            raise

    def preserve(self, name: str, data: bytes) -> str:
        """Save ``data`` durably as ``documents/edits/<stamp>-<name>`` (never overwriting: a taken name
        gets a suffix) and return its absolute path; raises the :class:`OSError` of the write. A
        :class:`~mnemon_ls.fsio.Displaced` file still being written is moved there itself
        (:func:`~mnemon_ls.fsio.keep_displaced`)."""
        return str(fsio.keep_displaced(self.edits_dir, f"{self.stamp()}-{name}", data))

    def listing(self) -> dict[str, set[str]]:
        """``{"active": names, "archived": names}``: every entry of the two directories (an absent
        directory lists as empty)."""
        out: dict[str, set[str]] = {}
        for status in model.STATUSES:
            try:
                out[status] = set(os.listdir(self.dir_for(status)))
            except (FileNotFoundError, NotADirectoryError):
                out[status] = set()
        return out

    @staticmethod
    def managed_names(listing: dict[str, set[str]]) -> dict[str, list[str]]:
        """Of a :meth:`listing`, the managed file names (``*.md``, not hidden), sorted, per status."""
        return {status: sorted(n for n in names if n.endswith(".md") and not n.startswith("."))
                for status, names in listing.items()}

    def note_file(self, record: DocumentRecord, path: Path | None = None) -> None:
        """Remember the file of ``record`` (at ``path``, default :meth:`path_for`) as just written with
        ``record``'s body: its signature and ``content_hash`` go into :attr:`signatures` (and
        :attr:`generation` grows), and it is no longer missing, undecodable or a changed archived copy.
        A file that cannot be stat'ed is left as it was known (the next refresh looks again)."""
        try:
            sig = file_signature(os.stat(path or self.path_for(record)))
        except OSError:
            return
        self.signatures[record.id] = (sig, record.content_hash)
        self.generation += 1
        self.missing.pop(record.id, None)
        self.undecodable.pop(record.id, None)
        self.changed_archived.discard(record.id)

    def read_body(self, record: DocumentRecord) -> str | None:
        """The body of ``record``'s managed file, or ``None`` (the reason noted in :attr:`missing`) when it
        is missing, unreadable, not a regular file or not UTF-8. Never writes."""
        try:
            data = read_regular_file(self.fspath(record))
        except FileNotFoundError:
            self.missing[record.id] = "the managed file is missing"
            return None
        except OSError as exc:
            self.missing[record.id] = f"the managed file cannot be read ({exc.strerror or exc})"
            return None
        try:
            return split_markdown(data.decode("utf-8"))[1]
        except UnicodeDecodeError as exc:
            self.missing[record.id] = not_utf8_reason(exc)
            return None

    @staticmethod
    def redacted_for_search(record: DocumentRecord, body_hash: str, secrets: str) -> bool:
        """:func:`redacted_for_search` (for the semantic side, which reaches the files through the store)."""
        return redacted_for_search(record, body_hash, secrets)

    def searchable_body(self, record: DocumentRecord, secrets: str) -> str | None:
        """:meth:`read_body` for what search keeps and shows (the derived index, the vectors, excerpts): a body
        the index has not adopted (a hand edit a refresh left as it is: its first line indented, or a credential
        under ``secrets: reject``) is taken with every credential replaced by a placeholder unless ``secrets``
        (the setting) is ``allow``, so nothing search derives holds a value adoption would keep out. The file
        itself is left as it is. ``None`` as :meth:`read_body`."""
        body = self.read_body(record)
        return None if body is None else searchable(record, body, secrets)

    def body_of(self, record: DocumentRecord, data: bytes) -> str:
        """The body in ``data`` (the bytes of ``record``'s managed file), decoded strictly.

        Raises :class:`~mnemon_ls.errors.UnreadableStore` (``data.file``, ``reason``, ``id``,
        ``offset``) when the bytes are not UTF-8: a lossy decoding is never used where it could be
        written back (the file is kept byte for byte).
        """
        try:
            return split_markdown(data.decode("utf-8"))[1]
        except UnicodeDecodeError as exc:
            path = self.path_for(record)
            raise UnreadableStore(
                f"{record.relative_path}: {not_utf8_reason(exc)}. Re-save it as UTF-8, or update document "
                f"{record.id} with new content (the current file is saved under documents/edits/ first)",
                file=str(path), reason="not-utf-8", id=record.id, offset=exc.start) from None

    def read_managed(self, record: DocumentRecord, settle: bool = False) -> bytes | None:
        """The bytes of ``record``'s managed file, ``None`` when missing; a FIFO, socket, device or
        directory in its place raises :class:`~mnemon_ls.errors.UnreadableStore` (never blocks). ``settle``: a
        writer's read under the lock, made once nobody writes the file (an editor saving in place, at most
        :data:`~mnemon_ls.fsio.DISPLACED_WAIT_SECONDS`: :func:`~mnemon_ls.fsio.wait_for_writers`)."""
        path = self.path_for(record)
        if settle:
            fsio.wait_for_writers(path)
        try:
            return read_managed_or_none(path)
        except SpecialFile as exc:
            raise UnreadableStore(f"{record.relative_path}: the managed file of document {record.id} {exc.strerror}; "
                                  "nothing was read or written", file=str(path), reason="not-a-regular-file",
                                  id=record.id) from None

    def committed_body(self, record: DocumentRecord) -> str:
        """The body of ``record``'s file, which must exist, be UTF-8 and match the index (else a clear
        error: :class:`NotFound`, :class:`UnreadableStore`, :class:`RevisionConflict`)."""
        return self.committed(record)[1]

    def committed(self, record: DocumentRecord) -> tuple[bytes, str]:
        """``(data, body)``: the bytes of ``record``'s file, read once, and the body in them, which must match the
        index (the errors of :meth:`committed_body`). For a caller that also looks at the bytes (an archive:
        :func:`~.changes.indented_on_disk`) without reading the file a second time."""
        path = self.path_for(record)
        data = self.read_managed(record)
        if data is None:
            raise NotFound(f"{record.relative_path}: the managed file of document {record.id} is missing",
                           id=record.id, file=str(path))
        body = self.body_of(record, data)
        if sha256_hex(body) != record.content_hash:
            raise RevisionConflict(
                f"{record.relative_path} changed on disk after revision {record.revision} (an edit not yet "
                "taken into the index); refresh and retry", id=record.id, expected=record.content_hash,
                actual=sha256_hex(body))
        return data, body

    def temp_files(self, listing: dict[str, set[str]] | None = None) -> list[Path]:
        """Temp files and lock staging files (:data:`LOCK_STAGING`) that a writer which has exited (or
        one older than :data:`STALE_TEMP_SECONDS`) left in ``documents/``, ``active/`` or ``archived/``;
        ``listing`` a :meth:`listing` just taken (default: taken now)."""
        found = []
        listing = listing or self.listing()
        try:
            top = set(os.listdir(self.documents_dir))
        except OSError:
            top = set()
        now_ms = time.time() * 1000
        for directory, names in ((self.documents_dir, top), (self.dir_for("active"), listing["active"]),
                                 (self.dir_for("archived"), listing["archived"])):
            for name in names:
                match = TEMP_OURS.match(name) or TEMP_PLUGIN.match(name) or (
                    LOCK_STAGING.match(name) if directory == self.documents_dir else None)
                if not match:
                    continue
                pid = int(match.group("pid"))
                try:
                    age_ms = now_ms - os.stat(directory / name).st_mtime * 1000
                except OSError:
                    continue
                if pid != os.getpid() and (not fsio.pid_alive(pid) or age_ms > STALE_TEMP_SECONDS * 1000):
                    found.append(directory / name)
        return found
