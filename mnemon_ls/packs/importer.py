"""Import a Mnemon Pack into a storage root: merge or replace, staged, swapped in, rolled back or forward.

Rules (reference section 9), per component chosen (all of the pack's by default):

- runtime, ``merge``: the pack's entries are added to the store's by (target, content) (the Runtime
  Source's own match key); entries already present are skipped; ``replace``: the pack's entries replace
  the store's entries of each target it owns (an entry both here and in the pack counts as already here;
  the pack's importance and branches win). Either way every target must fit its limit afterwards
  (:class:`~mnemon_ls.errors.RuntimeCapacityError`). With ``runtimeUserScope=global`` the ``user``
  entries go to the global root's store and the ``memory`` entries to this root's.
- the user profile (``user`` entries, USER.md) under ``replace``: kept when the pack carries none; when
  USER.md is the global root's (shared by every workspace) it is merged (pack entries added, none removed)
  unless the caller opts in with ``replace_user_profile``; a USER.md of this root is replaced with it
  (:func:`user_profile_replaced`).
- documents, ``merge``: same id and same ``contentHash``: skipped; same id, other hash (or a file name
  already taken): imported under a new UUID, file name ``<base (at most 80)>-<id[:8]>.md``, frontmatter
  id rewritten; otherwise imported as is. The active total must stay within ``documents.activeLimitBytes``
  (:class:`~mnemon_ls.errors.DocumentCapacityError`). ``replace``: the pack's documents only (saved
  hand edits, quarantine and orphans folders are kept).
- memory spaces, ``merge``: same id and the same store (byte-identical ``mnemon.db``, or the same
  ``insights`` and ``edges`` rows leaving out the access counters a read bumps: the reference's "identical
  db bytes" would turn a store that was only read into a second copy): skipped; same id otherwise (also a
  third-party space's id): a new UUID id; new spaces are added to the catalog. ``replace``: the pack's
  native spaces only; a pack with no space is refused for a root that has native stores
  (:class:`~mnemon_ls.errors.PackRefused`, ``would-empty``). ``<root>/active`` (the Mnemon CLI's default
  store) is repaired to an existing store (the current one, else ``default``, else the first active,
  else the first). Third-party spaces and ``state/memory-providers.json`` are never touched.
- secrets: under ``secrets: redact`` the staged copy is redacted by the Sources' own redaction passes
  (``runtime``: :class:`mnemon_ls.redact.Scrubber` on each content; documents and spaces:
  :func:`mnemon_ls.documents.redaction.apply`, :func:`mnemon_ls.spaces.redaction.apply`) before anything
  is swapped in; under ``reject`` a credential refuses the pack (``PackRefused`` ``secret``).

Commit protocol (nothing changes until the swap; a failure at any point leaves the old root):

1. ``<root>/.dsh-pack.lock`` (and the global root's, when the import may write its ``runtime/``: the pack
   carries USER.md entries), then the pack gate of those roots exclusive (:mod:`.gate`: every command using
   them has finished and the next waits until the swap is done, so none sees a mix of the two roots); a
   global root the import only reads (a pack without USER.md entries) is gated shared, as every command
   gates it, so a long command of another workspace does not hold the import up; then the component locks
   (``runtime/.memories.lock``, ``documents/.index.lock``, ``data/.dsh-memory-bodies.lock``) for the whole import.
2. Stage: each new component directory (or, for merged spaces, each new store directory and the new
   catalog) is built in ``<root>/.dsh-pack-stage-<uuid>/`` through the Sources' formats: Runtime via
   :meth:`RuntimeStore.commit_entries` on the staging copy, Documents via
   :func:`mnemon_ls.documents.indexformat.serialize_index` and :func:`~mnemon_ls.documents.model.render_markdown`,
   spaces through the catalog format; each staged ``mnemon.db`` is opened once as a Mnemon store. The
   lock markers we hold are hard-linked into the staged directories, so after the swap the held marker
   is the one at the lock path (released normally, never another process's). Hand edits of USER.md,
   MEMORY.md and documents are taken in first (as every command does), and each component directory read
   is stamped (:func:`.swap.tree_stamp`): changed before the swap, the import is refused
   (``changed-meanwhile``) and the change kept. Runtime is staged here, documents by :mod:`.stagedocs`,
   memory spaces by :mod:`.stagespaces`, each with the shared steps of :mod:`.staging`. Steps 3-5 are
   :mod:`.swap`.
3. Decide: the swap journal ``<root>/.dsh-pack-swap.json`` (``{"version": 1, "pairs": [{staged, target,
   backup}], "dirs": [...]}``, absolute paths) is written durably. From here the import is committed.
4. Swap: for each pair, ``target`` -> ``backup`` (when it exists), ``staged`` -> ``target``, directory
   fsync. An error rolls every done pair back (reverse order) and removes the journal: the old root,
   and :class:`PackRefused` ``swap-failed``.
5. Done: the journal is removed (durably), then the stage and backup directories.

A ``replace`` import first exports what it replaces into the stage (:mod:`.backups`; refused with
``backup-failed`` when that fails) and swaps it into ``<root>/state/pack-backups/`` as the last pair, so the
backup exists exactly when the new root does. A dry run (``dry_run``) runs steps 1-2 with the pack gate
held shared instead of the lock markers, in a stage outside the root, and stops there.

A process killed after step 3 leaves the journal: :func:`.swap.recover` (run by the next
:class:`~mnemon_ls.host.WorkspaceHost` on the root, and by every pack operation) finishes the swap
(roll forward) under the pack lock, so the root is either the old one (killed before the journal) or
the new one, never a mix. Stage and backup directories without a journal are removed by the next pack
operation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .. import fsio
from ..errors import InvalidInput, RuntimeCapacityError, UnreadableStore, echo_repr, type_rule
from ..redact import Scrubber
from ..runtime.model import PROJECTION_FILES, Entry, match_key, normalize_text, used_bytes
from ..spaces.registry_model import LOCK_FILE
from . import format as fmt
from .. import packgate as gate
from .swap import JOURNAL, PACK_LOCK, clean, recover, step, swap, transient
from .plan import ImportPlan, repair_results
from .staging import copy_tree, read_steady, stage_for
from .validate import Pack, read_pack

if TYPE_CHECKING:
    from ..hosting import Host

MODES = ("merge", "replace")


def validate_mode(value: Any) -> str:
    """``merge`` (default) or ``replace``; else :class:`InvalidInput` naming ``mode``."""
    if value is None:
        return "merge"
    if value not in MODES:
        raise InvalidInput("mode", f"must be merge or replace (got {echo_repr(value)})")
    return value


def validate_components(value: Any, pack: Pack) -> tuple[str, ...]:
    """The chosen components (default: all the pack has), each one the pack carries; else
    :class:`InvalidInput` naming ``components`` (``components[i]``: an item that is not a string)."""
    if value is None or value == [] or value == ():
        return pack.archive.components
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput("components", type_rule("a list of component names", value))
    for index, name in enumerate(value):
        if not isinstance(name, str):
            raise InvalidInput(f"components[{index}]", type_rule("a string (a component name)", name))
    for name in value:
        if name not in fmt.COMPONENTS:
            raise InvalidInput("components", f"{echo_repr(name)} is not a component "
                                             f"({', '.join(fmt.COMPONENTS)})")
        if name not in pack.archive.components:
            raise InvalidInput("components", f"the pack does not carry {echo_repr(name)} (it has "
                                             f"{', '.join(pack.archive.components)})")
    return tuple(c for c in fmt.COMPONENTS if c in value)


# ------------------------------------------------------------------------------------------ runtime


def user_profile_replaced(host: "Host", pack: Pack, mode: str, replace_user_profile: bool) -> bool:
    """Whether a ``mode`` import of ``pack`` replaces the user profile (``target=user``, USER.md): only in
    ``replace`` mode, only when the pack carries one, and, when USER.md is the shared one of the global root
    (``runtimeUserScope=global`` with a root of its own: every workspace reads it), only with the explicit
    opt-in ``replace_user_profile``. A USER.md in the root being replaced (``runtimeUserScope=storage``,
    or the global root itself) is part of that root and is replaced with it."""
    if mode != "replace" or not pack.user_profile_entries():
        return False
    return replace_user_profile or not host.resolution.split_user


def _stage_runtime(host: "Host", pack: Pack, mode: str, plan: ImportPlan, stages: dict[Path, Path],
                   replace_user_profile: bool) -> None:
    from ..runtime.store import RuntimeStore

    scrub = Scrubber(host.settings.secrets)
    incoming: list[Entry] = []
    for index, entry in enumerate(pack.runtime or ()):
        content = scrub.text(f"payload/runtime/memories.json:entries[{index}].content", entry.content)
        incoming.append(entry if content == entry.content
                        else dataclasses.replace(entry, content=normalize_text(content)))
    profile_replaced = user_profile_replaced(host, pack, mode, replace_user_profile)
    shared = host.resolution.split_user
    targets: dict[str, dict[str, int]] = {}
    limits = host.settings.runtime_memory
    user_md = None
    hand_edits: list[dict[str, Any]] = []
    pending: list[str] = []
    for store in host.runtime.stores:
        def take_in_and_read(store: RuntimeStore = store) -> Any:
            if not plan.dry_run:
                # a hand edit of USER.md / MEMORY.md counts (handEdits=import) before the import reads the
                # store, as before every runtime command: otherwise the swap would replace it unseen
                hand_edits.extend(repair_results(store, store.projections.repair(rebuild_missing=False)))
            return store.read()

        state = read_steady(store.runtime_dir, take_in_and_read, plan)
        if state.problem:
            raise UnreadableStore(f"{state.problem}; nothing was imported. Run `mnemon-ls runtime recover` first",
                                  file=str(store.memories_path), reason=state.problem)
        if plan.dry_run:  # named, not taken in (a dry run writes nothing): the import takes it in first
            from ..runtime.model import projection_bytes

            for target in store.projects:
                path = store.projection_path(target)
                current = fsio.read_bytes_or_none(path)
                if current is not None and current != projection_bytes(state.entries, target):
                    pending.append(str(path))
        owned = store.projects
        if "user" in owned:
            user_md = store.runtime_dir / PROJECTION_FILES["user"]
        current = list(state.entries)
        # replace: the pack's entries take the place of each owned target's, except USER.md when the pack
        # carries no user profile (it never left the machine to come back) or when it is the shared profile
        # and the opt-in was not given (merged instead: pack entries added, none removed)
        replaced = [t for t in owned if mode == "replace" and (t != "user" or profile_replaced)]
        keys = {(e.target, match_key(e.content)) for e in incoming if e.target in owned}
        present = {(e.target, match_key(e.content)) for e in current if e.target in owned}
        result = [e for e in current if e.target not in replaced]
        seen = {(e.target, match_key(e.content)) for e in result}
        counts = {t: {"added": 0, "skipped": 0, "removed": 0} for t in owned}
        for entry in current:
            if entry.target in replaced and (entry.target, match_key(entry.content)) not in keys:
                counts[entry.target]["removed"] += 1
        for entry in incoming:
            if entry.target not in owned:
                continue
            key = (entry.target, match_key(entry.content))
            if key in seen:  # kept as it is here (merge), or repeated in the pack
                counts[entry.target]["skipped"] += 1
                continue
            seen.add(key)
            result.append(entry)  # replace takes the pack's version (importance, branches) of an entry here
            counts[entry.target]["skipped" if key in present else "added"] += 1
        for target in owned:
            targets[target] = counts[target]
            before, after = used_bytes(current, target), used_bytes(result, target)
            limit = limits.limit_for(target)
            if after > limit:
                raise RuntimeCapacityError(
                    f"{PROJECTION_FILES[target]} would hold {after} of {limit} UTF-8 bytes after the import (now "
                    f"{before}); nothing was imported. Remove entries, import with --replace, or raise "
                    f"runtimeMemory.{target}LimitBytes", target=target, used=before, projected=after, limit=limit)
        if not replaced and not any(counts[t]["added"] for t in owned):
            continue  # nothing comes in, nothing is replaced: the store is left exactly as it is (no copy, no swap)
        stage = stage_for(store.root, plan, stages)
        staged_root = stage / "runtime-root"
        copy_tree(store.runtime_dir, staged_root / "runtime",
                   lambda name: transient(name) or name in ("memories.json", ".memories.last-good.json",
                                                             "USER.md", "MEMORY.md"))
        staged = RuntimeStore(staged_root, limits, projects=owned, secrets="allow")
        staged.commit_entries(result)
        plan.links.append((store.lock_path, staged.lock_path))
        plan.pairs.append((staged_root / "runtime", store.runtime_dir))
    user = targets.get("user", {"added": 0, "skipped": 0, "removed": 0})
    carried = pack.user_profile_entries()
    if profile_replaced:
        handling = "replaced"
    elif carried:
        handling = "merged"
    else:
        handling = "kept"
    report: dict[str, Any] = {
        "added": sum(c["added"] for c in targets.values()),
        "skipped": sum(c["skipped"] for c in targets.values()),
        "removed": sum(c["removed"] for c in targets.values()),
        "targets": targets,
        "handEdits": hand_edits,
        "pendingHandEdits": pending,
        "userProfile": {"carried": carried, **user, "handling": handling, "shared": shared,
                        "path": str(user_md) if user_md is not None else None,
                        # replace was asked, the pack carries a profile, and the shared one was merged instead
                        "optInNeeded": mode == "replace" and bool(carried) and not profile_replaced},
    }
    plan.receipt["runtime"] = report
    plan.backup_user_profile = profile_replaced


# ------------------------------------------------------------------------------------------ import


@contextlib.contextmanager
def _locks(paths: Sequence[Path]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for path in paths:
            stack.enter_context(fsio.file_lock(path))
        yield


def validate_flag(value: Any, field: str) -> bool:
    """A strict boolean option (``True``/``False`` only, ``None`` is ``False``); else :class:`InvalidInput`
    naming ``field``."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput(field, f"must be true or false (got {echo_repr(value)})")
    return value


