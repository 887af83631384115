"""ByteRover's context-tree entries as mnemon-ls items (package doc for the mapping): item ids of tree paths, and
entries read and written in ByteRover's own curate format (YAML front matter ``title``, ``summary``, ``tags``,
``related``, ``keywords``, ``createdAt``, ``updatedAt``, then ``## Reason`` and ``## Narrative`` / ``### Structure``
holding the text), with the three keys ByteRover ignores that keep mnemon-ls's category, importance and source.

Files only: nothing here runs ``brv`` (:mod:`.engine` does).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import yaml

from mnemon_ls.spaces.model import CATEGORIES, MAX_ITEM_ID_CHARS, Item, parse_time, rfc3339

#: Files of the tree that are ByteRover's derived artifacts, not entries.
_DERIVED = (".abstract.md", ".overview.md")
_INDEX_FILES = ("_index.md", "context.md")
_ARCHIVE_DIR = "_archived"
#: The prefix of an item id carrying a tree path in base64url, and of one naming a path by its hash.
ENCODED = "b64~"
HASHED = "h~"
_OUR_KEYS = ("mnemonCategory", "mnemonImportance", "mnemonSource")


# ---------------------------------------------------------------------------------------------- item ids

def _plain(text: str) -> bool:
    return (0 < len(text) <= MAX_ITEM_ID_CHARS and "/" not in text and ".." not in text and "\x00" not in text
            and not any(c.isspace() for c in text) and not text.startswith((ENCODED, HASHED)))


def item_id(path: str) -> str:
    """The mnemon-ls item id of the entry at ``path`` (relative to the context tree, ``/``-separated): the path
    with ``/`` written ``~`` when that reads back (no ``~`` in the path, and a valid item id:
    :func:`mnemon_ls.spaces.model.validate_item_id`); else :data:`ENCODED` + its UTF-8 bytes in unpadded
    base64url when that fits in 200 characters; else :data:`HASHED` + 40 hex digits of its SHA-256."""
    plain = path.replace("/", "~")
    if "~" not in path and _plain(plain):
        return plain
    encoded = ENCODED + base64.urlsafe_b64encode(path.encode("utf-8")).decode("ascii").rstrip("=")
    if len(encoded) <= MAX_ITEM_ID_CHARS:
        return encoded
    return HASHED + hashlib.sha256(path.encode("utf-8")).hexdigest()[:40]


def path_of(item: str) -> str | None:
    """The tree path of a mnemon-ls item id (:func:`item_id` reversed), or ``None`` when ``item`` is not one
    :func:`item_id` gives (another spelling, a base64 that does not decode); a :data:`HASHED` id is returned as
    it is (:meth:`ByteRoverSpace.forget` looks it up)."""
    if item.startswith(HASHED):
        return item
    if item.startswith(ENCODED):
        body = item[len(ENCODED):]
        try:
            path = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    else:
        path = item.replace("~", "/")
    return path if path and item_id(path) == item else None


def _is_entry(path: str) -> bool:
    """Whether a tree path (``/``-separated) names an entry: a ``.md`` file, not a derived artifact
    (``_index.md``, ``context.md``, ``*.abstract.md``, ``*.overview.md``), not archived, not hidden."""
    parts = path.split("/")
    name = parts[-1]
    return (name.endswith(".md") and not name.endswith(_DERIVED) and name not in _INDEX_FILES
            and _ARCHIVE_DIR not in parts and not any(p.startswith(".") or p in ("", "..") for p in parts))


def _entries(tree: Path) -> Iterator[str]:
    """The tree paths of every entry of ``tree`` (:func:`_is_entry`), hidden directories (``.git``) skipped."""
    for folder, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != _ARCHIVE_DIR)
        base = Path(folder).relative_to(tree).as_posix()
        for name in sorted(files):
            path = name if base == "." else f"{base}/{name}"
            if _is_entry(path):
                yield path


# ---------------------------------------------------------------------------------------------- entries

def _now() -> str:
    """Now as JavaScript's ``toISOString`` writes it (what ByteRover puts in ``createdAt``)."""
    moment = datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def render(content: str, *, category: str, importance: int, tags: list[str], source: str, now: str) -> str:
    """The markdown of a new entry holding ``content`` (package doc: ByteRover's curate format, three more
    front-matter keys for what mnemon-ls keeps). The front matter reads back as written: when PyYAML's Unicode
    output would not (a U+0085 in a tag or the source), every non-ASCII character is written escaped."""
    first = next((line for line in content.splitlines() if line.strip()), content)
    front = {"title": _one_line(first, 100), "summary": _one_line(content, 200), "tags": list(tags), "related": [],
             "keywords": [], "createdAt": now, "updatedAt": now, "mnemonCategory": category,
             "mnemonImportance": importance, "mnemonSource": source}
    block = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, default_flow_style=None, width=1 << 30)
    if yaml.safe_load(block) != front:  # PyYAML writes U+0085 (NEL) raw in a quoted scalar and folds it on reading:
        block = yaml.safe_dump(front, sort_keys=False, allow_unicode=False, default_flow_style=None, width=1 << 30)
    return f"---\n{block}---\n## Reason\nRemembered through mnemon-ls\n\n## Narrative\n### Structure\n{content}\n"


