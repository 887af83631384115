"""Claude Code: ``CLAUDE.md`` (or ``.claude/CLAUDE.md``), ``CLAUDE.local.md``, ``.claude/rules/**/*.md`` and
the auto memory ``~/.claude/projects/<project>/memory/`` (``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude``):
a ``MEMORY.md`` index whose lines link the topic files, and topic files with front matter ``name``,
``description`` and ``type`` (``user``, ``feedback``, ``project``, ``reference``).

``<project>`` is the workspace's absolute path with every character but letters and digits replaced by
``-`` (how Claude Code names its project directories). Index lines that only link a topic file are
skipped (the topic file is read itself); other index lines are items.

A rule of ``.claude/rules`` with ``paths`` in its front matter applies to the files they match: its entries say so
(``For src/**/*.ts: ...``, :func:`~.reading.markdown_items`'s ``scope``), so they are not imported as rules of the
whole repository.

A memory file imports others with ``@path`` (:func:`follow`): Claude Code reads them with it, so the import reads
them too (:func:`~.plan.find`: at most :data:`MAX_IMPORT_HOPS` hops, each file once).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Mapping

import os

from ..fsread import is_within
from .formats import Format, Located, existing, glob, home
from .reading import (Item, Refusal, SourceFile, check_front_matter_closed, front_matter, front_matter_list,
                      markdown_items, path_scope)
from .places import PLACES

_LINK_LINE = re.compile(r"^\s*[-*+]\s*\[[^\]]*\]\(([^)]+\.md)\)")
#: Topic types about the person (their profile, and the feedback they gave on how to work).
_USER_TYPES = frozenset({"user", "feedback"})


def project_dir_name(workspace: Path) -> str:
    """The auto memory's project directory name for ``workspace``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(workspace))


