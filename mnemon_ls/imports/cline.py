"""A Cline or Roo memory bank: ``memory-bank/*.md`` (``projectbrief.md``, ``productContext.md``,
``activeContext.md``, ``systemPatterns.md``, ``techContext.md``, ``progress.md``; Roo adds
``decisionLog.md`` and others). Every file is about the project."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob, markdown
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return glob(base / "memory-bank", "*.md", base, "memory")


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """``<workspace>/memory-bank/*.md``."""
    return existing(_layout(workspace))


FORMAT = Format("cline", PLACES["cline"], locate, markdown, _layout)
