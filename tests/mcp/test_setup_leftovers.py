"""``mnemon-ls setup CLIENT`` for every client, as a new user tries it: ``--remove`` leaves nothing of ours
behind (no ``{}`` file, no empty directory we made) and gives a file that holds other content back byte for
byte; a second run says it is already set up and writes nothing; a run that changes something says
exactly what. Real files under a throwaway HOME and a real git repository (pygit2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemon_ls import clients
from mnemon_ls.setupfiles import Change
from tests.mcp.test_setup import run

#: (client, project?) -> the files setup writes, relative to HOME (user) or the repository (project).
FILES = {
    ("claude-code", False): [".claude.json", ".claude/settings.json"],
    ("claude-code", True): [".mcp.json", ".claude/settings.json"],
    ("cursor", False): [".cursor/mcp.json"],
    ("cursor", True): [".cursor/mcp.json"],
    ("vscode", False): [".config/Code/User/mcp.json"],
    ("vscode", True): [".vscode/mcp.json"],
    ("codex", False): [".codex/config.toml", ".codex/hooks.json"],
    ("codex", True): [".codex/config.toml", ".codex/hooks.json"],
}
TARGETS = sorted(FILES)


def setup(client: str, project: bool, home: Path, repo: Path, *, remove: bool = False) -> list[Change]:
    """``mnemon-ls setup`` in process (plan, then apply), with ``home`` as HOME."""
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    changes = clients.plan(client, workspace=repo, project=project, remove=remove, env=env)
    clients.apply(changes)
    return changes


def tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if ".git" not in p.relative_to(path).parts)


@pytest.mark.parametrize(("client", "project"), TARGETS)
def test_remove_leaves_no_file_or_directory_of_ours(client: str, project: bool, home: Path, repo: Path) -> None:
    """The new-user report: ``setup cursor --project --remove`` left ``.cursor/mcp.json`` holding ``{}``."""
    (home / ".config").mkdir()  # the XDG config directory is the user's: it stays even when empty
    base = repo if project else home
    before = tree(base)
    setup(client, project, home, repo)
    assert all((base / name).is_file() for name in FILES[(client, project)])
    setup(client, project, home, repo, remove=True)
    assert tree(base) == before
    assert (home / ".config").is_dir() and repo.is_dir()


@pytest.mark.parametrize(("client", "project"), TARGETS)
def test_remove_gives_other_content_back_byte_for_byte(client: str, project: bool, home: Path, repo: Path) -> None:
    base = repo if project else home
    originals = {}
    for name in FILES[(client, project)]:
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".toml"):
            text = '# mine\nmodel   =   "o4"\n\n[mcp_servers.other]\ncommand = "other"  # keep me'  # no final newline
        elif name.endswith("settings.json"):
            text = ('{\n\t"model": "opus",\n\t"hooks": {"SessionStart": [ {"matcher": "startup", "hooks": '
                    '[{"type": "command", "command": "echo hi"}]} ]}\n}\n')
        else:
            key = "servers" if client == "vscode" else "mcpServers"
            text = '{"numStartups":7,\n    "%s": {\n        "other": {"command": "x"}\n    }\n}' % key
        path.write_text(text)
        originals[path] = text
    (base / FILES[(client, project)][-1]).parent.joinpath("keep.txt").write_text("mine")

    setup(client, project, home, repo)
    for path in originals:
        assert path.read_text() != originals[path]
    setup(client, project, home, repo, remove=True)
    assert {path: path.read_text() for path in originals} == originals


def test_remove_keeps_a_directory_that_holds_something_else(home: Path, repo: Path) -> None:
    setup("cursor", True, home, repo)
    (repo / ".cursor" / "rules").mkdir()
    setup("cursor", True, home, repo, remove=True)
    assert tree(repo / ".cursor") == ["rules"]


def test_an_emptied_linked_file_keeps_its_link(home: Path, repo: Path) -> None:
    real = home / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text("{}")
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to(real)
    setup("cursor", False, home, repo)
    setup("cursor", False, home, repo, remove=True)
    assert (home / ".cursor" / "mcp.json").is_symlink() and json.loads(real.read_text()) == {}


def stamps(paths: list[Path]) -> list[tuple[int, int, int]]:
    return [(os.stat(p).st_ino, os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in paths]


@pytest.mark.parametrize(("client", "project"), TARGETS)
def test_a_second_run_says_already_set_up_and_writes_nothing(client: str, project: bool, home: Path,
                                                             repo: Path) -> None:
    """The new-user report: a second ``setup claude-code`` listed the hook lines as if it had written them."""
    scope = ["--project"] if project else []
    assert run(home, "setup", client, *scope, "--workspace", str(repo)).returncode == 0
    paths = [(repo if project else home) / name for name in FILES[(client, project)]]
    written = stamps(paths)
    second = run(home, "setup", client, *scope, "--workspace", str(repo))
    assert second.returncode == 0, second.stderr
    where = "this workspace" if project else "your user files"
    assert second.stdout.splitlines() == [f"mnemon-ls is already set up for {client} in {where}; nothing changed",
                                          *(f"{p}: unchanged" for p in paths),
                                          *(f"note: {n}" for n in clients.notes(client, project=project, remove=False))]
    assert stamps(paths) == written
    data = json.loads(run(home, "setup", client, *scope, "--json", "--workspace", str(repo)).stdout)
    assert data["changed"] is False and [f["state"] for f in data["files"]] == ["unchanged"] * len(paths)

    shown = run(home, "setup", client, *scope, "--remove", "--dry-run", "--workspace", str(repo))
    entry_lines = [line for line in shown.stdout.splitlines() if line.startswith("  ") and "directory" not in line
                   and not line.startswith("  nothing else")]
    assert entry_lines and all(line.startswith("  would remove ") for line in entry_lines), shown.stdout
    assert stamps(paths) == written
    assert run(home, "setup", client, *scope, "--remove", "--workspace", str(repo)).returncode == 0
    again = run(home, "setup", client, *scope, "--remove", "--workspace", str(repo))
    assert again.stdout.splitlines()[0] == f"mnemon-ls is not set up for {client} in {where}; nothing changed"
    # a file that was deleted (it held only our entry) is "absent", not "unchanged"
    assert [line.rsplit(": ", 1)[1] for line in again.stdout.splitlines()[1:]] == [
        "unchanged" if p.exists() else "absent" for p in paths]


def test_a_run_that_changes_something_says_exactly_what(home: Path, repo: Path) -> None:
    assert run(home, "setup", "claude-code", "--workspace", str(repo)).returncode == 0
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["UserPromptSubmit"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    claude_json = [home / ".claude.json"]
    kept = stamps(claude_json)
    proc = run(home, "setup", "claude-code", "--workspace", str(repo))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{home / '.claude.json'}: unchanged"
    assert lines[1] == f"{settings}: updated"
    assert len(lines) == 3 and lines[2].startswith("  added hooks.UserPromptSubmit: ")
    assert lines[2].endswith("-m mnemon_ls hook prompt")
    assert stamps(claude_json) == kept


def test_remove_takes_our_hook_out_of_a_group_it_shares(home: Path, repo: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    ours = json.dumps({"type": "command", "command": "mnemon-ls hook prompt"})
    settings.write_text('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo a"}, '
                        + ours + ']}]}, "theme": "dark"}')
    changes = setup("claude-code", False, home, repo, remove=True)
    assert changes[1].summary == ["removed the mnemon-ls hook of hooks.UserPromptSubmit"]
    assert settings.read_text() == ('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
                                    '"command": "echo a"}]}]}, "theme": "dark"}')


def test_codex_with_an_inline_mcp_servers_table_gets_an_inline_entry(home: Path, repo: Path) -> None:
    """The attack pass: ``mcp_servers = { other = {...} }`` crashed setup codex with a traceback."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('mcp_servers = { other = { command = "x" } }\n')
    done = run(home, "setup", "codex", "--workspace", str(repo))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    import tomllib

    servers = tomllib.loads(config.read_text())["mcp_servers"]
    assert servers["other"] == {"command": "x"} and servers["mnemon-ls"]["args"][-1] == "mcp"
    assert run(home, "setup", "codex", "--remove", "--workspace", str(repo)).returncode == 0
    assert tomllib.loads(config.read_text())["mcp_servers"] == {"other": {"command": "x"}}


