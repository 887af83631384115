"""The wake snapshot (mnemon_ls.runtime.snapshot) and the workspace Source (mnemon_ls.runtime.source).

Reference: shared/reference/dsh-mnemon.md 3.6 (vN layout), 3.7 (branch visibility), 3.9 (split USER
scope), cases 19, 22-24, 28, 30, 31, 38; DESIGN.md section 4 (no known branch: branch-scoped entries
hidden by default and the snapshot says so). Expected texts are spelled out line by line here.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mnemon_ls.errors import NoMatch
from mnemon_ls.roots import RootResolution, resolve_root
from mnemon_ls.runtime.model import Entry, parse_timestamp_ms
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.snapshot import EXPLANATION, age_label, branch_line, render_wake, stamp_view_revision, view_revision
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import load_settings

EMPTY_REVISION = hashlib.sha256(b'{"version":1,"entries":[]}').hexdigest()
SEP = "\n\u00a7\n"


def ms(iso: str) -> int:
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def source_for(root: Path, clock, **settings) -> RuntimeSource:
    return RuntimeSource(RootResolution(root, root, "custom", None), load_settings(settings), clock=clock)


def add(target, content, **kw):
    return validate_request("add", target, content, **kw)


def block(name, title, count, used, limit, body):
    return [
        "",
        f"Contents of {name} ({title}; entries: {count}; UTF-8 bytes: {used}/{limit})",
        f'<runtime-memory-file name="{name}">',
        body,
        "</runtime-memory-file>",
    ]


def snapshot_text(revision, branch_text, user, memory, extra=(), stamp=True):
    """user/memory: (count, used, limit, body); ``revision`` the store revision. The ``Revision:`` line is
    the view revision of the text (stamped; ``stamp=False`` leaves a placeholder of the same length)."""
    lines = ["MNEMON RUNTIME MEMORY SNAPSHOT", "Revision: " + "0" * 64, f"Store revision: {revision}", branch_text,
             EXPLANATION, *extra]
    lines += block("USER.md", "user profile", *user)
    lines += block("MEMORY.md", "working reference", *memory)
    text = "\n".join(lines)
    return stamp_view_revision(text)[0] if stamp else text


def branch_of(text):
    """The ``Git branch:`` line of a snapshot."""
    return text.split("\n")[3]


# ================================================================= case 22: empty store


def test_case_22_empty_store_snapshot_is_exact_and_writes_nothing(root, clock):
    source = source_for(root, clock)
    snapshot, repairs = source.wake(None)
    assert snapshot.text == snapshot_text(
        EMPTY_REVISION, "Git branch: none", (0, 0, 4096, "(empty)"), (0, 0, 10240, "(empty)"))
    assert str(root) not in snapshot.text and "runtime/" not in snapshot.text
    assert (snapshot.store_revision, snapshot.hidden, snapshot.omitted, snapshot.chars) == (
        EMPTY_REVISION, 0, 0, len(snapshot.text))
    assert snapshot.revision == view_revision(snapshot.text) != EMPTY_REVISION
    assert [report.to_dict() for _, report in repairs] == [{"repaired": [], "preserved": {}, "skipped": None}]
    assert list(root.iterdir()) == []


def test_snapshot_with_entries_on_a_branch_is_exact(root, clock):
    source = source_for(root, clock, runtimeMemory={"userLimitBytes": 100, "memoryLimitBytes": 200})
    source.mutate(add("user", "喜欢简洁", importance="critical"))
    source.mutate(add("memory", "uses pnpm"))
    source.mutate(add("memory", "main only fact", importance="low", branches=["main"]))
    revision = source.read().revision
    snapshot, _ = source.wake("main")
    assert snapshot.text == snapshot_text(
        revision, "Git branch: main",
        (1, 12, 100, "[importance=critical; created=0d; updated=0d]\n喜欢简洁"),
        (2, 9 + 4 + 14, 200, "[importance=normal; created=0d; updated=0d]\nuses pnpm" + SEP
         + "[importance=low; created=0d; updated=0d; branches=main]\nmain only fact"),
    )


# ================================================================= ages (cases 23, 24)


def test_case_23_ages_are_whole_days_from_one_clock(root, clock, disk):
    clock.set("2026-09-01T08:00:00.000Z")
    source = source_for(root, clock)
    source.mutate(add("memory", "first fact"))
    source.mutate(add("memory", "second fact"))
    source.mutate(add("user", "profile"))
    clock.set("2026-09-13T08:00:00.000Z")
    source.mutate(validate_request("replace", "memory", "second fact v2", "second"))
    before = disk.freeze(root)
    clock.set("2026-09-15T07:59:59.999Z")
    early, _ = source.wake(None)
    clock.set("2026-09-15T08:00:00.000Z")
    late, _ = source.wake(None)
    assert disk.state(root) == before
    assert early.store_revision == late.store_revision == source.read().revision
    assert early.revision == late.revision  # ages move with the clock, not with what memory shows
    assert "[importance=normal; created=13d; updated=13d]\nfirst fact" in early.text
    assert "[importance=normal; created=13d; updated=1d]\nsecond fact v2" in early.text
    assert "[importance=normal; created=13d; updated=13d]\nprofile" in early.text
    assert "[importance=normal; created=14d; updated=14d]\nfirst fact" in late.text
    assert "[importance=normal; created=14d; updated=2d]\nsecond fact v2" in late.text
    shifted = [line.replace("13d", "14d").replace("updated=1d", "updated=2d") if line.startswith("[") else line
               for line in early.text.split("\n")]
    assert "\n".join(shifted) == late.text


def test_case_24_unknown_future_and_offset_timestamps(root, clock, disk):
    clock.set("2026-08-13T08:00:00.000Z")
    entries = [
        {"content": "bad time", "created_at": "invalid-timestamp", "updated_at": "also bad",
         "target": "memory", "importance": "normal"},
        {"content": "from tomorrow", "created_at": "2026-08-14T08:00:00.000Z",
         "updated_at": "2026-08-14T08:00:00.000Z", "target": "memory", "importance": "low"},
        {"content": "with offset", "created_at": "2026-08-12T10:00:00+02:00",
         "updated_at": "2026-08-12T10:00:00+02:00", "target": "user", "importance": "critical"},
    ]
    runtime = root / "runtime"
    runtime.mkdir()
    (runtime / "memories.json").write_text(json.dumps({"version": 1, "entries": entries}, indent=2) + "\n")
    (runtime / "USER.md").write_bytes(b"with offset\n")
    (runtime / "MEMORY.md").write_bytes(b"bad time\n\xc2\xa7\nfrom tomorrow\n")
    before = disk.freeze(root)
    snapshot, _ = source_for(root, clock).wake("main")
    assert disk.state(root) == before
    assert "[importance=normal; created=unknown; updated=unknown]\nbad time" in snapshot.text
    assert "[importance=low; created=future; updated=future]\nfrom tomorrow" in snapshot.text
    assert "[importance=critical; created=1d; updated=1d]\nwith offset" in snapshot.text
    assert "NaN" not in snapshot.text


@pytest.mark.parametrize(
    "stamp, now, label",
    [
        ("2026-09-01T08:00:00.000Z", "2026-09-01T08:00:00.000Z", "0d"),
        ("2026-09-01T08:00:00.000Z", "2026-09-02T07:59:59.999Z", "0d"),
        ("2026-09-01T08:00:00.000Z", "2026-09-02T08:00:00.000Z", "1d"),
        ("2026-09-01T08:00:00.001Z", "2026-09-01T08:00:00.000Z", "future"),
        ("2026-08-12T10:00:00+02:00", "2026-08-13T08:00:00.000Z", "1d"),
        ("2026-08-12T10:00:00+02:00", "2026-08-13T07:59:59.999Z", "0d"),
        ("invalid\u2026", "2026-08-13T08:00:00.000Z", "unknown"),
        ("", "2026-08-13T08:00:00.000Z", "unknown"),
        ("2000-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "9497d"),
    ],
)
def test_age_label(stamp, now, label):
    assert age_label(stamp, ms(now)) == label


def test_entry_written_at_the_wake_instant_is_0d_after_2038(root, clock):
    clock.set("2038-01-23T05:09:44.969Z")
    source = source_for(root, clock)
    source.mutate(add("memory", "hello"))
    snapshot, _ = source.wake("main")
    assert "[importance=normal; created=0d; updated=0d]\nhello" in snapshot.text


def test_entry_written_at_the_wake_instant_is_0d(root, clock):
    clock.set("2026-09-15T07:59:59.999Z")
    source = source_for(root, clock)
    source.mutate(add("memory", "hello"))
    snapshot, _ = source.wake("main")
    assert "[importance=normal; created=0d; updated=0d]\nhello" in snapshot.text


# ================================================================= branches (cases 28, 30, 31)


def seed_branches(root, clock, **settings):
    source = source_for(root, clock, **settings)
    source.mutate(add("memory", "legacy for everyone"))
    source.mutate(add("memory", "main-only decision", branches=["main"]))
    source.mutate(add("memory", "shared by main and dev", branches=["main", "dev"]))
    source.mutate(add("user", "user entries are never filtered"))
    return source


def test_case_28_and_31_hidden_on_another_branch(root, clock):
    source = seed_branches(root, clock)
    snapshot, _ = source.wake("dev")
    lines = snapshot.text.split("\n")
    assert lines[3] == "Git branch: dev (1 branch-scoped entry hidden)"
    assert "main-only decision" not in snapshot.text
    assert "shared by main and dev" in snapshot.text and "legacy for everyone" in snapshot.text
    used = len("legacy for everyone") + 4 + len("main-only decision") + 4 + len("shared by main and dev")
    assert f"Contents of MEMORY.md (working reference; entries: 2; UTF-8 bytes: {used}/10240)" in lines
    assert snapshot.hidden == 1
    on_main, _ = source.wake("main")
    assert branch_of(on_main.text) == "Git branch: main"
    assert "main-only decision" in on_main.text and on_main.hidden == 0
    assert f"Contents of MEMORY.md (working reference; entries: 3; UTF-8 bytes: {used}/10240)" in on_main.text
    assert on_main.store_revision == snapshot.store_revision == source.read().revision
    # The view revision tells the two snapshots apart: they show different entries on different branches.
    assert on_main.revision != snapshot.revision
    assert "[importance=normal; created=0d; updated=0d; branches=main,dev]\nshared by main and dev" in snapshot.text


def test_two_hidden_entries_use_plural(root, clock):
    source = seed_branches(root, clock)
    snapshot, _ = source.wake("feature/x")
    assert branch_of(snapshot.text) == "Git branch: feature/x (2 branch-scoped entries hidden)"
    assert "user entries are never filtered" in snapshot.text


def test_no_known_branch_hides_scoped_entries_and_says_why(root, clock):
    source = seed_branches(root, clock)
    snapshot, _ = source.wake(None, "detached HEAD")
    assert branch_of(snapshot.text) == (
        "Git branch: none (detached HEAD; 2 branch-scoped entries hidden until a branch is known)")
    assert "legacy for everyone" in snapshot.text
    assert "main-only decision" not in snapshot.text and "shared by main and dev" not in snapshot.text
    assert "Contents of MEMORY.md (working reference; entries: 1; UTF-8 bytes: 67/10240)" in snapshot.text
    shown, _ = seed_branches(root / "other", clock, detachedHeadPolicy="show").wake(None, "not a repository")
    assert branch_of(shown.text) == (
        "Git branch: none (not a repository; 2 branch-scoped entries shown (detachedHeadPolicy=show))")
    assert "main-only decision" in shown.text and shown.hidden == 0


def test_branch_line_variants():
    assert branch_line("dev", None, 3, 0, "hide") == "Git branch: dev"
    assert branch_line("dev", "given", 3, 1, "hide") == "Git branch: dev (given; 1 branch-scoped entry hidden)"
    assert branch_line(None, None, 0, 0, "hide") == "Git branch: none"
    assert branch_line(None, "unborn", 0, 0, "show") == "Git branch: none (unborn)"


def test_case_30_legacy_entries_visible_on_every_branch(root, clock, disk):
    runtime = root / "runtime"
    runtime.mkdir()
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "ts" / "basic"
    for name in ("memories.json", "USER.md", "MEMORY.md"):
        (runtime / name).write_bytes((fixture / name).read_bytes())
    before = disk.freeze(root)
    source = source_for(root, clock)
    for branch in ("main", "dev", "feature/deep", None):
        snapshot, repairs = source.wake(branch)
        assert "Build with \"npm run build\"" in snapshot.text
        assert ("feature/deep uses the staging DB" in snapshot.text) == (branch in ("main", "feature/deep"))
        assert repairs[0][1].repaired == []
    assert disk.state(root) == before


# ================================================================= case 19: wake repairs a hand edit


def test_case_19_wake_repairs_and_preserves_hand_edit(root, clock):
    source = source_for(root, clock, handEdits="restore")
    source.mutate(add("memory", "truth"))
    (root / "runtime" / "MEMORY.md").write_bytes(b"edited by hand\n")
    snapshot, repairs = source.wake("main")
    saved = root / "runtime" / "edits" / "20260915T080000.000Z-MEMORY.md"
    assert [r.to_dict() for _, r in repairs] == [
        {"repaired": ["MEMORY.md"], "preserved": {"MEMORY.md": str(saved)}, "skipped": None}]
    assert (root / "runtime" / "MEMORY.md").read_bytes() == b"truth\n"
    assert saved.read_bytes() == b"edited by hand\n"
    assert "edited by hand" not in snapshot.text


def test_wake_on_damaged_store_shows_recoverable_entries_with_notice(root, clock, disk):
    source = source_for(root, clock)
    source.mutate(add("memory", "kept entry"))
    source.mutate(add("memory", "second entry"))
    memories = root / "runtime" / "memories.json"
    data = memories.read_bytes()
    memories.write_bytes(data[: data.index(b"second")])
    before = disk.freeze(root)
    snapshot, repairs = source.wake("main")
    assert disk.state(root) == before
    assert repairs[0][1].skipped is not None
    notice = [line for line in snapshot.text.split("\n") if line.startswith("Notice: ")]
    assert len(notice) == 1 and str(memories) in notice[0] and "mnemon-ls runtime recover" in notice[0]
    assert "kept entry" in snapshot.text and "second entry" in snapshot.text


# ================================================================= budget


def E(content, target, importance, updated):
    return Entry(content, "2026-09-01T00:00:00.000Z", updated, target, importance)


M1 = E("关键" * 50, "memory", "critical", "2026-09-01T00:00:00.000Z")
M2 = E("新" * 100, "memory", "normal", "2026-09-10T00:00:00.000Z")
M3 = E("旧" * 100, "memory", "normal", "2026-09-02T00:00:00.000Z")
M4 = E("低新" * 50, "memory", "low", "2026-09-12T00:00:00.000Z")
M5 = E("低旧" * 50, "memory", "low", "2026-09-03T00:00:00.000Z")
U1 = E("用户" * 50, "user", "low", "2026-09-05T00:00:00.000Z")
U2 = E("我" * 100, "user", "critical", "2026-09-01T00:00:00.000Z")
USER = [U1, U2]
MEMORY = [M1, M2, M3, M4, M5]
DROP_ORDER = [M5, M4, M3, M2, M1, U1, U2]  # MEMORY.md before USER.md, then importance, then age
NOW_MS = ms("2026-09-15T00:00:00.000Z")


def render(budget):
    return render_wake(
        user_entries=USER, memory_entries=MEMORY, revision="r" * 64,
        used={"user": 999, "memory": 1999}, limits={"user": 4096, "memory": 10240},
        branch="main", branch_reason=None, now_ms=NOW_MS, budget_chars=budget)


def rendered(entry):
    created = (NOW_MS - parse_timestamp_ms(entry.created_at)) // 86_400_000
    updated = (NOW_MS - parse_timestamp_ms(entry.updated_at)) // 86_400_000
    return f"[importance={entry.importance}; created={created}d; updated={updated}d]\n{entry.content}"


def test_budget_drops_whole_entries_exact_text():
    omitted = ("Omitted: 3 entries to fit {} characters: MEMORY.md entries 3-5, as `mnemon-ls runtime list "
               "--target memory` numbers and shows them (MEMORY.md gives way before USER.md, lowest importance "
               "and least recently updated first); absence here does not mean deletion.")
    template = snapshot_text(
        "r" * 64, "Git branch: main",
        (2, 999, 4096, SEP.join(rendered(x) for x in (U1, U2))),
        (5, 1999, 10240, SEP.join(rendered(x) for x in (M1, M2))),
        extra=[omitted], stamp=False,
    )
    budget = len(template.format("0000"))
    assert 1000 <= budget <= 9999
    expected = stamp_view_revision(template.format(budget))[0]
    snapshot = render(budget)
    assert snapshot.text == expected
    assert (snapshot.omitted, snapshot.chars) == (3, budget)
    assert render(budget - 1).omitted == 4


def test_budget_never_splits_an_entry_and_stays_within_budget():
    full = render(10**6)
    assert full.omitted == 0
    # Everything dropped, and the explanation line too (it gives way only when no entry fits at all).
    floor = next(b for b in range(1, len(full.text)) if len(render(b).text) <= b)
    assert render(1).omitted == 7 and EXPLANATION in render(1).text
    assert EXPLANATION not in render(floor).text and render(floor).omitted == 7
    seen = set()
    for budget in range(len(full.text), floor - 1, -7):
        snapshot = render(budget)
        text = snapshot.text
        assert len(text) <= budget and snapshot.chars == len(text)
        dropped = DROP_ORDER[: snapshot.omitted]
        seen.add(snapshot.omitted)
        for entry in USER + MEMORY:
            if entry in dropped:
                assert entry.content not in text
            else:
                assert rendered(entry) in text
        for name in ("USER.md", "MEMORY.md"):
            body = text.split(f'<runtime-memory-file name="{name}">\n')[1].split("\n</runtime-memory-file>")[0]
            parts = [] if body == "(empty)" else body.split(SEP)
            assert all(part in {rendered(x) for x in USER + MEMORY} for part in parts)
        if snapshot.omitted:
            n = snapshot.omitted
            assert f"Omitted: {n} {'entry' if n == 1 else 'entries'} to fit {budget} characters: " in text
            numbers = {"MEMORY.md": [MEMORY.index(x) + 1 for x in dropped if x in MEMORY],
                       "USER.md": [USER.index(x) + 1 for x in dropped if x in USER]}
            for name, listed in numbers.items():
                if listed:
                    many = len(listed) > 1
                    assert (f"{name} entr{'ies' if many else 'y'} "
                            f"{f'{min(listed)}-{max(listed)}' if many else listed[0]}" in text
                            or f"all {len(listed)} visible {name} entr{'ies' if many else 'y'}" in text)
        else:
            assert "Omitted:" not in text
        assert "entries: 2;" in text and "entries: 5;" in text
    # Dropping a single ~150-character entry never pays for the ~150-character Omitted line, so one
    # omission alone is never the smallest fix; every other count occurs.
    assert seen == {0, 2, 3, 4, 5, 6, 7}


def test_budget_large_enough_keeps_everything():
    full = render(10**6)
    assert render(len(full.text)).text == full.text
    assert render(len(full.text) - 1).omitted == 2  # one drop + the Omitted line would be longer


# ================================================================= case 38: split user scope


def test_case_38_split_user_scope(tmp_path, clock):
    global_root = tmp_path / "global"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = load_settings({"storageScope": "workspace", "runtimeUserScope": "global"})
    resolution = resolve_root(workspace, settings, {"MNEMON_DATA_DIR": str(global_root)})
    assert resolution.root == workspace.resolve() / ".mnemon"
    assert resolution.user_root == global_root and resolution.split_user
    RuntimeStore(global_root, clock=clock).mutate(add("memory", "global memory entry ignored"))
    RuntimeStore(global_root, clock=clock).mutate(add("user", "global user A"))
    RuntimeStore(resolution.root, clock=clock).mutate(add("user", "workspace user entry ignored"))
    RuntimeStore(resolution.root, clock=clock).mutate(add("memory", "workspace memory A"))

    source = RuntimeSource(resolution, settings, clock=clock)
    source.mutate(add("user", "global user B"))
    source.mutate(add("memory", "workspace memory B"))

    def contents(base):
        return [(x["target"], x["content"]) for x in
                json.loads((base / "runtime" / "memories.json").read_bytes())["entries"]]

    assert contents(global_root) == [
        ("memory", "global memory entry ignored"), ("user", "global user A"), ("user", "global user B")]
    assert contents(resolution.root) == [
        ("user", "workspace user entry ignored"), ("memory", "workspace memory A"), ("memory", "workspace memory B")]
    assert (global_root / "runtime" / "USER.md").read_bytes() == b"global user A\n\xc2\xa7\nglobal user B\n"
    assert (resolution.root / "runtime" / "MEMORY.md").read_bytes() == (
        b"workspace memory A\n\xc2\xa7\nworkspace memory B\n")

    state = source.read()
    assert [x.content for x in state.user] == ["global user A", "global user B"]
    assert [x.content for x in state.memory] == ["workspace memory A", "workspace memory B"]
    merged = [{"content": c, "created_at": "2026-09-15T08:00:00.000Z", "updated_at": "2026-09-15T08:00:00.000Z",
               "target": t, "importance": "normal"}
              for t, c in [("user", "global user A"), ("user", "global user B"),
                           ("memory", "workspace memory A"), ("memory", "workspace memory B")]]
    compact = json.dumps({"version": 1, "entries": merged}, ensure_ascii=False, separators=(",", ":"))
    assert state.revision == hashlib.sha256(compact.encode()).hexdigest()
    assert state.used == {"user": 13 + 4 + 13, "memory": 18 + 4 + 18}

    snapshot, repairs = source.wake("main")
    assert len(repairs) == 2
    assert "ignored" not in snapshot.text
    assert str(tmp_path) not in snapshot.text
    assert "Contents of USER.md (user profile; entries: 2; UTF-8 bytes: 30/4096)" in snapshot.text
    assert "Contents of MEMORY.md (working reference; entries: 2; UTF-8 bytes: 40/10240)" in snapshot.text
    assert snapshot.store_revision == state.revision

    with pytest.raises(NoMatch):
        source.mutate(validate_request("remove", "user", old_text="workspace user entry"))
    with pytest.raises(NoMatch):
        source.mutate(validate_request("remove", "memory", old_text="global memory entry"))
    source.mutate(validate_request("remove", "user", old_text="global user A"))
    assert contents(global_root)[1:] == [("user", "global user B")]
    plan = source.plan_maintenance(add("user", "x"))
    assert plan.revision == RuntimeStore(global_root).read().revision


def test_case_23_with_render_wake_and_fixed_now():
    created = "2026-09-01T08:00:00.000Z"
    entries = [Entry("kept", created, created, "memory", "normal"),
               Entry("replaced", created, "2026-09-13T08:00:00.000Z", "memory", "normal")]

    def wake(now):
        return render_wake(user_entries=[], memory_entries=entries, revision="a" * 64,
                           used={"user": 0, "memory": 16}, limits={"user": 4096, "memory": 10240},
                           branch=None, branch_reason=None, now_ms=ms(now), budget_chars=65536)

    early, late = wake("2026-09-15T07:59:59.999Z"), wake("2026-09-15T08:00:00.000Z")
    body = '<runtime-memory-file name="MEMORY.md">\n{}\n§\n{}\n</runtime-memory-file>'
    assert body.format("[importance=normal; created=13d; updated=13d]\nkept",
                       "[importance=normal; created=13d; updated=1d]\nreplaced") in early.text
    assert body.format("[importance=normal; created=14d; updated=14d]\nkept",
                       "[importance=normal; created=14d; updated=2d]\nreplaced") in late.text
    assert early.store_revision == late.store_revision == "a" * 64
    assert early.revision == late.revision == view_revision(late.text)


def test_snapshot_with_notice_stays_within_smallest_budget(tmp_path, clock):
    root = tmp_path / ("deep-directory-name-" * 4) / "root"
    source = source_for(root, clock)
    source.mutate(add("memory", "x" * 400))
    memories = root / "runtime" / "memories.json"
    memories.write_bytes(memories.read_bytes()[:-30])
    snapshot, _ = source.wake("main", budget_chars=1024)
    assert snapshot.notices
    assert len(snapshot.text) <= 1024
