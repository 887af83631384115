"""Active capacity of a Documents store: usage, the plan of a create / update / restore, the error.

The pure plan (least-recently-accessed candidates, reference 5.6) is :func:`~.changes.plan_capacity`; this
module applies it to the current index view with the effective access times (:mod:`.access`) and turns
a plan that does not fit into :class:`~mnemon_ls.errors.DocumentCapacityError` (``document-capacity``
with ``data.projected``, ``limit``, ``used`` and ``candidates``). Cold archival (issue 9) builds on
:meth:`Capacity.plan`.

:class:`Capacity` is a part a :class:`~.store.DocumentStore` owns (``store.capacity``); it reaches the store
only through :class:`CapacityStore`: the active limit, the index, the managed files and the field rules.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from . import changes
from .errors import DocumentCapacityError
from .files import ManagedFiles
from .index import IndexFile, IndexView, check_status
from .views import Usage


class CapacityStore(Protocol):
    """What capacity uses of its :class:`~.store.DocumentStore`: the active limit (UTF-8 bytes), the mutex,
    the index and managed files, the clock and the field rules (see the store's members of these names)."""

    active_limit_bytes: int
    mutex: AbstractContextManager[Any]
    index: IndexFile
    files: ManagedFiles

    def now(self) -> str: ...

    def validate_create(self, title: Any, content: Any, *, description: Any = None, source_paths: Any = None,
                        session_ids: Any = None) -> changes.CreateRequest: ...

    def validate_update(self, document_id: Any, *, title: Any = None, description: Any = None, content: Any = None,
                        source_paths: Any = None, session_ids: Any = None,
                        document_revision: Any = None) -> changes.UpdateRequest: ...


class Capacity:
    """Usage and capacity plans (module doc); ``store.capacity`` of a ``DocumentStore``."""

    def __init__(self, store: CapacityStore) -> None:
        self.store = store

    def usage(self, view: IndexView) -> Usage:
        """Active bytes and counts of ``view`` against the store's ``active_limit_bytes``."""
        active = [r for r in view.records if r.status == "active"]
        return Usage(sum(r.size_bytes for r in active), len(active), len(view.records) - len(active),
                     self.store.active_limit_bytes)

    def fit(self, view: IndexView, size: int, replacing: str | None = None) -> changes.CapacityPlan:
        """The plan of adding an active document of ``size`` bytes (its rendered file) to ``view``, in
        place of the active document ``replacing`` (an update) if given. A plan that fits has no
        candidates; one that does not lists the least recently accessed (effective access times)."""
        limit = self.store.active_limit_bytes
        plan = changes.plan_capacity(view.records, size, limit, replacing=replacing, always_candidates=False)
        if plan.fits:
            return plan
        return changes.plan_capacity(view.records, size, limit, replacing=replacing,
                                   last_accessed=self.store.index.last_accessed(view))

    def refusal(self, plan: changes.CapacityPlan, view: IndexView, what: str) -> DocumentCapacityError:
        """The :class:`~mnemon_ls.errors.DocumentCapacityError` of a ``plan`` that does not fit (``data.projected``,
        ``limit``, ``used`` in bytes and the LRU ``candidates``); ``what`` names the change in the message
        (e.g. ``"creating x.md (1200 bytes)"``)."""
        later = self.store.index.last_accessed(view)
        return DocumentCapacityError(
            f"{what} would make the active documents {plan.projected} bytes (limit {plan.limit}); archive the "
            "least recently accessed active documents (listed in data.candidates) and retry",
            projected=plan.projected, limit=plan.limit, used=plan.used,
            candidates=[changes.candidate_summary(r, later) for r in plan.candidates],
        )

    def plan(self, *, document_id: str | None = None, title: Any = None, content: Any = None,
             description: Any = None, source_paths: Any = None, session_ids: Any = None) -> changes.CapacityPlan:
        """The capacity plan of a create (no ``document_id``) or an update (reference 5.6), without writing:
        ``projected``, ``limit``, ``used``, ``fits`` and the LRU ``candidates``. For cold archival.

        Raises :class:`~mnemon_ls.errors.UnreadableStore` (damaged index), the field rules'
        :class:`~mnemon_ls.errors.InvalidInput`, and for an update :class:`~mnemon_ls.errors.NotFound`,
        :class:`~mnemon_ls.errors.DocumentStatusError` (archived) and the errors of reading its body."""
        store = self.store
        with store.mutex:
            view = store.index.view(force=True)
            if view.problem:
                raise store.index.unreadable(view)
            if document_id is None:
                request = store.validate_create(title, content, description=description, source_paths=source_paths,
                                                session_ids=session_ids)
                record = changes.new_record(request, "00000000-0000-4000-8000-000000000000", store.now())
                size, replacing = record.size_bytes, None
            else:
                update = store.validate_update(document_id, title=title, description=description, content=content,
                                               source_paths=source_paths, session_ids=session_ids)
                current = view.require(update.id)
                check_status(current, "active", "update")
                body = update.content if update.content is not None else store.files.committed_body(current)
                size, replacing = changes.updated_record(current, update, body, store.now()).size_bytes, current.id
            return changes.plan_capacity(view.records, size, store.active_limit_bytes, replacing=replacing,
                                       last_accessed=store.index.last_accessed(view))
