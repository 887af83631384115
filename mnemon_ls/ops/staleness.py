"""Issue 24 items 4, 6 and 7 in the operation layer: what reads and writes add about code that moved on.

- Recall and document search results with citations carry ``freshness`` (the worst of their citations',
  :func:`~mnemon_ls.citations.ranking.worst`; absent for a memory without citations) and are ordered by
  :func:`~mnemon_ls.citations.ranking.order` (fresh above changed/gone within a tier; a superseded memory below
  its successor) — :func:`rank`.
- A Document's ``sourcePaths`` with recorded hashes are answered as ``sourcePathFreshness``
  (:mod:`mnemon_ls.citations.sources`) — :func:`record_sources`, :func:`with_sources`.
- Reads add ``review: "due"`` (:func:`mnemon_ls.citations.review.review_due`, the ``reviewAfterDays`` setting)
  — :func:`review_mark`.
- A citing write's receipt names the memories citing overlapping lines as ``possiblySuperseded``
  (``[{source, key, id?, spaceId?, scope?, preview}]``) and the lineage side file records that the new memory
  supersedes them (:mod:`mnemon_ls.citations.lineage`) — :func:`supersede`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..citations.lineage import Lineage, overlapping
from ..citations.ranking import order, worst
from ..citations.review import mark
from ..citations.reviewed import ReviewedFile
from .surfaces import Call

#: Longest ``preview`` of a possibly superseded memory, in characters.
PREVIEW_CHARS = 80


def short(text: Any) -> str:
    """``text`` on one line, cut to :data:`PREVIEW_CHARS` characters (an ellipsis marks the cut)."""
    line = " ".join(str(text or "").split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1] + "\u2026"


def worst_of(views: Iterable[dict[str, Any]]) -> str | None:
    """The worst freshness of citation views (:func:`~mnemon_ls.citations.ranking.worst`)."""
    return worst(views)


def rank(call: Call, source: str, results: list[dict[str, Any]], key_of: Any,
         annotate: bool = True) -> list[dict[str, Any]]:
    """``results`` (dicts, each already with its ``cites`` views when it has citations) with ``freshness`` set
    where there are citations (``annotate``; else already set) and reordered (module doc). ``key_of(result)`` is
    its side-file key."""
    for item in results if annotate else ():
        state = worst(item.get("cites") or ())
        if state is not None:
            item["freshness"] = state
    successors = {old[1]: [n[1] for n in new if n[0] == source]
                  for old, new in Lineage(call.host.root).superseded_by().items() if old[0] == source}
    return order(results, key_of, {k: v for k, v in successors.items() if v})


def review_mark(call: Call, data: dict[str, Any], updated_at: Any, recalled_at: Any = None, *,
                source: str | None = None, key: str | None = None) -> dict[str, Any]:
    """``data`` with ``review: "due"`` when the memory is due for review now (``reviewAfterDays``), counting from
    the latest of ``updated_at``, ``recalled_at`` and when a person last confirmed ``key`` of ``source`` still
    true (:mod:`mnemon_ls.citations.reviewed`)."""
    if source is None or key is None:
        days = call.host.settings.review_after_days
        return mark(data, updated_at, recalled_at, call.host.now(), days) if days else data
    return review_marker(call, source)(data, updated_at, recalled_at, key)


def review_marker(call: Call, source: str) -> Any:
    """:func:`review_mark` for many memories of ``source`` in one answer: a function ``(data, updated_at,
    recalled_at, key) -> data`` that reads the confirmations file (:mod:`mnemon_ls.citations.reviewed`) and the
    clock once, not once per memory."""
    days = call.host.settings.review_after_days
    if not days:
        return lambda data, _updated_at, _recalled_at, _key: data
    root = call.host.root
    confirmed = ReviewedFile(root).read().get(source, {}) if root is not None else {}
    now = call.host.now()
    return lambda data, updated_at, recalled_at, key: mark(data, updated_at, recalled_at, now, days,
                                                          confirmed.get(key))


def record_sources(call: Call, data: Any) -> Any:
    """After a document create or update: record the hashes of its ``sourcePaths`` (``data.document``) as they
    are now (the answer is unchanged: reads report them); returns ``data``."""
    document = data.get("document") if isinstance(data, dict) else None
    if isinstance(document, dict) and document.get("id"):
        paths = list(document.get("sourcePaths") or ())
        hashes = _hashes(call)
        if paths or hashes.read().get(document["id"]) is not None:
            hashes.record(document["id"], paths)
    return data


def with_sources(call: Call, documents: Iterable[dict[str, Any]]) -> None:
    """Each document (a read's dict: ``id``, ``sourcePaths``) with recorded source hashes gets
    ``sourcePathFreshness``; and ``review: "due"`` by its ``updatedAt``."""
    hashes = _hashes(call)
    table = hashes.read()
    for document in documents:
        if not isinstance(document, dict) or not document.get("id"):
            continue
        views = hashes.views(document["id"], list(document.get("sourcePaths") or ()), table)
        if views:
            document["sourcePathFreshness"] = views
        if document.get("updatedAt"):
            review_mark(call, document, document["updatedAt"], source="documents", key=document["id"])


def _hashes(call: Call) -> Any:
    from ..citations.sources import SourceHashes

    return SourceHashes(call.host.root, call.host.workspace)


def supersede(call: Call, source: str, key: str, citations: Sequence[Any],
              exclude: Iterable[tuple[str, str]] = (), also: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """The ``possiblySuperseded`` of a write that stored ``citations`` for ``(source, key)``: every other memory of
    the workspace citing an overlapping range (``exclude`` left out too), each ``{source, key, preview, ...}``.
    Records in the lineage side file that ``(source, key)`` supersedes them and ``also`` (a replaced runtime
    entry). Reads the other Sources for the previews; a memory that cannot be read is named without one."""
    found = overlapping(call.host.citations, list(citations), [(source, key), *exclude])
    if found or also:
        Lineage(call.host.root).add((source, key), [*also, *found])
    return [_named(call, s, k) for s, k in found]


def _named(call: Call, source: str, key: str) -> dict[str, Any]:
    """``{source, key, preview}`` plus ``id`` (and ``spaceId``/``scope``) of a memory named in a receipt."""
    from ..errors import MnemonError

    data: dict[str, Any] = {"source": source, "key": key}
    preview: Any = None
    try:
        if source == "runtime":
            from ..citations.store import runtime_key

            preview = next((e.content for e in call.host.runtime.read().of("memory") if runtime_key(e.content) == key),
                           None)
        elif source == "spaces":
            space_id, _, item_id = key.partition("/")
            data |= {"spaceId": space_id, "id": item_id}
            item = call.host.spaces.get_item(space_id, item_id)
            preview = item.content if item is not None else None
        elif source == "documents":
            data["id"] = key
            preview = call.host.documents.get(key).to_dict().get("title")
        elif source == "records":
            scope, _, record_id = key.partition("/")
            data |= {"scope": scope, "id": record_id}
            preview = call.host.records.get(record_id, scope).title
    except (MnemonError, OSError, ValueError):
        preview = None
    if preview is not None:
        if isinstance(preview, str) and call.host.settings.secrets != "allow":  # as every read shows it
            from ..redact_find import redact_text

            preview = redact_text(preview)[0]
        data["preview"] = short(preview)
    return data
