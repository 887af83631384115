"""The source formats ``mnemon-ls import`` reads, by name: :data:`SOURCE_NAMES` and :func:`get` (each format is
a module of this package built on :mod:`.formats`)."""

from __future__ import annotations

from .formats import Format


def _formats() -> dict[str, Format]:
    from . import agents_md, claude_code, cline, copilot, cursor, hermes

    return {m.FORMAT.name: m.FORMAT for m in (claude_code, agents_md, cursor, copilot, cline, hermes)}


#: Source names, in the order the help lists them.
SOURCE_NAMES = ("claude-code", "agents-md", "cursor", "copilot", "cline", "hermes")


def get(name: str) -> Format:
    """The :class:`~.formats.Format` called ``name`` (one of :data:`SOURCE_NAMES`); ``KeyError`` otherwise."""
    return _formats()[name]
