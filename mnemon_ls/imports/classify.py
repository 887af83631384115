"""Where one imported item belongs, and why: ``user`` (USER.md), ``memory`` (MEMORY.md), ``document`` or
``space`` (the active Memory Space).

- a ``section`` item (a long or structured headed section, :func:`~.reading.markdown_items`) -> a Document;
- an entry longer than :data:`MAX_ENTRY_BYTES` -> the space (a runtime entry is one short fact);
- an entry whose format says where it belongs (Hermes USER.md, a Claude Code topic of type user/feedback)
  -> there;
- an entry that speaks about the person (first person: "I prefer", "my", "call me"; "the user prefers";
  tone, language, timezone of answers) -> USER.md;
- any other entry (project facts, conventions, commands) -> MEMORY.md.

The runtime budget is applied afterwards by the plan (:mod:`.plan`): an entry that would not fit its
target's remaining bytes goes to the space instead.
"""

from __future__ import annotations

import re

from .reading import Item

#: The longest entry kept in runtime memory, in UTF-8 bytes: a quarter of the smaller default budget
#: (USER.md, 4096 bytes), so no single imported entry crowds a target out.
MAX_ENTRY_BYTES = 1024

_ABOUT_PERSON = re.compile(
    r"\b(I|I'm|I am|I've|me|my|mine|myself)\b|\b(the user|user prefers|the developer prefers|call me|my name)\b"
    r"|\b(prefers?|preferred|preference)\b.*\b(answers?|responses?|replies|tone|explanations?|language|style)\b"
    r"|\b(respond|reply|answer|talk to me|address me)\b.*\b(in|with)\b.*\b(english|german|french|spanish|"
    r"chinese|japanese|tone|style)\b|\btime ?zone\b",
    re.IGNORECASE)


def route(item: Item) -> tuple[str, str]:
    """``(destination, reason)`` of ``item`` before the budget (module doc)."""
    if item.kind == "section":
        return "document", item.reason or "a long or structured headed section"
    size = len(item.text.encode("utf-8"))
    if size > MAX_ENTRY_BYTES:
        return "space", f"an entry of {size} bytes (over {MAX_ENTRY_BYTES}: too long for one runtime entry)"
    if item.hint == "user":
        return "user", "the source file holds the person's profile or preferences"
    if item.hint == "memory" and not _ABOUT_PERSON.search(item.text):
        return "memory", "the source file holds project facts"
    if _ABOUT_PERSON.search(item.text):
        return "user", "a statement about the person (a profile or preference)"
    return "memory", "a project fact or convention"
