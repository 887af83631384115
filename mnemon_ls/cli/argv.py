"""Command-line arguments that are not UTF-8 text, refused naming the argument and the byte.

On POSIX, Python decodes ``argv`` with ``surrogateescape``: an invalid byte such as ``0xff`` becomes the lone
surrogate ``U+DCFF``, which every Source then refuses as "a lone surrogate (not valid Unicode)", words
that mean nothing to someone who typed bytes in a shell. :func:`check_text_arguments` finds such a text
argument first and raises ``invalid-input: <argument>: must be valid UTF-8 (byte 0xff at position 2)``
(the position counts bytes of that argument from 0). Arguments that only name a file or directory to
open (``--workspace``, ``--data-dir``, ``--output FILE``...) are left alone: a POSIX path is bytes, and any
byte but NUL is allowed in it. A ``PATH`` that is stored (a Document's ``--file`` and ``--source``, kept
as its UTF-8 source paths) is text and checked.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Iterator

from ..errors import InvalidInput

#: Metavars of arguments that are paths only opened, never stored (bytes are fine there).
PATH_METAVARS = frozenset({"DIR", "FILE", "global|workspace|DIR"})


def _chosen_actions(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[argparse.Action]:
    """The actions of ``parser`` and of each sub-command parser ``args`` went through."""
    from .parser import chosen_parsers

    for current in chosen_parsers(parser, args):
        yield from (action for action in current._actions if not isinstance(action, argparse._SubParsersAction))


def utf8_problem(value: str) -> str | None:
    """``None`` when ``value`` (an ``argv`` string) came from valid UTF-8 bytes, else the rule
    ``must be valid UTF-8 (byte 0x.. at position N)``, N counted in bytes from 0."""
    try:
        value.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    raw = os.fsencode(value)  # the bytes as given (surrogateescape undone)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"must be valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})"
    return "must be valid UTF-8"


def check_text_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Raise :class:`InvalidInput` for the first text argument in ``args`` that is not valid UTF-8, named
    as it is typed: the option (``--old-text``), a positional as the usage line shows it (``QUERY``, else its
    dest: ``content``); which of a repeated option's values is the rule's (``--branch: must be valid UTF-8 (byte
    0xed at position 1 of the 2nd one)``). Path arguments (:data:`PATH_METAVARS`) are not checked."""
    from .ops import ordinal

    for action in _chosen_actions(parser, args):
        if action.metavar in PATH_METAVARS:
            continue
        value: Any = getattr(args, action.dest, None)
        name = max(action.option_strings, key=len) if action.option_strings else (
            action.metavar if isinstance(action.metavar, str) else action.dest)
        values = ([(None, value)] if isinstance(value, str)
                  else list(enumerate(value)) if isinstance(value, list) else [])
        for index, text in values:
            problem = utf8_problem(text) if isinstance(text, str) else None
            if problem is not None:
                if index is not None and len(values) > 1:
                    problem = f"{problem[:-1]} of the {ordinal(index + 1)} one)" if problem.endswith(")") else problem
                raise InvalidInput(name, problem)
