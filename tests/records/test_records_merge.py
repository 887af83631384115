"""The records merge driver (``mnemon-ls records merge-driver %O %A %B``) and ``mnemon-ls setup git``, with real
``git merge`` runs: git runs the driver through the console script found on ``PATH`` (a shim that starts the real
command line), as it would in a person's repository."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.records import RecordsSource, validate_record
from mnemon_ls.records.merge import merge
from tests.gitrepo import GIT_ENV_OVERRIDES
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command
from tests.records.conftest import Clock

SHARED = ".dsh/workspace-memory/shared.jsonl"


class Repo:
    """A git repository driven by the git CLI, with ``mnemon-ls`` on ``PATH`` for git's merge driver."""

    def __init__(self, tmp: Path) -> None:
        if shutil.which("git") is None:  # pragma: no cover - depends on the machine
            pytest.skip("git CLI not installed")
        self.ws = Path(os.path.realpath(tmp)) / "ws"
        self.ws.mkdir()
        shim = self.ws.parent / "bin"
        shim.mkdir()
        script = shim / "mnemon-ls"
        script.write_text("#!/bin/sh\nexec " + " ".join(map(shlex.quote, mnemon_command())) + ' "$@"\n')
        script.chmod(0o755)
        self.env = procs.child_env(**GIT_ENV_OVERRIDES, HOME=str(self.ws.parent / "home"),
                                   DSH_HOME=str(self.ws.parent / "dsh"), DSH_USER_ID="ana",
                                   PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
        self.git("init", "-q", "--initial-branch=main")
        (self.ws / "README").write_text("x\n")
        self.commit("start")

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["git", *args], cwd=self.ws, env=self.env, capture_output=True, text=True,
                                timeout=procs.WAIT_SECONDS)
        assert "Traceback" not in result.stderr + result.stdout, result.stderr + result.stdout
        if check:
            assert result.returncode == 0, result.stderr + result.stdout
        return result

    def mnemon(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(["mnemon-ls", *args], cwd=self.ws, env=self.env, capture_output=True, text=True,
                                timeout=procs.WAIT_SECONDS)
        assert "Traceback" not in result.stderr, result.stderr
        return result

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def source(self, start: int = 1_760_000_000_000) -> RecordsSource:
        return RecordsSource(self.ws, session_id="s1", user_id="ana", env={"DSH_HOME": str(self.ws.parent / "dsh")},
                             clock=Clock(start))

    def create(self, title: str, content: str, start: int = 1_760_000_000_000) -> str:
        return self.source(start).create("shared-project", "decision", title, content, confirm=True).record.id

    def lines(self) -> list[bytes]:
        return [line for line in (self.ws / SHARED).read_bytes().split(b"\n") if line]

    def current(self) -> dict[str, dict]:
        """id -> current record (every line checked: valid JSON and a valid record)."""
        out: dict[str, dict] = {}
        for line in self.lines():
            record = validate_record(json.loads(line)).to_json()
            out[record["id"]] = record
        return out


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path)
    setup = repo.mnemon("setup", "git")
    assert setup.returncode == 0, setup.stderr
    repo.commit("setup git")  # .gitattributes is committed, as the note says
    return repo


def _branches(repo: Repo, on_main, on_feature) -> subprocess.CompletedProcess[str]:
    """Run ``on_main()`` on main and ``on_feature()`` on a branch ``feature`` made from main, commit each, then
    ``git merge feature`` on main (not checked)."""
    repo.git("switch", "-q", "-c", "feature")
    on_feature()
    repo.commit("feature")
    repo.git("switch", "-q", "main")
    on_main()
    repo.commit("main")
    return repo.git("merge", "--no-edit", "feature", check=False)


def test_two_branches_adding_records_merge_clean_with_both_in_order(repo):
    base = repo.create("Base", "from the start")
    repo.commit("base")
    made: dict[str, str] = {}
    merged = _branches(repo, lambda: made.update(main=repo.create("Main", "on main", 1_760_000_100_000)),
                       lambda: made.update(feature=repo.create("Feature", "on feature", 1_760_000_200_000)))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert list(repo.current()) == [base, made["main"], made["feature"]]  # ours' order, then theirs' new ones
    assert repo.git("status", "--porcelain").stdout == ""
    titles = {r.title for r in repo.source().read("shared-project").values()}
    assert titles == {"Base", "Main", "Feature"}


def test_both_branches_creating_the_file_merge_clean(repo):
    made: dict[str, str] = {}
    merged = _branches(repo, lambda: made.update(main=repo.create("Main", "on main")),
                       lambda: made.update(feature=repo.create("Feature", "on feature", 1_760_000_100_000)))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert list(repo.current()) == [made["main"], made["feature"]]


def test_without_setup_git_the_same_merge_conflicts(tmp_path):
    repo = Repo(tmp_path)
    repo.create("Base", "from the start")
    repo.commit("base")
    merged = _branches(repo, lambda: repo.create("Main", "on main", 1_760_000_100_000),
                       lambda: repo.create("Feature", "on feature", 1_760_000_200_000))
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    assert b"<<<<<<<" in (repo.ws / SHARED).read_bytes()


