"""``mnemon-ls setup git``: name the records merge driver in the repository's ``.git/config`` and give it the records
files in ``.gitattributes`` (or take both out again with ``--remove``).

What it writes:

- in the repository's config (the common dir's ``config``: a linked worktree's is its main repository's), the
  section :data:`SECTION` with a ``name`` and ``driver = mnemon-ls records merge-driver %O %A %B``
  (:mod:`mnemon_ls.ops.records_merge`), appended at the end;
- in ``.gitattributes`` at the top of the working tree, the line ``<workspace>/.dsh/workspace-memory/*.jsonl
  merge=mnemon-records`` (the workspace relative to the top; ``.dsh/workspace-memory/*.jsonl`` when the
  workspace is the top), appended at the end (the file is created when missing).

Both edits are idempotent (a run with nothing to do writes nothing; a section of ours with other content is
replaced) and ``--remove`` takes out exactly the section and the line (a ``.gitattributes`` left empty is
deleted), so a setup and a removal give back every byte of both files that ended with a newline. The config
is local to one clone: every clone runs ``setup git``; ``.gitattributes`` is meant to be committed. A
clone without the driver merges the files with git's line merge (the attribute names a driver git does not
know).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import InvalidInput
from .setupfiles import Change, read_text

#: The driver's name in ``.gitattributes`` and ``.git/config``.
DRIVER = "mnemon-records"
#: The section ``setup git`` writes in the repository's config.
SECTION = (f'[merge "{DRIVER}"]\n'
           "\tname = mnemon-ls workspace records (union by record id, the higher revision wins)\n"
           "\tdriver = mnemon-ls records merge-driver %O %A %B\n")
_HEADER = re.compile(r'^\s*\[\s*merge\s+"' + re.escape(DRIVER) + r'"\s*\]\s*$')
_ANY_HEADER = re.compile(r"^\s*\[")


def _repository(workspace: Path) -> tuple[Path, Path]:
    """``(config file, working tree top)`` of the repository holding ``workspace``. Raises
    :class:`InvalidInput` (field ``workspace``) when there is none or it has no working tree."""
    import pygit2

    from .gitfiles import common_dir

    try:
        repo = pygit2.Repository(str(workspace))
    except (pygit2.GitError, KeyError, OSError):
        raise InvalidInput("workspace", f"must be in a git repository ({workspace} is not); setup git writes the "
                                        "repository's .git/config and .gitattributes") from None
    if repo.is_bare or repo.workdir is None:
        raise InvalidInput("workspace", f"must be in a repository with a working tree ({repo.path} is bare)")
    common = common_dir(repo.path.rstrip("/\\"))
    return Path(common) / "config", Path(repo.workdir.rstrip("/\\"))


def attribute_line(workspace: Path, top: Path) -> str:
    """The ``.gitattributes`` line (with its newline) for the records files of ``workspace`` in the working
    tree ``top``. Raises :class:`InvalidInput` for a workspace path a pattern cannot name (white space)."""
    rel = os.path.relpath(os.path.realpath(workspace), os.path.realpath(top))
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    if prefix.startswith("../"):
        raise InvalidInput("workspace", f"must be inside the working tree {top}")
    if any(ch.isspace() for ch in prefix):
        raise InvalidInput("workspace", f"must be a path without white space relative to {top} (a .gitattributes "
                                        f"pattern cannot hold {rel!r})")
    return f"{prefix}.dsh/workspace-memory/*.jsonl merge={DRIVER}\n"


def _read(path: Path) -> str | None:

    return read_text(path)


def _config_section(text: str) -> tuple[int, int] | None:
    """``(start, end)`` character offsets of our section in config ``text`` (header to the next header or the
    end), or ``None``."""
    offset, start = 0, None
    for line in text.splitlines(keepends=True):
        if start is None and _HEADER.match(line):
            start = offset
        elif start is not None and _ANY_HEADER.match(line):
            return start, offset
        offset += len(line)
    return (start, len(text)) if start is not None else None


def _config(path: Path, remove: bool):

    before = _read(path)
    text = before or ""
    span = _config_section(text)
    if remove:
        if span is None:
            return Change(path, before, before)
        return Change(path, before, text[:span[0]] + text[span[1]:], [f'removed [merge "{DRIVER}"]'])
    if span is not None:
        if text[span[0]:span[1]] == SECTION:
            return Change(path, before, before)
        return Change(path, before, text[:span[0]] + SECTION + text[span[1]:], [f'replaced [merge "{DRIVER}"]'])
    glue = "\n" if text and not text.endswith("\n") else ""
    return Change(path, before, text + glue + SECTION, [f'added [merge "{DRIVER}"]'])


def _attributes(path: Path, line: str, remove: bool):

    before = _read(path)
    text = before or ""
    lines = text.splitlines(keepends=True)
    ours = [i for i, item in enumerate(lines) if item.strip() == line.strip()]
    if remove:
        if not ours:
            return Change(path, before, before)
        after = "".join(item for i, item in enumerate(lines) if i not in ours)
        return Change(path, before, None if after == "" else after, [f"removed {line.strip()}"])
    if ours:
        return Change(path, before, before)
    glue = "\n" if text and not text.endswith("\n") else ""
    return Change(path, before, text + glue + line, [f"added {line.strip()}"])


def plan(workspace: Path, *, remove: bool = False) -> list:
    """The changes (:class:`mnemon_ls.setupfiles.Change`) of ``setup git`` for ``workspace``: the repository's config,
    then ``.gitattributes``. Nothing is written. Raises :class:`InvalidInput` outside a repository, for a file
    that is not UTF-8, and for a ``.gitattributes`` that leads outside the working tree (a symbolic link)."""
    config, top = _repository(workspace)
    attributes = top / ".gitattributes"
    real, inside = Path(os.path.realpath(attributes)), Path(os.path.realpath(top))
    if real != inside and inside not in real.parents:
        raise InvalidInput(str(attributes), f"leads outside the working tree (to {real}) through a symbolic link; "
                                            "setup git writes only inside it (nothing was written)")
    return [_config(config, remove), _attributes(attributes, attribute_line(workspace, top), remove)]
