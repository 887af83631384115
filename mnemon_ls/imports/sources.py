"""The source formats ``mnemon-ls import`` reads, by name: :func:`get` (each format is a module of this package
built on :mod:`.formats`), with :data:`SOURCE_NAMES` and :data:`PLACES` (the default places of each, the one list
the code reads them from, the help and the docs show) from :mod:`.places`. Loading this module loads no format
(the help and the operation layer read the names and places without the readers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .places import PLACES, SOURCE_NAMES, places_help

if TYPE_CHECKING:
    from .formats import Format

__all__ = ["PLACES", "SOURCE_NAMES", "get", "places_help"]


def _formats() -> dict[str, "Format"]:
    from . import agents_md, claude_code, cline, copilot, cursor, hermes

    return {m.FORMAT.name: m.FORMAT for m in (claude_code, agents_md, cursor, copilot, cline, hermes)}


def get(name: str) -> "Format":
    """The :class:`~.formats.Format` called ``name`` (one of :data:`SOURCE_NAMES`); ``KeyError`` otherwise."""
    return _formats()[name]
