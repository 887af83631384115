"""GitHub Copilot: ``.github/copilot-instructions.md`` and ``.github/instructions/*.instructions.md``.

An ``.instructions.md`` file applies to the files its front matter's ``applyTo`` globs match (comma-separated,
``**`` for every file): its entries say so (``For src/**/*.ts: ...``, :func:`~.reading.markdown_items`'s
``scope``), so they are not imported as rules of the whole repository."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob
from .reading import (Item, SourceFile, check_front_matter_closed, front_matter_list, markdown_items,
                      path_scope)
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    github = base / ".github"
    return [Located(github / "copilot-instructions.md", base),
            *glob(github / "instructions", "*.instructions.md", base, recursive=True)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's Copilot instruction files."""
    return existing(_layout(workspace))


def items(source: SourceFile, located: Located) -> list[Item]:
    """Markdown items titled by the file name, scoped by ``applyTo`` (module doc). Raises
    :class:`~.reading.InvalidSource` for an ``.instructions.md`` file whose front matter is not closed (its first
    line ``---`` and no ``---`` line after it): imported as written its front matter would become entries."""
    if source.path.name.endswith(".instructions.md"):
        check_front_matter_closed(source, "a Copilot instructions file")
    scope = path_scope(front_matter_list(source.text, "applyTo"))
    return markdown_items(source.text, str(source.path), source.path.name, located.hint, scope)


FORMAT = Format("copilot", PLACES["copilot"], locate, items, _layout)
