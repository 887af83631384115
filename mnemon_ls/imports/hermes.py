"""Hermes Agent: ``MEMORY.md`` (about the work) and ``USER.md`` (about the person), entries delimited by
lines holding only ``§``, under ``$HERMES_HOME/memories/`` (default ``~/.hermes/memories/``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, home
from .reading import Item, SourceFile
from .places import PLACES

_DELIMITER = re.compile(r"^\s*§\s*$", re.M)


def _layout(base: Path) -> list[Located]:
    """The files of a Hermes home ``base``: ``memories/USER.md`` and ``memories/MEMORY.md`` (so ``--from`` a
    copy of ``~/.hermes`` reads them; ``--from`` its ``memories/`` reads the files directly in it)."""
    memories = base / "memories"
    return [Located(memories / "USER.md", memories, "user"), Located(memories / "MEMORY.md", memories, "memory")]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """``$HERMES_HOME/memories/{USER,MEMORY}.md`` (``HERMES_HOME`` default ``~/.hermes``)."""
    root = Path(env["HERMES_HOME"]) if env.get("HERMES_HOME") else home(env) / ".hermes"
    return existing(_layout(root))


def items(source: SourceFile, located: Located) -> list[Item]:
    """One item per ``§``-delimited entry; a file named USER.md is about the person."""
    hint = located.hint or ("user" if source.path.name.upper() == "USER.MD" else "memory")
    return [Item(" ".join(part.split()), source.path.name, str(source.path), "entry", hint)
            for part in _DELIMITER.split(source.text) if part.strip()]


FORMAT = Format("hermes", PLACES["hermes"], locate, items, _layout)
