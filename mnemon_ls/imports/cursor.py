"""Cursor: ``.cursor/rules/**/*.mdc`` (Markdown with front matter: ``description``, ``globs``,
``alwaysApply``) and the older single file ``.cursorrules`` (plain text or Markdown).

A rule with ``globs`` and without ``alwaysApply: true`` applies to the files they match (Cursor attaches it only
then): its entries say so (``For src/**/*.ts: ...``, :func:`~.reading.markdown_items`'s ``scope``), so they are
not imported as rules of the whole repository."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob
from .reading import Item, SourceFile, front_matter, front_matter_list, markdown_items, path_scope
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return [*glob(base / ".cursor" / "rules", "*.mdc", base, recursive=True), Located(base / ".cursorrules", base)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's Cursor rules."""
    return existing(_layout(workspace))


def items(source: SourceFile, located: Located) -> list[Item]:
    """Markdown items titled by the rule's ``description`` (else its file name), scoped by its ``globs``
    (module doc)."""
    meta, _ = front_matter(source.text)
    title = meta.get("description") or source.path.stem
    always = meta.get("alwaysApply", "").lower() == "true"
    scope = () if always else path_scope(front_matter_list(source.text, "globs"))
    return markdown_items(source.text, str(source.path), title, located.hint, scope)


FORMAT = Format("cursor", PLACES["cursor"], locate, items, _layout)
