"""A pack carries the citations of what it carries (issue 24), in the one place the plugin's format leaves free:
the manifest's own key ``citations`` (the plugin refuses any payload file outside its allow-list, and reads
the manifest's known keys only; ``checksums.json`` covers the payload, so these are checked entry by entry
when imported instead)::

    "citations": {"version": 1,
                  "runtime": {"memory:<sha256>": [{path, startLine, endLine, sha256, symbol?}]},
                  "archived": {...}, "documents": {"<documentId>": [...]},
                  "documentSources": {"<documentId>": {"<path>": "<sha256>" | null}},
                  "spaces": {"<spaceId>/<itemId>": [...]}}

Only the parts of the exported components, only for memory the pack holds (MEMORY.md entries exported, the
documents of the index, the items of the exported spaces), and no key at all when there is none (a pack of
memory without citations is byte for byte what it was). :func:`carry` stores them after an import commits,
keys remapped to the ids things came in under (the receipt's ``renamed``), joined with what is here (no
repeats, at most :data:`~mnemon_ls.citations.model.MAX_CITES`). A pack without the key (an older pack, or
the plugin's) imports as before; an entry that is not a citation is skipped (side data never refuses an
import); a side file that cannot be written leaves that part uncarried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..citations.model import MAX_CITES, Citation
from ..citations.sources import SourceHashes
from ..citations.store import runtime_key
from ..errors import StorageError

if TYPE_CHECKING:
    from ..hosting import Host

MANIFEST_KEY = "citations"


def _as_json(table: Mapping[str, Sequence[Citation]]) -> dict[str, list[dict[str, Any]]]:
    return {k: [c.to_json() for c in table[k]] for k in sorted(table)}


def collect(host: "Host", components: Sequence[str], payload: Mapping[str, bytes]) -> dict[str, Any] | None:
    """The manifest's ``citations`` for a pack of ``components`` whose payload is ``payload`` (module doc), or
    ``None`` when there is nothing to carry. Reads the side files; writes nothing."""
    citations = host.citations
    found: dict[str, Any] = {}
    if "runtime" in components:
        table = citations.table("runtime")
        if table:
            live = {runtime_key(e.content) for e in host.runtime.read().memory}
            found["runtime"] = _as_json({k: v for k, v in table.items() if k in live})
        archived = citations.archived().read()
        if archived:
            found["archived"] = _as_json(archived)
    if "documents" in components:
        from ..documents.indexformat import parse_index
        from .validate import INDEX_FILE

        ids = {r.id for r in parse_index(payload[INDEX_FILE]).records} if INDEX_FILE in payload else set()
        table = citations.table("documents")
        found["documents"] = _as_json({k: v for k, v in table.items() if k in ids})
        hashes = SourceHashes(host.root, None).read()
        found["documentSources"] = {k: hashes[k] for k in sorted(hashes) if k in ids}
    if "memory-spaces" in components:
        spaces = {p.split("/")[2] for p in payload if p.startswith("payload/data/") and p.endswith("/mnemon.db")}
        table = citations.table("spaces")
        found["spaces"] = _as_json({k: v for k, v in table.items() if k.partition("/")[0] in spaces})
    found = {k: v for k, v in found.items() if v}
    return {"version": 1, **found} if found else None


def _parse(raw: Any) -> dict[str, list[Citation]]:
    if not isinstance(raw, dict):
        return {}
    out = {}
    for key, items in raw.items():
        if isinstance(key, str) and key and isinstance(items, list):
            cites = [c for c in (Citation.from_json(i) for i in items) if c is not None]
            if cites:
                out[key] = cites[:MAX_CITES]
    return out


def carry(host: "Host", manifest: Mapping[str, Any], receipt: Mapping[str, Any],
          chosen: Sequence[str]) -> dict[str, int]:
    """Store the citations of the pack whose manifest is ``manifest`` for the imported components ``chosen``
    (module doc), the ids remapped by ``receipt`` (the import's). Returns how many keys each side file took."""
    doc = manifest.get(MANIFEST_KEY)
    counts: dict[str, int] = {}
    if not isinstance(doc, dict) or doc.get("version") != 1:
        return counts
    documents = {r["from"]: r["to"] for r in (receipt.get("documents") or {}).get("renamed") or ()
                 if isinstance(r, dict)}
    spaces = {r["from"]: r["to"] for r in (receipt.get("spaces") or {}).get("renamed") or () if isinstance(r, dict)}

    def space_key(key: str) -> str:
        space, _, item = key.partition("/")
        return f"{spaces.get(space, space)}/{item}"

    parts = []
    if "runtime" in chosen:
        parts += [("runtime", _parse(doc.get("runtime")), str), ("archived", _parse(doc.get("archived")), str)]
    if "documents" in chosen:
        parts.append(("documents", _parse(doc.get("documents")), lambda k: documents.get(k, k)))
    if "memory-spaces" in chosen:
        parts.append(("spaces", _parse(doc.get("spaces")), space_key))
    citations = host.citations
    for name, table, remap in parts:
        if not table:
            continue
        side = citations.archived() if name == "archived" else citations.file(name)
        try:
            have = side.read()
            moved = {remap(k): v for k, v in table.items()}
            side.update({k: list(dict.fromkeys([*have.get(k, []), *v]))[:MAX_CITES] for k, v in moved.items()})
            counts[name] = len(moved)
        except (OSError, StorageError):
            continue
    if "documents" in chosen:
        _carry_hashes(host, doc.get("documentSources"), documents)
    return counts


def _carry_hashes(host: "Host", raw: Any, renamed: Mapping[str, str]) -> None:
    if not isinstance(raw, dict):
        return
    wanted = {}
    for key, paths in raw.items():
        if isinstance(key, str) and isinstance(paths, dict):
            wanted[renamed.get(key, key)] = {p: (h if isinstance(h, str) and len(h) == 64 else None)
                                            for p, h in paths.items() if isinstance(p, str)}
    if not wanted:
        return
    try:
        SourceHashes(host.root, host.workspace).merge(wanted)
    except (OSError, StorageError):
        return
