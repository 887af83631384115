"""JSON with comments (JSONC): what VS Code writes and reads in its user and workspace files (``mcp.json``,
``settings.json``): ``//`` line comments, ``/* */`` block comments and a comma before a closing ``}`` or ``]``.

:func:`blank` gives the same text with every comment and trailing comma turned into blanks of the same length
(newlines kept), so the result is plain JSON whose offsets, lines and columns are the original's: a standard
``json`` parse of it reads the file, and :mod:`mnemon_ls.jsonedit` locates members in it while splicing the
original text, which keeps the person's comments. Strings are respected (``"http://x"`` and ``"/* */"`` inside
a string are text, not comments), escapes included. Standard library only; imports nothing of mnemon-ls.
"""

from __future__ import annotations

import re

_BLANKS = " \t\n\r"
#: Everything that is not a string, a comment or a comma, skipped in one step.
_PLAIN = re.compile(r'[^"/,]+')


class JsoncUnreadable(ValueError):
    """A comment that never ends (``/*`` without ``*/``) or a lone ``/``: ``str()`` says which, with its line
    and column (1-based, as :func:`mnemon_ls.jsontext.json_problem` words a JSON syntax error)."""


def _where(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    return f"line {line} column {at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def _blanked(part: str) -> str:
    """``part`` with every character but line ends turned into a space."""
    return re.sub(r"[^\r\n]", " ", part)


def blank(text: str, *, commas: bool = True) -> str:
    """``text`` with its comments and (``commas`` ``True``) trailing commas blanked (same length; ``\\n`` and
    ``\\r`` kept), so it is plain JSON when ``text`` is valid JSONC; a text without either comes back equal.
    ``commas`` ``False`` keeps the trailing commas (to find them: blank there, a comma here). Raises
    :class:`JsoncUnreadable` for an unterminated block comment or a ``/`` that starts none; an unterminated
    string is left for the JSON parser to refuse."""
    if "/" not in text and "," not in text:
        return text
    out: list[str] = []
    comma: int | None = None  # index in ``out`` of a comma that a closing bracket may make a trailing one
    at, size = 0, len(text)
    while at < size:
        plain = _PLAIN.match(text, at)
        if plain:
            chunk = plain.group(0)
            out.append(chunk)
            stripped = chunk.strip(_BLANKS)
            if comma is not None and stripped:
                if stripped[0] in "}]" and commas:
                    out[comma] = " "
                comma = None
            at = plain.end()
            continue
        char = text[at]
        if char == '"':
            end = at + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[at:end + 1])
            comma = None
            at = end + 1
        elif char == ",":
            comma = len(out)
            out.append(",")
            at += 1
        elif text.startswith("//", at):
            end = text.find("\n", at)
            end = size if end < 0 else end
            if text[end - 1:end] == "\r":
                end -= 1
            out.append(" " * (end - at))
            at = end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            if end < 0:
                raise JsoncUnreadable(f"a /* comment is never closed (it opens at {_where(text, at)})")
            out.append(_blanked(text[at:end + 2]))
            at = end + 2
        else:
            raise JsoncUnreadable(f"a lone '/' at {_where(text, at)} (comments are // or /* */)")
    return "".join(out)
