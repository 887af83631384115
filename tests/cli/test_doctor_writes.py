"""Where mnemon-ls writes, through the real command line: ``doctor`` lists every directory, and with
``MNEMON_DATA_DIR`` set and ``DSH_HOME`` unset nothing is written under ``~``.

Each test runs real ``mnemon-ls`` processes on a real git repository with ``HOME`` a fresh directory and
no ``XDG_*`` variable (so nothing can hide under ``~`` by another name), writes to every tier (Runtime
memory in both files, a document, a Memory Space item, records of all four scopes, a pack export to the
default folder), then compares what appeared on disk with what ``doctor --json`` and its text say.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.records.paths import root_id
from mnemon_ls.roots import workspace_hash
from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def every_path(base: Path) -> set[Path]:
    """Every file and directory below ``base`` (``.git/`` of the workspace left out)."""
    found: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        found.update(Path(dirpath) / name for name in dirnames + filenames)
    return found


class Cli:
    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.tmp = Path(os.path.realpath(tmp_path))
        self.home = self.tmp / "home"
        self.home.mkdir()
        self.ws = self.tmp / "ws"
        make_repo(self.ws)
        self.env = {k: v for k, v in procs.child_env(HOME=str(self.home), MNEMON_SEMANTIC="off", **env).items()
                    if not k.startswith(("XDG_", "DSH_")) or k in env}
        #: Appended to every command (storage flags).
        self.flags: tuple[str, ...] = ()

    def run(self, *args: str) -> str:
        result = subprocess.run([*mnemon_command(), *args, *self.flags], cwd=self.ws, env=self.env,
                                capture_output=True, text=True, timeout=procs.WAIT_SECONDS)
        assert result.returncode == 0, (args, result.stderr)
        return result.stdout

    def write_everything(self) -> None:
        """One write to every tier and every record scope, and a pack export to its default folder."""
        self.run("runtime", "add", "--content", "tests run with pytest")
        self.run("runtime", "add", "--target", "user", "--content", "prefers tabs")
        self.run("doc", "create", "--title", "Design", "--content", "The storage layout.")
        self.run("space", "create", "--name", "Project", "--description", "decisions", "--active")
        self.run("remember", "we chose SQLite for the index")
        for scope in ("user", "project"):
            self.run("records", "create", "--record-scope", scope, "--title", scope, "--content", f"a {scope} fact")
        self.run("records", "create", "--record-scope", "shared-project", "--confirm", "--title", "shared",
                 "--content", "a shared fact")
        self.run("records", "create", "--record-scope", "session", "--session-id", "s1", "--title", "session",
                 "--content", "a session fact")
        self.run("pack", "export")
        self.run("wake")

    def doctor(self) -> tuple[dict[str, Path], list[str], list[dict[str, str]]]:
        """``{what: path}`` of ``doctor --json``'s ``writes``, the text's lines, and the raw entries."""
        writes = json.loads(self.run("doctor", "--json"))["writes"]
        return {w["what"]: Path(w["path"]) for w in writes}, self.run("doctor").splitlines(), writes


def session_file(records: Path, ws: Path, session: str = "s1") -> Path:
    key = f"{session}|{root_id(ws)}"
    return records / "sessions" / f"{hashlib.sha256(key.encode()).hexdigest()}.jsonl"


def assert_written_under(cli: Cli, data: Path, root: Path) -> None:
    """What :meth:`Cli.write_everything` wrote is where ``doctor`` says: the user and session records and the
    pack export under the global root ``data``, MEMORY.md in the storage ``root``, USER.md in ``data``."""
    records = data / "workspace-memory"
    assert json.loads((records / "user.jsonl").read_text())["title"] == "user"
    assert json.loads(session_file(records, cli.ws).read_text())["title"] == "session"
    assert (cli.ws / ".dsh" / "workspace-memory" / "shared.jsonl").is_file()
    assert len(list((data / "state" / "pack-exports").iterdir())) == 1
    assert (root / "runtime" / "MEMORY.md").is_file() and (data / "runtime" / "USER.md").is_file()


def test_with_mnemon_data_dir_nothing_lands_under_home_and_doctor_lists_every_place(tmp_path: Path) -> None:
    data = Path(os.path.realpath(tmp_path)) / "data"
    cli = Cli(tmp_path, MNEMON_DATA_DIR=str(data))
    before = every_path(cli.tmp)
    cli.write_everything()

    assert sorted(every_path(cli.home)) == []  # not one file or directory under ~
    places, text, writes = cli.doctor()
    root = data / "workspaces" / workspace_hash(cli.ws)
    records = data / "workspace-memory"
    assert places == {
        "storage root": root,
        "USER.md root (runtimeUserScope=global)": data,
        "data directory": data,
        "pack exports": data / "state" / "pack-exports",
        "records: project and shared-project scopes": cli.ws / ".dsh",
        "records: user and session scopes": records,
        "temporary files": Path(places["temporary files"]),
    }
    assert_written_under(cli, data, root)

    # every file written is under a listed place (a directory may also be a parent a place needed)
    listed = set(places.values())
    for path in sorted(every_path(cli.tmp) - before):
        under = any(path == p or p in path.parents for p in listed)
        assert under or (path.is_dir() and any(path in p.parents for p in listed)), f"{path} is not listed"

    # the text says the same, one line per place, after "writes to:"
    start = text.index("writes to:")
    assert text[start + 1:start + 1 + len(writes)] == [f"  {w['what']}: {w['path']} ({w['holds']})" for w in writes]
    assert text[start + 1 + len(writes)].startswith("  only where you name it: `setup`")


def test_with_scope_global_and_a_data_dir_nothing_lands_under_home(tmp_path: Path) -> None:
    """``--scope global --data-dir X`` makes X the global root: the pack exports' default folder and the user and
    session records are under X too (they were under ``~/.mnemon`` and ``~/.dsh``), as with ``MNEMON_DATA_DIR``."""
    data = Path(os.path.realpath(tmp_path)) / "data"
    cli = Cli(tmp_path)
    assert "MNEMON_DATA_DIR" not in cli.env
    cli.flags = ("--scope", "global", "--data-dir", str(data))
    cli.write_everything()

    assert sorted(every_path(cli.home)) == []  # not one file or directory under ~
    places, _, _ = cli.doctor()
    records = data / "workspace-memory"
    assert places == {
        "storage root": data,
        "pack exports": data / "state" / "pack-exports",
        "records: project and shared-project scopes": cli.ws / ".dsh",
        "records: user and session scopes": records,
        "temporary files": Path(places["temporary files"]),
    }
    assert_written_under(cli, data, data)


@pytest.mark.parametrize("data_dir", [True, False], ids=["with-data-dir", "default-data-dir"])
def test_with_dsh_home_set_the_records_keep_the_seed_layout(tmp_path: Path, data_dir: bool) -> None:
    dsh = Path(os.path.realpath(tmp_path)) / "dsh"
    env = {"DSH_HOME": str(dsh)} | ({"MNEMON_DATA_DIR": str(Path(os.path.realpath(tmp_path)) / "data")} if data_dir else {})
    cli = Cli(tmp_path, **env)
    cli.run("runtime", "add", "--target", "user", "--content", "prefers tabs")
    cli.run("records", "create", "--record-scope", "user", "--title", "user", "--content", "a user fact")
    cli.run("records", "create", "--record-scope", "session", "--session-id", "s1", "--title", "session",
            "--content", "a session fact")
    places, _, _ = cli.doctor()
    records = dsh / "workspace-memory"
    assert places["records: user and session scopes"] == records
    assert json.loads((records / "user.jsonl").read_text())["title"] == "user"
    assert json.loads(session_file(records, cli.ws).read_text())["title"] == "session"
    data = cli.tmp / "data" if data_dir else cli.home / ".mnemon"
    assert places["data directory"] == data and not (data / "workspace-memory").exists()
    # without MNEMON_DATA_DIR the data directory is ~/.mnemon, so ~ holds exactly that
    assert {p.relative_to(cli.home).parts[0] for p in every_path(cli.home)} == (set() if data_dir else {".mnemon"})


def test_without_either_variable_the_records_are_in_home_dot_dsh(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.run("records", "create", "--record-scope", "user", "--title", "user", "--content", "a user fact")
    places, _, _ = cli.doctor()
    assert places["records: user and session scopes"] == cli.home / ".dsh" / "workspace-memory"
    assert (cli.home / ".dsh" / "workspace-memory" / "user.jsonl").is_file()
