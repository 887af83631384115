"""Cursor: ``.cursor/rules/**/*.mdc`` (Markdown with front matter: ``description``, ``globs``,
``alwaysApply``) and the older single file ``.cursorrules`` (plain text or Markdown)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob
from .reading import Item, SourceFile, front_matter, markdown_items
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return [*glob(base / ".cursor" / "rules", "*.mdc", base, recursive=True), Located(base / ".cursorrules", base)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's Cursor rules."""
    return existing(_layout(workspace))


def items(source: SourceFile, located: Located) -> list[Item]:
    """Markdown items titled by the rule's ``description`` (else its file name)."""
    meta, _ = front_matter(source.text)
    title = meta.get("description") or source.path.stem
    return markdown_items(source.text, str(source.path), title, located.hint)


FORMAT = Format("cursor", PLACES["cursor"], locate, items, _layout)
