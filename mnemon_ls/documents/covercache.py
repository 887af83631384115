"""The wake's Documents block kept beside the index: ``documents/.cover.json``, so that a one-shot wake (a hook, a
``mnemon-ls wake``) of an unchanged ``documents/`` prints it without loading the Documents Source.

Loading :class:`~.store.DocumentStore` (its parts, :mod:`mnemon_ls.redact`, dataclasses, SQLite) cost a one-shot
wake of a workspace with Documents about a third of its CPU time (bench/hook_path.py ``--documents 20``), and its
full refresh read every managed file again, on every prompt of a session start. Here:

- **written** by :meth:`~.store.DocumentStore.cover` after a full refresh of ``documents/`` (every managed file
  checked, changed ones adopted, interrupted moves repaired), when the block carries no notice (a damaged index,
  a missing file, a title shown redacted: those keep the full path) and ``documents/`` did not change from
  before that refresh to the write (a state taken after it would hide a file changed while it was read):
  ``{"version": 1, "blocks": [{"state", "key", "text"}, ...]}``, newest first, at most :data:`KEPT_BLOCKS` blocks
  of one state (``state``: the key of the state alone); written atomically
  (:func:`mnemon_ls.fsio.write_files_atomically`, the file not fsynced): it is derived, and a lost or torn file
  reads as absent;
- **read** by a one-shot host's wake (:meth:`mnemon_ls.host.WorkspaceHost.wake`) through :func:`cached_text`:
  the text is used only when the file's key equals the key of ``documents/`` now, else the store renders it
  (and writes the file again).

The key (:func:`cover_key`) is a SHA-256 over this module's format version, the mnemon-ls version, the stat state of
the code that renders the block (:func:`code_token`: an editable install's edited ``cover.py`` renders another block
under the same version), the block's budget (characters), the active limit (UTF-8 bytes), the ``secrets`` setting
and :func:`state_token`: the names in ``documents/`` and, for ``index.json``, ``.access.json`` and every entry of
``active/`` and ``archived/``, size, modification and change times (nanoseconds), inode and mode. Any write of
mnemon-ls or a hand edit there changes it (a rename gives a new inode; a write in place a new change time); the
SQLite search index, the lock files and this file itself are left out (they change without the block changing).
Where change times are coarse (Linux before 6.13 stamps them from a clock of a few milliseconds), a same-size write
in place landing in the tick of the write before it, after the refresh read that file, leaves the kept block one
write behind until ``documents/`` changes again: the blind spot the search index's stored signatures (and git's
index) share.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

#: Format of ``.cover.json``; part of the key.
COVER_VERSION = 1
#: The file's name in ``documents/``.
FILE_NAME = ".cover.json"
#: Blocks kept, newest first: one per budget, limit and ``secrets`` setting in use (a wake below the default budget
#: renders the block for two budgets; a server and the hooks may be set differently).
KEPT_BLOCKS = 4
#: Names in ``documents/`` left out of :func:`state_token` (by prefix): derived or transient files whose change
#: never changes the block (``..cover.json.<pid>...tmp``: this file's temp file, :func:`mnemon_ls.fsio.temp_name`).
_VOLATILE = (".search.sqlite3", FILE_NAME, "." + FILE_NAME, ".index.lock", ".access.lock")
#: Modules of ``mnemon_ls`` (beside this package) whose code changes the block (:func:`code_token`).
_RENDERING = re.compile(r"(?:redact\w*|text|__init__)\.py\Z")


def state_token(documents_dir: str) -> str | None:
    """A text that changes whenever ``documents/`` changes in a way the block could show (module doc); ``None``
    when ``documents_dir`` cannot be listed. Stats only: no file is read. Symbolic links are not followed."""
    lines = []
    try:
        with os.scandir(documents_dir) as entries:
            lines.append("\0".join(sorted(e.name for e in entries if not e.name.startswith(_VOLATILE))))
        for name in ("index.json", ".access.json"):
            lines.append(_signature(os.path.join(documents_dir, name), name))
        for status in ("active", "archived"):
            folder = os.path.join(documents_dir, status)
            try:
                with os.scandir(folder) as entries:
                    names = sorted(e.name for e in entries)
            except FileNotFoundError:
                lines.append(f"{status}/ -")
                continue
            lines.extend(_signature(os.path.join(folder, name), f"{status}/{name}") for name in names)
    except OSError:
        return None
    return "\n".join(lines)


def _signature(path: str, name: str) -> str:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return f"{name} -"
    return f"{name} {info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:{info.st_mode}"


@functools.lru_cache(maxsize=1)
def code_token() -> str:
    """Name, size and modification time (nanoseconds) of each module that renders the block: the ``.py`` files
    of this package (the store, its index, the cover) and of ``mnemon_ls`` the redaction of titles and the version
    (``redact*.py``, ``text.py``, ``__init__.py``), sorted; ``"-"`` for a directory that cannot be listed (a zip).
    Taken once a process."""
    here = os.path.dirname(os.path.abspath(__file__))
    lines = []
    for folder, wanted in ((here, lambda name: True), (os.path.dirname(here), _RENDERING.match)):
        try:
            with os.scandir(folder) as entries:
                found = [(e.name, e.stat()) for e in entries if e.name.endswith(".py") and wanted(e.name)]
        except OSError:
            lines.append("-")
            continue
        lines.extend(f"{name} {info.st_size}:{info.st_mtime_ns}" for name, info in sorted(found))
    return "\n".join(lines)


def cover_key(token: str, budget_chars: int, limit_bytes: int, secrets: str) -> str:
    """The SHA-256 hex key of a block rendered from ``token`` (:func:`state_token`) within ``budget_chars``
    characters, for an active limit of ``limit_bytes`` UTF-8 bytes under the ``secrets`` setting, by this code
    (:func:`code_token`)."""
    from .. import __version__

    material = (f"{COVER_VERSION}\0{__version__}\0{code_token()}\0{budget_chars}\0{limit_bytes}\0{secrets}\0"
                f"{token}")
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def cached_text(documents_dir: Path, budget_chars: int, limit_bytes: int, secrets: str) -> str | None:
    """The block's text kept in ``documents_dir/.cover.json`` when its key is the key of ``documents_dir`` now
    (:func:`cover_key`), else ``None`` (no file, another key, a file that is not this format, a file that cannot be
    read, or a symbolic link: read with ``O_NOFOLLOW``, never followed). Never raises for the file system."""
    blocks = _blocks(_kept(documents_dir / FILE_NAME))
    if not blocks:
        return None
    token = state_token(str(documents_dir))
    if token is None:
        return None
    return blocks.get(cover_key(token, budget_chars, limit_bytes, secrets))


def _kept(path: Path) -> Any:
    """The parsed ``.cover.json`` at ``path``; ``None`` when it is missing, not JSON, or cannot be read (a linked
    file is never followed: ``O_NOFOLLOW``)."""
    from ..errors import MnemonError
    from ..fsread import read_bytes_if_present

    try:
        data = read_bytes_if_present(path)
        return None if data is None else json.loads(data)
    except (OSError, MnemonError, ValueError):
        return None


def _blocks(kept: Any) -> dict[str, str]:
    """``{key: text}`` of a parsed ``.cover.json`` (``{"version": 1, "blocks": [{"state", "key", "text"}, ...]}``,
    newest first); ``{}`` for anything else."""
    if not isinstance(kept, dict) or kept.get("version") != COVER_VERSION or not isinstance(kept.get("blocks"), list):
        return {}
    return {b["key"]: b["text"] for b in kept["blocks"]
            if isinstance(b, dict) and isinstance(b.get("key"), str) and isinstance(b.get("text"), str)}


def keep(documents_dir: Path, token: str | None, text: str, budget_chars: int, limit_bytes: int,
         secrets: str) -> None:
    """Write ``text`` (a block rendered after a full refresh, ``token`` taken before that refresh read anything:
    a file changed while it was read moves the state on) to ``documents_dir/.cover.json`` when ``documents_dir`` is
    still in that state; nothing when ``token`` is ``None`` or the state moved on. Never raises for the file system
    (a read-only or full disk, a linked file: the next wake renders the block itself)."""
    from ..errors import MnemonError
    from ..fsio import write_files_atomically

    if token is None or state_token(str(documents_dir)) != token:
        return
    target = documents_dir / FILE_NAME
    key, state = cover_key(token, budget_chars, limit_bytes, secrets), cover_key(token, 0, 0, "")
    older = _kept(target)
    kept = _blocks(older)
    if kept.get(key) == text:
        return
    same_state = [b for b in older["blocks"] if isinstance(b, dict) and b.get("state") == state
                  and b.get("key") != key] if kept else []  # blocks of another state never match again: dropped
    blocks = [{"state": state, "key": key, "text": text}, *same_state]
    body = json.dumps({"version": COVER_VERSION, "blocks": blocks[:KEPT_BLOCKS]},
                      ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:  # derived: not fsynced (a lost or torn file reads as absent); a linked file or directory is refused
        write_files_atomically([(target, body)], unsynced=[target])
    except (OSError, MnemonError):
        pass
