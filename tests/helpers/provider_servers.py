"""Real engine servers of the provider packages for tests outside those packages (the editors' tests, the
bench): each package's own ``providers/<id>/tests/servers.py``, loaded by path (no package of tests is
installed), and a served engine with its loopback embedding endpoint."""

from __future__ import annotations

import importlib.util
import sys
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

    made = getattr(servers_of(provider), SERVER_CLASS[provider])
    embeddings = EmbeddingServer(key).start()
    try:
        return made(command, embeddings, key).start(), embeddings
    except BaseException:
        embeddings.stop()
        raise
