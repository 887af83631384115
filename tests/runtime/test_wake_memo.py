"""The wake a Runtime Source keeps (:meth:`mnemon_ls.runtime.source.RuntimeSource._render`): the same inputs at a
time that shows every age alike give the very same snapshot; any other input, or the next age change, renders
anew. :func:`mnemon_ls.runtime.snapshot.ages_valid_until` says when the next age change is."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemon_ls.roots import RootResolution
from mnemon_ls.runtime.model import Entry, parse_timestamp_ms
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.snapshot import _FOREVER, age_label, ages_valid_until
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.settings import load_settings

DAY = 86_400_000


def iso(epoch_ms: int) -> str:
    moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=epoch_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def entry(created: str, updated: str) -> Entry:
    return Entry("fact", created, updated, "memory", "normal")


def labels(entries: list[Entry], now_ms: int) -> list[str]:
    return [age_label(t, now_ms) for e in entries for t in (e.created_at, e.updated_at)]


def test_ages_read_alike_until_the_moment_it_names_and_differ_at_it() -> None:
    rng = random.Random(27)
    now = 1_789_459_200_000  # 2026-09-15T08:00:00Z
    for _ in range(300):
        entries = []
        for _ in range(rng.randint(1, 6)):
            stamps = [rng.choice([iso(now + rng.randint(-40 * DAY, 3 * DAY)), iso(now - rng.randint(0, 5)),
                                 iso(now + rng.randint(1, 5)), "not a time", "2026-09-14T10:00:00+02:00"])
                      for _ in range(2)]
            entries.append(entry(*stamps))
        until = ages_valid_until(entries, now)
        assert until > now
        if until == _FOREVER:
            assert all(label == "unknown" for label in labels(entries, now))
            continue
        assert labels(entries, until - 1) == labels(entries, now)
        assert labels(entries, until) != labels(entries, now)


def test_future_and_unreadable_timestamps() -> None:
    now = 1_789_459_200_000
    assert ages_valid_until([entry("not a time", "")], now) == _FOREVER
    assert ages_valid_until([entry(iso(now + 5), iso(now + 9))], now) == now + 5  # "future" becomes "0d"
    assert ages_valid_until([entry(iso(now - 1), iso(now - 1))], now) == now - 1 + DAY


def test_parse_timestamp_ms_is_the_same_for_any_input_asked_twice() -> None:
    for value in ("2026-09-14T10:00:00+02:00", " 2026-09-14T08:00:00Z ", "2026-09-14T08:00:00", "", "  ", "nope"):
        assert parse_timestamp_ms(value) == parse_timestamp_ms(value)
    assert parse_timestamp_ms("2026-09-14T10:00:00+02:00") == parse_timestamp_ms("2026-09-14T08:00:00.000Z")
    assert parse_timestamp_ms(None) is None and parse_timestamp_ms(12) is None  # type: ignore[arg-type]


def test_a_source_keeps_its_wake_only_while_nothing_it_shows_changes(root: Path, clock) -> None:
    source = RuntimeSource(RootResolution(root, root, "custom", None), load_settings({}), clock=clock)
    clock.set("2026-09-01T08:00:00.000Z")
    source.mutate(validate_request("add", "memory", "first fact"))
    clock.set("2026-09-15T07:59:59.000Z")
    first, _ = source.wake("main")
    again, _ = source.wake("main")
    assert again is first  # kept
    clock.set("2026-09-15T07:59:59.999Z")
    assert source.wake("main")[0] is first  # the same day for every age
    for other in (source.wake("other")[0], source.wake("main", "rebase in progress")[0],
                  source.wake("main", notices=["n"])[0], source.wake("main", covers=["cover"])[0],
                  source.wake("main", archived=(1, 0))[0], source.wake("main", guidance="g")[0]):
        assert other.text != first.text
    budgeted = source.wake("main", budget_chars=2048)[0]  # another input, the same text (it fits)
    assert budgeted is not first and budgeted.text == first.text
    assert source.wake("main")[0].text == first.text  # back to the first inputs: rendered again, alike
    clock.set("2026-09-15T08:00:00.000Z")
    later, _ = source.wake("main")
    assert "created=14d; updated=14d]\nfirst fact" in later.text and "created=13d" in first.text
    source.mutate(validate_request("add", "memory", "second fact"))
    assert "second fact" in source.wake("main")[0].text
    clock.set("2026-09-14T08:00:00.000Z")  # a clock set back: rendered for that time
    assert "created=13d; updated=13d]\nfirst fact" in source.wake("main")[0].text
