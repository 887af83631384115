"""Citations in the operation layer: the ``cites`` field every citing write declares once (:data:`Cites`), the
command line's ``--cite PATH[:START[-END]]`` (:data:`CITE_ARG`), and the steps a run takes around its Source
write: resolve before anything is written (:func:`resolve`: a bad citation is ``invalid-input`` naming
``cites[i].<field>`` and the rule, and nothing is written), store after the write (:func:`store`), and show
citations with their freshness in reads (:func:`views_of`).

A write that cites answers its stored citations as ``cites`` (each with ``freshness``); a read answers
``cites`` only for a memory that has citations, so the answers of memory without citations are unchanged.
The model, hashing, freshness and side files are :mod:`mnemon_ls.citations`.
"""

from __future__ import annotations

from typing import Annotated, Any, Sequence

from pydantic import AfterValidator, Field

from ..citations.model import MAX_CITES, MAX_LINE, MAX_PATH_CHARS, MAX_SYMBOL_CHARS, check_range, parse_cite
from .base import Call, CliArg, Params
from .published import limits


class CiteParam(Params):
    """A citation asked for: a workspace file and, optionally, its lines and a name for what they hold."""

    path: str = Field(description="the cited file, relative to the workspace (POSIX separators)",
                      json_schema_extra=limits(maxLength=MAX_PATH_CHARS))
    start_line: int | None = Field(None, alias="startLine", ge=1, le=MAX_LINE, strict=True,
                                   description="first cited line, 1-based (default: the whole file)")
    end_line: int | None = Field(None, alias="endLine", ge=1, le=MAX_LINE, strict=True,
                                 description="last cited line, inclusive (default: startLine)")
    symbol: str | None = Field(None, description="a name for what is cited (a function, a setting), optional",
                               json_schema_extra=limits(maxLength=MAX_SYMBOL_CHARS))


def _checked(cites: list[CiteParam] | None) -> list[CiteParam] | None:
    check_range(cites or [])  # raises InvalidInput naming cites[i].endLine: not a ValueError, so it leaves as is
    return cites


CITES_HELP = (f"code this memory rests on: [{{path, startLine?, endLine?, symbol?}}] (at most {MAX_CITES}; path "
              "relative to the workspace; lines 1-based, inclusive); only the place and a hash of the lines are stored")

#: The ``cites`` field of a citing write's params model.
Cites = Annotated[list[CiteParam] | None, AfterValidator(_checked),
                  Field(description=CITES_HELP, json_schema_extra=limits(maxItems=MAX_CITES))]

#: The command line's ``--cite`` (repeatable) for a params model with :data:`Cites`.
CITE_ARG = CliArg("cites", flag="--cite", repeat=True, metavar="PATH[:START[-END]]", convert=parse_cite,
                  help="cite code this rests on: a workspace file, optionally lines START-END (repeatable)")


def resolve(call: Call, cites: Sequence[Any] | None) -> list[Any]:
    """The citations ``cites`` asks for, of the files as they are now (:class:`~mnemon_ls.citations.model.Citation`
    list; ``[]`` for none). Reads, never writes; raises :class:`~mnemon_ls.errors.InvalidInput` naming
    ``cites[i].<field>`` and the rule."""
    if not cites:
        return []
    return call.host.citations.resolve(cites)


def store(call: Call, source: str, key: str, citations: Sequence[Any]) -> list[dict[str, Any]]:
    """Keep ``citations`` for ``key`` of ``source`` (replacing what it had; re-anchored if they moved since
    they were resolved) and return them as a read shows them (with ``freshness``)."""
    citing = call.host.citations
    citing.put(source, {key: list(citations)})
    return citing.views(citing.of(source, key))


def views_of(call: Call, source: str) -> Any:
    """A function ``key -> [citation with freshness]`` over ``source``'s side file read once (``[]`` for a key
    without citations)."""
    citing = call.host.citations
    table = citing.table(source)
    return lambda key: citing.views(table.get(key, []))
