"""What the source formats ``mnemon-ls import`` reads share (the formats by name: :mod:`.sources`).

A format module has ``NAME``, ``DEFAULTS`` (the paths it reads, for the help and the docs),
``locate(workspace, env) -> [Located]`` (its files in their default places) and
``items(source, located) -> [Item]``, and when its files import others (Claude Code's ``@path``)
``follow(source, located, env) -> [Located | Refusal]``. ``--from PATH`` replaces the default places
(:func:`locate_from`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .places import direct_names, nested_names
from .reading import Item, Refusal, SourceFile, markdown_items

#: Directories a scan never enters.
SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mnemon"})


@dataclass(frozen=True)
class Located:
    """A file to read: ``path``, the ``base`` directory its real path must stay under, a ``hint``
    (``user``/``memory``) when the format says where its items belong, and ``via``: for a file another imports,
    the reference that names it (``/ws/CLAUDE.md (@~/notes.md)``; ``""`` for a source's own file)."""

    path: Path
    base: Path
    hint: str | None = None
    via: str = ""


@dataclass(frozen=True)
class Format:
    """One source format: its ``name``, ``defaults`` (shown paths), ``locate`` and ``items`` (module doc),
    and ``layout``: the files a ``--from`` directory is searched for first (the names a ``--from`` directory is
    searched for directly when none of the layout is there are :func:`.places.direct_names`), and ``follow``:
    the files one file imports (module doc; None: a format without imports)."""

    name: str
    defaults: tuple[str, ...]
    locate: Callable[[Path, Mapping[str, str]], list[Located]]
    items: Callable[[SourceFile, Located], list[Item]]
    layout: Callable[[Path], list[Located]] | None = None
    follow: Callable[[SourceFile, Located, Mapping[str, str]], list["Located | Refusal"]] | None = None


def existing(candidates: list[Located]) -> list[Located]:
    """The candidates that exist (as files or symlinks), without repeats, in order."""
    seen: set[Path] = set()
    out = []
    for c in candidates:
        if (c.path.is_file() or c.path.is_symlink()) and c.path not in seen:
            seen.add(c.path)
            out.append(c)
    return out


def glob(directory: Path, pattern: str, base: Path, hint: str | None = None, *,
         recursive: bool = False) -> list[Located]:
    """Files of ``directory`` matching ``pattern`` (sorted; ``recursive`` walks subdirectories but
    :data:`SKIPPED_DIRS`), as :class:`Located` under ``base``."""
    if not directory.is_dir():
        return []
    found = directory.rglob(pattern) if recursive else directory.glob(pattern)
    return [Located(p, base, hint) for p in sorted(found)
            if not SKIPPED_DIRS.intersection(p.relative_to(directory).parts[:-1])]


def markdown(source: SourceFile, located: Located) -> list[Item]:
    """Plain Markdown items of a file (:func:`~.reading.markdown_items`), titled by the file name."""
    return markdown_items(source.text, str(source.path), source.path.name, located.hint)


def locate_from(fmt: Format, path: Path) -> list[Located]:
    """The files ``--from PATH`` names: the file itself, or in a directory the format's layout under it
    (``fmt.layout``) and, when none of it is there, the files directly in it matching the names of the format's
    places (:func:`.places.direct_names`: ``AGENTS.md`` for ``agents-md``, ``*.md`` for a ``cline`` memory bank;
    in its subdirectories too for a place that reaches into them, :func:`.places.nested_names`), without repeats.
    ``[]`` when the directory holds none of them."""
    if not path.is_dir():
        return [Located(path, path.parent)]
    found = existing(fmt.layout(path)) if fmt.layout else []
    if not found:
        nested = nested_names(fmt.name)
        for pattern in direct_names(fmt.name):
            found += glob(path, pattern, path, recursive=pattern in nested)
    return existing(found)


def home(env: Mapping[str, str]) -> Path:
    """The person's home directory (``HOME``)."""
    return Path(env.get("HOME") or Path.home())


def info(fmt: Format) -> dict[str, Any]:
    """``{name, defaults}``."""
    return {"name": fmt.name, "defaults": list(fmt.defaults)}
