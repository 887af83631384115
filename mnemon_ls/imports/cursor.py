"""Cursor: ``.cursor/rules/**/*.mdc`` (Markdown with front matter: ``description``, ``globs``,
``alwaysApply``) and the older single file ``.cursorrules`` (plain text or Markdown).

Cursor documents four types of rule, told apart by that front matter (https://docs.cursor.com/context/rules,
now https://cursor.com/docs/rules, "Rule types": Always, Auto Attached, Agent Requested, Manual). An import keeps
the condition of each, so that no rule reads as one of the whole repository when Cursor does not apply it so:

- ``alwaysApply: true`` (Always): attached to every request, whatever its ``globs``; imported as written.
- ``globs`` (Auto Attached): applies to the files they match; its entries say so (``For src/**/*.ts: ...``,
  :func:`~.reading.markdown_items`'s ``scope``). A glob matching every file (``**``) is no scope.
- a ``description`` and no ``globs`` (Agent Requested): the agent reads the description and pulls the rule in when
  it finds it relevant; its entries say so (``When relevant (Error handling for API routes): ...``,
  :func:`~.reading.relevance_text`), and a section kept as a Document says it on its first line.
- none of the three (Manual): applied only when a person names it (``@rule-name`` in the chat). Imported whole as
  one Document titled by that name (:func:`manual_rule`), its first line saying it applies only when asked for:
  a Document is read on request and never part of the wake, which is what a manual rule is, while runtime memory
  would make it a standing rule; skipping it would leave behind guidance its author wrote to keep.

A ``.mdc`` file without front matter, and ``.cursorrules``, are imported as written (rules of the whole
repository, as ``.cursorrules`` always was). A ``.mdc`` file whose front matter is not closed (``---`` on its first
line and no ``---`` line after it) is refused, nothing of it imported (:func:`items`)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob
from .reading import (Item, SourceFile, check_front_matter_closed, front_matter, front_matter_list, markdown_items,
                      path_scope, without_block)
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return [*glob(base / ".cursor" / "rules", "*.mdc", base, recursive=True), Located(base / ".cursorrules", base)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's Cursor rules."""
    return existing(_layout(workspace))


def items(source: SourceFile, located: Located) -> list[Item]:
    """Markdown items titled by the rule's ``description`` (else its file name), each keeping the condition its
    rule type sets (module doc); a Manual rule's one Document (:func:`manual_rule`). Raises
    :class:`~.reading.InvalidSource` when a ``.mdc`` rule's front matter is not closed (its first line ``---`` and
    no ``---`` line after it): Cursor cannot read its type, and imported as written its front matter would become
    entries; the file is refused, nothing of it imported."""
    if source.path.suffix == ".mdc":
        check_front_matter_closed(source, "a Cursor rule")
    meta, body = front_matter(source.text)
    title = meta.get("description") or source.path.stem
    if body == source.text or meta.get("alwaysApply", "").lower() == "true":  # no front matter, or Always
        return markdown_items(source.text, str(source.path), title, located.hint)
    globs = front_matter_list(source.text, "globs")
    if globs:
        return markdown_items(source.text, str(source.path), title, located.hint, path_scope(globs))
    if meta.get("description"):
        return markdown_items(source.text, str(source.path), title, located.hint, relevant=meta["description"])
    return manual_rule(source, located)


def manual_rule(source: SourceFile, located: Located) -> list[Item]:
    """The one ``section`` item (a Document) of a Manual rule (module doc): titled by the rule's name (its file
    name without ``.mdc``, what a person types after ``@``), its body the rule as written (front matter and the block
    ``mnemon-ls export`` wrote left out) after the line ``Applies only when asked for by name (@<name>): a Cursor
    manual rule, never applied by itself.``; ``[]`` when the rule has no text."""
    _meta, body = front_matter(without_block(source.text))
    text = body.strip("\n").rstrip()
    if not text.strip():
        return []
    name = source.path.stem
    line = f"Applies only when asked for by name (@{name}): a Cursor manual rule, never applied by itself."
    why = f"a Cursor manual rule (applied only when asked for by name, @{name}): a Document, read on request"
    return [Item(f"# {name}\n\n{line}\n\n{text}\n", name, str(source.path), "section", located.hint, why,
                 headed=True)]


FORMAT = Format("cursor", PLACES["cursor"], locate, items, _layout)
