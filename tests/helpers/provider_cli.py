"""The one ``mnemon-ls`` CLI wrapper of the provider packages' tests (``providers/*/tests``, which put this
folder on ``sys.path`` in their ``conftest.py``): a real subprocess on a global root ``<tmp>/data`` with
semantic recall off and no inherited ``MNEMON_*`` or ``MEM0_DIR`` variable (a plain interpreter, not the main
suite's fork server: this file is loaded by path, outside the ``tests`` package), plus :func:`tree_state` to prove that a
command changed nothing under a folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def cli(tmp_path: Path, *args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m mnemon_ls ARGS`` with ``MNEMON_DATA_DIR=<tmp_path>/data`` (scope ``global``), ``stdin`` on
    standard input, in ``tmp_path``; ``timeout`` seconds."""
    # (``MEM0_DIR`` too: an engine opened in the test process sets it, and it would outlive that test)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_") and k != "MEM0_DIR"}
    env.update(MNEMON_DATA_DIR=str(tmp_path / "data"), MNEMON_STORAGE_SCOPE="global", MNEMON_SEMANTIC="off")
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=timeout, input=stdin)


def tree_state(top: Path, *, mtimes: bool = False) -> dict[str, tuple]:
    """Every path under ``top`` (relative) with its mode and bytes (directories: empty bytes); with
    ``mtimes`` also a file's modification time in ns (a directory's is left out: SQLite creates and removes
    its ``-wal``/``-shm`` files beside a database it only reads, which changes nothing but that)."""
    out: dict[str, tuple] = {}
    for path in sorted(top.rglob("*")) if top.exists() else []:
        st = path.lstat()
        folder = path.is_dir()
        data = b"" if folder else path.read_bytes()
        out[str(path.relative_to(top))] = (st.st_mode, data, 0 if folder else st.st_mtime_ns) if mtimes \
            else (st.st_mode, data)
    return out