def import_pack(host: "Host", data: bytes, *, mode: str | None = None,
                components: Sequence[str] | None = None, dry_run: Any = False,
                replace_user_profile: Any = False) -> dict[str, Any]:
    """Import pack ``data`` into ``host``'s root (module doc). Returns the receipt::

        {"status": "committed" | "dry-run", "dryRun": bool, "mode", "components", "scope",
         "runtime": {added, skipped, removed, targets: {<target>: {added, skipped, removed}},
                     handEdits: [{file, status, message, savedAs?, ...}], pendingHandEdits: [path],
                     userProfile: {carried, added, skipped, removed, handling: merged|replaced|kept,
                                   shared, path, optInNeeded}},
         "documents": {added, skipped, renamed: [{from, to}], removed, pendingHandEdits: [path]},
         "spaces": {added, skipped, renamed, removed, nameChanged, arrivedInactive, activeSpaces},
         "activeStore", "backup": {path, components, userProfile, keep, restore} | None}

    (only the chosen components). Every item of the pack is counted once: ``added`` (new here),
    ``skipped`` (already here: same target and text, same document id and content, same space id and
    store; or repeated in the pack) or ``renamed`` (came in under a new id); ``removed`` counts what was
    here and is gone (``replace`` only; 0 in ``merge``). ``userProfile`` (USER.md): ``shared`` when it is
    the global root's, read by every workspace; ``handling`` ``replaced`` (see :func:`user_profile_replaced`),
    ``merged`` (entries added, none removed; ``optInNeeded`` when ``replace`` was asked and only
    ``replace_user_profile`` would have replaced it) or ``kept`` (the pack carries none). ``backup``
    (``replace`` only): the pack of what this import replaced, saved first (:mod:`.backups`). ``handEdits``:
    hand edits of USER.md / MEMORY.md imported into the store before the import read it (the results of
    :meth:`~mnemon_ls.runtime.repair.ProjectionRepair.repair`; none in a dry run, which writes nothing).

    ``dry_run`` (the runtime and documents parts then carry ``pendingHandEdits``: files changed by hand that
    the real import takes in first, which can change its counts): validate and stage everything as a real import
    does, in a temporary directory outside every root, without taking a lock file or writing anything under a root
    (the pack gate is held shared
    for a consistent read), and return the receipt the import would give (``status`` ``dry-run``).

    Raises :class:`~mnemon_ls.errors.PackInvalid` (the pack breaks a rule), :class:`InvalidInput` (``mode``,
    ``components``, ``dryRun``, ``replaceUserProfile``: a strict bool, given only with ``replace``, a
    runtime component and a pack that carries a user profile), :class:`RuntimeCapacityError` /
    :class:`DocumentCapacityError` (the result would not fit), :class:`PackRefused` (``would-empty``,
    ``secret``, ``swap-failed``, ``backup-failed``), :class:`UnreadableStore` (a damaged store here); every one
    of them leaves the root exactly as it was."""
    mode = validate_mode(mode)
    dry_run = validate_flag(dry_run, "dryRun")
    replace_user_profile = validate_flag(replace_user_profile, "replaceUserProfile")
    pack = read_pack(data)
    chosen = validate_components(components, pack)
    if replace_user_profile:
        if mode != "replace":
            raise InvalidInput("replaceUserProfile", "applies to replace mode only (merge never removes an entry)")
        if "runtime" not in chosen:
            raise InvalidInput("replaceUserProfile", "needs the runtime component (USER.md is Runtime memory)")
        if not pack.user_profile_entries():
            raise InvalidInput("replaceUserProfile", "the pack carries no user profile (USER.md entries) to "
                                                     "replace yours with; nothing was imported")
    root = host.root
    roots, read_only = [root], []  # the roots the import may write (gated exclusive), those it only reads
    if "runtime" in chosen:
        others = [s.root for s in host.runtime.stores if os.path.realpath(s.root) != os.path.realpath(root)]
        # the global root's runtime/ (USER.md) is written only for USER.md entries the pack carries
        # (_stage_runtime leaves a store no entry of its targets comes into as it is)
        (roots if pack.user_profile_entries() else read_only).extend(others)
    if dry_run:
        release_sources(host)
        with gate.hold(roots + read_only, exclusive=False):
            plan = _import_locked(host, pack, mode, chosen, root, dry_run=True,
                                  replace_user_profile=replace_user_profile)
        release_sources(host)
        return {"status": "dry-run", "dryRun": True, "mode": mode, "components": list(chosen),
                "scope": pack.archive.scope, **plan.receipt}
    for extra in roots + read_only:
        recover(extra)
    pack_locks = [r / PACK_LOCK for r in roots]
    lock_paths: list[Path] = []
    if "runtime" in chosen:
        lock_paths += [s.lock_path for s in host.runtime.stores]
    if "documents" in chosen:
        host.check_storage()
        lock_paths.append(root / "documents" / ".index.lock")
    if "memory-spaces" in chosen:
        host.check_storage()
        lock_paths.append(root / "data" / LOCK_FILE)
    release_sources(host)
    absent = [p.parent for p in lock_paths if not p.parent.exists()]
    try:
        # order: pack markers, the gate (every other command of these roots has finished), component locks
        with _locks(pack_locks), gate.hold(roots, exclusive=True), gate.hold(read_only, exclusive=False), \
                _locks(lock_paths):
            plan = _import_locked(host, pack, mode, chosen, root, replace_user_profile=replace_user_profile,
                                  other_roots=roots[1:])
    except BaseException:
        for directory in absent:  # component directories only the locks created: nothing is left behind
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    release_sources(host)
    receipt = {"status": "committed", "dryRun": False, "mode": mode, "components": list(chosen),
               "scope": pack.archive.scope, **plan.receipt}
    from .citations import carry

    carry(host, pack.archive.manifest, receipt, chosen)  # side data, after the commit (:mod:`.citations`)
    return receipt


