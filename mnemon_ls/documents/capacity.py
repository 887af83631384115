"""Active capacity of a Documents store: usage, the plan of a create / update / restore, the error.

The pure plan (least-recently-accessed candidates, reference 5.6) is :func:`~.model.plan_capacity`; this
module applies it to the current index view with the effective access times (:mod:`.access`) and turns
a plan that does not fit into :class:`~mnemon_ls.errors.DocumentCapacityError` (``document-capacity``
with ``data.projected``, ``limit``, ``used`` and ``candidates``). Cold archival (issue 9) builds on
:meth:`Capacity.capacity_plan`.

:class:`Capacity` is a part of :class:`~.store.DocumentStore` (a mixin).
"""

from __future__ import annotations

from typing import Any

from . import model
from .errors import DocumentCapacityError
from .index import IndexView
from .views import Usage


class Capacity:
    """Usage and capacity plans (module doc); a part of ``DocumentStore``."""

    active_limit_bytes: int

    def _usage(self, view: IndexView) -> Usage:
        active = [r for r in view.records if r.status == "active"]
        return Usage(sum(r.size_bytes for r in active), len(active), len(view.records) - len(active),
                     self.active_limit_bytes)

    def _plan(self, view: IndexView, size: int, replacing: str | None = None) -> model.CapacityPlan:
        plan = model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                   always_candidates=False)
        if plan.fits:
            return plan
        return model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                   last_accessed=self._last_accessed(view))

    def _capacity_error(self, plan: model.CapacityPlan, view: IndexView, what: str) -> DocumentCapacityError:
        later = self._last_accessed(view)
        return DocumentCapacityError(
            f"{what} would make the active documents {plan.projected} bytes (limit {plan.limit}); archive the "
            "least recently accessed active documents (listed in data.candidates) and retry",
            projected=plan.projected, limit=plan.limit, used=plan.used,
            candidates=[model.candidate_summary(r, later) for r in plan.candidates],
        )

    def capacity_plan(self, *, document_id: str | None = None, title: Any = None, content: Any = None,
                      description: Any = None, source_paths: Any = None, session_ids: Any = None) -> model.CapacityPlan:
        """The capacity plan of a create (no ``document_id``) or an update (reference 5.6), without writing:
        ``projected``, ``limit``, ``used``, ``fits`` and the LRU ``candidates``. For cold archival."""
        with self._mutex:
            view = self._read_view(force=True)
            if view.problem:
                raise self._unreadable(view)
            if document_id is None:
                request = self.validate_create(title, content, description=description, source_paths=source_paths,
                                               session_ids=session_ids)
                record = model.new_record(request, "00000000-0000-4000-8000-000000000000", self._now())
                size, replacing = record.size_bytes, None
            else:
                update = self.validate_update(document_id, title=title, description=description, content=content,
                                              source_paths=source_paths, session_ids=session_ids)
                current = self._require(view, update.id)
                self._check_status(current, "active", "update")
                body = update.content if update.content is not None else self._committed_body(current)
                size, replacing = model.updated_record(current, update, body, self._now()).size_bytes, current.id
            return model.plan_capacity(view.records, size, self.active_limit_bytes, replacing=replacing,
                                       last_accessed=self._last_accessed(view))