def auto_memory_dir(workspace: Path, env: Mapping[str, str]) -> Path:
    """``<config>/projects/<project>/memory`` (``config``: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home(env) / ".claude"
    return config / "projects" / project_dir_name(workspace) / "memory"


def _layout(base: Path) -> list[Located]:
    return [Located(base / "CLAUDE.md", base), Located(base / ".claude" / "CLAUDE.md", base),
            Located(base / "CLAUDE.local.md", base), *glob(base / ".claude" / "rules", "*.md", base, recursive=True)]


def locate(workspace: Path, env: Mapping[str, str]) -> list[Located]:
    """The workspace's instruction files, then the auto memory's index and topic files."""
    memory = auto_memory_dir(workspace, env)
    return existing([*_layout(workspace), *glob(memory, "*.md", memory)])


#: Files that take no front matter (module doc).
_PLAIN = frozenset({"CLAUDE.md", "CLAUDE.local.md", "MEMORY.md"})


def items(source: SourceFile, located: Located) -> list[Item]:
    """A topic file's items go where its ``type`` says (user/feedback: USER.md); the index skips its
    link lines; the instruction files are plain Markdown. Raises :class:`~.reading.InvalidSource` for a rule
    (``.claude/rules``) or topic file whose front matter is not closed (its first line ``---`` and no ``---`` line
    after it): imported as written its front matter would become entries (``CLAUDE.md``, ``CLAUDE.local.md`` and the
    index take no front matter: a first ``---`` there is Markdown's thematic break)."""
    if source.path.name not in _PLAIN:
        check_front_matter_closed(source, "a Claude Code rule or memory file")
    meta, body = front_matter(source.text)
    text = without_import_lines(source.text)
    if source.path.name == "MEMORY.md":
        kept = "\n".join(line for line in without_import_lines(body).split("\n") if not _LINK_LINE.match(line))
        return markdown_items(kept, str(source.path), "auto memory index", located.hint)
    if meta.get("type"):
        hint = "user" if meta["type"].lower() in _USER_TYPES else "memory"
        return markdown_items(text, str(source.path), meta.get("name") or source.path.stem, hint)
    scope = path_scope(front_matter_list(source.text, "paths"))
    return markdown_items(text, str(source.path), source.path.name, located.hint, scope)


#: A line that is only ``@path`` imports (after a list marker): an instruction to Claude Code, not memory.
_IMPORT_LINE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?@(?:[^\s\\]|\\ )+(?:\s+@(?:[^\s\\]|\\ )+)*\s*$")


def without_import_lines(text: str) -> str:
    """``text`` without its lines that hold nothing but ``@path`` imports (``@docs/style.md``, ``- @~/team.md``),
    outside fenced code blocks: Claude Code reads the files they name (:func:`follow`); the line itself is no fact
    to import (it was an item of its own, ``'@~/team.md'`` to MEMORY.md). Prose that mentions an import keeps it."""
    return "\n".join(line for line, prose in _lines(text) if not (prose and _IMPORT_LINE.match(line)))


#: How many ``@path`` hops Claude Code follows from a memory file (its documented limit: 5).
MAX_IMPORT_HOPS = 5
#: An ``@path`` import: ``@`` at the start of a line or after whitespace, then the path (``\ `` escapes a space).
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def import_paths(text: str) -> list[str]:
    """The ``@path`` imports of a memory file's ``text``, in order: not inside a fenced code block or a code span
    (Claude Code does not evaluate those), not in an email address (``@`` after a non-space)."""
    return [m.group(1).replace("\\ ", " ") for line, prose in _lines(text) if prose
            for m in _IMPORT.finditer(_CODE_SPAN.sub(" ", line))]


def _lines(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of a memory file's ``text`` and whether it is prose: outside a fenced code block and not a fence
    line itself (where :func:`import_paths` looks for imports and :func:`without_import_lines` drops them)."""
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            yield line, False
        else:
            yield line, not fenced


def follow(source: SourceFile, located: Located, env: Mapping[str, str]) -> list[Located | Refusal]:
    """The files ``source``'s ``@path`` imports name (:func:`import_paths`) that exist: a relative path from the
    importing file's directory, kept under the directory it was found in (``located.base``: the workspace);
    ``~/...`` under the home directory (``HOME``); an absolute path under either. One that exists but leaves them
    is a :class:`~.reading.Refusal` saying so (never read); a path naming nothing (``@param``, ``@types/node``) is
    no import and is passed over, as Claude Code does. A trailing ``.``, ``,``, ``;``, ``:``, ``!``, ``?`` or ``)``
    is dropped when the path without it exists and the path with it does not (the end of a sentence).

    ``~`` paths are always files meant (no decorator or package starts ``@~``), so each is read or refused, saying
    why: ``~/...`` leaving the home directory (``~/../x.md``) is refused before anything is looked up there, and one
    naming no file is refused as missing; ``~name/...`` (another user's home) is refused unexpanded (the password
    database is never asked). A ``~/`` file whose real path leaves the home directory (a symlink) is refused when
    it is read (:func:`~.reading.read_source`)."""
    out: list[Located | Refusal] = []
    user_home = home(env)
    for raw in import_paths(source.text):
        said_forms = list(dict.fromkeys((raw, raw.rstrip(".,;:!?)"))))
        other = _OTHER_HOME.match(raw)
        if other:
            out.append(Refusal(said_forms[-1], f"is imported by {source.path} (@{said_forms[-1]}) but names the home "
                                               f"directory of user {other.group(1)!r} (~{other.group(1)}/): only ~/ "
                                               f"(your home directory, {user_home}) is followed; not read"))
            continue
        for said in said_forms:
            if said.startswith("~/"):
                path, bases = user_home / said[2:], [user_home]
            elif said.startswith("/"):
                path, bases = Path(said), [located.base, user_home]
            else:
                path, bases = source.path.parent / said, [located.base]
            path = Path(os.path.normpath(path))
            base = next((b for b in bases if is_within(path, os.path.normpath(b))), None)
            if base is None and said.startswith("~/"):  # nothing is looked up out of the home directory
                said = said_forms[-1]  # without a sentence's end
                out.append(_leaves(source, said, Path(os.path.normpath(user_home / said[2:])), bases))
                break
            try:
                if not (path.is_file() or path.is_symlink()):
                    continue
            except OSError:  # a name too long for a file: no import
                continue
            out.append(_leaves(source, said, path, bases) if base is None
                       else Located(path, base, located.hint, f"{source.path} (@{said})"))
            break
        else:
            if raw.startswith("~/"):
                said = said_forms[-1]
                out.append(Refusal(str(Path(os.path.normpath(user_home / said[2:]))),
                                   f"is imported by {source.path} (@{said}) but there is no such file; not read"))
    return out


#: A ``~name/`` path: another user's home directory.
_OTHER_HOME = re.compile(r"~([^/\s~]+)/")


def _leaves(source: SourceFile, said: str, path: Path, bases: list[Path]) -> Refusal:
    """The refusal of ``path`` (``@said`` of ``source``), which leaves every directory of ``bases``."""
    return Refusal(str(path), f"is imported by {source.path} (@{said}) but leaves "
                              f"{' and '.join(str(b) for b in bases)}; not read")


FORMAT = Format("claude-code", PLACES["claude-code"], locate, items, _layout, follow)
