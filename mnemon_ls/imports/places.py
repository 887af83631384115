"""The source formats ``mnemon-ls import`` reads, by name, and their default places: :data:`SOURCE_NAMES` and
:data:`PLACES` (the one list the formats read them from, the help and the docs show), with :func:`places_help`.
A leaf: each format module (:mod:`.cursor`, ...) takes its places from here, and :mod:`.sources` finds the formats
by these names; loading it loads no format."""

from __future__ import annotations

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
