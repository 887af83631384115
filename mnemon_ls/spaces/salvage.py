"""Lenient JSON salvage for damaged registry files (pure text helpers of :mod:`.registry_model` and
:mod:`.registry_repair`)."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

def _json_objects(text: str) -> Iterable[Any]:
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


def _complete_members(text: str, start: int) -> list[tuple[str, Any]]:
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
