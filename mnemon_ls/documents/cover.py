"""The Documents cover: the bounded block the wake snapshot shows after the Runtime blocks (pure).

Layout (every line ends with ``\\n``)::

    MNEMON PROJECT DOCUMENTS
    Active: <n> document(s), <bytes> of <limit> UTF-8 bytes; archived: <m>
    Search before reading: these are titles only. Search the project Documents with words from a title
    (or the topic) and read a document only when a search points to it.
    Recently accessed:
    - <title> — <description, one line>
    ...
    (<k> more active document(s) not listed; search finds them)
    [Notice: <problem>]

Documents are listed most recently accessed first (effective ``lastAccessedAt``, then ``updatedAt``).
Descriptions are cut at :data:`DESCRIPTION_CHARS` characters with ``…``. The whole block stays within
``budget_chars`` characters (Unicode code points): lines are added while they fit, keeping room for the
"more" line; if even the fixed lines do not fit, the text is cut at the budget. With no active
document the block is the first two lines and the search line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .model import DocumentRecord, collapse_space, time_key

HEADER = "MNEMON PROJECT DOCUMENTS"
SEARCH_LINE = ("Search before reading: these are titles only. Search the project Documents with words from a "
               "title (or the topic) and read a document only when a search points to it.")
DESCRIPTION_CHARS = 160


@dataclass(frozen=True, slots=True)
class DocumentsCover:
    """A rendered cover: ``text``; ``listed`` documents shown; ``omitted`` active documents not shown;
    ``chars`` code points; ``revision`` the index revision it was made from; ``notices`` problems."""

    text: str
    listed: int
    omitted: int
    chars: int
    revision: str
    notices: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """``{text, listed, omitted, chars, revision, notices}``."""
        return {"text": self.text, "listed": self.listed, "omitted": self.omitted, "chars": self.chars,
                "revision": self.revision, "notices": list(self.notices)}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def document_line(record: DocumentRecord) -> str:
    """``- <title>`` plus `` — <description>`` when there is one (cut at :data:`DESCRIPTION_CHARS`)."""
    description = collapse_space(record.description)
    if len(description) > DESCRIPTION_CHARS:
        description = description[:DESCRIPTION_CHARS - 1] + "…"
    return f"- {record.title}" + (f" — {description}" if description else "")


def render_cover(records: Sequence[DocumentRecord], last_accessed: dict[str, str], *, limit_bytes: int,
                 budget_chars: int, revision: str, notices: Sequence[str] = ()) -> DocumentsCover:
    """Render the cover of ``records`` (all of the index; archived ones are only counted).

    ``last_accessed`` maps ids to their effective ``lastAccessedAt`` where later than the index's.
    """
    active = [r for r in records if r.status == "active"]
    archived = len(records) - len(active)
    used = sum(r.size_bytes for r in active)
    ordered = sorted(active, key=lambda r: (time_key(last_accessed.get(r.id, r.last_accessed_at)),
                                            time_key(r.updated_at)), reverse=True)
    fixed = [HEADER, f"Active: {_plural(len(active), 'document')}, {used} of {limit_bytes} UTF-8 bytes; "
                     f"archived: {archived}", SEARCH_LINE]
    head = "".join(line + "\n" for line in fixed)
    tail = "".join(f"Notice: {n}\n" for n in notices)
    lines: list[str] = []

    def more(count: int) -> str:
        return f"({_plural(count, 'more active document')} not listed; search finds them)\n" if count else ""

    def assemble(shown: list[str]) -> str:
        listing = ("Recently accessed:\n" + "".join(shown)) if shown else ""
        return head + listing + more(len(ordered) - len(shown)) + tail

    for record in ordered:
        candidate = lines + [document_line(record) + "\n"]
        if len(assemble(candidate)) > budget_chars:
            break
        lines = candidate
    text = assemble(lines)
    listed = len(lines)
    omitted = len(ordered) - listed
    if len(text) > budget_chars:
        text = text[:max(0, budget_chars - 1)] + "…" if budget_chars > 0 else ""
    return DocumentsCover(text, listed, omitted, len(text), revision, tuple(notices))
