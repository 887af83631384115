"""ByteRover behind mnemon-ls spaces (package doc for the mapping and the fields).

The engine is the ``brv`` command of byterover-cli (3.14). Every ``brv`` command but ``--version`` talks to
ByteRover's background daemon (one per user: ``$XDG_DATA_HOME/brv`` or ``~/.local/share/brv``), which the first
command starts; at its start the daemon fetches the OpenID discovery document of ByteRover's login service
(``BRV_IAM_BASE_URL``, byterover.dev by default) and stops when that cannot be reached, so ``brv`` then waits
for a daemon that never comes: that is ``timeoutSeconds`` running out, named as such. Nothing here changes
that environment: ``brv`` runs with mnemon-ls's own (plus ``BRV_DISABLE_AUTOUPDATE=1`` unless it is set: an
update of byterover-cli is not started from inside mnemon-ls).

Commands used: ``brv --version`` (health), ``brv locations --format json`` (discovery: projects of the daemon's
registry; ByteRover also registers the directory a command runs in, so discovery runs in ``defaultDirectory``,
else the user's home), ``brv vc init`` (a new project, in a directory this package makes), ``brv search
--format json --limit N -- <query>`` (recall, in the project directory). Each runs in a process group of its
own, killed when ``timeoutSeconds`` runs out. Entries are read, written and deleted as files of the context
tree (:class:`ByteRoverSpace`).

Errors: :class:`~mnemon_ls.errors.InvalidInput` naming the field for a ``cliPath`` that names no executable
(``services.cliPath``), a ``workingDirectory`` that is not absolute or not an initialised project
(``connection.workingDirectory``), a new space without ``defaultDirectory`` (``services.defaultDirectory``) or whose
directory exists (``name``), an id that is not an entry of the space (``id``);
:class:`~mnemon_ls.errors.ProviderUnavailable` (``engine-failed``) naming the ``brv`` command that failed, did
not answer within ``timeoutSeconds`` or answered what is not its JSON, and a context tree that cannot be
written. Nothing is written when an error is raised.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces.model import Item, parse_time, require_unicode, rfc3339
from mnemon_ls.spaces.providers.base import (filtered, Health, KeepFn, Namespace, NoGraphNoMerge, SearchOutcome,
                                              sparse_hint)

from .entries import _DERIVED, _entries, _is_entry, _now, HASHED, item_id, path_of, read_entry, render

DEFAULT_TIMEOUT_SECONDS = 30.0
#: The context tree of a project directory.
TREE = (".brv", "context-tree")
#: The topic folder mnemon-ls writes its entries in, under the category's domain folder.
TOPIC = "mnemon_ls"
#: The most results ``brv search`` gives (its ``--limit`` maximum).
MAX_SEARCH_LIMIT = 50
#: How long ``brv search`` may keep answering from its index cache after the tree changed (seconds;
#: byterover-cli's ``DEFAULT_CACHE_TTL_MS``): a new entry may be missing from recall for that long.
INDEX_CACHE_SECONDS = 5
_SLUG = re.compile(r"[^a-z0-9]+")
_VERSION = re.compile(r"byterover-cli/(\S+)")


# ---------------------------------------------------------------------------------------------- the engine

class ByteRoverEngine:
    """byterover-cli behind mnemon-ls (module doc): ``command`` (the ``brv`` executable, resolved), ``timeout``
    (seconds per ``brv`` run), ``directory`` (``defaultDirectory`` or ``None``)."""

    def __init__(self, command: str, timeout: float, directory: Path | None) -> None:
        self.command = command
        self.timeout = timeout
        self.directory = directory
        #: ``{project directory: time.monotonic() of this engine's last write there}`` (recall's notice).
        self.written: dict[str, float] = {}

    @classmethod
    def open(cls, service: dict[str, Any]) -> "ByteRoverEngine":
        """Open from service fields: finds the ``brv`` command (``InvalidInput`` naming ``services.cliPath`` when
        there is none); runs nothing, writes nothing."""
        name = str(service.get("cliPath") or "brv").strip()
        if "/" in name:
            path = os.path.expanduser(name)
            if not os.path.isabs(path):
                raise InvalidInput("services.cliPath", "must be a command name on PATH or an absolute path (got a "
                                                       "relative path)")
            found = path if os.path.isfile(path) and os.access(path, os.X_OK) else None
        else:
            found = shutil.which(name)
        if found is None:
            raise InvalidInput("services.cliPath", f"names no executable ({name} was not found"
                                                   f"{'' if '/' in name else ' on PATH'}): install byterover-cli "
                                                   "(npm install -g byterover-cli@3.14.0) or set cliPath to its brv")
        raw = service.get("timeoutSeconds")
        timeout = DEFAULT_TIMEOUT_SECONDS if raw in (None, "") else float(raw)
        directory = service.get("defaultDirectory")
        return cls(found, timeout, Path(os.path.expanduser(str(directory))) if directory else None)

    # ------------------------------------------------------------------ running brv

    def run(self, args: list[str], cwd: Path, *, json_answer: bool = True) -> Any:
        """The ``data`` of ``brv <args> --format json`` run in ``cwd`` (``json_answer`` false: its stdout as
        text). Raises :class:`ProviderUnavailable` (module doc): it did not start, did not answer within
        ``timeoutSeconds`` (its process group is killed), exited non-zero, or answered no JSON of success."""
        what = "brv " + " ".join(a for a in args if not a.startswith("--") and a not in ("json",))[:80]
        env = dict(os.environ)
        env.setdefault("BRV_DISABLE_AUTOUPDATE", "1")
        try:
            process = subprocess.Popen([self.command, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise self._failed(f"`{what}` could not start ({self.command}: {type(exc).__name__}: {exc})") from None
        with _RUNNING_LOCK:
            _RUNNING.add(process)
        try:
            out, err = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise self._failed(f"`{what}` in {cwd} gave no answer within {self.timeout:g} s (timeoutSeconds); "
                               "ByteRover's daemon may not be starting (its login service, BRV_IAM_BASE_URL, "
                               "cannot be reached?)") from None
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(process)
        text = out.decode("utf-8", errors="replace")
        said = " ".join(err.decode("utf-8", errors="replace").split())[-300:]
        if process.returncode != 0:
            raise self._failed(f"`{what}` in {cwd} exited with status {process.returncode}"
                               + (f": {said}" if said else ""))
        if not json_answer:
            return text
        answer = None
        for line in reversed(text.strip().splitlines()):
            if line.startswith("{"):
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue
                break
        if not isinstance(answer, dict):
            raise self._failed(f"`{what}` in {cwd} answered what is not its JSON: {' '.join(text.split())[:200]!r}")
        data = answer.get("data") if isinstance(answer.get("data"), dict) else {}
        if answer.get("success") is not True:
            error = answer.get("error") or data.get("message") or data.get("error") or "no reason given"
            raise self._failed(f"`{what}` in {cwd} failed: {' '.join(str(error).split())[:300]}")
        return data

    def _failed(self, said: str) -> ProviderUnavailable:
        return ProviderUnavailable(f"provider byterover: {said}", provider="byterover", reason="engine-failed",
                                   location=self.command)

    # ------------------------------------------------------------------ protocol

    def _locations(self) -> list[dict[str, Any]]:
        cwd = self.directory if self.directory is not None and self.directory.is_dir() else Path.home()
        data = self.run(["locations", "--format", "json"], cwd)
        rows = data.get("locations")
        return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []

    def health(self) -> Health:
        """``brv --version`` and ``brv locations`` (its daemon answers): the engine's version, the initialised
        projects and their entries."""
        started = time.perf_counter()
        version = _VERSION.search(self.run(["--version"], Path.home(), json_answer=False))
        if version is None:
            raise self._failed(f"{self.command} --version does not name byterover-cli: is it ByteRover's brv?")
        found = self.discover()
        entries = sum(n.items or 0 for n in found)
        return Health(True, f"ByteRover {version.group(1)} (byterover-cli)", self.command, entries,
                      (time.perf_counter() - started) * 1000,
                      f"{entries} entries in {len(found)} initialised project(s)",
                      {"projects": len(found), "defaultDirectory": str(self.directory) if self.directory else None})

    def discover(self) -> list[Namespace]:
        """Every initialised project ``brv locations`` lists (its directory's name; its entries as ``items``), once,
        under its normal path (``/p/``, ``/p/.`` and ``//p`` are ``/p``; a path with ``..`` is skipped)."""
        out: list[Namespace] = []
        seen: set[str] = set()
        for row in self._locations():
            project = row.get("projectPath")
            if not isinstance(project, str) or not os.path.isabs(project) or ".." in Path(project).parts:
                continue
            project = "/" + os.path.normpath(project).lstrip("/")  # (one project, however its path is spelled)
            if project in seen:
                continue
            tree = Path(project, *TREE)
            if row.get("isInitialized") is not True or not tree.is_dir():
                continue
            seen.add(project)
            out.append(Namespace(project, Path(project).name or project, f"ByteRover project {project}",
                                 {"workingDirectory": project}, sum(1 for _ in _entries(tree))))
        return out

    def create_namespace(self, name: str, description: str) -> Namespace:
        """A new project ``<defaultDirectory>/<name as lower-case ASCII words joined by _>`` (a name with no ASCII
        letter or digit: ``space_`` + 12 hex of its SHA-256), made with ``brv vc init``. Refused, naming the field,
        without ``defaultDirectory`` or when that directory exists (another project, or anything else: discovery
        is how an existing project becomes a space). The directory is removed again when ``brv vc init`` fails."""
        if self.directory is None:
            raise InvalidInput("services.defaultDirectory", "is required to create a ByteRover project: the "
                                                            "directory new projects are made in (mnemon-ls provider "
                                                            "configure byterover --set defaultDirectory=/abs/dir); "
                                                            "or run `brv vc init` in a project and discover it "
                                                            "(mnemon-ls provider discover byterover)")
        slug = _SLUG.sub("_", name.strip().lower()).strip("_")[:64]
        if not slug:
            slug = "space_" + hashlib.sha256(name.strip().encode("utf-8")).hexdigest()[:12]
        project = self.directory / slug
        if os.path.lexists(project):
            raise InvalidInput("name", f"names the directory {project}, which already exists: `mnemon-ls provider "
                                       "discover byterover` adds an initialised project as a space; choose another "
                                       "name for a new project")
        try:
            project.mkdir(parents=True)
        except OSError as exc:
            raise self._failed(f"cannot make the project directory {project}: {exc.strerror or exc}") from None
        try:
            self.run(["vc", "init"], project, json_answer=False)
            if not Path(project, *TREE).is_dir():
                raise self._failed(f"`brv vc init` in {project} made no .brv/context-tree")
        except BaseException:
            shutil.rmtree(project, ignore_errors=True)
            raise
        return Namespace(str(project), name, description, {"workingDirectory": str(project)}, 0)

    def space(self, connection: dict[str, Any], *, space_id: str) -> "ByteRoverSpace":
        """The space of one project (``workingDirectory``: absolute, initialised)."""
        project = connection.get("workingDirectory")
        if not isinstance(project, str) or not project.strip():
            raise InvalidInput("connection.workingDirectory", "is required: the absolute path of a ByteRover project "
                                                         "directory", spaceId=space_id)
        if not os.path.isabs(project) or ".." in Path(project).parts:
            raise InvalidInput("connection.workingDirectory", "must be an absolute path without '..' (a ByteRover "
                                                         "project directory)", spaceId=space_id)
        tree = Path(project, *TREE)
        try:
            initialised = tree.is_dir()
        except OSError:  # (a path the system cannot name: too long)
            initialised = False
        if not initialised:
            raise InvalidInput("connection.workingDirectory", f"is not an initialised ByteRover project ({project} has no "
                                                         ".brv/context-tree): run `brv vc init` in it",
                               spaceId=space_id)
        return ByteRoverSpace(self, Path(project), tree, space_id)

    def close(self) -> None:
        """Nothing held between commands (ByteRover's daemon is its own: it stops itself when idle)."""


#: The ``brv`` processes running now (each the leader of its own group), ended when this process exits: a recall
#: the caller gave up on (its provider timeout) must not leave a ``brv search`` behind it.
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


@atexit.register
def _end_running() -> None:
    """At exit: end the group of every ``brv`` still running (:data:`_RUNNING`)."""
    with _RUNNING_LOCK:
        left = list(_RUNNING)
    for process in left:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """End ``process`` and every process of its group (a ``brv`` that hangs, and what it started)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.communicate()


class ByteRoverSpace(NoGraphNoMerge):
    """The SpaceProvider of one ByteRover project (protocol: mnemon_ls.spaces.providers.base.SpaceProvider)."""

    provider_id = "byterover"
    engine_label = "ByteRover"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: ByteRoverEngine, project: Path, tree: Path, space_id: str) -> None:
        from . import PLUGIN

        self.capabilities = PLUGIN.capabilities
        self.engine = engine
        self.project = project
        self.tree = tree
        self.space_id = space_id

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """A new entry ``<category>/mnemon_ls/<first words>_<12 hex>.md`` holding ``content`` (package doc), written
        to a hidden temporary file of the same folder, synced, then linked to its name (never over an existing
        file). ``entities`` are not kept (ByteRover has none). A lone surrogate in ``content``, ``tags`` or ``source``
        is :class:`InvalidInput` naming that field, nothing made. ``path``: the entry's path in the tree; ``notice``: when
        recall finds it (one sentence)."""
        text = require_unicode(content, "content").strip()  # (a lone surrogate: refused before anything is made)
        for tag in tags:
            require_unicode(tag, "tags")
        require_unicode(source, "source")
        words = _SLUG.sub("_", " ".join(text.lower().split()[:8])).strip("_")[:48].strip("_") or "memory"
        domain = _SLUG.sub("_", category.lower()).strip("_") or "general"
        folder = self.tree / domain / TOPIC
        now = _now()
        data = render(text, category=category, importance=importance, tags=tags, source=source, now=now)
        made = [p for p in (self.tree / domain, folder) if not p.exists()]
        temp = None
        try:
            if not folder.resolve().is_relative_to(self.tree.resolve()):  # (resolves the links that exist)
                made = []
                raise OSError(f"{folder} leads out of the context tree (a symbolic link)")
            folder.mkdir(parents=True, exist_ok=True)
            for _ in range(5):
                name = f"{words}_{uuid.uuid4().hex[:12]}.md"
                temp = folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
                with open(temp, "xb") as handle:
                    handle.write(data.encode("utf-8"))
                    handle.flush()
                    os.fsync(handle.fileno())
                try:
                    os.link(temp, folder / name)
                except FileExistsError:
                    temp.unlink()
                    continue
                temp.unlink()
                temp = None
                break
            else:
                raise OSError("five new names in a row were taken")
        except OSError as exc:
            if temp is not None:
                temp.unlink(missing_ok=True)
            for path in reversed(made):
                try:
                    path.rmdir()
                except OSError:
                    pass
            raise self.engine._failed(f"cannot write the entry in {folder}: {exc.strerror or exc}") from None
        path = f"{domain}/{TOPIC}/{name}"
        self.engine.written[str(self.project)] = time.monotonic()
        return {"id": item_id(path), "action": "added", "content": text, "category": category,
                "importance": importance, "tags": list(tags), "entities": [], "created_at": rfc3339(parse_time(now)),
                "edges_created": {}, "path": path,
                "notice": f"ByteRover's search may take up to {INDEX_CACHE_SECONDS} s (its index cache) to find it."}

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """``brv search`` in the project (ByteRover's BM25; every ``mode`` is that keyword search): its results that
        are entries of this project's own tree (no shared source, no folder summary) and still exist, each read
        from its file, in ByteRover's order; ``category`` and ``source`` filter, ``keep(tags)`` false drops one.
        ByteRover tokenises on spaces and punctuation and matches words by prefix (and small edit distance): a
        Chinese query finds an entry when it begins a run of Chinese text there, not from the middle of one. A U+0000
        in the query is searched as a space (no command argument can hold one). Within
        6 s of a write by this engine to the project, ``notices`` says that its index cache may not show it yet."""
        asked = max(1, min(MAX_SEARCH_LIMIT, max(limit * 2, limit + 10)))
        query = query.replace("\x00", " ")  # (no command argument holds U+0000; ByteRover splits words on it anyway)
        data = self.engine.run(["search", "--format", "json", "--limit", str(asked), "--", query], self.project)
        rows = [r for r in data.get("results") or [] if isinstance(r, dict)]
        found: list[Item] = []
        seen: set[str] = set()
        for row in rows:
            path = row.get("path")
            if row.get("origin", "local") != "local" or not isinstance(path, str) or path in seen:
                continue
            score = row.get("score")
            item = read_entry(self.tree, path, score=float(score) if isinstance(score, (int, float))
                              and not isinstance(score, bool) else None)
            if item is not None:
                seen.add(path)
                found.append(item)
        items, dropped = filtered(found, category, source, keep)
        items = items[:limit]
        notices = []
        if time.monotonic() - self.engine.written.get(str(self.project), -1e9) < INDEX_CACHE_SECONDS + 1:
            notices.append(f"ByteRover's search answers from an index it caches for {INDEX_CACHE_SECONDS} s: an entry "
                           f"written to {self.project} in the last {INDEX_CACHE_SECONDS} s may be missing")
        return SearchOutcome(items, sparse_hint(len(items), limit), len(found), dropped, notices)

    def _path(self, item: str) -> str | None:
        path = path_of(item)
        if path is not None and path.startswith(HASHED):
            path = next((p for p in _entries(self.tree) if item_id(p) == item), None)
        return path

    def forget(self, item_id: str) -> dict[str, Any]:
        """Delete the entry's file and its derived siblings (``.abstract.md``, ``.overview.md``), as ByteRover's
        curate DELETE does (hard); a sibling that cannot be deleted (a folder of that name) is left and named in the
        message. An id that names no entry of this tree is ``InvalidInput`` naming ``id``."""
        path = self._path(item_id)
        full = self.tree / path if path is not None and _is_entry(path) else None
        try:
            inside = full is not None and full.resolve().is_relative_to(self.tree.resolve()) and full.is_file()
        except OSError:
            inside = False
        if full is None or not inside:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        try:
            full.unlink()
        except FileNotFoundError:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id) from None
        except OSError as exc:
            raise self.engine._failed(f"cannot delete {full}: {exc.strerror or exc}") from None
        left = []
        for suffix in _DERIVED:
            sibling = full.with_name(full.name[:-3] + suffix)
            try:
                sibling.unlink(missing_ok=True)
            except OSError:  # (a folder of that name, or not removable: the entry itself is gone)
                left.append(sibling.name)
        return {"id": item_id, "status": "deleted",
                "message": f"deleted {path} from the ByteRover context tree of {self.project}"
                           + (f" (left {', '.join(left)}: not a file that could be deleted)" if left else "")}

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this project."""
        return {"total_insights": self.count(), "deleted_insights": 0, "by_category": {}, "edge_count": 0,
                "top_entities": [], "oplog_count": 0, "db_path": str(self.tree), "db_size_bytes": 0,
                "workingDirectory": str(self.project)}

    def count(self) -> int:
        """Entries in this project's context tree (each a mnemon-ls item)."""
        return sum(1 for _ in _entries(self.tree))

    def close(self) -> None:
        """Nothing to release."""
