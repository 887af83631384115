"""``mnemon-ls migrate``: copy the memory of another storage root into this workspace's root, verified.

Why: the default storage scope became ``workspaces`` (DESIGN.md section 4), so memory written under the
old default (``global``: ``$MNEMON_DATA_DIR`` or ``~/.mnemon``) or with ``storageScope=workspace``
(``<workspace>/.mnemon``) is no longer what a workspace reads. It is never moved silently: ``doctor``
says where it is (:func:`mnemon_ls.migrate_survey.survey`) and ``migrate`` copies it on request (:func:`migrate`).

What is copied, each tier through its Source's own public operations, so locks, revisions, formats,
capacity rules and side indexes hold exactly as for any other write:

- Runtime entries: one :meth:`RuntimeSource.mutate` ``add`` each (content, target, importance,
  branches; ``created_at``/``updated_at`` become the time of the copy). An entry whose content the
  destination already holds (the store's own NFC match) is skipped. With ``runtimeUserScope=global``
  and the global root as the source, USER.md is already shared and is left alone.
- Documents: :meth:`DocumentStore.create` (title, body, description, the ``sourcePaths`` that are valid
  in this workspace; the others are listed in the receipt), then ``store.moves.archive`` for an
  archived one. A document with the same title and body hash as one in the destination is skipped.
- Memory Spaces (native ``mnemon.db`` stores): the destination space is the native space with the same
  name, or a new one made by :meth:`SpacesService.create_space` (same name, description, active flag);
  items go through the provider's ``import_items`` (the same pair ``space merge`` uses): content,
  category, importance, tags (``branch:<name>`` included), entities, source and ``created_at`` are
  kept; items get new ids (the receipt maps every source id to its destination id); an item whose
  content the destination space already holds is skipped; edges among copied items are copied.
  Third-party provider spaces are not copied (their data lives with the provider) and are listed.

The source is never written: Runtime memory is read with :meth:`RuntimeStore.read` (no lock, no
write); Documents and Memory Spaces are read from a private snapshot in a temporary directory (files
copied, each ``mnemon.db`` through SQLite's backup API from a read-only connection), because their
readers may repair, index or journal what they open. Everything is read and checked before anything is
written: a damaged source or destination, an invalid source entry, or a destination over capacity is a
clear error naming the file and the rule, and nothing changes. After the writes every copied value is
read back from the destination and compared; a difference raises :class:`MigrationUnverified`.
Migrating again is safe: what was copied is skipped as a duplicate. The citations of what is copied go with
it, keys remapped to the new ids (:mod:`mnemon_ls.migrate_citations`).

This module owns the planning, the writes and the read-back; reading the source into its private snapshot is
:mod:`mnemon_ls.migrate_snapshot`, and ``doctor``'s look for memory not yet copied :mod:`mnemon_ls.migrate_survey`.
"""


from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .errors import (
    DocumentCapacityError,
    FormatTooNew,
    InvalidInput,
    MigrationUnverified,
    NotFound,
    RuntimeCapacityError,
    UnreadableStore,
    echo_repr,
)
from .migrate_snapshot import Snapshot
from .roots import global_root
from .settings import own_home_path
from .runtime import ops
from .runtime.model import PROJECTION_FILES, TARGETS, Entry, match_key, used_bytes
from .runtime.store import RuntimeStore

if TYPE_CHECKING:
    from .host import WorkspaceHost

#: ``--from`` names that are not paths.
SOURCE_NAMES = ("global", "workspace")


def resolve_source(host: "WorkspaceHost", value: str, env: Mapping[str, str] | None = None) -> Path:
    """The root ``--from VALUE`` names: ``global`` (``$MNEMON_DATA_DIR`` or ``~/.mnemon``), ``workspace``
    (``<workspace>/.mnemon``) or an absolute path of a storage root. Never writes. Raises
    :class:`InvalidInput` (field ``from``) for an empty or relative value, ``workspace`` without a
    workspace, or this workspace's own root; :class:`NotFound` when the root does not exist."""
    text = (value or "").strip()
    if not text:
        raise InvalidInput("from", "must be global, workspace or the absolute path of a storage root")
    if text == "global":
        source = global_root(env)
    elif text == "workspace":
        if host.resolution.workspace is None:
            raise InvalidInput("from", "workspace needs a workspace (give --workspace DIR)")
        source = host.resolution.workspace / ".mnemon"
    else:
        expanded = own_home_path(text, "from")  # ~name (another user's home) is refused
        if not os.path.isabs(expanded):
            raise InvalidInput("from", f"must be global, workspace or an absolute path (got {echo_repr(text)})")
        source = Path(os.path.normpath(expanded))
    if not source.is_dir():
        raise NotFound(f"from: {source} does not exist or is not a directory; nothing to migrate",
                       field="from", path=str(source))
    if os.path.realpath(source) == os.path.realpath(host.root):
        raise InvalidInput("from", f"{source} is this workspace's own storage root; nothing to copy")
    return source


