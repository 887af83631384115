"""``mnemon-ls setup vscode`` on VS Code's own form of ``mcp.json``: JSON with comments and trailing commas.
Real files under a throwaway HOME, the real CLI as a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mnemon_ls.jsonc import blank
from tests.mcp.test_setup import run

USER_MCP = """{
  // servers I use every day
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/", // the // in the URL is not a comment
    },
    /* the playground one */
    "play": {"command": "npx", "args": ["play-mcp"]}, // keep me
  },
  "inputs": [],
}
"""


def _user_mcp(home: Path) -> Path:
    return home / ".config" / "Code" / "User" / "mcp.json"


def test_setup_vscode_accepts_jsonc_keeps_every_comment_and_removes_back_to_the_same_bytes(
        home: Path, repo: Path) -> None:
    path = _user_mcp(home)
    path.parent.mkdir(parents=True)
    path.write_text(USER_MCP)
    os.chmod(path, 0o644)
    proc = run(home, "setup", "vscode", "--workspace", str(repo))
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    for line in USER_MCP.splitlines():
        if "//" in line or "/*" in line:
            assert line.strip().split("//")[-1] in text  # every comment is still there
    data = json.loads(blank(text))
    assert data["servers"]["mnemon-ls"]["args"] == ["-m", "mnemon_ls", "mcp"]
    assert data["servers"]["github"]["url"] == "https://api.githubcopilot.com/mcp/"
    assert data["servers"]["play"] == {"command": "npx", "args": ["play-mcp"]} and data["inputs"] == []
    assert text.index('"play"') < text.index("// keep me") < text.index('"mnemon-ls"')
    assert os.stat(path).st_mode & 0o777 == 0o644
    again = run(home, "setup", "vscode", "--workspace", str(repo))
    assert again.returncode == 0 and "unchanged" in again.stdout and path.read_text() == text
    removed = run(home, "setup", "vscode", "--remove", "--workspace", str(repo))
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == USER_MCP


def test_project_mcp_json_of_comments_only_keeps_them_after_remove(home: Path, repo: Path) -> None:
    path = repo / ".vscode" / "mcp.json"
    path.parent.mkdir()
    original = '{\n  "servers": {\n    // add the team\'s servers here\n  }\n}\n'
    path.write_text(original)
    assert run(home, "setup", "vscode", "--project", "--workspace", str(repo)).returncode == 0
    text = path.read_text()
    assert "// add the team's servers here" in text
    assert json.loads(blank(text))["servers"]["mnemon-ls"] == {"type": "stdio", "command": "mnemon-ls",
                                                               "args": ["mcp"]}
    assert run(home, "setup", "vscode", "--project", "--remove", "--workspace", str(repo)).returncode == 0
    assert path.read_text() == original  # the comment keeps the file (and its servers object)


def test_a_comment_inside_our_old_entry_or_an_open_comment_is_refused_and_nothing_written(
        home: Path, repo: Path) -> None:
    path = _user_mcp(home)
    path.parent.mkdir(parents=True)
    ours = '{\n  "servers": {\n    "mnemon-ls": {"command": "old", /* my flag */ "args": []},\n  },\n}\n'
    path.write_text(ours)
    proc = run(home, "setup", "vscode", "--workspace", str(repo))
    assert proc.returncode == 2 and f"{path}: servers.mnemon-ls" in proc.stderr
    assert "holds a comment" in proc.stderr and "nothing was written" in proc.stderr
    assert path.read_text() == ours
    broken = '{\n  "servers": {} /* never closed\n}\n'
    path.write_text(broken)
    proc = run(home, "setup", "vscode", "--workspace", str(repo))
    assert proc.returncode == 2 and str(path) in proc.stderr and "is not valid JSON with comments" in proc.stderr
    assert "never closed" in proc.stderr and path.read_text() == broken


def test_other_clients_files_stay_plain_json(home: Path, repo: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  // cursor\n  "mcpServers": {}\n}\n')
    proc = run(home, "setup", "cursor", "--workspace", str(repo))
    assert proc.returncode == 2 and "is not valid JSON (" in proc.stderr
    assert path.read_text() == '{\n  // cursor\n  "mcpServers": {}\n}\n'
