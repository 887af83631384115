"""``mnemon-ls setup CLIENT`` and ``mnemon-ls hook``: real files under a throwaway HOME, real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import REPO, server_env
from tests.helpers.zygote import mnemon_command


def run(home: Path, *args: str, stdin: str = "", cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*mnemon_command(), *args], input=stdin, capture_output=True, text=True,
                          env=server_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **env),
                          cwd=str(cwd or REPO), timeout=60)


def test_claude_code_setup_keeps_other_settings_is_idempotent_and_reversible(home: Path, repo: Path) -> None:
    claude_json = home / ".claude.json"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    claude_json.write_text(json.dumps({"numStartups": 7, "mcpServers": {"other": {"command": "other-mcp"}}}))
    settings.write_text(json.dumps({"model": "opus", "hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}]}}))
    shown = run(home, "setup", "claude-code", "--dry-run", "--workspace", str(repo))
    assert shown.returncode == 0 and f"{claude_json}: would be updated" in shown.stdout
    assert json.loads(claude_json.read_text())["mcpServers"] == {"other": {"command": "other-mcp"}}

    first = run(home, "setup", "claude-code", "--workspace", str(repo))
    assert first.returncode == 0, first.stderr
    after_first = (claude_json.read_bytes(), settings.read_bytes())
    second = run(home, "setup", "claude-code", "--workspace", str(repo))
    assert "unchanged" in second.stdout and (claude_json.read_bytes(), settings.read_bytes()) == after_first

    data = json.loads(claude_json.read_text())
    assert data["numStartups"] == 7 and data["mcpServers"]["other"] == {"command": "other-mcp"}
    assert data["mcpServers"]["mnemon-ls"] == {"type": "stdio", "command": sys.executable,
                                               "args": ["-m", "mnemon_ls", "mcp"]}
    hooks = json.loads(settings.read_text())["hooks"]
    assert json.loads(settings.read_text())["model"] == "opus"
    assert hooks["SessionStart"][0] == {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    ours = hooks["SessionStart"][1]
    assert ours["matcher"] == "startup|resume|clear|compact"
    assert ours["hooks"][0]["command"].endswith("-m mnemon_ls hook session-start")
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"].endswith("-m mnemon_ls hook prompt")

    removed = run(home, "setup", "claude-code", "--remove", "--workspace", str(repo))
    assert removed.returncode == 0
    assert json.loads(claude_json.read_text()) == {"numStartups": 7, "mcpServers": {"other": {"command": "other-mcp"}}}
    assert json.loads(settings.read_text()) == {"model": "opus", "hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}]}}


def test_the_installed_hooks_print_the_wake_and_the_cue(home: Path, repo: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "root"
    added = run(home, "runtime", "add", "--content", "Deploys go through the blue-green switch",
                "--workspace", str(repo), "--scope", "custom", "--data-dir", str(data_dir))
    assert added.returncode == 0, added.stderr
    assert run(home, "setup", "claude-code", "--workspace", str(repo)).returncode == 0
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    payload = json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})
    # As Claude Code runs it: through a shell, the hook input on stdin, the data dir from the environment.
    proc = subprocess.run(["sh", "-c", f"{start} --scope custom --data-dir {data_dir}"], input=payload,
                          capture_output=True, text=True, env=server_env(HOME=str(home)), cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("MNEMON RUNTIME MEMORY SNAPSHOT\n")
    assert "Deploys go through the blue-green switch" in proc.stdout and "Git branch: main" in proc.stdout
    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    cue = subprocess.run(["sh", "-c", prompt], input="{}", capture_output=True, text=True,
                         env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert cue.stdout.startswith("[mnemon] Memory: if older decisions may matter") and cue.stdout.count("\n") == 1
    quiet = subprocess.run(["sh", "-c", f"{prompt} --recall-mode off --writeback-mode off"], input="{}",
                           capture_output=True, text=True, env=server_env(HOME=str(home)), cwd=str(repo), timeout=60)
    assert quiet.returncode == 0 and quiet.stdout == ""


def test_a_hook_never_fails_the_turn(home: Path, tmp_path: Path) -> None:
    proc = run(home, "hook", "session-start", "--scope", "custom", "--data-dir", "relative/dir", stdin="not json")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr.startswith("mnemon-ls")


def test_unparsable_files_are_refused_and_left_alone(home: Path, repo: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}')
    proc = run(home, "setup", "claude-code", "--workspace", str(repo))
    assert proc.returncode == 2 and "is not valid JSON" in proc.stderr and "nothing was written" in proc.stderr
    assert settings.read_text() == '{"hooks": {,}}' and not (home / ".claude.json").exists()
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text("[mcp_servers\n")
    proc = run(home, "setup", "codex", "--workspace", str(repo))
    assert proc.returncode == 2 and "is not valid TOML" in proc.stderr and codex.read_text() == "[mcp_servers\n"


def test_codex_keeps_comments_and_other_servers(home: Path, repo: Path) -> None:
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    original = '# my settings\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "other"  # keep me\n'
    codex.write_text(original)
    assert run(home, "setup", "codex", "--workspace", str(repo)).returncode == 0
    text = codex.read_text()
    assert text.startswith(original) and '[mcp_servers.mnemon-ls]\ncommand = "' in text
    assert run(home, "setup", "codex", "--workspace", str(repo)).stdout.count("unchanged") == 2  # and hooks.json
    assert run(home, "setup", "codex", "--remove", "--workspace", str(repo)).returncode == 0
    assert codex.read_text().rstrip("\n") == original.rstrip("\n")


@pytest.mark.parametrize(("client", "relative", "key"), [
    ("cursor", ".cursor/mcp.json", "mcpServers"),
    ("vscode", ".vscode/mcp.json", "servers"),
    ("claude-code", ".mcp.json", "mcpServers"),
])
def test_project_files_use_the_console_script(client: str, relative: str, key: str, home: Path, repo: Path) -> None:
    proc = run(home, "setup", client, "--project", "--workspace", str(repo))
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((repo / relative).read_text())[key]["mnemon-ls"]
    assert entry["command"] == "mnemon-ls" and entry["args"] == ["mcp"]


def test_user_scope_vscode_and_cursor_paths(home: Path, repo: Path) -> None:
    assert run(home, "setup", "vscode", "--workspace", str(repo)).returncode == 0
    assert "mnemon-ls" in json.loads((home / ".config" / "Code" / "User" / "mcp.json").read_text())["servers"]
    assert run(home, "setup", "cursor", "--workspace", str(repo)).returncode == 0
    assert json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["mnemon-ls"]["args"] == [
        "-m", "mnemon_ls", "mcp"]


def test_hostile_config_files(home: Path, repo: Path) -> None:
    """Found by an attack pass: a non-UTF-8 file gave a traceback, a linked file was replaced by a copy,
    and --remove rewrote a file that never had the entry."""
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_bytes(b"\xff{}")
    proc = run(home, "setup", "cursor", "--workspace", str(repo))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "is not UTF-8 text" in proc.stderr
    assert cursor.read_bytes() == b"\xff{}"

    real = home / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"keep": true}')
    (home / ".claude.json").symlink_to(real)
    assert run(home, "setup", "claude-code", "--workspace", str(repo)).returncode == 0
    assert (home / ".claude.json").is_symlink()
    data = json.loads(real.read_text())
    assert data["keep"] is True and "mnemon-ls" in data["mcpServers"]

    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model   =   "o4"  # spacing kept\n')
    removed = run(home, "setup", "codex", "--remove", "--workspace", str(repo))
    assert removed.returncode == 0 and codex.read_text() == 'model   =   "o4"  # spacing kept\n'
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers":{"other":{"command":"x"}}}')
    assert run(home, "setup", "cursor", "--remove", "--workspace", str(repo)).returncode == 0
    assert (home / ".cursor" / "mcp.json").read_text() == '{"mcpServers":{"other":{"command":"x"}}}'
