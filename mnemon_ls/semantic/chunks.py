"""Document chunks for semantic Documents search (pure).

:func:`split_chunks` cuts a Markdown body into chunks at headings (ATX ``#`` lines) and blank-line
paragraphs: consecutive paragraphs of one section are joined while the chunk stays within
:data:`CHUNK_CHARS` characters; a longer paragraph is cut at :data:`CHUNK_CHARS` characters. Each chunk is
embedded as ``<title> / <section heading>: <text>`` so that a chunk keeps its context. At most
:data:`MAX_CHUNKS` chunks per document (the rest of a very long body is not embedded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNK_CHARS = 800
MAX_CHUNKS = 64
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: ``heading`` (the section's, or ``""``), ``text`` (the chunk's own text) and ``embed``
    (the string that is embedded)."""

    heading: str
    text: str
    embed: str


def split_chunks(title: str, body: str) -> list[Chunk]:
    """The chunks of one document (module doc); a body with no text gives one chunk of the title."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            sections[-1][1].append(" ".join(line.strip() for line in paragraph).strip())
            paragraph.clear()

    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            flush()
            sections.append((heading.group(1).strip(), []))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
    flush()
    chunks: list[Chunk] = []
    for heading, paragraphs in sections:
        current = ""
        pieces: list[str] = []
        for text in (p for p in paragraphs if p):
            while len(text) > CHUNK_CHARS:
                pieces.append(text[:CHUNK_CHARS])
                text = text[CHUNK_CHARS:]
            if current and len(current) + 1 + len(text) > CHUNK_CHARS:
                pieces.append(current)
                current = text
            else:
                current = f"{current} {text}".strip()
        if current:
            pieces.append(current)
        if not pieces and heading:
            pieces.append("")
        for piece in pieces:
            context = f"{title} / {heading}" if heading else title
            chunks.append(Chunk(heading, piece, f"{context}: {piece}" if piece else context))
    if not chunks:
        chunks.append(Chunk("", "", title))
    return chunks[:MAX_CHUNKS]