def _split(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of an entry's text (``{}`` and the whole text without front matter, or when it is
    not a YAML mapping or cannot be read: invalid, or nested too deep for PyYAML)."""
    newline = "\r\n" if text.startswith("---\r\n") else "\n"
    if not text.startswith("---" + newline):
        return {}, text
    close = f"{newline}---{newline}"
    end = text.find(close, 3)
    if end < 0:
        return {}, text
    try:
        front = yaml.safe_load(text[3 + len(newline):end])
    except (yaml.YAMLError, RecursionError):  # (PyYAML recurses: front matter nested thousands deep)
        return {}, text
    return (front if isinstance(front, dict) else {}), text[end + len(close):]


_REASON = re.compile(r"(?ms)^##\s*Reason\s*\n.*?(?=^##\s|\Z)")
_ONLY_STRUCTURE = re.compile(r"(?s)^\s*##\s*Narrative\s*\n###\s*Structure\s*\n(.*)$")


def _content(front: dict[str, Any], body: str) -> str:
    """The text of an entry: what mnemon-ls wrote (everything after its ``### Structure`` line), else the body
    without its ``## Reason`` section (only the structure's text when that is all the narrative holds), else its
    title."""
    if all(k in front for k in _OUR_KEYS):
        at = body.find("### Structure\n")
        if at >= 0:
            return body[at + len("### Structure\n"):].rstrip("\n")
    rest = _REASON.sub("", body).strip()
    only = _ONLY_STRUCTURE.match(rest)
    if only and not re.search(r"(?m)^#{1,3}\s", only.group(1)):
        rest = only.group(1).strip()
    return rest or str(front.get("title") or "")


def _time(value: Any) -> str | None:
    if isinstance(value, datetime):
        return rfc3339(value if value.tzinfo else value.replace(tzinfo=timezone.utc))
    moment = parse_time(value) if isinstance(value, str) else None
    return rfc3339(moment) if moment else None


def read_entry(tree: Path, path: str, *, score: float | None = None) -> Item | None:
    """The item of the entry at tree path ``path``, read from its file; ``None`` when it is not an entry of
    ``tree`` (any more) or does not resolve inside it."""
    if not _is_entry(path):
        return None
    full = tree / path
    try:
        if not full.resolve().is_relative_to(tree.resolve()) or not full.is_file():
            return None
        text = full.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    front, body = _split(text)
    ours = all(k in front for k in _OUR_KEYS)
    domain = path.split("/")[0]
    category = front.get("mnemonCategory") if ours else domain
    importance = front.get("mnemonImportance") if ours else None
    source = front.get("mnemonSource") if ours else None
    return Item(item_id(path), _content(front, body),
                category=category if category in CATEGORIES else "general",
                importance=importance if isinstance(importance, int) and not isinstance(importance, bool)
                and 1 <= importance <= 5 else None,
                tags=[t for t in front.get("tags") or [] if isinstance(t, str)] if isinstance(front.get("tags"), list)
                else [], entities=[],
                source=source if isinstance(source, str) and source else f"byterover:{path}"[:100],
                created_at=_time(front.get("createdAt")), score=score, matched_via="byterover-bm25",
                updated_at=_time(front.get("updatedAt")))
