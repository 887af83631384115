"""Reading the files of one source, and the files they import: :func:`read_all` gives a :class:`Found`.

Each file is read safely (:func:`~.reading.read_source`: refusals are listed, never fatal) and split into items by
its format; then the files it imports (``Format.follow``: Claude Code's ``@path``) are read right after it, up to
:data:`~.claude_code.MAX_IMPORT_HOPS` hops, each file once (a cycle ends; a file the source reads itself is not
read again as an import). An import that leaves its directory, or one hop too deep, is a refusal saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .claude_code import MAX_IMPORT_HOPS
from .formats import Format, Located
from .reading import InvalidSource, Item, Refusal, read_source


@dataclass(frozen=True)
class Found:
    """What one source holds: ``files`` (``[{path, sha256, bytes}]``, read), ``refused`` (``[{path, reason}]``)
    and the ``items`` of the files read, in file order, before redaction and routing."""

    files: list[dict[str, Any]]
    refused: list[dict[str, str]]
    items: list[Item]


def read_all(fmt: Format, located: list[Located], env: Mapping[str, str]) -> Found:
    """The :class:`Found` of the files ``located`` of ``fmt`` and of the files they import (module doc); ``env``
    gives the home directory ``~/`` imports name."""
    found = Found([], [], [])
    seen = {_real(loc.path) for loc in located}
    for loc in located:
        _visit(fmt, loc, 0, env, seen, found)
    return found


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _visit(fmt: Format, loc: Located, hops: int, env: Mapping[str, str], seen: set[Path],
           found: Found) -> None:
    """Read ``loc`` into ``found`` (its file, or its refusal, and its items), then the files it imports
    (``fmt.follow``: Claude Code's ``@path``), each right after its importer, ``hops`` deep: a file read before
    (or one of the source's own files) is not read again, so a cycle ends; one more than
    :data:`~.claude_code.MAX_IMPORT_HOPS` hops away is refused, saying so, as a path that leaves its directory is
    (``fmt.follow``'s refusal)."""
    read = read_source(loc.path, loc.base)
    if isinstance(read, Refusal):
        found.refused.append(read.to_dict())
        return
    try:
        items = fmt.items(read, loc)
    except InvalidSource as exc:  # the file breaks its format's rules: refused, nothing of it imported
        found.refused.append({"path": str(read.path), "reason": exc.reason})
        return
    found.files.append({"path": str(read.path), "sha256": read.sha256, "bytes": read.size})
    found.items.extend(items)
    for target in fmt.follow(read, loc, env) if fmt.follow else []:
        if isinstance(target, Refusal):
            found.refused.append(target.to_dict())
            continue
        real = _real(target.path)
        if real in seen:
            continue
        if hops + 1 > MAX_IMPORT_HOPS:
            found.refused.append({"path": str(target.path), "reason": f"is imported by {read.path} more than "
                                  f"{MAX_IMPORT_HOPS} hops from the first file (Claude Code follows at most "
                                  f"{MAX_IMPORT_HOPS}); not read"})
            continue
        seen.add(real)
        _visit(fmt, target, hops + 1, env, seen, found)
