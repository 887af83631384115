"""Shared-project records across clones of one repository: ``shared.jsonl`` travels with the code, so a record
written and committed in one clone is listed in every other clone once a pull brings it in; a record of another
project (copied into the file) is not. Real ``git clone``/``pull`` runs and the real command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.records import RecordsSource
from mnemon_ls.records.paths import root_id
from tests.gitrepo import GIT_ENV_OVERRIDES
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

SHARED = ".dsh/workspace-memory/shared.jsonl"


class Machine:
    """A person's setting: a HOME, a ``$DSH_HOME`` and the git identity; runs git and mnemon-ls in a folder."""

    def __init__(self, tmp: Path, name: str) -> None:
        if shutil.which("git") is None:  # pragma: no cover - depends on the machine
            pytest.skip("git CLI not installed")
        self.base = tmp / name
        self.base.mkdir()
        self.env = procs.child_env(**GIT_ENV_OVERRIDES, HOME=str(self.base / "home"),
                                   MNEMON_DATA_DIR=str(self.base / "data"), DSH_HOME=str(self.base / "dsh"),
                                   DSH_USER_ID=name)

    def git(self, cwd: Path, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True,
                                timeout=procs.WAIT_SECONDS)
        assert result.returncode == 0, result.stderr + result.stdout
        return result.stdout

    def records(self, cwd: Path, *args: str) -> dict:
        result = subprocess.run([*mnemon_command("records", *args, "--json")], cwd=cwd, env=self.env,
                                capture_output=True, text=True, encoding="utf-8", timeout=procs.WAIT_SECONDS)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare repository with one commit (the project both clones come from)."""
    tmp = Path(os.path.realpath(tmp_path))
    maker = Machine(tmp, "maker")
    seed = tmp / "seed"
    seed.mkdir()
    maker.git(seed, "init", "-q", "--initial-branch=main")
    (seed / "README").write_text("project\n")
    maker.git(seed, "add", "-A")
    maker.git(seed, "commit", "-q", "-m", "start")
    maker.git(tmp, "clone", "-q", "--bare", str(seed), str(tmp / "origin.git"))
    return tmp / "origin.git"


def _clone(machine: Machine, origin: Path, name: str) -> Path:
    path = machine.base / name
    machine.git(machine.base, "clone", "-q", str(origin), str(path))
    return path


def test_a_shared_record_committed_in_one_clone_is_listed_in_another_after_a_pull(origin):
    tmp = origin.parent
    ana, bo = Machine(tmp, "ana"), Machine(tmp, "bo")
    a, b = _clone(ana, origin, "clone-a"), _clone(bo, origin, "clone-b")
    made = ana.records(a, "create", "--record-scope", "shared-project", "--confirm", "--type", "decision",
                       "--title", "Retries", "--content", "Retry payments three times with backoff")
    root = ana.git(a, "rev-list", "--max-parents=0", "HEAD").strip()
    assert made["record"]["scopeKey"] == f"git:{root}"  # the project's first commit, not this clone's path
    ana.git(a, "add", "-f", SHARED)
    ana.git(a, "commit", "-q", "-m", "shared record")
    ana.git(a, "push", "-q", "origin", "main")
    bo.git(b, "pull", "-q", "--no-rebase", "origin", "main")
    assert (b / SHARED).exists()
    listed = bo.records(b, "list", "--record-scope", "shared-project")
    assert [(r["id"], r["title"]) for r in listed["records"]] == [(made["id"], "Retries")]
    # and B changes it (a verify is a write of the same partition), which A sees after the next pull
    assert bo.records(b, "verify", made["id"], "--confirm")["record"]["governance"]["verification"] == "verified"
    bo.git(b, "commit", "-q", "-am", "verified")
    bo.git(b, "push", "-q", "origin", "main")
    ana.git(a, "pull", "-q", "--no-rebase", "origin", "main")
    again = ana.records(a, "list", "--record-scope", "shared-project")["records"]
    assert [(r["id"], r["governance"]["verification"]) for r in again] == [(made["id"], "verified")]


def test_another_projects_shared_record_copied_in_stays_hidden(origin, tmp_path):
    tmp = origin.parent
    ana = Machine(tmp, "ana")
    a = _clone(ana, origin, "clone-a")
    mine = ana.records(a, "create", "--record-scope", "shared-project", "--confirm", "--type", "fact",
                       "--title", "Ours", "--content", "belongs here")["id"]
    other = tmp / "other"
    other.mkdir()
    ana.git(other, "init", "-q", "--initial-branch=main")
    (other / "README").write_text("another project\n")
    ana.git(other, "add", "-A")
    ana.git(other, "commit", "-q", "-m", "another start")
    theirs = ana.records(other, "create", "--record-scope", "shared-project", "--confirm", "--type", "fact",
                         "--title", "Theirs", "--content", "belongs to the other project")["id"]
    with (a / SHARED).open("ab") as out:  # someone copies the other project's line in
        out.write((other / SHARED).read_bytes())
    listed = ana.records(a, "list", "--record-scope", "shared-project")["records"]
    assert [r["id"] for r in listed] == [mine] and theirs != mine


def test_a_record_written_before_the_fix_in_this_clone_stays_listed(origin):
    """A record this clone wrote with the old key (the clone's own rootId) is still this project's."""
    tmp = origin.parent
    ana = Machine(tmp, "ana")
    a = _clone(ana, origin, "clone-a")
    source = RecordsSource(a, user_id="ana", env={"DSH_HOME": str(ana.base / "dsh")})
    made = source.create("shared-project", "fact", "Old", "written before", confirm=True).record
    line = json.loads((a / SHARED).read_text())
    line["scopeKey"] = root_id(a)
    (a / SHARED).write_text(json.dumps(line) + "\n")
    assert [r.id for r in source.read("shared-project").values()] == [made.id]


def test_a_shallow_clone_lists_the_shared_record_and_its_own_record_is_listed_in_a_full_clone(origin):
    """A shallow clone lacks the root commit: it still lists the project's records, and what it writes (keyed
    by its shallow boundary, a commit every full clone has) is listed in a full clone."""
    tmp = origin.parent
    ana, bo = Machine(tmp, "ana"), Machine(tmp, "bo")
    a = _clone(ana, origin, "clone-a")
    first = ana.records(a, "create", "--record-scope", "shared-project", "--confirm", "--title", "First",
                        "--content", "from a full clone")["id"]
    (a / "more").write_text("a second commit, so that depth 1 cuts the root off\n")
    ana.git(a, "add", "more", SHARED)
    ana.git(a, "commit", "-q", "-m", "first record")
    ana.git(a, "push", "-q", "origin", "main")
    b = bo.base / "shallow"
    bo.git(bo.base, "clone", "-q", "--depth", "1", origin.as_uri(), str(b))
    assert (b / ".git" / "shallow").exists()
    assert [r["id"] for r in bo.records(b, "list", "--record-scope", "shared-project")["records"]] == [first]
    second = bo.records(b, "create", "--record-scope", "shared-project", "--confirm", "--title", "Second",
                        "--content", "from a shallow clone")
    assert second["record"]["scopeKey"] == "git:" + bo.git(b, "rev-parse", "HEAD").strip()
    bo.git(b, "commit", "-q", "-am", "second record")
    bo.git(b, "push", "-q", "origin", "main")
    ana.git(a, "pull", "-q", "--no-rebase", "origin", "main")
    listed = ana.records(a, "list", "--record-scope", "shared-project")["records"]
    assert sorted(r["id"] for r in listed) == sorted([first, second["id"]])
