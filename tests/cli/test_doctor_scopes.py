"""``mnemon-ls doctor`` and the projections each storage layout really uses: with ``runtimeUserScope``
``global`` (the default) USER.md lives in the global root and MEMORY.md in the workspace's root, so the
other file of each root is legitimately absent and must not be reported; a projection that is used and
missing must be."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([*mnemon_command(), *args], cwd=tmp_path / "ws", capture_output=True,
                            text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_DATA_DIR=str(tmp_path / "data"),
                                                MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr
    return result


def _projection_warnings(tmp_path: Path, *flags: str) -> dict[str, str]:
    result = _run(tmp_path, "doctor", "--json", *flags)
    report = json.loads(result.stdout)
    return {f["subject"]: f["message"] for f in report["findings"]
            if f["level"] != "ok" and f["subject"].endswith(("USER.md", "MEMORY.md"))}


@pytest.mark.parametrize("user_scope", ["global", "storage"])
def test_doctor_reports_only_the_projections_a_layout_uses(tmp_path: Path, user_scope: str) -> None:
    make_repo(tmp_path / "ws")
    flags = ("--runtime-user-scope", user_scope)
    for target, content in (("user", "prefers tabs"), ("memory", "run pytest -n 2")):
        assert _run(tmp_path, "runtime", "add", "--target", target, "--content", content, *flags).returncode == 0
    report = json.loads(_run(tmp_path, "doctor", "--json", *flags).stdout)
    root, user_root = Path(report["root"]), Path(report["userRoot"])
    assert (user_root == tmp_path / "data") is (user_scope == "global")
    used = {user_root / "runtime" / "USER.md", root / "runtime" / "MEMORY.md"}
    assert all(path.is_file() for path in used)
    # every used projection present: no warning at all, also none for the files a split layout never writes
    assert _projection_warnings(tmp_path, *flags) == {}
    if user_scope == "global":
        assert not (root / "runtime" / "USER.md").exists() and not (user_root / "runtime" / "MEMORY.md").exists()
    # a used projection that is missing is reported, each one
    for path in sorted(used):
        data = path.read_bytes()
        path.unlink()
        assert _projection_warnings(tmp_path, *flags) == {str(path): "missing"}
        path.write_bytes(data)
        path.chmod(0o600)
