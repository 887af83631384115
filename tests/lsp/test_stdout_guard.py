"""The language server's stdout carries JSON-RPC frames and nothing else: whatever else the process writes
to stdout while serving (a library's ``print``, ``sys.stdout.write``, a raw ``write(1, ...)``, a child
process inheriting fd 1) goes to stderr, the server's log. The misbehaving code is played by a wrapper that
starts the real server (``mnemon_ls.lsp.launch.main``) after making ``WorkspaceHost.wake`` print first."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.lsp.conftest import Launcher
from tests.lsp.rawclient import RawServer

NOISY_SERVER = """
import os, subprocess, sys
import mnemon_ls.host as host
real = host.WorkspaceHost.wake
def noisy(self, *args, **kwargs):
    print("NOISE print")
    sys.stdout.write("NOISE write\\n")
    sys.stdout.flush()
    os.write(1, b"NOISE fd1\\n")
    subprocess.run(["sh", "-c", "echo NOISE child"], check=True)
    return real(self, *args, **kwargs)
host.WorkspaceHost.wake = noisy
from mnemon_ls.lsp.launch import main
sys.exit(main([]))
"""


async def test_stray_stdout_writes_never_reach_the_wire(lsp: Launcher, repo, repo_dir: Path) -> None:
    server = RawServer()
    await server.start(lsp.env(), lsp.tmp_path, command=[sys.executable, "-c", NOISY_SERVER])
    try:
        assert "result" in await server.initialize([repo_dir], {"mnemon": {"storageScope": "workspace"}})
        wake = await server.call("mnemon/wake", {})
        assert "MNEMON" in wake["result"]["text"], wake
        status = await server.call("mnemon/status", {})  # the stream is still in sync after the noise
        assert status["result"]["workspaces"], status
    finally:
        await server.close()
    assert server.protocol_errors == []
    log = server.stderr.decode("utf-8", "replace")
    for marker in ("NOISE print", "NOISE write", "NOISE fd1", "NOISE child"):
        assert marker in log
