"""The import plan (the dry run) and its application.

:func:`build_plan` reads the source files (:mod:`.reading`: refusals are listed, never fatal), splits them
into items (the format module), redacts each item's text (:func:`mnemon_ls.redact.redact_text`), skips what
was imported before (:mod:`.ledger`), what a person rejected as an import proposal (``mnemon_import_propose``)
and exact or near duplicates (of runtime memory or of an earlier item; near: equal :func:`~mnemon_ls.runtime.ops.similarity_key`, or the same set of words), routes the rest
(:func:`.classify.route`) and applies the runtime budget: an entry that would take USER.md or MEMORY.md past
its limit goes to the active Memory Space instead. The plan carries the sha256 of every file it read.

A dry run saves the plan's file digests as ``state/import-plans/<source>-<16 hex>.json`` (the only thing a
dry run writes). :func:`apply` refuses (:class:`~mnemon_ls.errors.RevisionConflict` naming the file, nothing
written) when a file changed, appeared or went away since that dry run, or since the plan it just built;
then writes each item through the Sources' own paths (:meth:`~mnemon_ls.host.WorkspaceHost.mutate_runtime`,
``documents.create``, ``spaces.remember``), appending each to the ledger after its write.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .. import fsio
from ..errors import InvalidInput, MnemonError, RevisionConflict
from ..records.model import content_hash
from ..redact import redact_text
from ..runtime.model import DELIMITER_BYTES, PROJECTION_FILES, match_key, normalize_text, utf8_len
from ..runtime.ops import similarity_key
from . import classify, formats, ledger, sources
from .reading import Refusal, file_digest, read_source

if TYPE_CHECKING:
    from ..host import WorkspaceHost

_WORDS = re.compile(r"\w+")


def _words_key(text: str) -> str:
    words = sorted(set(w.lower() for w in _WORDS.findall(text)))
    return " ".join(words) if len(words) >= 4 else ""


def plan_path(root: Path, source: str, from_path: str | None) -> Path:
    """Where the dry run of ``source`` (read from ``from_path``, or the default places) keeps its digests."""
    tag = hashlib.sha256((from_path or "").encode("utf-8")).hexdigest()[:16]
    return root / "state" / "import-plans" / f"{source}-{tag}.json"


def _space_target(host: "WorkspaceHost", space_id: str | None) -> tuple[str | None, str | None]:
    """``(space id, None)`` of the space that takes overflow, or ``(None, why not)``."""
    if not (host.root / "data").is_dir() and space_id is None:
        return None, "there is no Memory Space yet: create one (`mnemon-ls space create --name NAME --description TEXT --active`) or name one with --space"
    try:
        state = host.spaces.state()
    except Exception as exc:  # noqa: BLE001 - the reason is shown; nothing is written
        return None, f"the Memory Spaces cannot be read ({exc})"
    if space_id is not None:
        for s in state.all:
            if s.id == space_id or s.name == space_id:
                return s.id, None
        raise InvalidInput("spaceId", f"no Memory Space {space_id!r} (see `mnemon-ls space list`)")
    active = [s for s in state.all if s.active]
    if len(active) == 1:
        return active[0].id, None
    return None, (f"{len(active)} Memory Spaces are active; a target needs exactly one: activate one or name it "
                  "with --space")


def _rejected(host: "WorkspaceHost") -> set[str]:
    """Content hashes of the import proposals (records tagged ``import``, project scope) a person rejected:
    :mod:`mnemon_ls.ops.imports`' ``mnemon_import_propose`` files them, and a rejected one is not imported.
    Unreadable records count as none rejected."""
    if host.workspace is None:
        return set()
    try:
        records = host.records.read("project")
    except (MnemonError, OSError):
        return set()
    return {r.content_hash for r in records.values() if "import" in r.tags and r.governance.verification == "rejected"}


def build_plan(host: "WorkspaceHost", source: str, from_path: str | None = None, *,
               space_id: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The plan of importing ``source`` into ``host``'s workspace (module doc).

    Returns ``{source, from, files: [{path, sha256, bytes}], refused: [{path, reason}], items: [{path, title,
    destination: user|memory|document|space, reason, bytes, text, redacted: [kind]}], skipped: [{path, title,
    why: already-imported|rejected-in-review|exact-duplicate|near-duplicate, of}], counts: {user, memory,
    document, space, alreadyImported, rejected, exactDuplicates, nearDuplicates, refusedFiles}, spaceId,
    spaceProblem}``.
    Raises :class:`InvalidInput` naming ``source`` (unknown), ``from`` (missing, or every file refused) or
    ``spaceId`` (no such space)."""
    import os

    if source not in sources.SOURCE_NAMES:
        raise InvalidInput("source", f"must be one of {', '.join(sources.SOURCE_NAMES)} (got {source!r})")
    fmt = sources.get(source)
    env = dict(os.environ if env is None else env)
    if from_path is not None:
        path = Path(os.path.expanduser(from_path))
        if not path.is_absolute():
            path = (host.workspace or Path.cwd()) / path
        if not path.exists() and not path.is_symlink():
            raise InvalidInput("from", f"{path} does not exist")
        located = formats.locate_from(fmt, path)
    else:
        if host.workspace is None:
            raise InvalidInput("workspace", "is required: the default places are in a workspace")
        located = fmt.locate(host.workspace, env)
    files, refused, raw_items = [], [], []
    for loc in located:
        read = read_source(loc.path, loc.base)
        if isinstance(read, Refusal):
            refused.append(read.to_dict())
            continue
        files.append({"path": str(read.path), "sha256": read.sha256, "bytes": read.size})
        raw_items += fmt.items(read, loc)
    if refused and not files:
        raise InvalidInput("from", f"no file could be read: {refused[0]['path']} {refused[0]['reason']}",
                           refused=refused)
    state = host.runtime.read()
    limits = host.settings.runtime_memory
    used = {t: state.used[t] for t in ("user", "memory")}
    count = {t: len(state.of(t)) for t in ("user", "memory")}
    known_exact = {match_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory") for e in state.of(t)}
    known_near = {similarity_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory") for e in state.of(t)}
    known_near.update({_words_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory") for e in state.of(t)})
    known_near.pop("", None)
    imported = ledger.read_keys(host.root)
    rejected = _rejected(host)
    space, space_problem = _space_target(host, space_id)
    items, skipped = [], []
    counts = {"user": 0, "memory": 0, "document": 0, "space": 0, "alreadyImported": 0, "exactDuplicates": 0,
              "nearDuplicates": 0, "rejected": 0, "refusedFiles": len(refused)}
    for raw in raw_items:
        text, found = redact_text(raw.text if raw.kind == "section" else normalize_text(raw.text))
        if not text.strip():
            continue
        key = ledger.item_key(text)
        row = {"path": raw.path, "title": raw.title}
        exact, near = match_key(text), similarity_key(text)
        words = _words_key(text)
        if key in imported:
            skipped.append({**row, "why": "already-imported", "of": "an earlier import"})
            counts["alreadyImported"] += 1
            continue
        if rejected and content_hash(text) in rejected:
            skipped.append({**row, "why": "rejected-in-review", "of": "an import proposal a person rejected"})
            counts["rejected"] += 1
            continue
        if exact in known_exact:
            skipped.append({**row, "why": "exact-duplicate", "of": known_exact[exact]})
            counts["exactDuplicates"] += 1
            continue
        if near in known_near or (words and words in known_near):
            skipped.append({**row, "why": "near-duplicate", "of": known_near.get(near) or known_near[words]})
            counts["nearDuplicates"] += 1
            continue
        here = f"{Path(raw.path).name}: {raw.title}"
        known_exact[exact] = here
        known_near[near] = here
        if words:
            known_near[words] = here
        destination, reason = classify.route(raw)
        size = utf8_len(text)
        if destination in ("user", "memory"):
            add = size + (DELIMITER_BYTES if count[destination] else 0)
            limit = limits.limit_for(destination)
            if used[destination] + add > limit:
                reason = (f"{reason}, but {PROJECTION_FILES[destination]} has {max(0, limit - used[destination])} "
                          f"of {limit} bytes left (it needs {add}): to the active Memory Space")
                destination = "space"
            else:
                used[destination] += add
                count[destination] += 1
        counts[destination] += 1
        items.append({**row, "destination": destination, "reason": reason, "bytes": size, "text": text,
                      "key": key, "redacted": sorted({m.kind for m in found})})
    return {"source": source, "from": from_path, "files": files, "refused": refused, "items": items,
            "skipped": skipped, "counts": counts, "spaceId": space,
            "spaceProblem": space_problem if counts["space"] else None}


def save_plan(host: "WorkspaceHost", plan: dict[str, Any]) -> None:
    """Keep the plan's file digests for :func:`apply` (module doc)."""
    data = {"version": 1, "source": plan["source"], "from": plan["from"],
            "files": [{"path": f["path"], "sha256": f["sha256"]} for f in plan["files"]]}
    path = plan_path(host.root, plan["source"], plan["from"])
    fsio.ensure_dir(path.parent)
    fsio.write_file_atomically(path, json.dumps(data, indent=2).encode("utf-8") + b"\n")


def _check_unchanged(expected: list[dict[str, str]], plan: dict[str, Any], since: str) -> None:
    """Refuse when a file's digest differs from ``expected`` (module doc)."""
    now = {f["path"]: f["sha256"] for f in plan["files"]}
    then = {f["path"]: f["sha256"] for f in expected}
    for path, digest in then.items():
        current = file_digest(Path(path))
        if current != digest or now.get(path, digest) != digest:
            state = "is gone or unreadable" if current is None else "changed"
            raise RevisionConflict(f"{path} {state} since {since}; nothing was imported: run the dry run again "
                                   f"(`mnemon-ls import {plan['source']} --dry-run`) and review it",
                                   path=path, expected=digest, actual=current)
    for path in now:
        if path not in then:
            raise RevisionConflict(f"{path} appeared since {since}; nothing was imported: run the dry run again "
                                   f"(`mnemon-ls import {plan['source']} --dry-run`)", path=path, expected=None,
                                   actual=now[path])


def apply(host: "WorkspaceHost", source: str, from_path: str | None = None, *, space_id: str | None = None,
          env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Import ``source`` (module doc). Returns the plan with ``applied: [{path, title, destination, ref}]``
    and ``counts.written``; raises :class:`RevisionConflict` (a file changed since the dry run),
    :class:`InvalidInput` (``spaceId`` when items need a space and there is none), and the Sources' errors
    of a write (items before it stay written and are in the ledger, so a second import resumes)."""
    saved_path = plan_path(host.root, source, from_path)
    lock = host.root / "state" / ".imports.lock"
    fsio.ensure_dir(lock.parent)
    with fsio.file_lock(lock):
        plan = build_plan(host, source, from_path, space_id=space_id, env=env)
        saved = fsio.read_bytes_or_none(saved_path)
        if saved is not None:
            try:
                expected = json.loads(saved)["files"]
            except (ValueError, KeyError, TypeError):
                expected = None
            if expected is not None:
                _check_unchanged(expected, plan, "the dry run")
        _check_unchanged(plan["files"], plan, "it was read")
        if plan["counts"]["space"] and plan["spaceId"] is None:
            raise InvalidInput("spaceId", f"{plan['counts']['space']} item(s) go to a Memory Space, but "
                               f"{plan['spaceProblem']}; nothing was imported")
        applied = []
        for item in plan["items"]:
            ref = _write(host, plan, item)
            now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            sha = next((f["sha256"] for f in plan["files"] if f["path"] == item["path"]), None)
            ledger.append(host.root, [{"key": item["key"], "origin": "imported", "source": source, "path": item["path"], "sha256": sha,
                                       "title": item["title"][:200], "destination": item["destination"],
                                       "ref": ref, "importedAt": now}])
            applied.append({"path": item["path"], "title": item["title"], "destination": item["destination"],
                            "ref": ref})
        if saved is not None:
            saved_path.unlink(missing_ok=True)
    plan["applied"] = applied
    plan["counts"]["written"] = len(applied)
    return plan


def _write(host: "WorkspaceHost", plan: dict[str, Any], item: dict[str, Any]) -> str:
    """Write one item where the plan routed it; the reference of what was written."""
    from ..errors import DuplicateContent
    from ..maintenance.lineage import sha256_hex
    from ..runtime import ops

    destination, text = item["destination"], item["text"]
    if destination in ("user", "memory"):
        request = ops.validate_request("add", destination, text, None, "normal", None)
        try:
            host.mutate_runtime(request)
        except DuplicateContent:
            pass  # already there (written by someone else meanwhile): the ledger still records it
        return f"runtime:{destination}:{sha256_hex(text)}"
    if destination == "document":
        inside = None
        if host.workspace is not None:
            try:
                inside = str(Path(item["path"]).resolve().relative_to(host.workspace.resolve()))
            except ValueError:
                inside = None
        title = item["title"].split(" > ")[-1][:200] or Path(item["path"]).name
        result = host.documents.create(title, text, description=f"Imported from {item['path']} ({plan['source']})"[:500],
                                       source_paths=[inside] if inside else None)
        return f"document:{result.document.record.id}"
    receipt = host.spaces.remember(text, space_id=plan["spaceId"], source=f"import:{plan['source']}",
                                   tags=["import", f"import-{plan['source']}"])
    return f"memory-space:{plan['spaceId']}/item:{receipt.id}"
