"""The VS Code extension (editors/vscode): type check, manifest lint, unit and protocol contract tests.

Runs, in ``editors/vscode``: ``npm ci`` (only when ``node_modules`` is missing or older than
``package-lock.json``; needs the npm registry once), ``npm run compile`` (``tsc -p .``: the type check of
``npm run lint:types``, same configuration, and the build; a type error fails it), ``npm run check:manifest`` and
``npm test``. The contract test spawns this tree's server with
``sys.executable`` (``MNEMON_PYTHON``). Everything after ``npm ci`` is offline; about 15 s.

Skipped only when ``npm`` is not installed. One test under a file lock, so that parallel pytest
workers (or sessions) never run ``npm ci`` / ``tsc`` in the same directory at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
#: Tests in editors/vscode/src/test (unit + contract); fewer passing means some were lost.
MIN_PASSED = 40
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(NPM is None, reason="npm is not installed (the VS Code extension checks need Node 20 and npm)")


def _run(step: str, args: list[str], env: dict[str, str], timeout: float) -> str:
    try:
        proc = subprocess.run(args, cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{step}: timed out after {timeout:.0f} s\n{exc.stdout or ''}\n{exc.stderr or ''}")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{step} exited with {proc.returncode}:\n{output[-6000:]}"
    return output


def _needs_install() -> bool:
    marker = EXTENSION / "node_modules" / ".package-lock.json"
    lock = EXTENSION / "package-lock.json"
    return not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime


def _lock() -> FileLock:
    digest = hashlib.sha256(str(EXTENSION).encode()).hexdigest()[:16]
    return FileLock(Path(tempfile.gettempdir()) / f"mnemon-vscode-{digest}.lock", timeout=900)


def test_vscode_extension() -> None:
    assert NPM is not None
    env = {**os.environ, "MNEMON_PYTHON": sys.executable, "NO_COLOR": "1", "FORCE_COLOR": "0", "CI": "1"}
    with _lock():
        if _needs_install():
            _run("npm ci", [NPM, "ci", "--no-audit", "--no-fund"], env, timeout=600)
        _run("npm run compile", [NPM, "run", "compile"], env, timeout=120)
        manifest = _run("npm run check:manifest", [NPM, "run", "check:manifest"], env, timeout=60)
        assert re.search(r"^# manifest checks: \d+ passed, 0 failed$", manifest, re.M), manifest[-3000:]
        output = _run("npm test", [NPM, "test"], env, timeout=120)

    failed = re.search(r"^# fail (\d+)$", output, re.M)
    passed = re.search(r"^# pass (\d+)$", output, re.M)
    assert failed and passed, f"no TAP summary in the node --test output:\n{output[-4000:]}"
    assert failed.group(1) == "0", output[-6000:]
    assert int(passed.group(1)) >= MIN_PASSED, f"only {passed.group(1)} node tests passed (expected >= {MIN_PASSED})"
