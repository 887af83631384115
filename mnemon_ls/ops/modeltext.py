"""Tool results as text a model can use directly (bounded; ids spelled out in full for follow-up calls).

Input shapes are the ``to_dict()`` forms the language server returns (``RecallResult``, ``WriteReceipt``,
the Documents results, ``WorkspaceHost.status()``); nothing here touches a store.
"""

from __future__ import annotations

import json as _json
from typing import Any, Mapping, Sequence

#: Largest tool result, in characters; longer text is cut with a note saying how much was left out.
MAX_RESULT_CHARS = 24_000
#: Largest content shown per recall result or search hit, in characters.
MAX_ITEM_CHARS = 1_200


def bounded(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with ``[... N more characters not shown]`` when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


def _clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def runtime_receipt(data: Mapping[str, Any]) -> str:
    """A Runtime mutation receipt (``Receipt.to_dict()``): what happened, the file, entry count, bytes used of
    the limit, the revision; similar entries, redactions and what capacity maintenance archived where."""
    from ..runtime.model import PROJECTION_FILES

    count = data["entryCount"]
    lines = [f"{data['message']} {PROJECTION_FILES[data['target']]}: {count} {'entry' if count == 1 else 'entries'}, "
             f"{data['usage']['used']}/{data['usage']['limit']} UTF-8 bytes; revision {data['revision'][:12]}"]
    if data.get("similar"):
        lines.append(f"similar: {data['similar']}")
    lines.extend(cites_lines(data))
    if data.get("redacted"):
        from ..redact import describe

        lines.append(describe(data["redacted"]))
    maintenance = data.get("maintenance")
    if maintenance:  # capacity maintenance: where each archived entry went
        lines.append(f"maintenance ({maintenance['kind']}): {maintenance['summary']}")
        if maintenance["kind"] == "local-compaction":
            lines.extend(f"  {line}" for line in compaction_lines(maintenance, data["usage"]["limit"]))
        lines.extend(f"  entry {a['sourceIndex']} -> {a['destination']['reference']}: {a['summary'][:80]}"
                     for a in maintenance["archived"][:20])
        if len(maintenance["archived"]) > 20:
            lines.append(f"  ... {len(maintenance['archived']) - 20} more (`mnemon-ls runtime archived` lists all)")
    return "\n".join(lines)


def compaction_lines(maintenance: Mapping[str, Any], limit: int) -> list[str]:
    """What a compaction (``maintenance`` of kind ``local-compaction``) changed, one line each, numbered as the
    plan (``runtime list``) was: ``merged 2, 3 into: <text>``, ``rewrote 4 as: <text>``, ``dropped 5``,
    ``unchanged: 1, 6`` and ``USER.md: <before> -> <after> of <limit> UTF-8 bytes``."""
    from ..runtime.model import PROJECTION_FILES

    def numbers(values: Sequence[int]) -> str:
        return ", ".join(str(v) for v in values)

    gone = {a["sourceIndex"] for a in maintenance.get("archived", [])}
    lines, unchanged = [], []
    for entry in maintenance.get("entries", []):
        sources = entry["sourceIndexes"]
        if len(sources) > 1:
            lines.append(f"merged {numbers(sources)} into: {_clip(entry['content'], 160)}")
        elif sources and sources[0] in gone:
            lines.append(f"rewrote {sources[0]} as: {_clip(entry['content'], 160)}")
        else:
            unchanged.extend(sources)
    if maintenance.get("dropped"):
        lines.append(f"dropped {numbers(maintenance['dropped'])}")
    if unchanged:
        lines.append(f"unchanged: {numbers(unchanged)}")
    if "bytesBefore" in maintenance:
        lines.append(f"{PROJECTION_FILES[maintenance['target']]}: {maintenance['bytesBefore']} -> "
                     f"{maintenance['bytesAfter']} of {limit} UTF-8 bytes")
    return lines


def receipt(data: Mapping[str, Any]) -> str:
    """A Memory Space write receipt: status, message, space and item id; after a write that activated its
    space, what that changed for a write without ``space_id`` and how to undo it
    (:func:`mnemon_ls.ops.humantext.activation_note`)."""
    parts = [f"{data.get('status')}: {data.get('message', '')}".strip()]
    if data.get("spaceId"):
        parts.append(f"space: {data.get('spaceName') or ''} ({data['spaceId']})")
    if data.get("id"):
        parts.append(f"id: {data['id']}")
    from .humantext import activation_note

    note = activation_note(data, plain_write="mnemon_remember without space_id",
                           name_it=f"space_id={data.get('spaceId')}",
                           deactivate=f"mnemon_memory_spaces action=deactivate space_id={data.get('spaceId')}")
    if note:
        parts.append(note)
    parts.extend(cites_lines(data))
    return "\n".join(parts)


def cites_lines(data: Mapping[str, Any]) -> list[str]:
    """``cites: <path:lines (freshness)>; ...`` for a written memory that cites code (``[]`` without ``cites``),
    then what it supersedes or possibly supersedes (:func:`~mnemon_ls.ops.humantext.superseding_lines`)."""
    from .humantext import citation_text

    from .humantext import superseding_lines

    cites = data.get("cites") or ()
    return (["cites: " + "; ".join(citation_text(c) for c in cites)] if cites else []) + superseding_lines(dict(data))


def recall(data: Mapping[str, Any], cap: int) -> str:
    """Recall evidence, numbered, each with its space id and item id (and, found by meaning alone, its cosine:
    :func:`mnemon_ls.ops.humantext.recall_match_label`); what was withheld from the assistant
    (:func:`~mnemon_ls.ops.humantext.withheld_line`), notices and branch-scope counts after."""
    from ..spaces.service_recall import WITHHELD_HINT
    from .humantext import (citation_text, continued, printed_id, recall_hidden_lines, recall_match_label,
                            state_label, withheld_line)

    results: Sequence[Mapping[str, Any]] = data.get("results", [])[:cap]
    lines = []
    for n, item in enumerate(results, 1):
        label = f" [{item['branchLabel']}]" if item.get("branchLabel") else ""
        score = item.get("score")
        score_text = f"{score:.2f}" if isinstance(score, (int, float)) else "-"
        lines.append(f"{n}. {continued(_clip(str(item.get('content', ''))), '   ')}{label}")
        lines.append(f"   space: {item.get('spaceId')} ({item.get('spaceName')}) · id: {printed_id(item.get('id'))} · "
                     f"tier: {item.get('tier')} · score: "
                     f"{score_text}{recall_match_label(item)}{state_label(dict(item))}")
        if item.get("cites"):
            lines.append("   cites: " + "; ".join(citation_text(c) for c in item["cites"]))
    withheld = withheld_line(data, why="with low confidence", ask="include_low_confidence: true sends them")
    if withheld:
        lines.append(withheld)
    lines.extend(recall_hidden_lines(data.get("hidden") or {}))
    lines.extend(f"note: {n}" for n in data.get("notices", []))
    if not results:
        hint = data.get("hint")
        if hint == WITHHELD_HINT:  # every match was weak (labelled low): the withheld line counts them
            lines.append("No memory matched with enough confidence: ask again with more of the words a stored fact "
                         "would use (a name or one common word alone is a weak match).")
        else:
            lines.append("No memory matched." + (f" {hint}" if hint and hint != "nothing matched" else ""))
    return bounded("\n".join(lines))


def related(data: Mapping[str, Any]) -> str:
    """A graph walk: one line per related item with depth and edge type."""
    from .humantext import printed_id

    lines = [f"Related to {printed_id(data.get('id'))} in {data.get('spaceName')} ({data.get('spaceId')}):"]
    for item in data.get("items", []):
        lines.append(f"- depth {item.get('depth')} via {item.get('edgeType') or item.get('matchedVia')}: "
                     f"{_clip(str(item.get('content', '')))} (id: {printed_id(item.get('id'))})")
    if len(lines) == 1:
        lines.append("nothing is linked to it")
    lines.extend(f"note: {n}" for n in data.get("notices", []))
    return bounded("\n".join(lines))


def document_hits(data: Mapping[str, Any]) -> str:
    """Documents search hits: score, id, title, excerpt; a hit found by meaning alone says so; the documents
    withheld from the assistant are counted (:func:`~mnemon_ls.ops.humantext.withheld_line`)."""
    from .humantext import document_match_label, state_label, withheld_line

    lines = []
    for hit in data.get("results", []):
        status = f" [{hit['status']}]" if hit.get("status") and hit.get("status") != "active" else ""
        lines.append(f"- {hit.get('title')}{status} (id: {hit.get('id')}, score {hit.get('score', 0):.3f})"
                     f"{document_match_label(hit)}{state_label(dict(hit))}")
        if hit.get("excerpt"):
            lines.append(f"  {_clip(str(hit['excerpt']), 400)}")
    withheld = withheld_line(data, "document")
    if withheld:
        lines.append(withheld)
    lines.extend(f"note: {n}" for n in data.get("notices", []))
    lines.append(f"{data.get('total', len(data.get('results', [])))} result(s)")
    return bounded("\n".join(lines))


def document_result(data: Mapping[str, Any]) -> str:
    """A Documents mutation result: action, title, id, revision, managed path (a no-op update, or one that adopted
    a hand edit: the notices too), then each file kept under ``documents/edits/`` (``kept <what> at <where>``)."""
    document = data.get("document", {})
    if data.get("action") == "unchanged":  # a no-op update: the notice names the revision kept
        text = (f"Document unchanged: {document.get('title')} (id: {document.get('id')}): "
                f"{'; '.join(data.get('notices') or ())}")
    else:
        text = (f"Document {data.get('action')}: {document.get('title')} (id: {document.get('id')}), "
                f"revision {document.get('revision')}, {document.get('relativePath')}")
        if data.get("action") == "adopted":  # an update whose text a hand edit on disk held: the notice says so
            text += f": {'; '.join(data.get('notices') or ())}"
    from .humantext import preserved_lines

    text += "".join(f"\n{line}" for line in preserved_lines(data))  # a save made during the write, kept
    if isinstance(data.get("maintenance"), Mapping):  # cold archival ran first (issue 9)
        text += f"\n{data['maintenance'].get('summary', '')}"
    return "\n".join([text, *cites_lines(data)])


def document(data: Mapping[str, Any]) -> str:
    """A Document as read: a metadata line, then the body."""
    meta = data.get("document", data)
    head = (f"# {meta.get('title')}\n(id: {meta.get('id')}, revision {meta.get('revision')}, "
            f"status {meta.get('status')})")
    if meta.get("description"):
        head += f"\n{meta['description']}"
    from .humantext import state_label

    head += f"\n(state:{state_label(dict(meta))[2:]})" if state_label(dict(meta)) else ""
    return bounded(f"{head}\n\n{data.get('content', '')}")


def spaces(views: Sequence[Mapping[str, Any]], *, creatable: bool = True) -> str:
    """Memory Spaces: active mark, id, name, provider, description. The provider is named as every CLI
    text names it (:func:`mnemon_ls.ops.humantext.provider_text`: ``mnemon-native``, ``mnemon-cli`` or the
    third-party provider id), the word ``provider list`` and ``--provider`` take. None: an invitation to create
    one, unless not ``creatable`` (a catalog of a newer version: the note beside it says why none is shown)."""
    from .humantext import provider_text

    if not views:
        if not creatable:
            return "No Memory Space can be shown here (see the note)."
        return "No Memory Space yet. Create one with mnemon_memory_spaces action=create (name, description)."
    lines = []
    for view in views:
        mark = "active" if view.get("active") else "inactive"
        lines.append(f"- {view.get('id')}: {view.get('name')} ({mark}, {provider_text(view)})")
        if view.get("description"):
            lines.append(f"  {view['description']}")
    return "\n".join(lines)


def status(data: Mapping[str, Any]) -> str:
    """``WorkspaceHost.status()`` as lines: workspace, root, branch, usage per target, counts, problems."""
    lines = [f"workspace: {data.get('path') or 'none (the global root is used)'}",
             f"storage root: {data.get('root')} (scope {data.get('scope')})",
             f"git branch: {data.get('branch') or '(none: ' + str(data.get('branchReason')) + ')'}"]
    for target, usage in (data.get("usage") or {}).items():
        count = (data.get("entries") or {}).get(target)
        noun = "entry" if count == 1 else "entries"
        hidden = data.get("hiddenEntries") if target == "memory" else 0
        also = f" ({hidden} more branch-scoped, hidden on this branch)" if hidden else ""
        lines.append(f"{target}: {count} {noun}{also}, {usage['used']}/{usage['limit']} UTF-8 bytes")
    documents = data.get("documents")
    if documents:
        lines.append(f"documents: {documents['active']} active, {documents['archived']} archived")
    spaces = data.get("spaces")
    if spaces is not None:
        lines.append(f"memory spaces: {spaces['total']} ({spaces['active']} active)")
    lines.extend(f"problem: {p}" for p in data.get("problems", []))
    return "\n".join(lines)


def plan_text(error: Any) -> str | None:
    """The compaction plan of a ``target=user`` ``runtime-capacity`` error as text for the model (the
    numbered entries with importance, the budget, the revision and the rules), or ``None``."""
    from ..errors import RuntimeCapacityError

    plan = error.data.get("maintenance") if isinstance(error, RuntimeCapacityError) else None
    if not isinstance(plan, dict):
        return None
    lines = [f"{plan['file']} is full. Compact it with mnemon_runtime_compact: revision={plan['revision']}, "
             f"target={plan['target']}, pending={_json.dumps(plan['pending'], ensure_ascii=False)}, entries = a list "
             f"of {{content, importance, sourceIndexes}} using at most {plan['budgetBytes']} UTF-8 bytes. Rules:"]
    lines += [f"- {rule}" for rule in plan["rules"][1:]]
    lines.append("Numbered entries:")
    lines += [f"{e['index']}. [importance={e['importance']}] {e['content']}" for e in plan["entries"]]
    return "\n".join(lines)