def test_project_setup_never_writes_through_a_link_out_of_the_workspace(home: Path, repo: Path, tmp_path: Path) -> None:
    """A repository may hold ``.vscode -> /elsewhere`` or ``.mcp.json -> /elsewhere/x.json``: setup --project
    refuses, naming the file, and the file outside is untouched."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.json"
    victim.write_text('{"keep": true}\n')
    (repo / ".vscode").symlink_to(outside)
    (repo / ".mcp.json").symlink_to(victim)
    for client in ("vscode", "claude-code"):
        done = run(home, "setup", client, "--project", "--workspace", str(repo))
        assert done.returncode == 2 and "leads outside the workspace" in done.stderr, done.stderr
    assert victim.read_text() == '{"keep": true}\n' and sorted(p.name for p in outside.iterdir()) == ["victim.json"]


def test_replacing_a_users_own_entry_says_what_it_was(home: Path, repo: Path) -> None:
    """The attack pass: an existing ``mnemon-ls`` entry with ``--read-only`` was "updated" to the read-write
    one without a word. The line says what it was, and what of it is dropped."""
    claude = home / ".claude.json"
    claude.write_text(json.dumps({"mcpServers": {"mnemon-ls": {"command": "mnemon-ls", "args": ["mcp", "--read-only"],
                                                               "env": {"X": "1"}}}}))
    done = run(home, "setup", "claude-code", "--workspace", str(repo))
    assert done.returncode == 0, done.stderr
    [line] = [l for l in done.stdout.splitlines() if l.startswith("  updated mcpServers.mnemon-ls")]
    assert line.endswith(" (was: mnemon-ls mcp --read-only; its env dropped)"), line
