"""The auto-writer records only what the session did, and nothing of the records lands under ``~`` when
``MNEMON_DATA_DIR`` says where the data goes.

- A ``git checkout`` and a ``git stash`` run in a terminal (real git, a subprocess) while the server runs
  change files on disk; the editor's file watcher reports them (``workspace/didChangeWatchedFiles``,
  computed here from the real working tree before and after the command, as a watcher sees it). They are
  not the session's: only the editor's own ``didSave`` shows in the digest. The server no longer asks
  the client to watch the whole workspace either.
- With ``MNEMON_DATA_DIR`` set and ``DSH_HOME`` unset (the test launcher's environment, ``HOME`` a fresh
  directory), the session digest and a ``user`` record live under the data directory, in the folder
  ``mnemon-ls doctor`` lists, and nothing at all is created under ``HOME``.

Waits are on ``mnemon/records/autoWritten`` (armed before the trigger); no sleep synchronises anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from mnemon_ls.records.paths import root_id
from tests.gitrepo import git_cli
from tests.lsp.conftest import RECORDS_AUTO_WRITTEN, Launcher, MnemonClient, uri
from tests.helpers.zygote import mnemon_command

INIT = {"storageScope": "workspace", "runtimeUserScope": "storage"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def working_tree(ws: Path) -> dict[str, bytes]:
    """Every file of the working tree (``.git/`` left out): relative path -> bytes."""
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            files[path.relative_to(ws).as_posix()] = path.read_bytes()
    return files


def watcher_events(ws: Path, before: dict[str, bytes], after: dict[str, bytes]) -> list[types.FileEvent]:
    """What a file watcher reports for the change from ``before`` to ``after``."""
    events = [types.FileEvent(uri=uri(ws / rel), type=types.FileChangeType.Created) for rel in after if rel not in before]
    events += [types.FileEvent(uri=uri(ws / rel), type=types.FileChangeType.Changed)
               for rel in after if rel in before and after[rel] != before[rel]]
    events += [types.FileEvent(uri=uri(ws / rel), type=types.FileChangeType.Deleted) for rel in before if rel not in after]
    return events


def in_terminal(client: MnemonClient, ws: Path, *git_args: str) -> list[str]:
    """Run ``git <git_args>`` in ``ws`` (a terminal outside the editor), report what changed on disk the way
    the editor's watcher does, and return the changed paths (relative)."""
    before = working_tree(ws)
    git_cli(ws, *git_args)
    events = watcher_events(ws, before, working_tree(ws))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))
    return sorted(Path(e.uri.removeprefix("file://")).relative_to(ws).as_posix() for e in events)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A real repository on ``main`` (src/app.py, src/old.py) with a branch ``feature`` that changes
    src/app.py, adds src/new.py and deletes src/old.py."""
    path = Path(tmp_path.resolve()) / "ws"
    path.mkdir()
    git_cli(path, "init", "-q", "--initial-branch=main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('main')\n")
    (path / "src" / "old.py").write_text("old = 1\n")
    git_cli(path, "add", "-A")
    git_cli(path, "commit", "-q", "-m", "main")
    git_cli(path, "checkout", "-q", "-b", "feature")
    (path / "src" / "app.py").write_text("print('feature')\n")
    (path / "src" / "new.py").write_text("new = 2\n")
    (path / "src" / "old.py").unlink()
    git_cli(path, "add", "-A")
    git_cli(path, "commit", "-q", "-m", "feature")
    git_cli(path, "checkout", "-q", "main")
    return path


async def test_the_server_does_not_ask_the_editor_to_watch_the_workspace(lsp: Launcher, ws: Path):
    client = await lsp.start("visual-studio-code", folders=[ws], init=INIT)  # dynamic registration supported
    assert client.registrations == []


async def test_a_checkout_and_a_stash_in_a_terminal_are_not_the_sessions(lsp: Launcher, ws: Path):
    client = await lsp.start("visual-studio-code", folders=[ws], init=INIT)
    session = (await client.status())["workspaces"][0]["records"]["sessionId"]
    armed = client.expect(RECORDS_AUTO_WRITTEN)

    switched = in_terminal(client, ws, "checkout", "-q", "feature")
    assert switched == ["src/app.py", "src/new.py", "src/old.py"]  # what the watcher saw: real changes
    (ws / "src" / "app.py").write_text("print('work in progress')\n")  # a tool in the terminal edits it
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(ws / "src" / "app.py"), type=types.FileChangeType.Changed)]))
    stashed = in_terminal(client, ws, "stash", "-q")
    assert stashed == ["src/app.py"]
    back = in_terminal(client, ws, "checkout", "-q", "main")
    assert back == ["src/app.py", "src/new.py", "src/old.py"]

    (ws / "notes.md").write_text("what I did\n")  # the editor saves a file: the session's own event
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(ws / "notes.md"))))
    written = await client.received(armed)
    assert written["status"] == "committed"
    record = (await client.call("mnemon/records/get", {"id": written["id"], "recordScope": "session"}))["record"]
    assert record["content"] == "Files touched: 1 (0 created, 1 modified, 0 deleted)\nModified: notes.md"
    assert record["provenance"]["eventSeq"] == 1  # only the save counted
    key = f"{session}|{root_id(ws)}"
    lines = (lsp.data_dir / "workspace-memory" / "sessions" / f"{sha(key)}.jsonl").read_text().splitlines()
    assert [json.loads(line)["content"] for line in lines] == [record["content"]]


async def test_with_mnemon_data_dir_nothing_is_written_under_home(lsp: Launcher, ws: Path):
    # The launcher sets HOME (an empty directory) and MNEMON_DATA_DIR; tests/conftest.py removed DSH_HOME.
    assert "DSH_HOME" not in lsp.env()
    client = await lsp.start(folders=[ws])  # the defaults: storageScope workspaces, runtimeUserScope global
    session = (await client.status())["workspaces"][0]["records"]["sessionId"]
    armed = client.expect(RECORDS_AUTO_WRITTEN)
    (ws / "notes.md").write_text("saved\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(ws / "notes.md"))))
    assert (await client.received(armed))["status"] == "committed"
    user = await client.call("mnemon/records/create", {"recordScope": "user", "title": "Tabs",
                                                       "content": "I prefer tabs"})
    assert user["status"] == "committed"
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "prefers tabs"})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "tests run with pytest"})

    assert sorted(p.relative_to(lsp.home).as_posix() for p in lsp.home.rglob("*")) == []
    records = lsp.data_dir / "workspace-memory"
    session_file = records / "sessions" / f"{sha(f'{session}|{root_id(ws)}')}.jsonl"
    assert json.loads(session_file.read_text())["content"].endswith("Modified: notes.md")
    assert [json.loads(line)["id"] for line in (records / "user.jsonl").read_text().splitlines()] == [user["id"]]

    # doctor (same environment) names that folder as where the user and session scopes are written
    doctor = subprocess.run(mnemon_command("doctor", "--json", "--workspace", str(ws)),
                            env=lsp.env(), capture_output=True, text=True, timeout=60)
    assert doctor.returncode == 0, doctor.stderr
    places = {p["what"]: p["path"] for p in json.loads(doctor.stdout)["writes"]}
    assert places["records: user and session scopes"] == str(records)
    assert sorted(p.relative_to(lsp.home).as_posix() for p in lsp.home.rglob("*")) == []
