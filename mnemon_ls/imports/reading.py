"""Reading another assistant's instruction files safely, and splitting Markdown into items.

A file is refused (never read past the first bytes that show the problem) when it is not a regular file,
is larger than :data:`MAX_FILE_BYTES`, holds a NUL byte (binary), is not UTF-8, or when its real path
leaves the directory it was found under (a symlink out of the workspace). Refusals are :class:`Refusal`
values, not exceptions: a directory scan reports them and goes on with the other files.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import model as dmodel
from ..gitfiles import read_fd

#: Largest instruction file read, in bytes. Instruction and memory files are meant to be read whole by a
#: model at every session (Claude Code loads CLAUDE.md into every prompt), so real ones are a few KiB; 1 MiB
#: is far above any of them and keeps a stray log or dump (the 50 MB case) from being read at all.
MAX_FILE_BYTES = 1024 * 1024
#: A headed section whose body is longer than this (UTF-8 bytes) becomes one Document instead of runtime
#: entries. Runtime entries are one fact each and the default USER.md budget is 4096 bytes: a 1 KiB section
#: would take a quarter of it as a single entry, and splitting it into bullet entries loses the heading's
#: context, so it is kept whole where it can be searched and read in full.
DOCUMENT_MIN_BYTES = 1024
#: The markers of the block ``mnemon-ls export`` writes (an import skips what lies between them).
BLOCK_BEGIN = "<!-- mnemon-ls:begin"
BLOCK_END = "<!-- mnemon-ls:end -->"


@dataclass(frozen=True)
class Refusal:
    """A file that was not read: ``path`` and ``reason`` (the rule it broke)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """``{path, reason}``."""
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class SourceFile:
    """One file read whole: ``path`` (absolute), its ``text``, ``sha256`` hex digest of its bytes, ``size``."""

    path: Path
    text: str
    sha256: str
    size: int


@dataclass
class Item:
    """One thing to import: ``text`` (a bullet, a paragraph, or a whole section for ``kind`` ``section``),
    ``title`` (its heading path, or the file name), ``path`` (the source file), ``kind`` (``entry`` or
    ``section``), ``hint`` (``user``/``memory`` when the format says where it belongs), ``reason`` (why a
    section is kept whole) and ``headed`` (``title`` is a heading path, not the file's name)."""

    text: str
    title: str
    path: str
    kind: str = "entry"
    hint: str | None = None
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    headed: bool = False


#: The longest :func:`item_name`, in characters.
NAME_CHARS = 90
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def item_name(title: str, headed: bool, text: str) -> str:
    """What one item is called on its own (an import proposal's title): its last heading when ``headed`` (the
    heading path ``title``), else the first sentence of its ``text`` (up to ``.``, ``!`` or ``?`` and a space, on
    its first line), cut at a word to :data:`NAME_CHARS` characters (an ellipsis ends a cut one); ``title`` when
    ``text`` has no word."""
    if headed:
        return title.split(" > ")[-1]
    line = next((ln.strip().lstrip("#").strip() for ln in text.split("\n") if ln.strip()), "")
    end = _SENTENCE_END.search(line)
    sentence = line[:end.end()] if end else line
    if len(sentence) > NAME_CHARS:
        cut = sentence[:NAME_CHARS - 1]
        sentence = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "\u2026"
    return sentence or title


def digest(data: bytes) -> str:
    """sha256 hex of ``data``."""
    return hashlib.sha256(data).hexdigest()


