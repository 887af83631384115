"""Real engine servers of the provider packages for tests outside those packages (the editors' tests, the
bench): each package's own ``providers/<id>/tests/servers.py``, loaded by path (no package of tests is
installed), and a served engine with its loopback embedding endpoint."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
#: The server class of each package's servers.py whose engine runs as a server with an embedding endpoint.
SERVER_CLASS = {"hindsight": "HindsightServer", "openviking": "OpenVikingServer"}


def servers_of(provider: str) -> ModuleType:
    """The module ``providers/<provider>/tests/servers.py`` (loaded once per call by path, as
    ``<provider>_servers``; this folder is put on ``sys.path`` first, for its imports of the shared helpers).
    Raises ``FileNotFoundError`` when the package has no such file."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    path = REPO / "providers" / provider / "tests" / "servers.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location(f"{provider}_servers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def serve(provider: str, command: str, key: str):
    """``(server, embeddings)``: a started real server of ``provider`` (a key of :data:`SERVER_CLASS`), run by
    ``command``, and the loopback embedding endpoint it embeds with (API key ``key``); the caller stops both
    (``server.stop()``, ``embeddings.stop()``). The endpoint is stopped again when the server fails to start."""
    from embedding_server import EmbeddingServer

    module = servers_of(provider)
    made = getattr(module, SERVER_CLASS[provider])
    refusal = getattr(module, "cpu_refusal", None)  # a machine whose CPU cannot run the engine's binaries
    if refusal is not None:
        reason = refusal(module.pg_bin_of(command))
        if reason is not None:
            import pytest

            pytest.skip(reason)
    embeddings = EmbeddingServer(key).start()
    try:
        return made(command, embeddings, key).start(), embeddings
    except BaseException:
        embeddings.stop()
        raise


def wait_healthy(process: "subprocess.Popen[bytes]", endpoint: str, log: Path, name: str, seconds: float) -> None:
    """Return once ``GET endpoint + "/health"`` answers 200, polling the server's own readiness answer every
    0.2 s; raises ``RuntimeError`` naming ``name`` (with the end of ``log``, at most 2,000 characters) when
    ``process`` exits first or ``seconds`` pass without it (the caller stops the server)."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited ({process.returncode}): {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(endpoint + "/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not answer /health within {seconds} s")
        time.sleep(0.2)  # polling the server's own readiness answer, not a guess at a duration


def stop_process(process: "subprocess.Popen[bytes] | None") -> None:
    """Terminate ``process`` when it still runs and reap it (killed after 60 s; ``None``: nothing to do)."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
