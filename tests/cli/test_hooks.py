"""``mnemon-ls hook`` and ``mnemon-ls wake`` as assistants run them: what a fresh process imports (no timing:
the import claims of issue 27), and the session-start deadline that answers with what is ready instead of
letting the client's hook timeout pass silently.

Every process runs in a real git repository (the git CLI) whose storage root holds Runtime entries and an
active native Memory Space, built through the Host as a person's commands would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.cli import hooks
from mnemon_ls.errors import InvalidInput
from tests.helpers.procs import child_env

#: Never imported by the commands assistants wait on (unless the command uses them: none of these here).
FORBIDDEN = ("pydantic", "pygit2", "mnemon_ls.semantic", "mnemon_ls.packs", "mnemon_ls.spaces.providers",
             "mnemon_ls.spaces.service", "mnemon_ls.ops.registry", "mnemon_ls.cli.full", "mnemon_ls.records.service",
             "mnemon_ls.runtime.handedit", "mnemon_ls.redact", "mnemon_ls.mcp", "mnemon_ls.clients",
             "mnemon_ls.salvage",  # (salvage: the readers of a damaged file; these stores are whole)
             "mnemon_ls.runtime.foreign")  # (a memories.json only mnemon-ls wrote is not scanned again on read)
#: Not even these for ``hook prompt``: it prints one line from the settings.
PROMPT_FORBIDDEN = FORBIDDEN + ("argparse", "typing", "mnemon_ls.host", "mnemon_ls.roots", "mnemon_ls.roots_checks",
                                "mnemon_ls.roots_gitignore", "mnemon_ls.roots_safety", "mnemon_ls.runtime",
                                "mnemon_ls.fsio", "mnemon_ls.fsread", "threading", "sqlite3")

#: ``python -m mnemon_ls <argv>`` in a fresh interpreter, then every module it imported written to ``report``.
RUN = """
import json, runpy, sys
sys.argv = ["mnemon-ls", *json.loads(sys.argv[1])]
code = None
try:
    runpy.run_module("mnemon_ls", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
with open({report!r}, "w") as fh:
    json.dump({{"code": code, "modules": sorted(sys.modules)}}, fh)
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> tuple[Path, Path]:
    """``(repository, data dir)``: branch ``main``, 3 USER.md and 4 MEMORY.md entries, an active native space
    of 5 items (the default ``workspaces`` scope under the data dir)."""
    base = tmp_path_factory.mktemp("hooks")
    repo, data = base / "repo", base / "data"
    repo.mkdir()
    env = child_env(MNEMON_DATA_DIR=str(data), HOME=str(base))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "a.txt").write_text("a\n")
    subprocess.run([*git, "-C", str(repo), "add", "a.txt"], check=True, env=env)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "a"], check=True, env=env)
    for target, n in (("user", 3), ("memory", 4)):
        for i in range(n):
            cli(repo, data, "runtime", "add", "--target", target, "--content", f"{target} fact {i}", check=True)
    cli(repo, data, "space", "create", "--name", "Project", "--description", "Build facts", "--active", check=True)
    for i in range(5):
        cli(repo, data, "remember", f"the build step {i} runs make", check=True)
    return repo, data


def cli(repo: Path, data: Path, *argv: str, stdin: str = "", check: bool = False,
        **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "mnemon_ls", *argv], input=stdin, capture_output=True, text=True,
                          cwd=str(repo), env=child_env(MNEMON_DATA_DIR=str(data), **env), timeout=120)
    assert not check or proc.returncode == 0, proc.stderr
    return proc


def run_and_list(repo: Path, data: Path, tmp_path: Path, argv: list[str], stdin: str,
                 **env: str) -> tuple[int, str, list[str]]:
    """Run ``python -m mnemon_ls <argv>`` in a fresh interpreter; its exit code, stdout and every module it
    had imported when it finished."""
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-c", RUN.format(report=str(report)), json.dumps(argv)], input=stdin,
                          capture_output=True, text=True, cwd=str(repo),
                          env=child_env(MNEMON_DATA_DIR=str(data), **env), timeout=120)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(report.read_text())
    return done["code"], proc.stdout, done["modules"]


def startup_modules() -> frozenset[str]:
    """The modules this Python has imported before running anything: its ``site`` step and any ``.pth`` file of
    the interpreter's site-packages (a sandbox's certificate hook imports ``typing`` and ``threading``, say).
    They are not imported by the command, so they are not held against it."""
    global _STARTUP
    if _STARTUP is None:
        proc = subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
                              capture_output=True, text=True, env=child_env(), timeout=120, check=True)
        _STARTUP = frozenset(json.loads(proc.stdout)) - {"json", "json.decoder", "json.scanner", "json.encoder"}
    return _STARTUP


