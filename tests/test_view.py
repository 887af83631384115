"""Turn Views (``mnemon_ls/view.py``): the registry the language server's session operations use from their
worker threads (``session.turnBegin``, ``session.turnEnd``, ``workspace.wake`` with ``viewId``)."""

from __future__ import annotations

import sys
import threading

import pytest

from mnemon_ls.errors import NotFound
from mnemon_ls.view import ViewRegistry


def test_views_begun_ended_and_read_from_many_threads_stay_consistent():
    views = ViewRegistry(limit=16)
    failures: list[BaseException] = []
    made: list[str] = []
    start = threading.Barrier(8)

    def turns(n: int) -> None:
        try:
            start.wait()
            for i in range(400):
                view = views.begin(f"file:///w{n}", {"text": f"{n}-{i}"}, {"runtime": "r"})
                made.append(view.view_id)
                try:
                    child = views.begin_child(view.view_id)
                    assert child.wake == {"text": f"{n}-{i}"} and child.parent_view_id == view.view_id
                    assert views.end(view.view_id).ended
                    assert views.get(child.view_id).wake == view.wake
                except NotFound:  # evicted by the other threads' turns in between: allowed, never corrupt
                    pass
                assert len(views._views) <= 16
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=turns, args=(n,)) for n in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can: interleave every step
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    assert len(made) == len(set(made)) == 8 * 400
    assert len(views._views) == 16


def test_an_unknown_view_names_the_field():
    views = ViewRegistry()
    with pytest.raises(NotFound, match="parentViewId: no view 'x'"):
        views.begin_child("x")
    with pytest.raises(NotFound, match="viewId: no view 'x'"):
        views.end("x")
