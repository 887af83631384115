"""A Cline or Roo memory bank: ``memory-bank/*.md`` (``projectbrief.md``, ``productContext.md``,
``activeContext.md``, ``systemPatterns.md``, ``techContext.md``, ``progress.md``; Roo adds
``decisionLog.md`` and others). Every file is about the project.

``activeContext.md`` (the current focus, recent changes, next steps) and ``progress.md`` (what works, what is
left, the current status) are temporary progress, rewritten every session: runtime memory, Documents and Memory
Spaces keep durable facts, never temporary progress (DESIGN), so their items are skipped, each saying why
(``extra["skip"]``: ``{why: temporary-progress, of}``, :class:`~.plan.Router`)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob, markdown
from .reading import Item, SourceFile
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return glob(base / "memory-bank", "*.md", base, "memory")


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """``<workspace>/memory-bank/*.md``."""
    return existing(_layout(workspace))


#: The memory bank's files of temporary progress (lower case), and what each holds.
TEMPORARY = {"activecontext.md": "the current focus, recent changes and next steps",
             "progress.md": "what works, what is left and the current status"}


def items(source: SourceFile, located: Located) -> list[Item]:
    """Markdown items titled by the file name; those of a file of temporary progress (:data:`TEMPORARY`) carry
    their skip (module doc)."""
    found = markdown(source, located)
    held = TEMPORARY.get(source.path.name.lower())
    if held is not None:
        for item in found:
            item.extra["skip"] = {"why": "temporary-progress",
                                  "of": f"{source.path.name}, the memory bank's {held}, rewritten every session"}
    return found


FORMAT = Format("cline", PLACES["cline"], locate, items, _layout)
