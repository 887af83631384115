"""Salvage what is left of a damaged truth file: its text whatever its encoding, and every JSON record that
survived a cut or a hand edit (the runtime store's ``memories.json``, the documents index, the records log).

Base layer: imports only the standard library; never raises.
"""

from __future__ import annotations

import json
import re
from typing import Any


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
        except json.JSONDecodeError:
            position = match.end()
            continue
        found.append(value)
        position = end
    return found
