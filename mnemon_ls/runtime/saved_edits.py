"""What became of the copies under ``runtime/edits/`` (``mnemon-ls doctor``): read-only.

A repair (or a commit) copies a hand-edited ``USER.md``/``MEMORY.md`` there before it replaces the file
(:mod:`.repair`). With ``handEdits=import`` the edit is then imported into ``memories.json``; an edit
that breaks a rule, a leftover of an interrupted write and any edit under ``handEdits=restore`` are not.
The copy itself does not record which happened, so :func:`saved_edits_finding` compares each copy's
items with ``memories.json`` as it is now: a copy whose every item is an entry there needs nothing; one
holding text ``memories.json`` lacks is named, so the person can take what they need from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .. import fsio
from ..findings import Finding
from . import handedit
from .model import PROJECTION_FILES, Entry, Target, match_key, normalize_text

#: The file name part of each target's saved copies (``<stamp>-USER.md``, ``<stamp>-MEMORY-2.md``).
_NAME_PARTS: tuple[tuple[str, Target], ...] = (("-USER", "user"), ("-MEMORY", "memory"))


def _target_of(name: str) -> Target | None:
    return next((target for part, target in _NAME_PARTS if part in name), None)


def copy_is_imported(data: bytes, target: Target, entries: Sequence[Entry]) -> bool:
    """Whether every item of the saved projection ``data`` of ``target`` is an entry of ``target`` in
    ``entries`` now (compared as :func:`~.model.match_key` of the normalized text). A copy that is not
    UTF-8 text is not."""
    text = handedit.canonical_text(data)
    if text is None:
        return False
    present = {match_key(e.content) for e in entries if e.target == target}
    return all(match_key(normalize_text(raw)) in present for _, raw in handedit.split_items(text))


def saved_edits_finding(edits_dir: Path, entries: Sequence[Entry]) -> Finding | None:
    """The doctor finding (level ``ok``) for ``edits_dir``, or ``None`` when it holds nothing: how many
    copies of hand-edited projections it keeps, how many are in ``memories.json`` (``entries``) now and
    which are not. Never writes."""
    try:
        names = sorted(p.name for p in edits_dir.iterdir() if p.is_file())
    except OSError:
        return None
    if not names:
        return None
    in_store: list[str] = []
    outside: list[str] = []
    for name in names:
        target = _target_of(name)
        data = fsio.read_bytes_or_none(edits_dir / name)
        if target is not None and data is not None and copy_is_imported(data, target, entries):
            in_store.append(name)
        else:
            outside.append(name)
    count = len(names)
    head = f"{count} saved cop{'y' if count == 1 else 'ies'} of hand-edited {'/'.join(PROJECTION_FILES.values())}"
    if not outside:
        every = "its every item is" if count == 1 else "every item of each is"
        return Finding("ok", str(edits_dir), f"{head}: {every} in memories.json (imported, or the same there)",
                       "kept for reference; nothing to do (delete them when you like)")
    parts = []
    if in_store:
        parts.append(f"{len(in_store)} whose every item is in memories.json")
    shown = ", ".join(outside[:5]) + (f" and {len(outside) - 5} more" if len(outside) > 5 else "")
    parts.append(f"{len(outside)} holding text memories.json does not have (an edit not imported: it broke a rule, "
                 f"was a leftover, or handEdits is restore; or removed since): {shown}")
    return Finding("ok", str(edits_dir), f"{head}: " + "; ".join(parts),
                   "open those to take what you need (`mnemon-ls runtime add`), then delete them")
