"""The wake's review marks are kept between wakes (:mod:`mnemon_ls.citations.wakemarks`) and must change exactly
when the answer computed afresh would: the moment an entry's age reaches ``reviewAfterDays``, and the moment a
confirmation stamped in the future (a hand edit, a clock set wrong) starts to count. One real host on a real
repository whose clock the test moves (the host's own clock parameter: no sleep, no mock)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemon_ls.runtime.ops import entry_key
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
from tests.citations.test_review_due import SETTINGS, run
from tests.gitrepo import make_repo

DAY = timedelta(days=1)


def marked(host: WorkspaceHost) -> bool:
    return "review due" in host.wake()[0].text


def stored_time(host: WorkspaceHost) -> datetime:
    entry = host.runtime.read().memory[0]
    return datetime.fromisoformat(entry.updated_at.replace("Z", "+00:00"))


def host_with_one_entry(tmp_path: Path) -> tuple[WorkspaceHost, list[datetime], datetime]:
    """A host on a real repository whose clock is ``now[0]``, reviewing after 3 days, with one MEMORY.md entry;
    ``(host, now, the entry's updated time)``."""
    workspace = Path(make_repo(tmp_path / "ws").workdir)
    now = [datetime.now(timezone.utc)]
    host = WorkspaceHost(workspace, load_settings(SETTINGS | {"reviewAfterDays": 3}), clock=lambda: now[0])
    run(host, "runtime.mutate", action="add", target="memory", content="deploys go through staging")
    return host, now, stored_time(host)


def test_a_kept_review_mark_appears_at_the_moment_the_age_reaches_review_after_days(tmp_path: Path):
    host, now, updated = host_with_one_entry(tmp_path)
    due_at = updated + 3 * DAY

    answers = []
    for moment in (updated, due_at - timedelta(milliseconds=1), due_at, due_at + DAY):
        now[0] = moment
        answers.append((marked(host), marked(host)))  # the second wake is answered from what was kept
    assert answers == [(False, False), (False, False), (True, True), (True, True)]

    now[0] = updated + DAY  # a clock set back: recomputed, not the kept answer
    assert marked(host) is False


def test_a_confirmation_stamped_in_the_future_counts_from_its_moment_on(tmp_path: Path):
    host, now, updated = host_with_one_entry(tmp_path)
    confirmed = updated + 10 * DAY
    reviewed = host.root / "state" / "citations" / "reviewed.json"
    reviewed.parent.mkdir(parents=True, exist_ok=True)
    key = entry_key("memory", "deploys go through staging")
    reviewed.write_text(json.dumps({"version": 1, "reviewed": {"runtime": {
        key: int(confirmed.timestamp() * 1000)}}}) + "\n", encoding="utf-8")

    answers = []
    for moment in (confirmed - timedelta(milliseconds=1), confirmed, confirmed + 3 * DAY):
        now[0] = moment
        answers.append((marked(host), marked(host)))
    # before its moment the confirmation is ignored (10 days old: due); from it on the entry counts from it
    assert answers == [(True, True), (False, False), (True, True)]
