"""Edit a JSON document's text in place: add, replace or delete one member (or array element) and leave
every other byte of the file as it was, so ``mnemon-ls setup`` followed by ``setup --remove`` gives back
the user's own file byte for byte (their indentation, key order, spacing and line ends).

The text must already be valid JSON or JSONC (callers parse it first, which is how a bad file is refused);
values are skipped with the standard library's decoder, never re-serialised. JSONC (VS Code's ``mcp.json``:
``//`` and ``/* */`` comments, trailing commas) is located in :func:`mnemon_ls.jsonc.blank`'s copy, which has
the same offsets, and edited in the original, so the person's comments stay: a member is added after the
comments that end the last member's line, a removed member takes its comma and the line it leaves blank,
and a comment inside a value we would replace refuses the edit (:class:`CommentWouldBeLost`). A path is
a sequence of object keys (``str``) and array indexes (``int``) from the top-level value. Only what is
added is written in our layout: ``json.dumps`` with the indent unit the file already uses (two spaces
when it shows none), or on one line when the surrounding container is on one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Any, Sequence

from .jsonc import blank

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

Path = Sequence["str | int"]


class CommentWouldBeLost(ValueError):
    """The value an edit would replace holds a comment (JSONC); ``args[0]`` names the path."""


@dataclass(frozen=True)
class _Member:
    """One member of a container: its ``key`` (array index for an array), where it starts (the key's
    opening quote, or the value for an array element), where its value starts and where it ends."""

    key: str | int
    start: int
    value_start: int
    end: int


@dataclass(frozen=True)
class _Container:
    """An object or array: offsets of its opening and closing bracket and its members in order."""

    open: int
    close: int
    members: list[_Member]

    def find(self, key: str | int) -> int | None:
        """Index of the member named ``key`` (object) or at ``key`` (array), ``None`` when absent."""
        return next((i for i, m in enumerate(self.members) if m.key == key), None)


def _skip(text: str, at: int) -> int:
    return _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]  # the pattern matches the empty string


def _container(text: str, open_at: int) -> _Container:
    """The container whose opening bracket is at ``open_at``; raises :class:`ValueError` when there is none."""
    if text[open_at:open_at + 1] not in ("{", "["):
        raise ValueError(f"no JSON object or array at offset {open_at}")
    is_object = text[open_at] == "{"
    closing = "}" if is_object else "]"
    members: list[_Member] = []
    at = _skip(text, open_at + 1)
    if text[at] == closing:
        return _Container(open_at, at, members)
    while True:
        start = at
        key: str | int = len(members)
        if is_object:
            key, at = scanstring(text, at + 1)
            at = _skip(text, _skip(text, at) + 1)  # past the ':'
        value_start = at
        _, at = _DECODER.raw_decode(text, at)
        members.append(_Member(key, start, value_start, at))
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)
            continue
        return _Container(open_at, at, members)


def _locate(mask: str, path: Path) -> _Container:
    """The container that ``path`` names (``[]``: the top-level value) in plain JSON (a JSONC text's
    :func:`~mnemon_ls.jsonc.blank` copy); raises :class:`KeyError` when a
    step is missing and :class:`ValueError` when a step is not a container."""
    container = _container(mask, _skip(mask, 0))
    for step in path:
        index = container.find(step)
        if index is None:
            raise KeyError(step)
        container = _container(mask, container.members[index].value_start)
    return container


def _line_indent(text: str, at: int) -> str:
    """The leading blanks of the line that holds offset ``at``."""
    line_start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[line_start:at]).group(0)  # type: ignore[union-attr]


def _indent_unit(text: str, mask: str) -> str:
    """The indent step the file uses (its top-level members' indentation), two spaces when it shows none."""
    top = _container(mask, _skip(mask, 0))
    if top.members and "\n" in text[top.open:top.members[0].start]:
        unit = _line_indent(text, top.members[0].start)
        if unit:
            return unit
    return "  "


def _dump(value: Any, indent: str | None, unit: str) -> str:
    """``value`` as JSON: on one line when ``indent`` is ``None``, else laid out with ``unit`` per level
    starting at ``indent``."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _member_text(key: str | int, value: Any, indent: str | None, unit: str) -> str:
    head = f"{json.dumps(key, ensure_ascii=False)}: " if isinstance(key, str) else ""
    return head + _dump(value, indent, unit)


def _gap(text: str, mask: str, start: int, end: int) -> str:
    """What separates two members (``mask[start:end]``): as it is in plain JSON; where comments were
    (blank in ``mask``), a line end and the indentation of the last line, or one space on one line."""
    gap = mask[start:end]
    if gap == text[start:end]:
        return gap
    if "\n" in gap:
        return ("\r\n" if "\r\n" in gap else "\n") + gap[gap.rindex("\n") + 1:]
    return " " if gap else ""


def _line_tail(text: str, commas: str, at: int) -> tuple[int, bool]:
    """Past the trailing comma and the comments that follow offset ``at`` (a member's end) on its line
    (a block comment may run on), and whether a trailing comma was among them; ``at`` itself when none."""
    trailing = False
    while True:
        skipped = re.compile(r"[ \t]*").match(text, at).end()  # type: ignore[union-attr]
        if commas[skipped:skipped + 1] == "," and text[skipped] == ",":
            trailing, at = True, skipped + 1
        elif text.startswith("//", skipped):
            end = text.find("\n", skipped)
            at = len(text) if end < 0 else end - (text[end - 1] == "\r")
        elif text.startswith("/*", skipped):
            at = text.index("*/", skipped) + 2
        else:
            return at, trailing


def _insert(text: str, mask: str, container: _Container, key: str | int, value: Any) -> str:
    """``text`` with ``key: value`` (or the element ``value``) added as the container's last member."""
    unit = _indent_unit(text, mask)
    members = container.members
    if not members:
        outer = _line_indent(text, container.open)
        inner = outer + unit
        inside = text[container.open + 1:container.close]
        if not inside.strip(" \t\r\n"):
            body = "\n" + inner + _member_text(key, value, inner, unit) + "\n" + outer
            return text[:container.open + 1] + body + text[container.close:]
        at = container.open + 1 + len(inside.rstrip(" \t\r\n"))  # after the comments it holds
        return text[:at] + "\n" + inner + _member_text(key, value, inner, unit) + text[at:]
    if len(members) >= 2:
        comma = mask.index(",", members[-2].end)
        gap = _gap(text, mask, comma + 1, members[-1].start)
    else:
        gap = _gap(text, mask, container.open + 1, members[0].start)
    indent = gap[gap.rindex("\n") + 1:] if "\n" in gap else None
    last = members[-1].end
    tail, trailing = _line_tail(text, blank(text, commas=False), last)
    added = gap + _member_text(key, value, indent, unit)
    if trailing:
        return text[:tail] + added + "," + text[tail:]
    return text[:last] + "," + text[last:tail] + added + text[tail:]


def set_value(text: str, path: Path, value: Any) -> str:
    """``text`` with the value at ``path`` (last step an object key) replaced by ``value``, or added as the
    object's last member when absent; missing objects on the way are added too. Every other byte stays.
    Raises :class:`ValueError` when a step of ``path`` is not an object, :class:`CommentWouldBeLost` when
    the value replaced holds a comment."""
    mask = blank(text)
    for depth in range(len(path)):
        try:
            container = _locate(mask, path[:depth])
        except KeyError:
            break
        index = container.find(path[depth])
        if index is None:
            nested: Any = value
            for step in reversed(path[depth + 1:]):
                nested = {step: nested}
            return _insert(text, mask, container, path[depth], nested)
        if depth == len(path) - 1:
            member = container.members[index]
            if _has_comment(text, member.value_start, member.end):
                raise CommentWouldBeLost(list(path))
            indent = _line_indent(text, member.start) if "\n" in text[container.open:container.close] else None
            return text[:member.value_start] + _dump(value, indent, _indent_unit(text, mask)) + text[member.end:]
    raise ValueError(f"cannot set {list(path)!r}")


def append(text: str, path: Path, value: Any) -> str:
    """``text`` with ``value`` added as the last element of the array at ``path``; an absent array (last
    step an object key) is added holding just ``value``. Every other byte stays."""
    mask = blank(text)
    try:
        container = _locate(mask, path)
    except KeyError:
        return set_value(text, path, [value])
    return _insert(text, mask, container, len(container.members), value)


def _has_comment(text: str, start: int, end: int) -> bool:
    return blank(text[start:end], commas=False) != text[start:end]


def has_comment(text: str, path: Path) -> bool:
    """Whether the value at ``path`` (``[]``: the whole text) holds a ``//`` or ``/* */`` comment (JSONC).
    Raises :class:`KeyError` when ``path`` names nothing."""
    if not path:
        return _has_comment(text, 0, len(text))
    container = _locate(blank(text), path[:-1])
    index = container.find(path[-1])
    if index is None:
        raise KeyError(path[-1])
    member = container.members[index]
    return _has_comment(text, member.value_start, member.end)


def _drop_blank_line(text: str, at: int) -> str:
    """``text`` without the line that holds offset ``at`` when that line is blank (its line end too)."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    if end < 0 or text[start:end].strip(" \t\r"):
        return text
    return text[:start] + text[end + 1:]


def delete(text: str, path: Path) -> str:
    """``text`` without the member (or element) at ``path`` and its separating comma; the other members keep
    their bytes, so deleting what :func:`set_value` or :func:`append` added gives the earlier text back.
    In JSONC the comments around it stay (a line it leaves blank goes). Raises :class:`KeyError` when
    ``path`` names nothing."""
    mask = blank(text)
    container = _locate(mask, path[:-1])
    index = container.find(path[-1])
    if index is None:
        raise KeyError(path[-1])
    members = container.members
    member = members[index]
    if mask != text:  # comments or trailing commas: cut the member and one comma, keep every comment
        commas = blank(text, commas=False)
        after = _skip(commas, member.end)
        if commas[after] == ",":
            return _drop_blank_line(text[:member.start] + text[after + 1:], member.start)
        if index == 0:
            return _drop_blank_line(text[:member.start] + text[member.end:], member.start)
        before = commas.index(",", members[index - 1].end)
        cut = text[:before] + text[before + 1:member.start] + text[member.end:]
        return _drop_blank_line(cut, member.start - 1)
    if len(members) == 1:
        return text[:container.open + 1] + text[container.close:]
    if index < len(members) - 1:
        return text[:members[index].start] + text[members[index + 1].start:]
    return text[:members[index - 1].end] + text[members[index].end:]
