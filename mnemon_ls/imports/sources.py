"""The source formats ``mnemon-ls import`` reads, by name: :data:`SOURCE_NAMES`, :data:`PLACES` (the default
places of each, the one list the code reads them from, the help and the docs show) and :func:`get` (each format
is a module of this package built on :mod:`.formats`). Loading this module loads no format (the help and the
operation layer read the names and places without the readers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .formats import Format

#: Source names, in the order the help lists them.
SOURCE_NAMES = ("claude-code", "agents-md", "cursor", "copilot", "cline", "hermes")

#: The default places of each source, as shown (workspace-relative, or under ``~``; ``**/`` means any
#: subdirectory too). Each format's ``FORMAT.defaults`` and its ``locate`` follow this list.
PLACES: dict[str, tuple[str, ...]] = {
    "claude-code": ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**/*.md",
                    "~/.claude/projects/<project>/memory/*.md"),
    "agents-md": ("AGENTS.md",),
    "cursor": (".cursor/rules/**/*.mdc", ".cursorrules"),
    "copilot": (".github/copilot-instructions.md", ".github/instructions/**/*.instructions.md"),
    "cline": ("memory-bank/*.md",),
    "hermes": ("~/.hermes/memories/USER.md", "~/.hermes/memories/MEMORY.md"),
}


def places_help() -> str:
    """Every source with its default places (:data:`PLACES`), for the help of ``SOURCE``: ``claude-code
    (CLAUDE.md, ...), agents-md (AGENTS.md), ... or hermes (...)``."""
    shown = [f"{name} ({', '.join(PLACES[name])})" for name in SOURCE_NAMES]
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def _formats() -> dict[str, "Format"]:
    from . import agents_md, claude_code, cline, copilot, cursor, hermes

    return {m.FORMAT.name: m.FORMAT for m in (claude_code, agents_md, cursor, copilot, cline, hermes)}


def get(name: str) -> "Format":
    """The :class:`~.formats.Format` called ``name`` (one of :data:`SOURCE_NAMES`); ``KeyError`` otherwise."""
    return _formats()[name]
