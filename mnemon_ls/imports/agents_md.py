"""AGENTS.md: one Markdown file at the workspace root (the format many assistants read)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, markdown
from .places import PLACES


def _layout(base: Path) -> list[Located]:
    return [Located(base / "AGENTS.md", base)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """``<workspace>/AGENTS.md``."""
    return existing(_layout(workspace))


FORMAT = Format("agents-md", PLACES["agents-md"], locate, markdown, _layout)