_STARTUP: frozenset[str] | None = None


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` named in ``names`` (or inside a package of ``names``) that the interpreter had
    not already imported at start-up."""
    startup = startup_modules()
    return [m for m in modules
            if m not in startup and (m in names or any(m.startswith(n + ".") for n in names))]


def test_startup_modules_are_only_the_interpreters():
    """The start-up set is what ``python -c`` has before it runs: never a module of this project."""
    startup = startup_modules()
    assert "sys" in startup
    assert not any(m == "mnemon_ls" or m.startswith("mnemon_ls.") for m in startup)


def test_hook_prompt_imports_only_what_it_prints(workspace, tmp_path):
    repo, data = workspace
    code, out, modules = run_and_list(repo, data, tmp_path, ["hook", "prompt"], json.dumps({"cwd": str(repo)}))
    assert code == 0
    assert out == hooks.recall_cue("guided", "guided") + "\n"
    assert loaded(modules, PROMPT_FORBIDDEN) == []


def test_hook_prompt_with_flags_uses_the_light_parser_and_still_imports_no_pydantic(workspace, tmp_path):
    repo, data = workspace
    code, out, modules = run_and_list(repo, data, tmp_path, ["hook", "prompt", "--recall-mode", "off", "--json"], "{}")
    assert code == 0
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                      "additionalContext": hooks.recall_cue("off", "guided")}}
    assert loaded(modules, FORBIDDEN) == []


@pytest.mark.parametrize("argv", [["hook", "session-start"], ["wake"]])
def test_session_start_and_wake_import_no_pydantic_provider_semantic_or_pack_module(workspace, tmp_path, argv):
    repo, data = workspace
    code, out, modules = run_and_list(repo, data, tmp_path, argv, json.dumps({"cwd": str(repo)}))
    assert code == 0
    assert "Git branch: main" in out and "user fact 2" in out and "memory fact 3" in out
    assert "- Project (id default, 5 items): Build facts" in out  # the space's count, without its provider
    assert loaded(modules, FORBIDDEN) == []


def test_session_start_past_its_deadline_prints_user_and_memory_md_and_says_what_was_left_out(workspace):
    repo, data = workspace
    proc = cli(repo, data, "hook", "session-start", stdin=json.dumps({"cwd": str(repo)}), MNEMON_HOOK_BUDGET_MS="0")
    assert proc.returncode == 0
    text = proc.stdout
    assert text.startswith("MNEMON RUNTIME MEMORY (PARTIAL)\nLeft out: the wake snapshot was not ready 0 ms after "
                           "this hook started (the client stops a hook after 10 s)")
    assert "the Documents and Memory Spaces covers and pending record proposals are left out" in text
    user = text.index('<runtime-memory-file name="USER.md">\nuser fact 0\n§\nuser fact 1\n§\nuser fact 2\n'
                      '</runtime-memory-file>')
    memory = text.index('<runtime-memory-file name="MEMORY.md">\nmemory fact 0\n§\nmemory fact 1\n§\nmemory fact 2\n'
                        '§\nmemory fact 3\n</runtime-memory-file>')
    assert user < memory and "MNEMON MEMORY SPACES" not in text
    assert proc.stderr == ("mnemon-ls hook: the wake snapshot was not ready 0 ms after this hook started; it printed "
                           "USER.md and MEMORY.md as they are on disk instead\n")
    as_json = cli(repo, data, "hook", "session-start", "--json", stdin="{}", MNEMON_HOOK_BUDGET_MS="0")
    context = json.loads(as_json.stdout)["hookSpecificOutput"]
    assert context == {"hookEventName": "SessionStart", "additionalContext": text.rstrip("\n")}


def test_session_start_within_its_deadline_prints_the_full_wake(workspace):
    repo, data = workspace
    proc = cli(repo, data, "hook", "session-start", stdin="{}", MNEMON_HOOK_BUDGET_MS="10000")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("MNEMON RUNTIME MEMORY SNAPSHOT\n") and "MNEMON MEMORY SPACES" in proc.stdout


@pytest.mark.parametrize("value", ["abc", "-1", "10001", "1.5"])
def test_a_bad_budget_names_the_variable_and_never_fails_the_turn(workspace, value):
    repo, data = workspace
    proc = cli(repo, data, "hook", "session-start", stdin="{}", MNEMON_HOOK_BUDGET_MS=value)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.startswith("mnemon-ls hook: MNEMON_HOOK_BUDGET_MS: must be an integer 0..10000 (milliseconds")


def test_budget_defaults_below_the_client_timeout():
    assert hooks.budget_ms({}) == hooks.HOOK_BUDGET_MS < hooks.HOOK_TIMEOUT_SECONDS * 1000
    assert hooks.budget_ms({hooks.BUDGET_VARIABLE: " 2500 "}) == 2500
    with pytest.raises(InvalidInput) as bad:
        hooks.budget_ms({hooks.BUDGET_VARIABLE: "7s"})
    assert bad.value.field == "MNEMON_HOOK_BUDGET_MS"


def test_the_timeout_setup_writes_is_the_one_the_deadline_stays_below():
    from mnemon_ls import clients

    assert clients.HOOK_TIMEOUT_SECONDS == hooks.HOOK_TIMEOUT_SECONDS


def test_partial_text_stays_within_the_hook_budget(tmp_path):
    from mnemon_ls.roots import RootResolution

    root = tmp_path / "root"
    (root / "runtime").mkdir(parents=True)
    (root / "runtime" / "USER.md").write_text("u" * 100 + "\n")
    (root / "runtime" / "MEMORY.md").write_text("m" * 50_000 + "\n")
    text = hooks.partial_text(RootResolution(root=root, user_root=root, scope="custom", workspace=None), 7000)
    assert len(text) <= hooks.HOOK_WAKE_BUDGET
    assert "u" * 100 + "\n</runtime-memory-file>" in text
    assert text.endswith("[... cut: the hook's context is full]\n</runtime-memory-file>")


def test_seconds_since_start_counts_the_process_and_not_a_long_lived_caller():
    code = "from mnemon_ls.cli.hooks import seconds_since_start as s; print(s())"
    fresh = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 0.0 < fresh < hooks.HOOK_TIMEOUT_SECONDS  # includes the interpreter's own start (clock ticks: >= 10 ms)
