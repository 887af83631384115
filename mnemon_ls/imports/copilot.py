"""GitHub Copilot: ``.github/copilot-instructions.md`` and ``.github/instructions/*.instructions.md``
(front matter ``applyTo`` is skipped with the rest of the front matter)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob, markdown
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    github = base / ".github"
    return [Located(github / "copilot-instructions.md", base),
            *glob(github / "instructions", "*.instructions.md", base, recursive=True)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's Copilot instruction files."""
    return existing(_layout(workspace))


FORMAT = Format("copilot", PLACES["copilot"], locate, markdown, _layout)
