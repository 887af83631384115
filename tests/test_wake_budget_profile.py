"""Issue 23 (2): a budgeted wake never drops the user profile before working memory, and says exactly which
entries it left out and the command that shows them. Real roots, the real CLI and hook as subprocesses, the
real MCP server through the SDK client; the renderer itself for the numbering rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from mnemon_ls.runtime.model import Entry, joined_bytes
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.snapshot import render_wake
from mnemon_ls.runtime.store import RuntimeStore
from tests.gitrepo import make_repo
from tests.mcp.conftest import REPO, mcp_session, server_env, text

PROFILE = "Prefers terse answers; never add summaries."  # 43 bytes, as in the issue
HOOK_BUDGET = 12_000
OMITTED = re.compile(r"^Omitted: (\d+) entr(?:y|ies) to fit (\d+) characters: (.*)$", re.MULTILINE)


def fact(n: int, size: int = 470) -> str:
    """A ``size``-byte MEMORY.md fact whose first words are unique (``Fact NN:``)."""
    return f"Fact {n:02d}: " + ("the release pipeline deploys through a blue-green switch after health checks " * 7)[:size - 11] + "."


def numbers_in(line: str, name: str) -> set[int]:
    """The entry numbers an ``Omitted:`` line gives for ``name`` (``MEMORY.md`` / ``USER.md``)."""
    found = re.search(rf"{re.escape(name)} entr(?:y|ies) ([0-9, -]+?)(?:,? as | and )", line)
    if not found:
        return set()
    out: set[int] = set()
    for part in found.group(1).split(", "):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args], input=stdin, capture_output=True, text=True,
                          env=server_env(HOME=str(home)), cwd=str(REPO), timeout=120)


def filled_root(tmp_path: Path) -> tuple[Path, Path, list[str], list[str]]:
    """A repository, HOME and root with one USER.md preference (added with the CLI) and MEMORY.md filled
    with 470-byte facts (then a few 150-byte ones) to just over 10,050 of its 10,240 bytes: the full wake is
    then over the hook's 12,000 characters. Returns (home, repo, where-args, facts in stored order)."""
    home, repo, root = tmp_path / "home", tmp_path / "repo", tmp_path / "root"
    home.mkdir()
    make_repo(repo)
    where = ["--workspace", str(repo), "--scope", "custom", "--data-dir", str(root)]
    added = cli(home, "runtime", "add", "--target", "user", "--content", PROFILE, *where)
    assert added.returncode == 0, added.stderr
    store, facts = RuntimeStore(root), []
    for size in (470, 150):  # 470-byte facts while they fit under 10,200 bytes, then shorter ones
        while joined_bytes([*facts, "x" * size]) <= 10_200:
            facts.append(fact(len(facts) + 1, size))
            store.mutate(validate_request("add", "memory", facts[-1]))
    assert [e.content for e in store.read().of("memory")] == facts and 10_050 < joined_bytes(facts) <= 10_200
    return home, repo, where, facts


def test_session_start_hook_keeps_the_profile_and_names_what_it_left_out(tmp_path: Path) -> None:
    home, repo, where, facts = filled_root(tmp_path)
    full = cli(home, "wake", *where)
    assert full.returncode == 0, full.stderr
    assert PROFILE in full.stdout and all(f in full.stdout for f in facts) and "Omitted:" not in full.stdout
    assert len(full.stdout) > HOOK_BUDGET, "the full wake must not fit the hook, or the budget is not exercised"

    payload = json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})
    hook = cli(home, "hook", "session-start", *where, stdin=payload)
    assert hook.returncode == 0 and hook.stderr == ""
    out = hook.stdout
    assert len(out) <= HOOK_BUDGET + 1  # the snapshot plus its newline
    assert f"[importance=normal; created=0d; updated=0d]\n{PROFILE}" in out, "USER.md must never be dropped"
    [line] = [m.group(0) for m in OMITTED.finditer(out)]
    shown = {n for n, f in enumerate(facts, 1) if f in out}
    left_out = set(range(1, len(facts) + 1)) - shown
    assert left_out and numbers_in(line, "MEMORY.md") == left_out and not numbers_in(line, "USER.md")
    assert line.startswith(f"Omitted: {len(left_out)} ") and f"to fit {HOOK_BUDGET} characters" in line
    assert "`mnemon-ls runtime list --target memory`" in line
    # The command it names shows the entries it left out under the numbers it gave.
    listing = cli(home, "runtime", "list", "--target", "memory", *where)
    assert listing.returncode == 0, listing.stderr
    for n in left_out:
        assert f"  {n}. [normal; " in listing.stdout and facts[n - 1] in listing.stdout.split(f"  {n}. ", 1)[1]


