"""Reading JSON that someone wrote (a file, an option, standard input) with one wording for every refusal of it:
:func:`json_loads` raises :class:`JsonUnreadable`, worded by :func:`json_problem` (a syntax error with its line and
column, or an integer of more digits than Python converts). Standard library only; imported by every reader of such
JSON, so it imports nothing of mnemon-ls."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every command imports this module)
if TYPE_CHECKING:
    from typing import Any


def json_problem(exc: ValueError, *, line: bool = True) -> str:
    """What is wrong with text ``json.loads`` refused: ``<msg> at line L column C`` (``line`` ``False``: ``at
    column C``) for a syntax error; for an integer of more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4,300 by default), which ``json`` raises as a plain ``ValueError``,
    ``a number has more than 4300 digits``. The wording of :class:`JsonUnreadable`, which every reader of a
    JSON file gets from :func:`json_loads`, so such a number is a damaged file, never a crash."""
    import json
    import sys

    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}" if line else f"{exc.msg} at column {exc.colno}"
    return f"a number has more than {sys.get_int_max_str_digits()} digits"


class JsonUnreadable(ValueError):
    """Text :func:`json_loads` refused. ``str()`` and ``problem`` are :func:`json_problem`'s wording
    (``Expecting value at line 1 column 1``, ``a number has more than 4300 digits``), ``in_line`` the same
    without the line (``Expecting value at column 1``: a file read one JSON value per line). Also a
    ``ValueError``, so code that handles one still does."""

    def __init__(self, cause: ValueError) -> None:
        self.problem = json_problem(cause)
        self.in_line = json_problem(cause, line=False)
        super().__init__(self.problem)


def json_loads(text: str | bytes, **hooks: Any) -> Any:
    """``json.loads(text, **hooks)`` for a reader of JSON someone wrote (a file, an option, stdin), every
    refusal of the text raised as :class:`JsonUnreadable` (a syntax error, or an integer of more digits than
    Python converts, which ``json`` raises as a plain ``ValueError``), so no reader words it on its own or
    forgets the second case. An exception a hook raises (its own ``ValueError`` subclass), a
    ``UnicodeDecodeError`` of ``bytes`` and a ``RecursionError`` (nesting too deep) pass unchanged."""
    import json

    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        raise JsonUnreadable(exc) from exc
    except ValueError as exc:
        if type(exc) is not ValueError:
            raise
        raise JsonUnreadable(exc) from exc
