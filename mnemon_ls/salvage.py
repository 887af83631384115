"""Salvage what is left of a damaged truth file: its text whatever its encoding, and every JSON record that
survived a cut or a hand edit (the runtime store's ``memories.json``, the documents index, the records log, the
Memory Space registry files).

Base layer: imports only the standard library; never raises.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable


def decode_leniently(data: bytes) -> str:
    """Text of a possibly damaged file: UTF-16 when it has a BOM and decodes, else UTF-8 with U+FFFD
    for bad bytes; a leading BOM is dropped. Never raises. Used to salvage damaged truth files."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def scan_json_objects(text: str, first_key: str) -> list[Any]:
    """Every complete JSON object in ``text`` whose first key is ``first_key``, in order.

    Salvages the records of a truncated or otherwise unparseable JSON file: a cut file keeps every
    object written before the cut. Never raises.
    """
    decoder = json.JSONDecoder()
    pattern = re.compile(r'\{\s*"' + re.escape(first_key) + r'"\s*:')
    found: list[Any] = []
    position = 0
    while match := pattern.search(text, position):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:  # a JSONDecodeError, or a number past Python's digit limit
            position = match.end()
            continue
        found.append(value)
        position = end
    return found


def json_objects(text: str) -> Iterable[Any]:
    """Every JSON object that decodes at some ``{`` of ``text`` (lenient salvage of a damaged file)."""
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1:
        try:
            value, _ = decoder.raw_decode(text, position)
        except ValueError:
            value = None
        if isinstance(value, dict):
            yield value
        position = text.find("{", position + 1)


def complete_members(text: str, start: int) -> list[tuple[str, Any]]:
    """The members of the JSON object opening at ``text[start]`` (``{``) that are complete, in order, up to
    the first one that is cut off or malformed (a truncated file keeps everything before the cut)."""
    decoder = json.JSONDecoder()
    members: list[tuple[str, Any]] = []
    space = re.compile(r"\s*")
    position = space.match(text, start + 1).end()
    while position < len(text) and text[position] == '"':
        try:
            key, position = json.decoder.scanstring(text, position + 1)
        except ValueError:
            break
        position = space.match(text, position).end()
        if position >= len(text) or text[position] != ":":
            break
        position = space.match(text, position + 1).end()
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            break
        position = space.match(text, position).end()
        closed = position < len(text) and text[position] in ",}"
        if not closed and (isinstance(value, (int, float)) or position < len(text)):
            break  # a number may be the cut-off prefix of a longer one; anything else here is damage
        members.append((key, value))
        if not closed or text[position] == "}":
            break
        position = space.match(text, position + 1).end()
    return members
