"""Claude Code: ``CLAUDE.md`` (or ``.claude/CLAUDE.md``), ``CLAUDE.local.md``, ``.claude/rules/**/*.md`` and
the auto memory ``~/.claude/projects/<project>/memory/`` (``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude``):
a ``MEMORY.md`` index whose lines link the topic files, and topic files with front matter ``name``,
``description`` and ``type`` (``user``, ``feedback``, ``project``, ``reference``).

``<project>`` is the workspace's absolute path with every character but letters and digits replaced by
``-`` (how Claude Code names its project directories). Index lines that only link a topic file are
skipped (the topic file is read itself); other index lines are items.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from .formats import Format, Located, existing, glob, home, markdown
from .reading import Item, SourceFile, front_matter, markdown_items
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


def items(source: SourceFile, located: Located) -> list[Item]:
    """A topic file's items go where its ``type`` says (user/feedback: USER.md); the index skips its
    link lines; the instruction files are plain Markdown."""
    meta, body = front_matter(source.text)
    if source.path.name == "MEMORY.md":
        kept = "\n".join(line for line in body.split("\n") if not _LINK_LINE.match(line))
        return markdown_items(kept, str(source.path), "auto memory index", located.hint)
    if meta.get("type"):
        hint = "user" if meta["type"].lower() in _USER_TYPES else "memory"
        return markdown_items(source.text, str(source.path), meta.get("name") or source.path.stem, hint)
    return markdown(source, located)


FORMAT = Format("claude-code", PLACES["claude-code"], locate, items, _layout)