@dataclass
class _Plan:
    runtime: dict[str, list[ops.MutationRequest]] = field(default_factory=dict)
    runtime_report: dict[str, dict[str, Any]] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)
    documents_skipped: int = 0
    spaces: list[dict[str, Any]] = field(default_factory=list)
    spaces_not_copied: list[dict[str, str]] = field(default_factory=list)


def migrate(host: "WorkspaceHost", source: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """Copy the memory of the storage root ``source`` into ``host``'s root (module doc), verified.

    Returns the receipt ``{"from", "to", "status": committed|planned|nothing-to-copy, "runtime": {user:
    {added, skipped[, shared, note]}, memory: {...}}, "documents": {added, skipped, archived,
    sourcePathsNotCopied: [{title, path, rule}]}, "spaces": [{fromId, name, intoId (null: to be
    created), created, items, added, skipped, errors, edgesCopied, ids: {sourceId: destinationId}}],
    "spacesNotCopied": [{id, name, reason}], "verified": bool}``; with ``dry_run`` nothing is written
    and the counts say what would be added (space items: how many would be offered).

    Raises :class:`UnreadableStore` (a damaged source or destination file, named in ``data.file``),
    :class:`InvalidInput` (an entry or document of the source that breaks a rule, named),
    :class:`RuntimeCapacityError` / :class:`DocumentCapacityError` (the destination cannot hold the
    copy), :class:`MigrationUnverified` (a copied value read back differently); none of them except
    the last leaves anything changed, and the source is never changed.
    """
    source = Path(source)
    source_runtime = RuntimeStore(source)
    runtime_state = source_runtime.read()
    if runtime_state.problem:
        raise UnreadableStore(
            f"the source's Runtime memory is damaged: {runtime_state.problem}; nothing was copied. "
            f"Repair it with `mnemon-ls runtime recover --data-dir {source}`",
            file=str(source_runtime.memories_path), reason=runtime_state.problem)
    with Snapshot(source) as snapshot:
        documents = snapshot.documents()
        spaces, not_copied = snapshot.spaces()
        plan = _plan(host, source, runtime_state.entries, documents, spaces)
        plan.spaces_not_copied = not_copied
        receipt = _receipt(host, source, plan, dry_run)
        if dry_run:
            return receipt
        _apply(host, plan, receipt)
        from .migrate_citations import carry

        carry(host, source, plan.documents, receipt["spaces"])
    _verify(host, plan, receipt)
    receipt["verified"] = True
    return receipt


# ---------------------------------------------------------------------------------------------- planning


def _plan(host: "WorkspaceHost", source: Path, entries: tuple[Entry, ...], documents: list[tuple[Any, str]],
          spaces: list[dict[str, Any]]) -> _Plan:
    plan = _Plan()
    destination = host.runtime.read()
    if destination.problems:
        raise UnreadableStore(f"this workspace's Runtime memory is damaged: {destination.problems[0]}; nothing was "
                              "copied. Run `mnemon-ls runtime recover` first", reason=destination.problems[0])
    for target in TARGETS:
        store = host.runtime.store_for(target)
        wanted = [e for e in entries if e.target == target]
        report: dict[str, Any] = {"added": 0, "skipped": 0}
        plan.runtime_report[target] = report
        plan.runtime[target] = []
        if os.path.realpath(store.root) == os.path.realpath(source):
            if wanted:
                report["shared"] = len(wanted)
                report["note"] = (f"{PROJECTION_FILES[target]} is already read from {source} "
                                  "(runtimeUserScope=global); nothing to copy")
            continue
        existing = list(store.read().of(target))
        keys = {match_key(e.content) for e in existing}
        added: list[Entry] = []
        for entry in wanted:
            key = match_key(entry.content)
            if key in keys:
                report["skipped"] += 1
                continue
            keys.add(key)
            try:
                request = ops.validate_request("add", target, entry.content, importance=entry.importance,
                                               branches=list(entry.branches) if entry.branches else None)
            except InvalidInput as exc:
                raise InvalidInput(exc.field, f"{exc.rule} (in the source's {PROJECTION_FILES[target]} entry "
                                              f"{entry.content[:60]!r}); nothing was copied") from None
            plan.runtime[target].append(request)
            added.append(entry)
        report["added"] = len(added)
        limit = host.settings.runtime_memory.limit_for(target)
        projected = used_bytes([*existing, *added], target)
        if projected > limit:
            used = used_bytes(existing, target)
            raise RuntimeCapacityError(
                f"{target} cannot take the {len(added)} entries of {source}: {projected} of {limit} UTF-8 bytes "
                f"after the copy (now {used}); nothing was copied. Remove or shorten entries on either side, or "
                f"raise runtimeMemory.{target}LimitBytes", target=target, used=used, projected=projected, limit=limit)
    if documents:
        _plan_documents(host, documents, plan)
    if spaces:
        _plan_spaces(host, spaces, plan)
    return plan


def _plan_documents(host: "WorkspaceHost", documents: list[tuple[Any, str]], plan: _Plan) -> None:
    store = host.documents
    state = store.read()
    if state.problem:
        raise UnreadableStore(f"this workspace's Documents index is damaged: {state.problem}; nothing was copied. "
                              "Run `mnemon-ls doc recover` first", file=str(store.index_path), reason=state.problem)
    have = {(r.title, r.content_hash) for r in state.records}
    adding = 0
    for record, body in documents:
        if (record.title, record.content_hash) in have:
            plan.documents_skipped += 1
            continue
        have.add((record.title, record.content_hash))
        kept, dropped = [], []
        for path in record.source_paths:
            try:
                store.validate_create(record.title, body, source_paths=[path])
                kept.append(path)
            except InvalidInput as exc:
                dropped.append({"title": record.title, "path": path, "rule": exc.rule})
        try:
            store.validate_create(record.title, body, description=record.description or None, source_paths=kept)
        except InvalidInput as exc:
            raise InvalidInput(exc.field, f"{exc.rule} (in the source's document {record.title!r}); nothing was "
                                          "copied") from None
        if record.status == "active":
            adding += record.size_bytes
        plan.documents.append({"record": record, "body": body, "sourcePaths": kept, "dropped": dropped})
    usage = store.list().usage
    if adding and usage.active_bytes + adding > usage.limit_bytes:
        raise DocumentCapacityError(
            f"the active documents of the source need {adding} bytes, and this workspace has "
            f"{usage.limit_bytes - usage.active_bytes} of {usage.limit_bytes} left; nothing was copied. Archive "
            "documents or raise documents.activeLimitBytes",
            projected=usage.active_bytes + adding, limit=usage.limit_bytes, used=usage.active_bytes, candidates=[])


def _plan_spaces(host: "WorkspaceHost", spaces: list[dict[str, Any]], plan: _Plan) -> None:
    from .spaces.naming import name_key, name_keys, unique_name

    state = host.spaces.state()
    refused = state.native_refused
    if refused is not None and any(space["items"] for space in spaces):  # planned, so a dry run says it too
        raise FormatTooNew(f"the destination's Memory Spaces registry cannot take the source's spaces: "
                           f"{refused.message}; nothing was copied", **refused.data)
    by_name = {name_key(r.name): r for r in reversed(state.all) if r.native}  # the first of a duplicated name
    # a new space's name may not equal, nor look like (confusable skeleton), one in use: it gets " (2)"
    taken: set[str] = set()
    for existing in state.all:
        taken |= name_keys(existing.name) | name_keys(existing.id)
    created: dict[str, dict[str, Any]] = {}
    for space in spaces:
        record = space["record"]
        if not space["items"]:
            continue
        into = by_name.get(name_key(record.name))
        entry = {**space, "into": into}
        if into is None:  # a new space; names are unique ignoring case (mnemon_ls.spaces.naming)
            first = created.get(name_key(record.name))
            if first is not None:
                entry["sameAs"] = first  # the source root held the name twice: both go into one new space
            else:
                name = unique_name(taken, record.name)
                entry["createName"] = name
                taken |= name_keys(name)
                created[name_key(record.name)] = entry
        plan.spaces.append(entry)


def _receipt(host: "WorkspaceHost", source: Path, plan: _Plan, dry_run: bool) -> dict[str, Any]:
    dropped = [d for doc in plan.documents for d in doc["dropped"]]
    spaces = [{"fromId": s["record"].id, "name": s["record"].name, "intoId": s["into"].id if s["into"] else None,
               "created": False, "items": len(s["items"]), "added": 0, "skipped": 0, "errors": 0,
               "edgesCopied": 0, "ids": {}} for s in plan.spaces]
    anything = (any(plan.runtime.values()) or plan.documents or plan.spaces)
    return {
        "from": str(source), "to": str(host.root),
        "status": "planned" if dry_run else ("committed" if anything else "nothing-to-copy"),
        "runtime": plan.runtime_report,
        "documents": {"added": len(plan.documents), "skipped": plan.documents_skipped,
                      "archived": sum(1 for d in plan.documents if d["record"].status == "archived"),
                      "sourcePathsNotCopied": dropped},
        "spaces": spaces, "spacesNotCopied": plan.spaces_not_copied, "verified": False,
    }


# ---------------------------------------------------------------------------------------------- writing


def _apply(host: "WorkspaceHost", plan: _Plan, receipt: dict[str, Any]) -> None:
    for target, requests in plan.runtime.items():
        added = 0
        for request in requests:
            if host.runtime.mutate(request).changed:
                added += 1
            else:  # another writer added the same content meanwhile
                receipt["runtime"][target]["skipped"] += 1
        receipt["runtime"][target]["added"] = added
    store = host.documents
    for doc in plan.documents:
        record = doc["record"]
        result = store.create(record.title, doc["body"], description=record.description or None,
                              source_paths=doc["sourcePaths"])
        doc["id"] = result.document.record.id
        if record.status == "archived":
            store.moves.archive(doc["id"], result.document.record.revision, summary=record.archive_summary or None)
    for space, row in zip(plan.spaces, receipt["spaces"]):
        record = space["record"]
        into = space["into"] or (space["sameAs"]["into"] if "sameAs" in space else None)
        if into is None:
            view = host.spaces.create_space(space.get("createName", record.name), record.description,
                                            active=record.active)
            into = view.record
            row["intoId"], row["created"] = into.id, True
        raw = host.spaces.provider(into).import_items(space["items"], space["edges"])
        results = raw.get("results") or []
        row["added"] = sum(1 for r in results if r.get("action") == "added")
        row["skipped"] = sum(1 for r in results if r.get("action") == "skipped")
        row["errors"] = sum(1 for r in results if r.get("action") not in ("added", "skipped"))
        row["edgesCopied"] = int(raw.get("edges_inserted") or 0)
        row["ids"] = {r["source_id"]: r["id"] for r in results if r.get("id")}
        space["into"] = into
        space["results"] = results


def _verify(host: "WorkspaceHost", plan: _Plan, receipt: dict[str, Any]) -> None:
    """Read every copied value back from the destination and compare (module doc)."""
    problems: list[str] = []
    for target, requests in plan.runtime.items():
        if not requests:
            continue
        stored = {match_key(e.content): e for e in host.runtime.store_for(target).read().of(target)}
        for request in requests:
            entry = stored.get(match_key(request.content or ""))
            if entry is None:
                problems.append(f"{PROJECTION_FILES[target]} entry {request.content!r} is missing")
            elif entry.importance != (request.importance or "normal") or entry.branches != (request.branches or ()):
                problems.append(f"{PROJECTION_FILES[target]} entry {request.content!r} has importance "
                                f"{entry.importance} and branches {list(entry.branches)}")
    for doc in plan.documents:
        record = doc["record"]
        view = host.documents.get(doc["id"])
        if (view.record.title, view.content, view.record.status) != (record.title, doc["body"], record.status):
            problems.append(f"document {record.title!r} ({doc['id']}) reads back differently")
    for space, row in zip(plan.spaces, receipt["spaces"]):
        provider = host.spaces.provider(space["into"])
        by_id = {item.id: item for item in space["items"]}
        if row["errors"]:
            problems.append(f"space {row['name']}: {row['errors']} item(s) could not be imported")
        for result in space.get("results", []):
            item = by_id.get(result.get("source_id"))
            got = provider.get(result["id"]) if result.get("id") else None
            if item is None or got is None or got.content != item.content:
                problems.append(f"space {row['name']}: item {result.get('source_id')} is missing or differs")
            elif result.get("action") == "added" and sorted(got.tags) != sorted(item.tags):
                problems.append(f"space {row['name']}: item {result.get('source_id')} has tags {got.tags}")
    if problems:
        raise MigrationUnverified(
            f"the copy into {host.root} did not read back as written: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; the source is unchanged; run `mnemon-ls doctor` and migrate again", problems=problems)
