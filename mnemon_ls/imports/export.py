"""``mnemon-ls export agents-md|claude-md``: a marked block in the workspace's AGENTS.md or CLAUDE.md holding
the wake's stable facts (the MEMORY.md entries: the facts about the workspace, never USER.md, which is about
the person and would be committed with the repository), a branch-scoped entry marked with its branches.

The block lies between :data:`~.reading.BLOCK_BEGIN` (a full line ``<!-- mnemon-ls:begin ... -->``) and
:data:`~.reading.BLOCK_END`; it is regenerated in place and nothing outside the markers changes (a file with
no block gets it appended after one blank line; a missing file is created). ``remove`` takes the block and the
blank line written before it out (a file left empty that way is deleted: it held nothing else). Refused,
nothing written (:class:`~mnemon_ls.errors.InvalidInput` naming ``file``): a file that is a symlink leaving the
workspace, binary, not UTF-8, over 1 MiB, or with a begin marker and no end marker, or several blocks.
The write is atomic (temporary file, fsync, rename) and keeps the file's mode.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import fsio
from ..errors import InvalidInput, echo_repr
from ..redact import redact_text
from .reading import BLOCK_BEGIN, BLOCK_END, Refusal, read_source

if TYPE_CHECKING:
    from ..host import WorkspaceHost

FILES = {"agents-md": "AGENTS.md", "claude-md": "CLAUDE.md"}
_BEGIN_LINE = (BLOCK_BEGIN + " (written by `mnemon-ls export {target}`: regenerated in place, removed by "
               "`mnemon-ls export {target} --remove`; edit the memory, not this block) -->")


def render_block(host: "WorkspaceHost", target: str) -> tuple[str, int]:
    """``(block text with both markers and a final newline, number of facts)``."""
    entries = host.runtime.read().of("memory")
    lines = [_BEGIN_LINE.format(target=target), "## Workspace memory (mnemon-ls)", ""]
    for e in entries:
        text, _ = redact_text(e.content)
        plural = "es" if len(e.branches) > 1 else ""
        scope = f" _(only on branch{plural} {', '.join(e.branches)})_" if e.branches else ""
        lines.append(f"- {text}{scope}")
    if not entries:
        lines.append("_(no workspace facts yet)_")
    lines.append(BLOCK_END)
    return "\n".join(lines) + "\n", len(entries)


def _split(text: str, path: Path) -> tuple[int, int] | None:
    """``(start, end)`` of the block in ``text`` (end after the end marker and its newline), or None."""
    start = text.find(BLOCK_BEGIN)
    if start < 0:
        if BLOCK_END in text:
            raise InvalidInput("file", f"{path} has an end marker {BLOCK_END!r} without a begin marker; fix it by hand")
        return None
    end = text.find(BLOCK_END, start)
    if end < 0:
        raise InvalidInput("file", f"{path} has a begin marker without {BLOCK_END!r}; fix it by hand (nothing "
                                   "was written)")
    if text.find(BLOCK_BEGIN, start + 1) >= 0:
        raise InvalidInput("file", f"{path} has more than one mnemon-ls block; remove all but one by hand")
    end += len(BLOCK_END)
    if text.startswith("\n", end):
        end += 1
    return start, end


def export_block(host: "WorkspaceHost", target: str, *, remove: bool = False) -> dict[str, Any]:
    """Write (or with ``remove`` take out) the block (module doc). Returns ``{file, action: created | updated
    | unchanged | removed | absent | deleted, facts}``."""
    if target not in FILES:
        raise InvalidInput("target", f"must be one of {', '.join(FILES)} (got {echo_repr(target)})")
    if host.workspace is None:
        raise InvalidInput("workspace", "is required: the block is written into the workspace's file")
    path = host.workspace / FILES[target]
    exists = path.exists() or path.is_symlink()
    old = ""
    mode = 0o644
    if exists:
        read = read_source(path, host.workspace)
        if isinstance(read, Refusal):
            raise InvalidInput("file", f"{read.path} {read.reason}; nothing was written")
        old = read.text
        mode = os.stat(path).st_mode & 0o7777
        path = read.path.resolve()
    span = _split(old, path)
    if remove:
        if span is None:
            return {"file": str(path), "action": "absent", "facts": 0}
        start, end = span
        before = old[:start]
        if before.endswith("\n\n"):
            before = before[:-1]
        new = before + old[end:]
        if not new.strip():
            path.unlink()
            return {"file": str(path), "action": "deleted", "facts": 0}
        fsio.write_file_atomically(path, new.encode("utf-8"), mode)
        return {"file": str(path), "action": "removed", "facts": 0}
    block, facts = render_block(host, target)
    if span is None:
        new = old + ("" if not old or old.endswith("\n") else "\n") + ("\n" if old.strip() else "") + block
        action = "updated" if exists else "created"
    else:
        new = old[:span[0]] + block + old[span[1]:]
        action = "unchanged" if new == old else "updated"
    if new != old:
        fsio.write_file_atomically(path, new.encode("utf-8"), mode)
    return {"file": str(path), "action": action, "facts": facts}
