"""Edit a JSON document's text in place: add, replace or delete one member (or array element) and leave
every other byte of the file as it was, so ``mnemon-ls setup`` followed by ``setup --remove`` gives back
the user's own file byte for byte (their indentation, key order, spacing and line ends).

The text must already be valid JSON (callers parse it with :func:`json.loads` first, which is how a bad
file is refused); values are skipped with the standard library's decoder, never re-serialised. A path is
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

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

Path = Sequence["str | int"]


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


def _locate(text: str, path: Path) -> _Container:
    """The container that ``path`` names (``[]``: the top-level value); raises :class:`KeyError` when a
    step is missing and :class:`ValueError` when a step is not a container."""
    container = _container(text, _skip(text, 0))
    for step in path:
        index = container.find(step)
        if index is None:
            raise KeyError(step)
        container = _container(text, container.members[index].value_start)
    return container


def _line_indent(text: str, at: int) -> str:
    """The leading blanks of the line that holds offset ``at``."""
    line_start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[line_start:at]).group(0)  # type: ignore[union-attr]


def _indent_unit(text: str) -> str:
    """The indent step the file uses (its top-level members' indentation), two spaces when it shows none."""
    top = _container(text, _skip(text, 0))
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


def _insert(text: str, container: _Container, key: str | int, value: Any) -> str:
    """``text`` with ``key: value`` (or the element ``value``) added as the container's last member."""
    unit = _indent_unit(text)
    members = container.members
    if not members:
        outer = _line_indent(text, container.open)
        inner = outer + unit
        body = "\n" + inner + _member_text(key, value, inner, unit) + "\n" + outer
        return text[:container.open + 1] + body + text[container.close:]
    if len(members) >= 2:
        between = text[members[-2].end:members[-1].start]
        gap = between[between.index(",") + 1:]
    else:
        gap = text[container.open + 1:members[0].start]
    indent = gap[gap.rindex("\n") + 1:] if "\n" in gap else None
    addition = "," + gap + _member_text(key, value, indent, unit)
    return text[:members[-1].end] + addition + text[members[-1].end:]


def set_value(text: str, path: Path, value: Any) -> str:
    """``text`` with the value at ``path`` (last step an object key) replaced by ``value``, or added as the
    object's last member when absent; missing objects on the way are added too. Every other byte stays.
    Raises :class:`ValueError` when a step of ``path`` is not an object."""
    for depth in range(len(path)):
        try:
            container = _locate(text, path[:depth])
        except KeyError:
            break
        index = container.find(path[depth])
        if index is None:
            nested: Any = value
            for step in reversed(path[depth + 1:]):
                nested = {step: nested}
            return _insert(text, container, path[depth], nested)
        if depth == len(path) - 1:
            member = container.members[index]
            indent = _line_indent(text, member.start) if "\n" in text[container.open:container.close] else None
            return text[:member.value_start] + _dump(value, indent, _indent_unit(text)) + text[member.end:]
    raise ValueError(f"cannot set {list(path)!r}")


def append(text: str, path: Path, value: Any) -> str:
    """``text`` with ``value`` added as the last element of the array at ``path``; an absent array (last
    step an object key) is added holding just ``value``. Every other byte stays."""
    try:
        container = _locate(text, path)
    except KeyError:
        return set_value(text, path, [value])
    return _insert(text, container, len(container.members), value)


def delete(text: str, path: Path) -> str:
    """``text`` without the member (or element) at ``path`` and its separating comma; the other members keep
    their bytes, so deleting what :func:`set_value` or :func:`append` added gives the earlier text back.
    Raises :class:`KeyError` when ``path`` names nothing."""
    container = _locate(text, path[:-1])
    index = container.find(path[-1])
    if index is None:
        raise KeyError(path[-1])
    members = container.members
    if len(members) == 1:
        return text[:container.open + 1] + text[container.close:]
    if index < len(members) - 1:
        return text[:members[index].start] + text[members[index + 1].start:]
    return text[:members[index - 1].end] + text[members[index].end:]
