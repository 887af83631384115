"""Stored secrets in one Runtime store: find them (``doctor``) and redact them (``mnemon-ls redact --apply``).

What is looked at, under ``<root>/runtime/``: the entries of ``memories.json`` (content and branch
names), ``.memories.last-good.json``, the projections, and the copies kept beside them
(``edits/`` saved hand edits, ``quarantine/`` damaged truth files, ``archived/`` the local archive).
The saved hand edits and quarantined files are the person's own copies, but they sit under the root,
so invariant 9 covers them too: they are redacted in place (the rest of their text is kept).

Applying commits the redacted entries through the store's one commit path (projections, last-good
copy, ``memories.json`` last, under the lock): timestamps, importance and branches are kept, an entry
that becomes identical to an earlier one of its target is merged into it (nothing but the secret is
lost). A credential in a branch name cannot be replaced by a placeholder (it would not be a branch):
it is reported and left for the person to remove.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from .. import fsio
from ..redact import find_secrets, redact_file_in_place, redact_text
from .model import match_key
from .store import RuntimeStore


def _where(store: RuntimeStore, path: Path) -> str:
    try:
        return str(path.relative_to(store.runtime_dir.parent))
    except ValueError:
        return str(path)


def _copies(store: RuntimeStore) -> list[Path]:
    paths = [store.projection_path("user"), store.projection_path("memory"), store.last_good_path]
    for directory in (store.edits_dir, store.quarantine_dir, store.archive_dir):
        if directory.is_dir():
            paths.extend(sorted(p for p in directory.iterdir() if p.is_file()))
    return [p for p in paths if p.is_file()]


def scan(store: RuntimeStore) -> list[dict[str, Any]]:
    """Findings ``{"location", "kind", "position"}`` of every stored value that looks like a credential
    (never the value). Read-only, no lock."""
    found: list[dict[str, Any]] = []
    if not store.runtime_dir.is_dir():
        return found
    state = store.read()
    where = _where(store, store.memories_path)
    for index, entry in enumerate(state.entries):
        for match in find_secrets(entry.content):
            found.append({"location": f"{where} entries[{index}].content ({entry.target})", "kind": match.kind,
                          "position": match.start})
        for b, branch in enumerate(entry.branches):
            for match in find_secrets(branch):
                found.append({"location": f"{where} entries[{index}].branches[{b}]", "kind": match.kind,
                              "position": match.start, "unredactable": True})
    if state.problem:  # a damaged truth file: look at its raw text too
        data = fsio.read_bytes_or_none(store.memories_path) or b""
        for match in find_secrets(data.decode("utf-8", "replace")):
            found.append({"location": where, "kind": match.kind, "position": match.start})
    for path in _copies(store):
        data = fsio.read_bytes_or_none(path) or b""
        for match in find_secrets(data.decode("utf-8", "replace")):
            found.append({"location": _where(store, path), "kind": match.kind, "position": match.start})
    return found


def apply(store: RuntimeStore) -> dict[str, Any]:
    """Redact every stored value of ``store`` durably (module doc). Returns ``{"entries": n redacted,
    "merged": n merged into an identical entry, "files": [rewritten copies], "revision"}``. Raises
    :class:`~mnemon_ls.errors.UnreadableStore` for a damaged ``memories.json`` (run ``runtime recover``
    first; nothing is written then) and :class:`~mnemon_ls.errors.StoreBusy`."""
    result: dict[str, Any] = {"entries": 0, "merged": 0, "files": [], "revision": None}
    if not store.runtime_dir.is_dir():
        return result
    with store.locked():
        state = store.read_valid()
        entries, seen = [], set()
        for entry in state.entries:
            content, matches = redact_text(entry.content)
            if matches:
                result["entries"] += 1
                entry = dataclasses.replace(entry, content=content)
            key = (entry.target, match_key(entry.content))
            if matches and key in seen:
                result["merged"] += 1
                continue
            seen.add(key)
            entries.append(entry)
        if result["entries"]:
            _, result["revision"] = store.commit(state.entries, entries)
        # Copies last: the commit above may itself have saved a hand edit under edits/.
        for path in _copies(store):
            if redact_file_in_place(path):
                result["files"].append(_where(store, path))
    return result