def _import_locked(host: "Host", pack: Pack, mode: str, chosen: Sequence[str], root: Path, *,
                   dry_run: bool = False, replace_user_profile: bool = False,
                   other_roots: Sequence[Path] = ()) -> ImportPlan:
    from . import backups

    stages: dict[Path, Path] = {}
    plan = ImportPlan(stage=root, dry_run=dry_run, other_roots=[Path(r) for r in other_roots])
    backup: "backups.Saved | None" = None
    try:
        stage = stage_for(root, plan, stages)
        plan.stage = stage
        if "runtime" in chosen:
            _stage_runtime(host, pack, mode, plan, stages, replace_user_profile)
        if "documents" in chosen:
            from .stagedocs import stage_documents

            stage_documents(host, pack, mode, plan, stage)
        if "memory-spaces" in chosen:
            from .stagespaces import stage_spaces

            stage_spaces(host, pack, mode, plan, stage)
        if mode == "replace":
            # the backup of what is about to be replaced: made now (every lock held) or the import is refused;
            # swapped in last, with the components, so it exists exactly when the new root does
            plan.receipt["backup"], backup = backups.save(host, chosen, plan.backup_user_profile, stage,
                                                          dry_run=dry_run)
            if backup is not None:
                plan.pairs.append((backup.staged, backup.path))
        else:
            plan.receipt["backup"] = None
        if dry_run:
            return plan
        if not plan.pairs:  # a merge that brings nothing new: nothing is swapped, no file is rewritten
            clean([str(d) for d in plan.dirs])
            return plan
        for held, staged in plan.links:
            if held.exists():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(staged)
                os.link(held, staged)
        step("staged")
    except BaseException:
        clean([str(d) for d in plan.dirs])
        raise
    finally:
        if dry_run:
            clean([str(d) for d in plan.dirs])
    try:
        swap(root, plan)
    except BaseException:
        # rolled back (or never decided): the backup went back into the stage; the folders made for it go
        # too. A journal left behind is rolled forward by the next operation, the backup with it
        if backup is not None and not os.path.lexists(root / JOURNAL):
            backups.discard(backup)
        raise
    if backup is not None:
        backups.prune(backup.path.parent)
    return plan


def release_sources(host: "Host") -> None:
    """Close and forget the host's Documents and Memory Spaces Sources (their open files and caches
    belong to the directories a swap replaces); they are rebuilt on next use."""
    for name in ("documents", "spaces"):
        source = host.__dict__.pop(name, None)
        if source is not None:
            with contextlib.suppress(Exception):
                source.close()


def inspect_pack(data: bytes) -> dict[str, Any]:
    """What a pack holds, validated (:func:`.validate.read_pack`), without touching any root:
    :meth:`.validate.Pack.describe`."""
    return read_pack(data).describe()
