"""A recall loads from ``mnemon.db`` only the items it sends (issue 27 item 5): the native provider's partial answer
(:mod:`mnemon_ls.spaces.providers.native_load`) is ordered on the side index, and the federated recall completes
the rows its policy selects. Watched through SQLite's own trace callback on the provider's connection (the
statements with their bound ids), and checked against the full load of :meth:`NativeProvider.search`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.providers.native import NativeProvider

from tests.conftest import FrozenClock

#: A statement that reads items' text from ``mnemon.db`` (the load of results; the expansion reads no content).
_LOAD = re.compile(r"SELECT id, content\b.* FROM insights .*\bid IN \(([^)]*)\)")


def loaded_ids(statements: list[str]) -> list[str]:
    """The ids every item-loading statement among ``statements`` names (a repeat counted again)."""
    out: list[str] = []
    for statement in statements:
        found = _LOAD.search(statement)
        if found:
            out += [part.strip().strip("'") for part in found.group(1).split(",")]
    return out


@pytest.fixture
def filled(root: Path, clock: FrozenClock) -> tuple[SpacesService, NativeProvider]:
    """One active native space of 60 items that all match ``retry`` (more than a recall's 30 candidates) with
    varied importance, times, tags and entities, plus some that do not."""
    service = SpacesService(root, clock=clock)
    service.create_space("Project", "retry facts", active=True)
    for n in range(60):
        clock.advance(hours=n % 7 + 1)
        service.remember(f"retry policy note {n}: backoff step {n % 5} for worker {n % 3}",
                         importance=n % 5 + 1, tags=[f"t{n % 4}"], entities=[f"Worker{n % 3}"])
    for n in range(6):  # causal edges to earlier retry notes: the smart recall's neighbours
        service.remember(f"retry storms happened because backoff step {n} was too short for worker {n % 3}",
                         importance=5)
    for n in range(10):
        service.remember(f"unrelated cache fact {n}")
    record = [r for r in service.state().all if r.active][0]
    provider = service.provider(record)
    yield service, provider
    service.close()


def test_recall_loads_the_rows_of_the_items_it_sends_only(filled: tuple[SpacesService, NativeProvider]) -> None:
    service, provider = filled
    service.recall("retry backoff")  # opens the store and the side index
    statements: list[str] = []
    vias: set[str] = set()
    provider._conn().set_trace_callback(statements.append)
    try:
        for query, limit in (("retry backoff", 10), ("retry worker", 3), ("backoff step", 1), ("retry", 50),
                             ("retry storms", 10)):
            statements.clear()
            found = service.recall(query, limit=limit)
            sent = [r["id"] for r in found.results]
            fetched = found.to_dict()["sources"][0]["stats"]["fetched"]
            assert sent and fetched > len(sent) or limit == 50  # candidates the policy did not send
            loaded = loaded_ids(statements)
            assert sorted(loaded) == sorted(sent), query  # each sent item once, no other one
            assert all(r["content"] and r["createdAt"] for r in found.results)
            vias.update(r["matchedVia"] for r in found.results)
        assert vias == {"keyword", "causal"}  # a neighbour of the expansion is loaded (and sent) too
    finally:
        provider._conn().set_trace_callback(None)


def test_a_partial_answer_completed_equals_the_full_load(filled: tuple[SpacesService, NativeProvider]) -> None:
    _service, provider = filled
    provider.track_access = False  # both reads see the same access counters

    def shown(items):
        return [(i.to_dict(), i.updated_at, i.accessed_at) for i in items]

    for query in ("retry backoff", "worker", "Worker1", "step 3 retry", "retry", "nothing-like-this", "cache",
                  "retry storms"):
        for mode in ("smart", "keyword"):
            for limit in (1, 5, 30, 50):
                full = provider.search(query, limit=limit, mode=mode)
                part = provider.search_partial(query, limit=limit, mode=mode)
                assert full.complete is None and part.complete is not None
                assert [(i.id, i.score, i.matched_via, i.importance) for i in part.items] == \
                       [(i.id, i.score, i.matched_via, i.importance) for i in full.items]
                assert all(i.content == "" for i in part.items)  # nothing read before it is completed
                assert shown(part.complete(part.items)) == shown(full.items), (query, mode, limit)
                assert (part.fetched, part.dropped, part.hint, part.notices) == \
                       (full.fetched, full.dropped, full.hint, full.notices)


def test_an_item_forgotten_before_it_is_completed_is_not_sent(filled: tuple[SpacesService, NativeProvider]) -> None:
    service, provider = filled
    part = provider.search_partial("retry backoff", limit=5, mode="keyword")
    gone = part.items[0].id
    service.forget(service.state().all[0].id, gone)
    done = part.complete(part.items)
    assert [i.id for i in done] == [i.id for i in part.items[1:]]
    assert all(i.content for i in done)


def two_spaces(root: Path, notes: int) -> tuple[SpacesService, str, str, NativeProvider]:
    """``(service, first, second, the second's provider)``: two active spaces of ``notes`` items matching
    ``retry backoff`` each, searched in that order by a recall (both stores and side indexes open)."""
    service = SpacesService(root)
    first = service.create_space("First", "retry facts", active=True).to_dict()["id"]
    second = service.create_space("Second", "more retry facts", active=True).to_dict()["id"]
    for space in (first, second):
        for n in range(notes):
            service.remember(f"retry backoff note {n} of {space}", space_id=space)
    assert [r.id for r in service.state().all if r.active] == [first, second]  # searched in this order
    later = service.provider({r.id: r for r in service.state().all}[second])
    service.recall("retry backoff")
    return service, first, second, later


def recall_while(service: SpacesService, searched: NativeProvider, root: Path, *command: str) -> dict:
    """``service.recall("retry backoff")`` during which, when ``searched``'s store is first read (after the
    spaces before it were searched, before any result is loaded), another process runs ``mnemon-ls <command>``
    on ``root`` (the real CLI, which must succeed). Returns the recall's answer."""
    import os
    import subprocess

    from tests.helpers.zygote import mnemon_command

    ran: list[subprocess.CompletedProcess[str]] = []

    def run(_statement: str) -> None:
        if not ran:
            env = dict(os.environ) | {"MNEMON_SEMANTIC": "off"}
            ran.append(subprocess.run([*mnemon_command(), *command, "--data-dir", str(root), "--json"],
                                      capture_output=True, text=True, env=env, timeout=60))

    searched._conn().set_trace_callback(run)
    try:
        found = service.recall("retry backoff").to_dict()
    finally:
        searched._conn().set_trace_callback(None)
    assert ran and ran[0].returncode == 0, ran[0].stderr
    return found


def test_a_store_deleted_between_its_search_and_its_load_fails_that_space_alone(root: Path) -> None:
    # two active spaces: the first is searched, then (while the second is searched) another process deletes the
    # first with the real CLI (its store moved to data/.deleted/); the recall answers from the second and names
    # the first as failed
    service, first, second, later = two_spaces(root, 4)
    found = recall_while(service, later, root, "space", "delete", first, "--confirm")
    assert found["results"] and {r["spaceId"] for r in found["results"]} == {second}
    assert found["failed"] == [first]
    source = {s["spaceId"]: s for s in found["sources"]}
    assert source[first]["status"] == "unavailable" and "does not exist" in source[first]["hint"]
    assert source[second]["status"] == "ready"
    service.close()


def access_counts(provider: NativeProvider) -> dict[str, int]:
    provider.flush_access()
    return {row[0]: row[1] for row in provider._conn().execute(
        "SELECT id, access_count FROM insights WHERE deleted_at IS NULL")}


@pytest.mark.parametrize("mode", ["smart", "keyword", "basic"])
def test_a_recall_counts_an_access_on_the_items_it_sends_only(filled: tuple[SpacesService, NativeProvider],
                                                              mode: str) -> None:
    # the Mnemon CLI counts an access on each returned id (reference mnemon-cli.md §5), not on every candidate
    service, provider = filled
    before = access_counts(provider)
    found = service.recall("retry", limit=3, mode=mode)
    sent = {r["id"] for r in found.results}
    assert sent and found.to_dict()["sources"][0]["stats"]["fetched"] > len(sent)  # candidates not sent
    after = access_counts(provider)
    assert {i for i in after if after[i] != before.get(i)} == sent
    assert all(after[i] == before[i] + 1 for i in sent)
    logged = provider._conn().execute("SELECT detail FROM oplog ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    assert logged.endswith(f"q=retry hits={len(sent)}")


def test_the_stats_count_what_was_sent_when_an_item_is_forgotten_before_its_load(root: Path) -> None:
    # two active spaces: the first is searched (a partial answer), then (while the second is searched) another
    # process forgets the first's best item with the real CLI; the load leaves it out, and the first space's
    # ``stats.selected`` counts the results it sent, not the rows its search had ranked
    service, first, second, later = two_spaces(root, 3)
    before = service.recall("retry backoff").to_dict()
    mine = [r["id"] for r in before["results"] if r["spaceId"] == first]
    assert len(mine) == 3 and {s["spaceId"]: s["stats"]["selected"] for s in before["sources"]} == {first: 3, second: 3}
    found = recall_while(service, later, root, "space", "forget", mine[0], "--space", first)
    sent = [r["id"] for r in found["results"] if r["spaceId"] == first]
    assert mine[0] not in sent and len(sent) == 2
    stats = {s["spaceId"]: s["stats"] for s in found["sources"]}
    assert stats[first]["selected"] == 2 and stats[second]["selected"] == 3
    assert sum(s["selected"] for s in stats.values()) == len(found["results"])
    service.close()
