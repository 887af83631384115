"""A long command of one workspace does not hold up a pack import into another (every command holds the global
root's pack gate shared, for USER.md; an import wanted it exclusive and was refused after the lock timeout). The
import takes the global root's gate exclusive only when the pack carries USER.md entries (it may write them);
then it still waits, so no command sees USER.md half swapped. Real processes: a holder of the other root's gate
(tests/helpers/writer.py ``gate``, which says ``HELD`` once it holds it) and ``mnemon-ls pack import``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def cli(home: Path, workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = procs.child_env(HOME=str(home), MNEMON_DATA_DIR=str(home / "global"))
    return subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace)], capture_output=True, text=True,
                          env=env, cwd=str(workspace), timeout=120)


def ok(home: Path, workspace: Path, *args: str) -> str:
    done = cli(home, workspace, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_import_without_user_md_entries_does_not_wait_for_another_roots_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    one, two = (Path(make_repo(tmp_path / name).workdir) for name in ("one", "two"))
    ok(home, one, "runtime", "add", "--content", "one: run the tests with make check")
    ok(home, one, "runtime", "add", "--target", "user", "--content", "prefers short answers")
    ok(home, two, "runtime", "add", "--content", "two: deploys go through the staging branch")
    plain, carried = tmp_path / "plain.zip", tmp_path / "carried.zip"
    ok(home, one, "pack", "export", "--pack-scope", "runtime", "-o", str(plain))
    ok(home, one, "pack", "export", "--pack-scope", "runtime", "--include-user-profile", "-o", str(carried))
    root_one = Path(json.loads(ok(home, one, "doctor", "--json"))["root"])
    global_root = home / "global"
    user_md = (global_root / "runtime" / "USER.md").read_bytes()

    with procs.writer("gate", str(root_one), str(global_root), word="HELD") as holder:  # a long command of `one`
        imported = json.loads(ok(home, two, "pack", "import", str(plain), "--json"))
        assert (imported["status"], imported["runtime"]["added"]) == ("committed", 1)
        # the pack carries USER.md entries: the import may write the global root, so it still waits for its gate
        refused = cli(home, two, "pack", "import", str(carried), "--json")
        assert refused.returncode != 0
        error = json.loads(refused.stdout or refused.stderr)["error"]
        assert (error["code"], error["file"]) == ("store-busy", str(global_root))
        holder.proc.stdin.write(b"done\n")
        holder.proc.stdin.flush()
        assert holder.reader.readline() == "RELEASED"
    assert ok(home, two, "runtime", "list", "--target", "memory", "--json").count("one: run the tests") == 1
    assert (global_root / "runtime" / "USER.md").read_bytes() == user_md