def test_both_editing_one_record_the_higher_revision_wins(repo):
    rid = repo.create("Storage", "JSONL")
    repo.commit("base")

    def main_edit():
        repo.source(1_760_000_300_000).edit(rid, content="main's words", confirm=True)  # revision 2, later

    def feature_edits():
        source = repo.source(1_760_000_100_000)
        source.edit(rid, content="feature's first words", confirm=True)
        source.edit(rid, content="feature's words", confirm=True)  # revision 3

    merged = _branches(repo, main_edit, feature_edits)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    record = repo.source().get(rid)
    assert (record.content, record.governance.revision, record.governance.verification) == (
        "feature's words", 3, "unverified")
    assert len(repo.current()) == 1
    # every line of both sides is still in the file (history), the chosen state is the last of its id
    assert sum(b"feature's first words" in line for line in repo.lines()) == 1
    assert sum(b"main's words" in line for line in repo.lines()) == 1


def test_same_revision_edited_differently_keeps_both_and_marks_the_other_stale(repo):
    rid = repo.create("Storage", "JSONL")
    repo.source().verify(rid, confirm=True)
    repo.commit("base")
    merged = _branches(repo, lambda: repo.source(1_760_000_100_000).edit(rid, content="main's", confirm=True),
                       lambda: repo.source(1_760_000_200_000).edit(rid, content="feature's", confirm=True))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "marked stale for review" in merged.stdout + merged.stderr  # git shows the driver's summary
    records = repo.source().read("shared-project")
    kept = records[rid]  # the later edit (feature's) keeps the id, as it was
    assert (kept.content, kept.governance.revision, kept.governance.verification) == ("feature's", 2, "unverified")
    copies = [r for i, r in records.items() if i != rid]
    assert len(copies) == 1
    copy = copies[0]
    assert copy.id.startswith(rid + "~conflict-")
    assert (copy.content, copy.governance.revision, copy.governance.verification) == ("main's", 2, "stale")
    assert {"kind": "conflict", "id": rid} in [ref.model_dump() for ref in copy.governance.source_refs]
    listed = repo.mnemon("records", "list", "--verification", "stale", "--json")
    assert [r["id"] for r in json.loads(listed.stdout)["records"]] == [copy.id]


def test_archived_on_one_side_and_edited_on_the_other_keeps_the_edit_for_review(repo):
    rid = repo.create("Storage", "JSONL")
    repo.commit("base")
    merged = _branches(repo, lambda: repo.source(1_760_000_100_000).archive(rid, confirm=True),
                       lambda: repo.source(1_760_000_200_000).edit(rid, content="still true", confirm=True))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    record = repo.source().get(rid)
    assert (record.status, record.content, record.governance.verification) == ("active", "still true", "stale")


def test_a_malformed_line_is_kept_verbatim_and_git_reports_a_conflict(repo):
    repo.create("Base", "from the start")
    repo.commit("base")
    made: dict[str, str] = {}

    def feature():
        made["feature"] = repo.create("Feature", "on feature", 1_760_000_200_000)
        with open(repo.ws / SHARED, "ab") as f:
            f.write(b'{"id": "half a line\n')

    merged = _branches(repo, lambda: made.update(main=repo.create("Main", "on main", 1_760_000_100_000)), feature)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    assert "not JSON" in merged.stdout + merged.stderr
    lines = repo.lines()
    assert b'{"id": "half a line' in lines and not any(b"<<<<<<<" in line for line in lines)
    valid = [line for line in lines if line != b'{"id": "half a line']
    assert [validate_record(json.loads(line)).title for line in valid] == ["Base", "Main", "Feature"]
    assert repo.git("status", "--porcelain").stdout.startswith("UU ")