def read_source(path: Path, base: Path) -> SourceFile | Refusal:
    """Read ``path`` (found under ``base``) whole, or say why not (module doc for the rules)."""
    shown = str(path)
    try:
        real = path.resolve(strict=True)
    except RuntimeError:  # Path.resolve's "Symlink loop from ..." (Python 3.11, 3.12)
        return Refusal(shown, symlink_loop(shown))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the loop as Python 3.13 reports it
            return Refusal(shown, symlink_loop(shown))
        return Refusal(shown, f"cannot be resolved ({exc.strerror or exc.__class__.__name__})")
    try:
        base_real = base.resolve()
    except (OSError, RuntimeError):
        base_real = base
    if real != base_real and base_real not in real.parents:
        return Refusal(shown, f"is a symlink leaving {base} (it points to {real})")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return Refusal(shown, f"cannot be opened ({exc.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Refusal(shown, "is not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            return Refusal(shown, f"is larger than {MAX_FILE_BYTES} bytes ({st.st_size} bytes); not read")
        data = read_fd(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return Refusal(shown, f"is larger than {MAX_FILE_BYTES} bytes; not read")
    if b"\0" in data:
        return Refusal(shown, f"is binary (a NUL byte at offset {data.index(bytes(1))})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(shown, f"is not UTF-8 (invalid byte at offset {exc.start})")
    return SourceFile(path, text.removeprefix("\ufeff"), digest(data), len(data))


def symlink_loop(shown: str) -> str:
    """The reason a file in a symlink loop is refused: resolving ``shown`` (its path) leads back to a link already
    followed, so it names no file."""
    return f"is a symlink loop: resolving {shown} leads back to a link already followed; not read"


class InvalidSource(ValueError):
    """A file read whole whose content breaks its format's rules (a Cursor rule whose front matter is not closed):
    raised by a format's ``items``; ``reason`` says which rule (the file is refused, nothing of it imported)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def unclosed_front_matter(text: str) -> bool:
    """Whether ``text`` opens front matter (its first line is ``---``) that no later ``---`` line closes within the
    lines :func:`front_matter` looks at (its first 200)."""
    lines = text.split("\n")
    if lines[0].rstrip("\r ") != "---":
        return False
    return not any(line.strip() == "---" for line in lines[1:200])


def check_front_matter_closed(source: "SourceFile", kind: str) -> None:
    """Raise :class:`InvalidSource` when ``source`` opens front matter that is not closed
    (:func:`unclosed_front_matter`): imported as written, its front matter would become entries. ``kind`` names
    the file in the reason (``a Cursor rule``)."""
    if unclosed_front_matter(source.text):
        raise InvalidSource(f"is {kind} whose front matter is not closed (line 1 is --- and no later --- line ends "
                            "it); nothing of it imported")


def file_digest(path: Path) -> str | None:
    """sha256 hex of ``path``'s bytes now, or None when it cannot be read (gone, unreadable, too large)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return digest(data)


# ------------------------------------------------------------------ Markdown

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")  # the blank lines at the start of a text
_BULLET = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
#: The line ``claude /init`` writes at the top of every CLAUDE.md it generates (older versions without
#: "(claude.ai/code)"). It says what the file is for, not a fact of the repository: as a MEMORY.md entry it would
#: be wrong in the wake and in the block ``export agents-md`` writes. Skipped in every format (a CLAUDE.md is
#: often copied or linked as AGENTS.md).
INIT_PREAMBLE = re.compile(r"This file provides guidance to Claude Code(?: \(claude\.ai/code\))? when working "
                           r"with code in this repository\.?", re.IGNORECASE)


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """``(metadata, body)``: a leading ``---`` YAML block read as flat ``key: value`` lines, and the text after
    it. No block: ``({}, text)``. A value is a YAML scalar as far as rule files use one (:func:`_scalar`): quotes
    stripped, a `` #`` comment after it dropped, and a block scalar (``key: >`` or ``key: |``, then indented lines)
    joined into one line (a value here titles or scopes one entry)."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() == "---":
            meta: dict[str, str] = {}
            for index in range(1, end):
                key, sep, value = lines[index].partition(":")
                if sep and key.strip() and not key.startswith((" ", "\t")):
                    meta[key.strip()] = _scalar(value, lines[index + 1:end])
            return meta, "\n".join(lines[end + 1:])
    return {}, text


def _scalar(value: str, following: list[str]) -> str:
    """The YAML scalar ``value`` (the text after ``key:``; ``following``: the block's lines after it): a quoted
    one up to its closing quote; a plain one up to a `` #`` comment; a block scalar (``>``/``|``, with a chomping
    sign) from the indented lines that follow, joined by spaces."""
    value = value.strip()
    if value[:1] in ("'", '"'):
        closing = value.find(value[0], 1)
        return value[1:closing] if closing > 0 else value.strip("'\"")
    if value[:1] in (">", "|") and value[1:].strip("+-") == "" and len(value) <= 2:
        block = []
        for line in following:
            if line.strip() and not line.startswith((" ", "\t")):
                break
            block.append(line.strip())
        return " ".join(part for part in block if part)
    return re.split(r"\s#", value, maxsplit=1)[0].strip()


def without_block(text: str) -> str:
    """``text`` without the block ``mnemon-ls export`` wrote (what lies between its markers)."""
    start = text.find(BLOCK_BEGIN)
    if start < 0:
        return text
    end = text.find(BLOCK_END, start)
    return text[:start] + ("" if end < 0 else text[end + len(BLOCK_END):])


def sections(text: str) -> list[tuple[str, list[str]]]:
    """``[(heading path, body lines)]`` in order: the text before the first heading has the heading path
    ``""``; headings inside code fences are body lines."""
    out: list[tuple[str, list[str]]] = [("", [])]
    path: list[tuple[int, str]] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            level = len(match.group(1))
            path = [p for p in path if p[0] < level] + [(level, match.group(2).strip())]
            out.append((" > ".join(p[1] for p in path), []))
        else:
            out[-1][1].append(line)
    return [(h, body) for h, body in out if h or any(line.strip() for line in body)]


def markdown_items(text: str, path: str, file_title: str, hint: str | None = None,
                   scope: tuple[str, ...] = (), relevant: str = "") -> list[Item]:
    """The items of a Markdown file: a headed section over :data:`DOCUMENT_MIN_BYTES`, or holding a code
    block or a table, is one ``section`` item (heading and body, formatting kept); any other section gives one
    ``entry`` per bullet (continuation lines joined) and per paragraph. Front matter, the export block and a
    paragraph that is only Claude Code's ``/init`` preamble (:data:`INIT_PREAMBLE`) are skipped.

    An entry made from a bullet carries its heading (:func:`with_heading`: ``## What's left`` / ``- RAW files.``
    gives ``What's left: RAW files.``): a bullet often means something only under its heading, and an entry is
    read alone. Not a heading that only names the file (``# CLAUDE.md``) or is its title (the file's one level-1
    heading, :func:`_title`: CLAUDE.md and AGENTS.md titled differently often hold the same bullets).

    ``scope``: the path globs a path-scoped rule applies to (a Copilot ``applyTo``, a Claude Code rule's
    ``paths``, a Cursor rule's ``globs``; empty: everywhere): each entry starts ``For <globs>: `` and a section's
    body with ``Applies to <globs>.`` (:func:`scope_text`), so an entry never reads as a rule of the whole
    repository. ``relevant``: the description of a rule the assistant applies only when it finds it relevant (a
    Cursor "Agent Requested" rule): each entry starts ``When relevant (<description>): `` and a section's body with
    ``Applies when relevant: <description>.`` (:func:`relevance_text`), for the same reason; ``scope`` wins when
    both are given. ``extra["bare"]`` of an entry changed that way holds its text as the file has it."""
    _meta, body = front_matter(without_block(text))
    items: list[Item] = []
    stem = Path(path).name.lower(), Path(path).stem.lower()
    title = _title(body)
    for heading, lines in sections(body):
        content = "\n".join(lines).strip("\n")
        size = len(content.encode("utf-8"))
        structured = any(_FENCE.match(line) for line in lines) or sum(bool(_TABLE.match(line)) for line in lines) >= 2
        leaf = heading.split(" > ")[-1]
        if heading and (size > DOCUMENT_MIN_BYTES or structured):
            why = (f"a headed section of {size} bytes (over {DOCUMENT_MIN_BYTES})" if size > DOCUMENT_MIN_BYTES
                   else "a headed section holding a code block or a table")
            condition = _condition(scope, relevant, section=True)
            applies = f"{condition}\n\n" if condition else ""
            items.append(Item(f"# {leaf}\n\n{applies}{_section_body(content)}\n", heading, path, "section", hint,
                              why, headed=True))
            continue
        # "# CLAUDE.md" says nothing, nor does the title of a file (its one level-1 heading, "# Orbit notes")
        context = leaf if heading and leaf.lower() not in stem and heading != title else ""
        for text_, bullet in _pieces(lines):
            if INIT_PREAMBLE.fullmatch(text_):
                continue
            said = with_heading(context, text_) if bullet else text_
            said = f"{_condition(scope, relevant)}{said}"
            extra = {"bare": text_} if said != text_ else {}
            items.append(Item(said, heading or file_title, path, "entry", hint, extra=extra, headed=bool(heading)))
    return items


def _title(body: str) -> str | None:
    """The file's title: the text of its level-1 heading when it has exactly one (outside code fences)."""
    found, fenced = [], False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) == 1:
            found.append(match.group(2).strip())
    return found[0] if len(found) == 1 else None


def with_heading(heading: str, text: str) -> str:
    """``text`` (a bullet) led by its ``heading``: ``What's left: RAW files.`` (``What's left? RAW files.`` when
    the heading ends with ``:``, ``?``, ``!`` or ``.``); ``text`` itself when there is no heading or ``text``
    already starts with it."""
    if not heading or text.lower().startswith(heading.lower().rstrip(":?!.")):
        return text
    return f"{heading} {text}" if heading[-1] in ":?!." else f"{heading}: {text}"


def scope_text(scope: tuple[str, ...], *, section: bool = False) -> str:
    """The words that keep a path-scoped rule's scope (``scope``: its globs): ``For src/**/*.ts, *.tsx: `` before
    an entry; with ``section``, the line ``Applies to src/**/*.ts, *.tsx.`` a section's Document starts with."""
    globs = ", ".join(scope)
    return f"Applies to {globs}." if section else f"For {globs}: "


def relevance_text(description: str, *, section: bool = False) -> str:
    """The words that keep the condition of a rule applied only when relevant (``description``: what it is for, as
    its author wrote it; a trailing ``.`` dropped): ``When relevant (Error handling for API routes): `` before an
    entry; with ``section``, the line ``Applies when relevant: Error handling for API routes.``."""
    said = description.strip().rstrip(".")
    return f"Applies when relevant: {said}." if section else f"When relevant ({said}): "


def _condition(scope: tuple[str, ...], relevant: str, *, section: bool = False) -> str:
    """What leads an item of a rule that does not apply everywhere (:func:`markdown_items`); ``""`` when it does."""
    if scope:
        return scope_text(scope, section=section)
    return relevance_text(relevant, section=section) if relevant.strip() else ""


#: Globs that mean every file (a rule with only these is repository-wide).
EVERYWHERE = frozenset({"**", "**/*", "*", "/**", "./**"})


def front_matter_list(text: str, key: str) -> tuple[str, ...]:
    """The values of ``key`` in the front matter of ``text`` (:func:`front_matter`'s block): a YAML block list
    (``key:`` then ``  - value`` lines), a flow list (``[a, "b"]``) or a comma-separated string (``a, b``: Copilot's
    ``applyTo``, Cursor's ``globs``), quotes stripped, empty values dropped; ``()`` when the key is missing."""
    if not text.startswith("---"):
        return ()
    lines = text.split("\n")
    end = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() == "---"), None)
    if end is None:
        return ()
    for i in range(1, end):
        name, sep, value = lines[i].partition(":")
        if not sep or name.strip() != key or name.startswith((" ", "\t")):
            continue
        value = value.strip()
        if value:
            parts = value.strip("[]").split(",")
        else:
            parts = []
            for line in lines[i + 1:end]:
                item = re.match(r"^\s+-\s*(.*)$", line)
                if not item:
                    break
                parts.append(item.group(1))
        return tuple(v for v in (p.strip().strip("'\"").strip() for p in parts) if v)
    return ()


def path_scope(globs: tuple[str, ...]) -> tuple[str, ...]:
    """``globs`` of a path-scoped rule as :func:`markdown_items` takes its ``scope``: ``()`` (everywhere) when one
    of them matches every file (:data:`EVERYWHERE`)."""
    return () if any(g in EVERYWHERE for g in globs) else globs


def _section_body(content: str) -> str:
    """A section's body for its document: trimmed, except that a first line indented as a Markdown code block
    (:func:`~mnemon_ls.documents.model.code_indent`) keeps its indentation (only the blank lines before it and
    the whitespace at the end go): the document puts its heading first, so that line stays a code block."""
    if not dmodel.code_indent(content):
        return content.strip()
    return _BLANK_LINES.sub("", content).rstrip()


def _pieces(lines: list[str]) -> list[tuple[str, bool]]:
    """Bullets and paragraphs of a section body, each as one line of text, with whether it is a bullet."""
    pieces: list[tuple[list[str], bool]] = []
    current: list[str] | None = None
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        bullet = None if fenced else _BULLET.match(line)
        if bullet and len(bullet.group(1)) < 2:
            current = [bullet.group(3)]
            pieces.append((current, True))
        elif not line.strip():
            current = None
        elif bullet:  # a nested bullet belongs to its parent
            if current is None:
                current = []
                pieces.append((current, True))
            current.append(bullet.group(3))
        else:
            if current is None:
                current = []
                pieces.append((current, False))
            current.append(line.strip())
    out = []
    for piece, is_bullet in pieces:
        joined = " ".join(p.strip() for p in piece if p.strip())
        if joined and not re.fullmatch(r"[-=*_#>\s]+", joined):
            out.append((joined, is_bullet))
    return out
