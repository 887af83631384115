"""A CLI command says why semantic recall is off once (the new-user report: ``recall`` printed "semantic
recall off: <reason>" on stderr and the same reason again as its ``note:`` line). The failure is real: the
Mnemon CLI's embedding endpoint variables point at a local port that refuses connections, so the endpoint
backend fails to load exactly as it does for a user whose Ollama is not running."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A local port that is bound but not listening: a connection to it is refused at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_each_command_names_the_failed_endpoint_once(tmp_path: Path, refused_port: int) -> None:
    ws, root, home = tmp_path / "ws", tmp_path / "root", tmp_path / "home"
    make_repo(ws)
    home.mkdir()
    endpoint = f"http://127.0.0.1:{refused_port}"
    env = procs.child_env(HOME=str(home), MNEMON_SEMANTIC="on", MNEMON_EMBED_ENDPOINT=endpoint,
                          MNEMON_EMBED_MODEL="nomic-embed-text")

    def run(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir",
                               str(root)], cwd=ws, env=env, capture_output=True, text=True, encoding="utf-8",
                              timeout=procs.WAIT_SECONDS * 4)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    assert run("space", "create", "--name", "notes", "--description", "project notes").returncode == 0
    assert run("doc", "create", "--title", "Deploy guide", "--content", "Deploy through blue-green").returncode == 0
    said = {}
    for command in (["remember", "--space", "notes", "Deploy freeze on Fridays"], ["recall", "Deploy"],
                    ["recall", "Deploy", "--json"], ["doc", "search", "Deploy"], ["doctor"],
                    ["space", "status", "notes"], ["space", "embed", "notes"]):
        proc = run(*command)
        said[" ".join(command)] = ((proc.stdout + proc.stderr).count(endpoint), "semantic recall off" in proc.stderr)
    assert said == {command: (1, False) for command in said}
    recall = run("recall", "Deploy").stdout.splitlines()
    assert recall[1].startswith(f"note: semantic recall is off: embedding endpoint {endpoint} failed")
    doctor = run("doctor").stdout
    assert (f"[warning] semantic: embedding model nomic-embed-text at MNEMON_EMBED_ENDPOINT is not usable: "
            f"embedding endpoint {endpoint} failed") in doctor  # not the local model, which was never tried
