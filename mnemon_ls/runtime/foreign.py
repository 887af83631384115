"""Runtime entries another program wrote: shown redacted, left on disk as they are (``secrets: redact``).

Every write of mnemon-ls passes :mod:`mnemon_ls.redact` first (DESIGN.md invariant 9), but ``memories.json`` has
other writers (the plugin, a person's editor, a script): a credential one of them stored reached the wake snapshot
as it was. The wake does not import the redaction pass (its import alone costs ~90 ms, more than the whole wake's
budget over ``python -c pass``), so it runs it only when the file may hold a value the pass never saw
(:meth:`~mnemon_ls.runtime.store.RuntimeStore.written_elsewhere`):

- ``memories.json``'s bytes differ from ``.memories.last-good.json``'s: every commit of ours writes both with the
  same bytes, so another program wrote it since (a file of an older mnemon-ls without a last-good copy counts too,
  until the next commit);
- or the marker ``runtime/.memories.unscrubbed`` (:data:`MARKER`) exists: a commit of ours carried such a value
  forward (a new entry added beside it), so both files hold it. The commit that found it there keeps the marker
  while :func:`holds_secrets` finds a value, and removes it with the last one (``mnemon-ls redact --apply``).

Then :func:`redacted_entries` gives the entries with each credential replaced by the placeholder the write path
uses (``[redacted:<kind>]``) and one notice per entry naming where it is (the file, the entry's number in
``mnemon-ls runtime list``, the kinds; never the value). Nothing is written: the person fixes the file
(``mnemon-ls redact --apply``; ``doctor`` names the values too).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..redact import find_secrets, redact_text
from .model import PROJECTION_FILES, Entry

#: The marker file under ``runtime/``: ``memories.json`` holds a value that looks like a credential and passed no
#: redaction pass of ours (module doc). Its text says so for a person who finds it.
MARKER = ".memories.unscrubbed"
MARKER_TEXT = (b"memories.json holds values that look like credentials which another program wrote; mnemon-ls shows "
               b"them redacted. `mnemon-ls redact --apply` replaces them in the files; this file then goes away.\n")


def holds_secrets(entries: Sequence[Entry]) -> bool:
    """Whether the content of any of ``entries`` holds a value that looks like a credential
    (:func:`mnemon_ls.redact.find_secrets`)."""
    return any(find_secrets(entry.content) for entry in entries)


def _notice(memories_path: Path, target: str, number: int, kinds: str) -> str:
    return (f"{memories_path}: {PROJECTION_FILES[target]} entry {number} holds what looks like a credential ({kinds}) "
            "that another program wrote; shown redacted, the file is unchanged: `mnemon-ls redact --apply` replaces it")


def redact_listed(entries: list[dict[str, Any]], paths: Mapping[str, Path]) -> list[str]:
    """:func:`redacted_entries` for listed entries (``Entry.to_json()`` shapes: ``target``, ``content``), changed in
    place; ``paths`` maps a target to its ``memories.json``. Returns the notices."""
    notices: list[str] = []
    numbers: dict[str, int] = {}
    for entry in entries:
        target = entry.get("target")
        numbers[target] = number = numbers.get(target, 0) + 1
        content = entry.get("content")
        if not isinstance(content, str) or target not in paths:
            continue
        entry["content"], matches = redact_text(content)
        if matches:
            notices.append(_notice(paths[target], target, number, ", ".join(sorted({m.kind for m in matches}))))
    return notices


def redacted_entries(entries: Sequence[Entry], memories_path: Path) -> tuple[tuple[Entry, ...], list[str]]:
    """``(entries with each credential in their content replaced by its placeholder, notices)``: the entries
    without one are the same objects; one notice per redacted entry, naming ``memories_path``, the entry's target
    file and its 1-based number among that target's ``entries`` (as ``mnemon-ls runtime list`` numbers them) and
    the kinds found, never the value."""
    out: list[Entry] = []
    notices: list[str] = []
    numbers: dict[str, int] = {}
    for entry in entries:
        numbers[entry.target] = number = numbers.get(entry.target, 0) + 1
        content, matches = redact_text(entry.content)
        if not matches:
            out.append(entry)
            continue
        out.append(dataclasses.replace(entry, content=content))
        notices.append(_notice(memories_path, entry.target, number, ", ".join(sorted({m.kind for m in matches}))))
    return tuple(out), notices