def test_setup_git_is_idempotent_and_remove_restores_both_files_byte_for_byte(tmp_path):
    repo = Repo(tmp_path)
    config = repo.ws / ".git" / "config"
    with open(config, "a") as f:
        f.write('[alias]\n\tst = status\n')
    attributes = repo.ws / ".gitattributes"
    attributes.write_bytes(b"*.png binary\n# keep\n")
    before = (config.read_bytes(), attributes.read_bytes())
    first = repo.mnemon("setup", "git", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["changed"] is True
    assert config.read_text().endswith('[merge "mnemon-records"]\n\tname = mnemon-ls workspace records (union by '
                                       'record id, the higher revision wins)\n\tdriver = mnemon-ls records '
                                       "merge-driver %O %A %B\n")
    assert attributes.read_bytes() == before[1] + b".dsh/workspace-memory/*.jsonl merge=mnemon-records\n"
    assert repo.git("config", "merge.mnemon-records.driver").stdout == "mnemon-ls records merge-driver %O %A %B\n"
    assert repo.git("check-attr", "merge", SHARED).stdout == f"{SHARED}: merge: mnemon-records\n"
    after = (config.read_bytes(), attributes.read_bytes())
    again = repo.mnemon("setup", "git", "--json")
    assert json.loads(again.stdout)["changed"] is False
    assert (config.read_bytes(), attributes.read_bytes()) == after
    removed = repo.mnemon("setup", "git", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert (config.read_bytes(), attributes.read_bytes()) == before
    assert json.loads(repo.mnemon("setup", "git", "--remove", "--json").stdout)["changed"] is False


def test_setup_git_remove_deletes_a_gitattributes_it_created(tmp_path):
    repo = Repo(tmp_path)
    before = (repo.ws / ".git" / "config").read_bytes()
    assert repo.mnemon("setup", "git").returncode == 0
    assert repo.mnemon("setup", "git", "--remove").returncode == 0
    assert (repo.ws / ".git" / "config").read_bytes() == before
    assert not (repo.ws / ".gitattributes").exists()


def test_setup_git_outside_a_repository_names_the_workspace_and_writes_nothing(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = subprocess.run([*mnemon_command("setup", "git", "--workspace", str(plain))], cwd=plain,
                            env=procs.child_env(HOME=str(tmp_path / "home"), GIT_CEILING_DIRECTORIES=str(tmp_path)),
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
    assert result.returncode == 2 and "workspace: must be in a git repository" in result.stderr
    assert list(plain.iterdir()) == []


# ------------------------------------------------------------------ the merge itself, on bytes


def _record(rid: str, content: str, revision: int = 1, updated: int = 1_760_000_000_000, **extra) -> bytes:
    from mnemon_ls.records import content_hash

    data = {"schemaVersion": 1, "id": rid, "scope": "shared-project", "scopeKey": "k", "type": "fact", "title": rid,
            "content": content, "tags": [], "provenance": {"kind": "user"}, "createdAt": 1_760_000_000_000,
            "updatedAt": updated, "useCount": 0, "contentHash": content_hash(content), "status": "active",
            "governance": {"origin": "user-authored", "sourceRefs": [], "verification": "unverified",
                           "revision": revision, "retention": "project-delete"}, **extra}
    return json.dumps(data).encode() + b"\n"


def test_merge_is_deterministic_and_merging_its_result_again_changes_nothing():
    base = _record("a", "one")
    ours = base + _record("a", "ours", 2, 1_760_000_000_005) + _record("b", "new in ours")
    theirs = base + _record("a", "theirs", 2, 1_760_000_000_009) + _record("c", "new in theirs")
    first = merge(base, ours, theirs)
    assert first.data == merge(base, ours, theirs).data and first.clean
    assert [c.id for c in first.conflicts] == ["a"]
    again = merge(base, first.data, theirs)
    assert again.data == first.data
    ids = [json.loads(line)["id"] for line in first.data.splitlines()]
    assert ids[:4] == ["a", "a", "b", "a"]  # ours' lines as they were, then theirs' new ones
    assert set(ids) == {"a", "b", "c", first.conflicts[0].copy}


def test_a_record_removed_on_one_side_and_untouched_on_the_other_goes():
    base = _record("a", "one") + _record("b", "two")
    ours = _record("b", "two")
    result = merge(base, ours, base)
    assert result.data == ours and result.clean and not result.conflicts


def test_a_compaction_on_one_side_stays_done():
    base = _record("a", "one") + _record("a", "one more", 2)
    theirs = _record("a", "one more", 2)  # compacted
    ours = base + _record("b", "new")
    assert merge(base, ours, theirs).data == _record("a", "one more", 2) + _record("b", "new")


def test_a_line_that_is_not_a_record_is_kept_and_the_merge_is_unclean():
    base = _record("a", "one")
    ours = base + b"not json\n"
    theirs = base + b'{"schemaVersion": 2, "id": "future"}\n'
    result = merge(base, ours, theirs)
    assert result.data == base + b"not json\n" + b'{"schemaVersion": 2, "id": "future"}\n'
    assert [(m["side"], m["line"]) for m in result.malformed] == [("ours", 2), ("theirs", 2)]
    assert not result.clean
    # a bad line both sides already had in base is not the merge's business
    assert merge(ours, ours, ours + _record("b", "two")).clean


def test_a_record_removed_on_one_side_and_changed_on_the_other_is_kept_stale():
    base = _record("a", "one") + _record("b", "two")
    ours = _record("b", "two")  # a's lines deleted by hand
    theirs = base + _record("a", "one, changed", 2)
    result = merge(base, ours, theirs)
    current = {json.loads(line)["id"]: json.loads(line) for line in result.data.splitlines()}
    assert current["a"]["content"] == "one, changed"
    assert current["a"]["governance"]["verification"] == "stale" and current["a"]["governance"]["revision"] == 2
    assert [c.id for c in result.conflicts] == ["a"] and result.clean


def test_forgotten_on_theirs_and_edited_on_ours_keeps_ours_edit_stale():
    base = _record("a", "one")
    ours = base + _record("a", "one, edited", 2)
    theirs = base + _record("a", "one", 1, status="forgotten")
    result = merge(base, ours, theirs)
    last = json.loads(result.data.splitlines()[-1])
    assert (last["id"], last["status"], last["content"], last["governance"]["verification"]) == (
        "a", "active", "one, edited", "stale")
