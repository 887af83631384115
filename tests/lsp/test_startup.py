"""What ``mnemon-ls serve`` imports before it can answer ``initialize``.

The server answers ``initialize`` before settings, stores, pydantic, pygit2 or watchfiles are imported
(they are loaded right after the response; bench/bench_lsp.py measures the start against an empty
pygls 2 server). This checks the import structure that makes that possible, in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys

DEFERRED = ("pydantic", "pygit2", "watchfiles", "sqlite3", "mnemon_ls.settings", "mnemon_ls.roots",
            "mnemon_ls.roots_checks", "mnemon_ls.roots_gitignore", "mnemon_ls.roots_safety",
            "mnemon_ls.runtime.store", "mnemon_ls.runtime.model", "mnemon_ls.ops.command_args",
            "mnemon_ls.ops.registry", "mnemon_ls.cli.full", "mnemon_ls.documents", "mnemon_ls.spaces")


def test_serve_start_path_defers_the_heavy_imports():
    code = ("import sys; import mnemon_ls.lsp.launch, mnemon_ls.lsp.server; "
            f"print(','.join(m for m in {DEFERRED!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
