"""Integers as a person types them: ASCII digits only.

Python's ``int()`` also reads ``1_0`` (as 10), surrounding blanks and the digits of other scripts (``١``,
Arabic-Indic one): a revision, a line number or a count typed so is a slip, not the number. Every typed
integer of the command line (:func:`mnemon_ls.cli.parser.integer_type`) and a citation's line range
(:mod:`mnemon_ls.citations.model`) read digits with :data:`DIGITS`.
"""

from __future__ import annotations

import re

#: ASCII decimal digits, one or more (a regular expression fragment).
DIGITS = "[0-9]+"
_INTEGER = re.compile(rf"-?{DIGITS}")
_UNSIGNED = re.compile(DIGITS)
#: Digits an integer may have (Python converts at most 4,300: ``sys.get_int_max_str_digits``).
MAX_DIGITS = 4000


def ascii_int(text: str, *, signed: bool = True) -> int | None:
    """``text`` as an integer when it is ASCII digits (after one ``-`` when ``signed``) and at most
    :data:`MAX_DIGITS` of them, else ``None`` (``1_0``, ``+1``, `` 1``, ``١``, ``1.0``)."""
    pattern = _INTEGER if signed else _UNSIGNED
    if len(text) > MAX_DIGITS + 1 or pattern.fullmatch(text) is None:
        return None
    return int(text)