async def test_mcp_wake_and_resource_follow_the_same_rule(tmp_path: Path) -> None:
    home, repo, where, facts = filled_root(tmp_path)
    env = server_env(HOME=str(home), MNEMON_WAKE_BUDGET_CHARS="4096")
    async with mcp_session(["--workspace", str(repo), "--scope", "custom", "--data-dir", str(tmp_path / "root")],
                           env=env) as session:
        result = await session.call_tool("mnemon_wake", {})
        assert not result.is_error
        tool_wake = text(result).split("\n", 1)[1]
        resource = (await session.read_resource("mnemon://wake")).contents[0].text
    for wake in (tool_wake, resource):
        assert len(wake) <= 4096 and PROFILE in wake
        [line] = [m.group(0) for m in OMITTED.finditer(wake)]
        shown = {n for n, f in enumerate(facts, 1) if f in wake}
        assert numbers_in(line, "MEMORY.md") == set(range(1, len(facts) + 1)) - shown
        assert "`mnemon-ls runtime list --target memory`" in line


# ---------------------------------------------------------------- the renderer: order and numbering


def entry(content: str, target: str, importance: str = "normal", updated: str = "2026-09-10T00:00:00.000Z",
          branches: tuple[str, ...] = ()) -> Entry:
    return Entry(content, "2026-09-01T00:00:00.000Z", updated, target, importance, branches)


def wake(user: list[Entry], memory: list[Entry], budget: int, branch: str = "main"):
    return render_wake(user_entries=user, memory_entries=memory, revision="r" * 64,
                       used={"user": 1, "memory": 1}, limits={"user": 4096, "memory": 10240}, branch=branch,
                       branch_reason=None, now_ms=1_789_000_000_000, budget_chars=budget)


def test_memory_gives_way_before_even_a_low_importance_old_profile_entry() -> None:
    user = [entry("likes tabs", "user", "low", "2026-09-02T00:00:00.000Z")]
    memory = [entry(f"critical fact {i} " + "x" * 300, "memory", "critical", "2026-09-12T00:00:00.000Z")
              for i in range(8)]
    full = wake(user, memory, 10**6)
    for budget in range(len(full.text) - 1, 1024, -97):
        snapshot = wake(user, memory, budget)
        assert len(snapshot.text) <= budget and "likes tabs" in snapshot.text, budget
        [line] = [m.group(0) for m in OMITTED.finditer(snapshot.text)]
        left_out = {i + 1 for i, e in enumerate(memory) if e.content not in snapshot.text}
        assert numbers_in(line, "MEMORY.md") == left_out and snapshot.omitted == len(left_out)


def test_numbers_are_runtime_list_positions_and_ranges_skip_hidden_entries() -> None:
    memory = [entry(f"fact {i} " + "y" * 200, "memory", branches=("other",) if i == 3 else ())
              for i in range(1, 7)]  # entry 3 is hidden on main: numbered, never listed as omitted
    user = [entry("profile one", "user"), entry("profile two", "user")]
    full = wake(user, memory, 10**6)
    assert "fact 3 " not in full.text and "Omitted:" not in full.text
    tight = wake(user, memory, len(full.text) - 700)
    line = OMITTED.search(tight.text).group(0)
    left_out = {n for n in (1, 2, 4, 5, 6) if f"fact {n} " not in tight.text}
    assert left_out == {1, 2, 4, 5} and numbers_in(line, "MEMORY.md") == left_out  # equal age: by position
    assert "MEMORY.md entries 1-2, 4-5, as " in line  # 3 is hidden, not left out: no range spans it
    assert "profile one" in tight.text and "profile two" in tight.text


def test_user_entries_go_only_after_all_memory_and_are_named_too() -> None:
    user = [entry(f"profile {i} " + "p" * 300, "user") for i in range(1, 5)]
    memory = [entry("one memory fact", "memory", "critical")]
    snapshot = wake(user, memory, 1024)
    line = OMITTED.search(snapshot.text).group(0)
    assert "one memory fact" not in snapshot.text and len(snapshot.text) <= 1024
    assert numbers_in(line, "MEMORY.md") == {1}
    left = {i for i in range(1, 5) if f"profile {i} " not in snapshot.text}
    assert left and numbers_in(line, "USER.md") == left
    assert "`mnemon-ls runtime list`" in line  # both files: no --target


def test_many_entries_all_left_out_are_named_compactly() -> None:
    memory = [entry(f"m{i}" + "z" * 60, "memory", branches=("other",) if i % 2 else ()) for i in range(400)]
    snapshot = wake([], memory, 1024)
    assert len(snapshot.text) <= 1024 and snapshot.omitted == 200
    assert "Omitted: 200 entries to fit 1024 characters: all 200 visible MEMORY.md entries, as " in snapshot.text
