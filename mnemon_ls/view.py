"""Per-turn Views: an immutable pin of what one assistant turn reads (DESIGN.md section 1).

A View is created by ``mnemon/turn/begin`` and pins the wake text and the Runtime revision for the whole
turn: writes during the turn change the store, not what the turn reads. A child turn created with
``parentViewId`` inherits its parent's pinned text and revision, even after the parent ended. Ended
Views are kept (bounded, oldest evicted first) so late children still resolve.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import NotFound, echo_repr

#: Most Views kept (live and ended); the oldest ended ones are evicted first.
MAX_VIEWS = 512


@dataclass(frozen=True, slots=True)
class View:
    """One pinned turn: ``view_id``, the ``workspace`` URI, the pinned ``wake`` (``WakeSnapshot.to_dict()``),
    ``revisions`` per Source (``{"runtime": sha256 hex}``), ``parent_view_id``, ``created_ms`` (epoch ms)
    and whether it has ``ended``."""

    view_id: str
    workspace: str
    wake: dict[str, Any]
    revisions: dict[str, str]
    parent_view_id: str | None = None
    created_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    ended: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{viewId, workspace, wake, revisions, parentViewId, ended}``."""
        return {"viewId": self.view_id, "workspace": self.workspace, "wake": self.wake,
                "revisions": self.revisions, "parentViewId": self.parent_view_id, "ended": self.ended}


class ViewRegistry:
    """Creates, reads and ends Views (one registry per server; safe from any thread: one lock, the session
    operations run in worker threads)."""

    def __init__(self, limit: int = MAX_VIEWS) -> None:
        self._views: OrderedDict[str, View] = OrderedDict()
        self._limit = limit
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def begin(self, workspace: str, wake: dict[str, Any], revisions: dict[str, str]) -> View:
        """Pin a new top-level View."""
        with self._lock:
            view = View(self._new_id(), workspace, wake, dict(revisions))
            self._store(view)
        return view

    def begin_child(self, parent_view_id: str) -> View:
        """A child View reading exactly its parent's pinned wake and revisions. Raises :class:`NotFound`."""
        with self._lock:
            parent = self._get(parent_view_id, "parentViewId")
            view = View(self._new_id(), parent.workspace, parent.wake, dict(parent.revisions), parent.view_id)
            self._store(view)
        return view

    def get(self, view_id: str, field_name: str = "viewId") -> View:
        """The View ``view_id`` (live or ended); raises :class:`NotFound` naming ``field_name``."""
        with self._lock:
            return self._get(view_id, field_name)

    def end(self, view_id: str) -> View:
        """Mark a View ended (idempotent); it stays readable for its children."""
        with self._lock:
            view = replace(self._get(view_id, "viewId"), ended=True)
            self._views[view_id] = view
        return view

    def _get(self, view_id: str, field_name: str) -> View:
        view = self._views.get(view_id) if isinstance(view_id, str) else None
        if view is None:
            raise NotFound(f"{field_name}: no view {echo_repr(view_id)} (unknown or evicted)", field=field_name)
        return view

    def _new_id(self) -> str:
        return f"view-{next(self._counter)}-{secrets.token_hex(4)}"

    def _store(self, view: View) -> None:
        """Make room first (the oldest ended View, else the oldest), then add ``view``: the registry never holds
        more than its limit, not even for a moment (a reader without the lock, such as ``len()``, sees at most
        the limit; adding first showed limit + 1 to a test reading from another thread)."""
        while self._views and len(self._views) >= self._limit:
            victim = next((k for k, v in self._views.items() if v.ended), None) or next(iter(self._views))
            del self._views[victim]
        self._views[view.view_id] = view
