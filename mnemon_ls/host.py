"""Per-workspace state: settings, storage root, the Sources and the branch; the one place that wires them.

The CLI builds one :class:`WorkspaceHost` per command; the language server keeps one per workspace
folder (:class:`mnemon_ls.folders.HostRegistry`). Nothing here imports pygls.

Importing this module stays cheap (the language server imports it before answering ``initialize``):
settings (pydantic), roots and the Sources are imported where a host is built, not at module level.
Add new imports of those inside functions, or under ``TYPE_CHECKING`` for annotations.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .errors import (InvalidInput, StorageDenied, StorageError, StorageFull, StorageReadOnly,
                     echo_repr, storage_error)

if TYPE_CHECKING:
    from . import gitstate
    from .citations.store import Citations
    from .documents import DocumentStore
    from .records import RecordsSource
    from .roots import RootResolution
    from .runtime.snapshot import WakeSnapshot
    from .runtime.store import Clock, RepairReport, RuntimeStore
    from .settings import Settings
    from .spaces import SpacesService


class WorkspaceHost:
    """One workspace (a directory, usually a git working tree) and its memory.

    ``workspace`` must be an existing directory, or ``None`` for the ``global``/``custom`` scopes
    without a workspace. Raises :class:`~mnemon_ls.errors.NotFound` / :class:`InvalidInput` from
    :func:`mnemon_ls.roots.resolve_root`. Constructing a host never writes to disk. ``one_shot``: the host of
    one command in a process of its own (the command line, the assistants' hooks): the wake's Memory Spaces
    cover then counts items without building the spaces service (:func:`mnemon_ls.spaces.cover.cover`), which
    a long-lived host keeps for its later requests.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        settings: Settings,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        one_shot: bool = False,
    ) -> None:
        from .roots import global_env, resolve_root
        from .roots_gitignore import arm_root_creation
        from .runtime.source import RuntimeSource
        from .runtime.store import _utc_now

        clock = clock or _utc_now
        self.settings = settings
        self.resolution: RootResolution = resolve_root(workspace, settings, env)
        arm_root_creation(self.resolution)  # in memory: the first write that creates a root ignores it in git
        self._confine()
        # The branch comes from the workspace as opened (a linked worktree has its own HEAD), even when
        # its storage root is shared with the main working tree.
        self.workspace: Path | None = (
            self.resolution.shared_from or self.resolution.workspace if workspace is not None else None
        )
        self._clock = clock
        self._env = env
        #: ``env`` as the global scope's places read it (:func:`mnemon_ls.roots.global_env`): with
        #: ``--scope global --data-dir X`` the pack exports and the user and session records live under X.
        self.global_env = global_env(settings, env)
        self.one_shot = one_shot
        self.runtime = RuntimeSource(self.resolution, settings, clock=clock)
        self._finish_pack_swap()

    def _swap_roots(self) -> list[Path]:
        """This host's storage root and the user root (the global root, whose USER.md every workspace
        shares): the roots a pack import in any workspace may have left a swap journal in."""
        return list(dict.fromkeys([self.resolution.root, self.resolution.user_root]))

    def _finish_pack_swap(self) -> None:
        """Finish a pack import a killed process left decided (``.dsh-pack-swap.json`` in this root, or its
        copy in the user root when another workspace's import was replacing the shared USER.md there), so no
        Source ever reads or writes a half-swapped root (:func:`mnemon_ls.packs.recover`). Writes only then."""
        for root, journal in self._swap_journals:
            if os.path.lexists(journal):
                from . import nowait
                from .packs import recover

                nowait.check(journal)  # recovery writes: not on an event loop (mnemon_ls.nowait)

                recover(root)

    @functools.cached_property
    def _swap_journals(self) -> tuple[tuple[Path, str], ...]:
        """``(root, its swap journal's path)`` of each :meth:`_swap_roots` root (built once: every long-lived
        host's operation looks for them)."""
        return tuple((root, os.path.join(root, ".dsh-pack-swap.json")) for root in self._swap_roots())

    def hold_pack_gate(self) -> None:
        """Hold the pack gate of this host's root(s) shared until :meth:`close` (:mod:`mnemon_ls.packgate`):
        a pack import in another process waits for this host's work, and this host never sees a root a
        swap has half replaced. For a host that lives as long as one command (the CLI); a long-lived one
        uses :meth:`pack_gate` per operation. Finishes a swap a killed import left first. Raises
        :class:`~mnemon_ls.errors.StoreBusy` when an import keeps the gate past the lock timeout."""
        import contextlib

        from . import packgate as gate

        roots = [self.resolution.root, self.resolution.user_root]
        while True:
            stack = contextlib.ExitStack()
            stack.enter_context(gate.hold(roots, exclusive=False))
            if not any(os.path.lexists(r / ".dsh-pack-swap.json") for r in self._swap_roots()):
                break
            stack.close()  # an import was killed after deciding while we waited: finish it, then hold again
            self._finish_pack_swap()
        self.__dict__.setdefault("_gates", []).append(stack)

    def pack_gate(self) -> "Any":
        """A context manager holding the pack gate of this host's root(s) shared for one operation
        (:mod:`mnemon_ls.packgate`), after finishing a swap a killed import left (:meth:`_finish_pack_swap`)."""
        from . import packgate as gate

        self._finish_pack_swap()
        return gate.hold([self.resolution.root, self.resolution.user_root], exclusive=False)

    def export_pack(self, scope: str | None = None, *, include_user_profile: bool = False) -> "Any":
        """Export this root as a Mnemon Pack (:func:`mnemon_ls.packs.export_pack`; ``scope`` full, runtime,
        documents or memory-spaces; USER.md entries only with ``include_user_profile``). Returns an
        :class:`~mnemon_ls.packs.ExportedPack`."""
        from .packs import export_pack, validate_scope

        return export_pack(self, validate_scope(scope), include_user_profile=include_user_profile)

    def inspect_pack(self, data: bytes) -> dict[str, "Any"]:
        """Validate pack bytes and say what they hold (:func:`mnemon_ls.packs.inspect_pack`); never writes."""
        from .packs import inspect_pack

        return inspect_pack(data)

    def import_pack(self, data: bytes, mode: str | None = None, components: "Any" = None, *,
                    dry_run: "Any" = False, replace_user_profile: "Any" = False) -> dict[str, "Any"]:
        """Import pack bytes into this root (:func:`mnemon_ls.packs.import_pack`: ``mode`` merge or replace,
        ``components`` a subset of the pack's, ``dry_run`` writes nothing and says what would happen,
        ``replace_user_profile`` lets replace mode replace a shared USER.md); the receipt, or an error that
        changed nothing."""
        from .packs import import_pack

        return import_pack(self, data, mode=mode, components=components, dry_run=dry_run,
                           replace_user_profile=replace_user_profile)

    @property
    def root(self) -> Path:
        """The selected storage root."""
        return self.resolution.root

    @functools.cached_property
    def _root_str(self) -> str:
        """:attr:`root` as a string (the wake joins paths under it every turn; the resolution never changes)."""
        return os.fspath(self.resolution.root)

    def _confine(self) -> None:
        """Register the roots with :func:`mnemon_ls.fsio.confine` from their trusted anchors, so that no
        read of a store file and no write follows a link a repository could commit (invariant 10)."""
        from .roots_safety import confine_roots

        confine_roots(self.resolution)

    def check_storage(self) -> None:
        """Raise :class:`~mnemon_ls.errors.StorageUnsafe` (naming the link) when the storage root, a
        directory on the way to it that a repository controls, or anything in its layout is a symbolic
        link (:func:`mnemon_ls.roots_safety.storage_root_problems`; read-only). Documents and Memory Spaces
        run it before first use; Runtime reads and every write are checked file by file in :mod:`.fsio`."""
        from .roots_safety import check_storage_root

        check_storage_root(self.resolution)

    @functools.cached_property
    def documents(self) -> "DocumentStore":
        """The Documents Source of this root (built on first use; constructing it writes nothing).

        ``sourcePaths`` resolve against the workspace as opened (a linked worktree's own tree).
        """
        from .documents import DocumentStore

        self.check_storage()
        limits = self.settings.documents
        store = DocumentStore(self.root, self.workspace, max_body_bytes=limits.max_body_bytes,
                              active_limit_bytes=limits.active_limit_bytes, clock=self._clock,
                              secrets=self.settings.secrets)
        store.search.semantic_source = lambda: self.semantic  # hybrid document search (mnemon_ls.semantic.documents)
        return store

    @functools.cached_property
    def spaces(self) -> "SpacesService":
        """The Memory Spaces Source of this root (built on first use; constructing it writes nothing)."""
        from .spaces import RecallQuality, SpacesService
        from .spaces.policy import DEFAULT_POLICY

        self.check_storage()
        from .semantic import off_reason

        policy = self.settings.recall_policy
        service = SpacesService(self.root, clock=self._clock, secrets=self.settings.secrets,
                                quality=RecallQuality.from_dict({"policy": DEFAULT_POLICY
                                                                 if policy == "auto" else policy}),
                                quality_auto=policy == "auto",
                                provider_timeout=self.settings.provider_timeout_ms / 1000,
                                semantic=self.semantic, background_access=not self.one_shot,
                                access_gate=self.pack_gate)
        service.semantic_off_reason = off_reason(self.settings.semantic, self._env)
        return service

    @functools.cached_property
    def semantic(self) -> "Any":
        """The process's semantic engine for the ``semantic`` settings (:mod:`mnemon_ls.semantic`), or
        ``None`` when ``semantic.enabled`` is false."""
        from .semantic import engine_for_settings

        return engine_for_settings(self.settings.semantic, self._env)

    @functools.cached_property
    def citations(self) -> "Citations":
        """The citations of this workspace's memory (:mod:`mnemon_ls.citations`): side files under the root's
        ``state/citations/``, freshness against the workspace as opened (a linked worktree's own tree).
        Constructing it writes nothing."""
        from .citations.store import Citations

        return Citations(self.root, self.workspace)

    @functools.cached_property
    def records(self) -> "RecordsSource":
        """The Records Source of this workspace without a session (seed 002: project, shared-project and
        user scopes; the session scope needs :meth:`open_records`). Constructing it writes nothing."""
        return self.open_records(None)

    def open_records(self, session_id: str | None) -> "RecordsSource":
        """A Records Source for ``session_id`` (the language server: one per server lifetime and folder)."""
        from .records import RecordsSource

        return RecordsSource(self.workspace, session_id=session_id, env=self.global_env, secrets=self.settings.secrets)

    def recall(self, query: str, **options: "Any") -> "Any":
        """Federated recall with this workspace's branch scope applied (``branchRecall``,
        ``detachedHeadPolicy``, the probed branch). ``options`` go to :meth:`SpacesService.recall`."""
        return self.spaces.recall(query, branch=self.branch_state().branch,
                                  branch_recall=self.settings.branch_recall,
                                  detached_head_policy=self.settings.detached_head_policy, **options)

    def flush(self) -> None:
        """Write batched soft state (document access times, space access counters) now.

        Best effort on a full, read-only or denied disk: the soft state stays pending and a warning is
        logged (the read that produced it already succeeded); other errors propagate."""
        if "documents" in self.__dict__:
            _soft_state(self.documents.flush_access)
        if "spaces" in self.__dict__:
            _soft_state(self.spaces.flush_access)

    def close(self) -> None:
        """Flush soft state (document access times, space access counters) and release resources;
        safe to call twice. A full or read-only disk loses only the pending soft state (logged)."""
        if "documents" in self.__dict__:
            _soft_state(self.documents.close)
        if "spaces" in self.__dict__:
            _soft_state(self.spaces.close)
        self.release_pack_gate()

    def release_pack_gate(self) -> None:
        """Release what :meth:`hold_pack_gate` holds (safe to call twice)."""
        for stack in self.__dict__.pop("_gates", ()):
            stack.close()

    def branch_state(self) -> "gitstate.BranchState":
        """Probe the workspace's branch now (pygit2; never writes)."""
        from . import gitstate  # lazy: pygit2 costs ~40 ms of import and most commands never probe

        return gitstate.probe_branch(self.workspace)

    def wake(
        self, branch: str | None = None, budget_chars: int | None = None, *,
        probed: "gitstate.BranchState | None" = None, surface: str = "lsp",
    ) -> tuple[WakeSnapshot, list[tuple[RuntimeStore, RepairReport]]]:
        """Repair projections and render the wake snapshot.

        ``branch`` overrides the probed branch (validated like stored branch names; raises
        :class:`InvalidInput` naming ``branch``). ``probed`` is a probe the caller already made (the
        server announces it), so the snapshot renders exactly that branch without probing again.
        ``budget_chars`` overrides ``wakeBudgetChars`` (1024..4194304 characters). ``surface`` is who reads
        it (``tool``: an MCP or language-model tool client, ``lsp``, ``cli``): the routes it names
        (:data:`mnemon_ls.guidance.RECALL_HINTS`). The header carries the guidance line and the view
        revision of the whole text, covers included.
        """
        from .guidance import WAKE_GUIDANCE_LINE, recall_hint

        if budget_chars is not None and (isinstance(budget_chars, bool) or not isinstance(budget_chars, int)
                                         or not 1024 <= budget_chars <= 4_194_304):
            raise InvalidInput("budget", "must be an integer in 1024..4194304 characters (got "
                                         f"{echo_repr(budget_chars)})")
        if branch is not None:
            from .runtime.model import branch_name_problem

            name = branch.strip()
            problem = branch_name_problem(name)
            if problem:
                raise InvalidInput("branch", f"{problem} (got {echo_repr(branch)})")
            reason: str | None = "given"
        else:
            state = probed if probed is not None else self.branch_state()
            name, reason = state.branch, state.reason
        budget = budget_chars or self.settings.wake_budget_chars
        notices: list[str] = []
        share = budget // 20  # what each cover may take: Runtime memory, the wake's first tier, keeps the rest
        # Below the default budget the covers are first rendered at the default budget's share, and kept when the
        # whole snapshot still fits and omits no entry (a budget at or above a snapshot's size prints all of it);
        # else they are rendered again, cut to the share.
        covers = self._cover_texts(max(share, DEFAULT_COVER_CHARS), notices, recall_hint(surface))
        try:
            repairs = self.runtime.repair()
        except StorageError as exc:
            if not _best_effort(exc):
                raise
            # A wake is a read: on a full or read-only disk it renders from memories.json all the same.
            repairs = []
            notices.append(f"USER.md/MEMORY.md could not be rebuilt, the snapshot is read from memories.json: "
                           f"{exc.message}")
        from .maintenance.lineage import count_archived

        try:
            archived = count_archived(self.runtime.memory_store.root)
        except StorageError as exc:  # a wake is a read: it renders without the count
            archived = (0, 0)
            notices.append(f"the archive lineage could not be read: {exc.message}")
        marks = self._wake_marks()

        def render(covers: list[str]) -> WakeSnapshot:
            used = sum(len(text) + 2 for text in covers)
            return self.runtime.wake(name, reason, budget_chars=budget - used, repair=False, notices=notices,
                                     archived=archived, guidance=WAKE_GUIDANCE_LINE, covers=covers,
                                     repaired=repairs, annotate=marks)[0]

        if share < DEFAULT_COVER_CHARS:
            if sum(len(text) + 2 for text in covers) < budget:
                whole = render(covers)
                if whole.omitted == 0 and whole.chars <= budget:
                    return whole, repairs
            covers = self._cover_texts(share, [], recall_hint(surface))  # its notices are those said above
        return render(covers), repairs

    def now(self) -> "Any":
        """The current time (a timezone-aware UTC datetime) by this host's clock."""
        return self._clock()

    def _wake_marks(self) -> "Any":
        """The wake's citation and review marks (:func:`mnemon_ls.citations.wakemarks.annotator`); no citation
        marks without a workspace (nothing to check the citations against: every one would read ``unknown``)."""
        from .citations.wakemarks import annotator

        return annotator(self.citations if self.workspace is not None else None, self.settings.review_after_days,
                         self.root)

    def mutate_runtime(self, request: "Any", routes: "Any" = None) -> "Any":
        """The one Runtime mutation every surface calls (CLI, language server, MCP): a validated
        :class:`~mnemon_ls.runtime.ops.MutationRequest` -> :class:`~mnemon_ls.runtime.store.Receipt`.
        A MEMORY.md mutation over capacity archives the overflow first when ``runtimeMemory.maintenance``
        is ``archive`` (:func:`mnemon_ls.maintenance.mutate_runtime`; the receipt's ``maintenance`` says
        what went where). ``routes`` are explicit routes ``[{sourceIndexes, spaceId}]``. Raises the
        Runtime errors, :class:`~mnemon_ls.errors.MaintenanceFailed`, or :class:`InvalidInput` naming a
        route field; none changes hot memory."""
        from .maintenance import mutate_runtime

        def spaces() -> "SpacesService | None":
            return self.spaces if (self.root / "data").is_dir() else None

        return mutate_runtime(self.runtime, spaces, request, routes=routes,
                              policy=self.settings.runtime_memory.maintenance, clock=self._clock)

    def current_branch(self, field: str = "scopeToBranch") -> str:
        """The checked-out branch for a branch-scoped write; raises :class:`InvalidInput` naming ``field``
        when no branch can be known (detached HEAD, not a repository)."""
        state = self.branch_state()
        if state.branch is None:
            raise InvalidInput(field, f"no branch is checked out ({state.reason})")
        return state.branch

    def status(self, branch: "gitstate.BranchState | None" = None) -> dict[str, "Any"]:
        """This workspace's status: ``{path, root, userRoot, scope, branch, branchReason, detached, entries:
        {user, memory}, storedEntries: {user, memory}, hiddenEntries, usage: {user|memory: {used, limit}}
        (UTF-8 bytes), problems, documents}``.

        ``entries`` counts what the wake snapshot shows on ``branch`` (the same visibility rule and
        ``detachedHeadPolicy``), so the two agree; ``storedEntries`` counts the whole store (as the byte
        usage does) and ``hiddenEntries`` the branch-scoped entries the branch does not see.

        ``documents`` is ``{active, archived, activeBytes, limitBytes, problem}`` or ``None`` before the
        Documents Source was first used. ``branch`` is a probe the caller already made (else probes now).
        """
        state = branch if branch is not None else self.branch_state()
        limits = self.settings.runtime_memory
        try:
            effective = self.runtime.read()
            stored = {"user": len(effective.user), "memory": len(effective.memory)}
            show_all = state.branch is None and self.settings.detached_head_policy == "show"
            visible = sum(1 for e in effective.memory if show_all or e.visible_on(state.branch))
            entries = {"user": stored["user"], "memory": visible}
            used, problems = effective.used, list(effective.all_problems)
            documents = None
            if (self.root / "documents" / "index.json").exists():
                index = self.documents.read()
                active = [r for r in index.records if r.status == "active"]
                documents = {"active": len(active), "archived": len(index.records) - len(active),
                             "activeBytes": sum(r.size_bytes for r in active),
                             "limitBytes": self.settings.documents.active_limit_bytes, "problem": index.problem}
        except StorageError as exc:  # a linked or unreadable root: status still answers, with why
            entries, used, problems, documents = {"user": 0, "memory": 0}, {"user": 0, "memory": 0}, [exc.message], None
            stored = dict(entries)
        return {
            "path": str(self.workspace) if self.workspace else None, "root": str(self.root),
            "userRoot": str(self.resolution.user_root), "scope": self.settings.storage_scope,
            "branch": state.branch, "branchReason": state.reason, "detached": state.detached,
            "entries": entries, "storedEntries": stored, "hiddenEntries": stored["memory"] - entries["memory"],
            "usage": {t: {"used": used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
            "problems": problems,
            "documents": documents,
        }

    def stored_secrets(self, apply: bool = False) -> dict[str, "Any"]:
        """Values under this workspace's roots that look like credentials (:mod:`mnemon_ls.redact`), for
        ``doctor`` and ``mnemon-ls redact``: ``{"findings": [{"location", "kind", "position"}], "applied":
        None | {"runtime": [...], "documents": {...}, "spaces": {...}, "records": {...}}}``; never a value. With
        ``apply`` every Source rewrites them durably through its own commit path first (the modules
        ``runtime/redaction.py``, ``documents/redaction.py``, ``spaces/redaction.py``, ``records/redaction.py``:
        the workspace memory record files, which live outside the root) and ``findings`` is what is left (names no
        placeholder can replace, such as branch names; a record file ``applied.records.skipped`` names)."""
        from .documents import redaction as documents_redaction
        from .records import redaction as records_redaction
        from .runtime import redaction as runtime_redaction
        from .spaces import redaction as spaces_redaction

        applied = None
        has_documents, has_spaces = (self.root / "documents").is_dir(), (self.root / "data").is_dir()
        if apply:
            applied = {"runtime": [runtime_redaction.apply(store) for store in self.runtime.stores],
                       "documents": documents_redaction.apply(self.documents) if has_documents else None,
                       "spaces": spaces_redaction.apply(self.spaces) if has_spaces else None,
                       "records": records_redaction.apply(self.records)}
        findings = [f for store in self.runtime.stores for f in runtime_redaction.scan(store)]
        if has_documents:
            findings.extend(documents_redaction.scan(self.documents))
        if has_spaces:
            findings.extend(spaces_redaction.scan(self.spaces))
        findings.extend(records_redaction.scan(self.records))
        return {"findings": findings, "applied": applied}

    def _cover_texts(self, budget_chars: int, notices: list[str], recall: str = "mnemon/recall") -> list[str]:
        """The bounded covers of the other tiers that exist in this root (Documents), each within
        ``budget_chars``; a tier that was never used adds nothing. A cover that fails because the disk
        is full, read-only or denied (it may refresh a derived index) is left out and a notice appended
        to ``notices``; :class:`~mnemon_ls.errors.StorageUnsafe` and other errors propagate."""
        covers = []
        root = self._root_str
        tiers = (("Documents", os.path.exists, os.path.join(root, "documents", "index.json"),
                  lambda: self._documents_cover(budget_chars)),
                 ("Memory Spaces", os.path.isdir, os.path.join(root, "data"),
                  lambda: self._spaces_cover(budget_chars, recall).text))
        for name, present, path, render in tiers:
            if not present(path):
                continue
            try:
                text = render()
            except Exception as exc:
                mapped = storage_error(exc)
                if mapped is None or not _best_effort(mapped):
                    raise
                notices.append(f"{name} are not shown: {mapped.message}")
                continue
            if text:
                covers.append(text.strip("\n"))
        pending = self.pending_proposals()
        if pending:
            covers.append(f"Workspace memory records: {pending} proposal{'s wait' if pending != 1 else ' waits'} for a "
                          "person to verify or reject (mnemon-ls records list --proposals)."[:budget_chars])
        return covers

    def _documents_cover(self, budget_chars: int) -> str:
        """The wake's Documents block: for a ``one_shot`` host whose store is not built yet, the one kept in
        ``documents/.cover.json`` when ``documents/`` has not changed since it was rendered
        (:mod:`mnemon_ls.documents.covercache`: no Documents Source is loaded), else the store's (which keeps it)."""
        if "documents" not in self.__dict__ and self.one_shot:
            from .documents.covercache import cached_text

            self.check_storage()
            text = cached_text(self.root / "documents", budget_chars, self.settings.documents.active_limit_bytes,
                               self.settings.secrets)
            if text is not None:
                return text
        return self.documents.cover(budget_chars).text

    def _spaces_cover(self, budget_chars: int, recall: str) -> "Any":
        """The wake's Memory Spaces block: the service's (:meth:`SpacesService.cover`) once it is built or for a
        long-lived host, else read without it (:func:`mnemon_ls.spaces.cover.cover`, a ``one_shot`` host)."""
        if "spaces" in self.__dict__ or not self.one_shot:
            return self.spaces.cover(budget_chars, recall)
        from .spaces.cover import cover

        self.check_storage()
        return cover(self.root, budget_chars, recall, clock=self._clock)

    def pending_proposals(self) -> int:
        """Assistant proposals waiting for review in this workspace's record scopes (0 when none, or
        when the records cannot be read: the wake never fails because of them)."""
        from .errors import MnemonError
        from .records import paths

        try:
            if "records" not in self.__dict__ and not paths.any_file(self.workspace, env=self.global_env):
                return 0  # no records file: the records source (and its pydantic model) is not needed
            return self.records.pending_proposals()
        except (MnemonError, OSError):
            return 0


#: What each cover of the wake (Documents, Memory Spaces, records) may take at the default budget
#: (``wakeBudgetChars`` 65,536 / 20), characters: a smaller budget keeps it when the whole snapshot still fits.
DEFAULT_COVER_CHARS = 65_536 // 20


def _best_effort(error: StorageError) -> bool:
    """Whether a read may go on without the write that failed: the disk is full, read-only or denied
    (never for :class:`~mnemon_ls.errors.StorageUnsafe` or an unreadable store)."""
    return isinstance(error, (StorageFull, StorageReadOnly, StorageDenied))


def _soft_state(write: "Any") -> None:
    """Run ``write`` (a flush of access times/counters); log instead of raising when the disk is full,
    read-only or denied."""
    try:
        write()
    except Exception as exc:
        mapped = storage_error(exc)
        if mapped is None or not _best_effort(mapped):
            raise
        import logging

        logging.getLogger("mnemon_ls").warning("mnemon-ls: access times not saved: %s", mapped.message)


def default_workspace(env: Mapping[str, str] | None = None) -> Path | None:
    """The CLI's workspace when ``--workspace`` is not given: the nearest directory from the current one
    upward holding ``.git`` or ``.mnemon`` (:func:`mnemon_ls.roots.find_workspace`), or ``None`` (no
    workspace: the global root is used)."""
    from .roots import find_workspace

    return find_workspace(os.getcwd(), env)
