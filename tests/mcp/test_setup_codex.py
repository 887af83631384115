"""``mnemon-ls setup codex``: Codex gets the wake at session start through its own hooks (``hooks.json`` beside
``config.toml``), not only the MCP entry. Real files under a throwaway HOME; the installed commands run as
Codex runs them (through ``sh -c``, Codex's SessionStart / UserPromptSubmit input on stdin, the session's
working directory), and what they print is checked against the rules Codex applies to hook output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.mcp.conftest import server_env
from tests.mcp.test_setup import run

EVENTS = {"SessionStart", "UserPromptSubmit"}


def codex_reads(stdout: str, event: str) -> str:
    """What Codex adds to the model's context from a hook's stdout (codex-rs/hooks, SessionStart and
    UserPromptSubmit): output starting with ``{`` or ``[`` must be one JSON object of the event's output
    schema, else the hook failed; its ``hookSpecificOutput.additionalContext`` is the context."""
    text = stdout.strip()
    assert text.startswith(("{", "[")), "plain text: Codex would take it as is"
    data = json.loads(text)
    assert isinstance(data, dict) and set(data) <= {"continue", "stopReason", "suppressOutput", "systemMessage",
                                                    "hookSpecificOutput"}
    specific = data["hookSpecificOutput"]
    assert set(specific) <= {"hookEventName", "additionalContext"} and specific["hookEventName"] == event
    assert data.get("continue", True) is True
    return specific["additionalContext"]


def test_setup_codex_adds_session_start_and_prompt_hooks_beside_the_mcp_entry(home: Path, repo: Path) -> None:
    hooks_json = home / ".codex" / "hooks.json"
    first = run(home, "setup", "codex", "--workspace", str(repo))
    assert first.returncode == 0, first.stderr
    assert f"{hooks_json}: created" in first.stdout
    assert first.stdout.rstrip("\n").endswith(
        "note: Codex runs a new or changed hook only after you trust it: type /hooks in Codex and trust the mnemon-ls "
        "hooks (Codex warns at start while a hook waits for review)")
    assert '[mcp_servers.mnemon-ls]' in (home / ".codex" / "config.toml").read_text()
    hooks = json.loads(hooks_json.read_text())["hooks"]
    assert set(hooks) == EVENTS
    start = hooks["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear|compact"
    assert start["hooks"] == [{"type": "command", "command": f"{sys.executable} -m mnemon_ls hook session-start --json",
                               "timeout": 10}]
    assert hooks["UserPromptSubmit"] == [{"hooks": [{"type": "command", "timeout": 10,
                                                     "command": f"{sys.executable} -m mnemon_ls hook prompt --json"}]}]

    written = hooks_json.read_bytes()
    again = run(home, "setup", "codex", "--workspace", str(repo))
    assert again.stdout.startswith("mnemon-ls is already set up for codex in your user files; nothing changed")
    assert hooks_json.read_bytes() == written

    removed = run(home, "setup", "codex", "--remove", "--workspace", str(repo))
    assert removed.returncode == 0 and "note:" not in removed.stdout
    assert not hooks_json.exists() and not (home / ".codex").exists()  # nothing else was in them


def test_setup_codex_keeps_the_persons_own_hooks(home: Path, repo: Path) -> None:
    hooks_json = home / ".codex" / "hooks.json"
    hooks_json.parent.mkdir()
    own = {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
                     "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    original = json.dumps(own, indent=2) + "\n"
    hooks_json.write_text(original)
    assert run(home, "setup", "codex", "--workspace", str(repo)).returncode == 0
    hooks = json.loads(hooks_json.read_text())["hooks"]
    assert hooks["SessionStart"][0] == own["hooks"]["SessionStart"][0] and hooks["Stop"] == own["hooks"]["Stop"]
    assert hooks["SessionStart"][1]["hooks"][0]["command"].endswith("hook session-start --json")
    assert run(home, "setup", "codex", "--remove", "--workspace", str(repo)).returncode == 0
    assert hooks_json.read_text() == original


def test_the_codex_hooks_give_the_wake_and_the_cue_as_codex_reads_them(home: Path, repo: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "root"
    added = run(home, "runtime", "add", "--content", "Deploys go through the blue-green switch",
                "--workspace", str(repo), "--scope", "custom", "--data-dir", str(data_dir))
    assert added.returncode == 0, added.stderr
    assert run(home, "setup", "codex", "--workspace", str(repo)).returncode == 0
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    # Codex's SessionStart input (codex-rs/hooks SessionStartCommandInput); it runs the command in the
    # session's working directory, through the shell
    payload = json.dumps({"session_id": "019a-thread", "transcript_path": None, "cwd": str(repo),
                          "hook_event_name": "SessionStart", "model": "gpt-5", "permission_mode": "default",
                          "source": "startup"})
    proc = subprocess.run(["sh", "-c", f"{start} --scope custom --data-dir {data_dir}"], input=payload,
                          capture_output=True, text=True, env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert proc.returncode == 0, proc.stderr
    wake = codex_reads(proc.stdout, "SessionStart")
    assert wake.startswith("MNEMON RUNTIME MEMORY SNAPSHOT\n")
    assert "Deploys go through the blue-green switch" in wake and "Git branch: main" in wake

    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = json.dumps({"session_id": "019a-thread", "turn_id": "t1", "cwd": str(repo), "prompt": "How?",
                          "hook_event_name": "UserPromptSubmit", "model": "gpt-5", "permission_mode": "default"})
    cue = subprocess.run(["sh", "-c", prompt], input=payload, capture_output=True, text=True,
                         env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert codex_reads(cue.stdout, "UserPromptSubmit").startswith("[mnemon] Memory: if older decisions may matter")
    # the plain cue starts with "[": Codex would have failed the hook as broken JSON, hence --json
    plain = subprocess.run(["sh", "-c", prompt.removesuffix(" --json")], input=payload, capture_output=True,
                           text=True, env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert plain.stdout.startswith("[mnemon]")
    quiet = subprocess.run(["sh", "-c", f"{prompt} --recall-mode off --writeback-mode off"], input=payload,
                           capture_output=True, text=True, env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert quiet.returncode == 0 and quiet.stdout == ""  # no context to add: no output at all


def test_setup_codex_project_writes_the_workspace_hooks_and_says_the_project_must_be_trusted(home: Path,
                                                                                               repo: Path) -> None:
    proc = run(home, "setup", "codex", "--project", "--workspace", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["notes"][1] == "Codex loads a project's hooks only when you trust the project (it asks when you open it)"
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == "mnemon-ls hook session-start --json"
    assert not (home / ".codex").exists()
