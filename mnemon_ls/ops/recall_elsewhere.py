"""Where else to look when a recall finds nothing: Runtime memory (USER.md, MEMORY.md).

Recall searches the Memory Spaces only; Runtime memory is the tier above them, already in the wake snapshot
(:data:`mnemon_ls.guidance.ROUTING_GUIDANCE`). A fact kept only in MEMORY.md was recalled as nothing at all, with
no word of where it was, so an assistant that asked (a new session, a snapshot it did not read) concluded there
was no such memory. :func:`note_runtime_matches` adds to an empty recall answer how many Runtime memory entries
hold most of the query's words and where to read them.

Cheap by construction: it runs only for an answer with no result, reads ``memories.json`` once without a lock
(:meth:`~mnemon_ls.runtime.source.RuntimeSource.read`: at most a few tens of KiB) and matches each entry's words
with the Memory Spaces' tokenizer rule; nothing is imported on the hook path (the recall operation imports this
module when it runs).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import MnemonError
from ..runtime.model import PROJECTION_FILES
from ..spaces.index import TOKENIZER  # a Memory Space's words: a hint counts the words a recall would have matched
from ..text import grouped, match_scores
from .surfaces import Call

#: How each surface reads the wake snapshot (the command line also lists the entries).
WHERE = {"cli": "`mnemon-ls wake`; `mnemon-ls runtime list` lists every entry", "lsp": "mnemon/wake",
         "mcp": "mnemon_wake", "tool": "mnemon_wake"}


@lru_cache(maxsize=4096)
def _terms(content: str) -> frozenset[str]:
    """The term set of an entry's ``content`` (:meth:`~mnemon_ls.text.Tokenizer.term_set`), remembered: a server
    answers many recalls over the same few entries, and tokenizing 30 of them cost ~1 ms per empty answer."""
    return TOKENIZER.term_set(content)


def runtime_matches(call: Call, query: str, branch: str | None) -> dict[str, int]:
    """``{"USER.md": n, "MEMORY.md": m}`` (only the files with a match): how many valid Runtime memory entries the
    wake snapshot shows on ``branch`` (``None``: no branch, e.g. a detached HEAD; ``detachedHeadPolicy``
    decides whether branch-scoped entries show then) hold more than half of ``query``'s word groups (an
    identifier and its parts are one group; stopwords are not words). ``{}`` when the query has no word or
    Runtime memory cannot be read (a recall answer never fails for a hint)."""
    groups = grouped(TOKENIZER.query_terms(query))
    if not groups:
        return {}
    try:
        state = call.host.runtime.read()
    except (MnemonError, OSError):
        return {}
    show_all = branch is None and call.host.settings.detached_head_policy == "show"
    needed = len(groups) // 2 + 1
    found: dict[str, int] = {}
    for target, file_name in PROJECTION_FILES.items():
        count = 0
        for entry in state.of(target):  # type: ignore[arg-type]
            if not (show_all or entry.visible_on(branch)):
                continue
            if round(match_scores(groups, _terms(entry.content))[0] * len(groups)) >= needed:
                count += 1
        if count:
            found[file_name] = count
    return found


def note_runtime_matches(call: Call, query: str, data: dict[str, Any]) -> None:
    """When the recall answer ``data`` has no result and Runtime memory holds entries with most of ``query``'s words
    (:func:`runtime_matches`), add ``runtimeMatches`` (file name -> entries) and a notice saying recall does not
    search Runtime memory and where the surface of ``call`` reads it. Changes nothing otherwise."""
    if data.get("results"):
        return
    found = runtime_matches(call, query, (data.get("branch") or {}).get("name"))
    if not found:
        return
    total = sum(found.values())
    files = " and ".join(f"{name} ({count})" if len(found) > 1 else name for name, count in found.items())
    noun, pronoun = ("entry", "it is") if total == 1 else ("entries", "they are")
    data["runtimeMatches"] = found
    data.setdefault("notices", []).append(
        f"Runtime memory holds {total} {noun} with most of these words ({files}); recall searches only the Memory "
        f"Spaces: {pronoun} in the wake snapshot ({WHERE.get(call.surface, WHERE['mcp'])})")
