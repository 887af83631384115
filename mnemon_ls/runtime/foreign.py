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


def shown_receipt(data: dict[str, Any]) -> dict[str, Any]:
    """A Runtime mutation's receipt (:meth:`~mnemon_ls.runtime.state.Receipt.to_dict`) with the stored text it
    echoes redacted (:func:`~mnemon_ls.redact.redact_text`): the old text (``removed``, ``replaced.from``,
    ``supersedes.preview``), an add's ``similar`` entries and the message's note quoting them, and what capacity
    maintenance says of the entries it kept or moved (``kept``, ``dropped``, ``maintenance.entries[].content``,
    ``maintenance.archived[].summary``). Another program may have stored a credential in any of them; the store
    keeps them as they are. Returns a new dict; ``data`` is not changed."""
    from .ops import similar_note

    data = dict(data)
    if isinstance(data.get("removed"), str):
        data["removed"] = redact_text(data["removed"])[0]
    similar = data.get("similar")
    if isinstance(similar, list) and similar and all(isinstance(s, str) for s in similar):
        shown = [redact_text(s)[0] for s in similar]
        if shown != similar and isinstance(data.get("message"), str):
            data["message"] = data["message"].replace(similar_note(similar), similar_note(shown))
        data["similar"] = shown
    for field, name in (("replaced", "from"), ("supersedes", "preview")):
        if isinstance(data.get(field), dict) and isinstance(data[field].get(name), str):
            data[field] = {**data[field], name: redact_text(data[field][name])[0]}
    for field in ("kept", "dropped"):
        if isinstance(data.get(field), list):
            data[field] = [redact_text(v)[0] if isinstance(v, str) else v for v in data[field]]
    maintenance = data.get("maintenance")
    if isinstance(maintenance, dict):
        shown_maintenance = dict(maintenance)
        for field, name in (("entries", "content"), ("archived", "summary")):
            if isinstance(maintenance.get(field), list):
                shown_maintenance[field] = [{**row, name: redact_text(row[name])[0]}
                                            if isinstance(row, dict) and isinstance(row.get(name), str) else row
                                            for row in maintenance[field]]
        data["maintenance"] = shown_maintenance
    return data
