"""Checks every served provider package makes on its real engine (``providers/*/tests``; this folder is on their
``sys.path``): a server that goes away is isolated in federated recall, and a server that never answers is named
with the timeout's field and nothing is enabled."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mnemon_ls.errors import ProviderUnavailable
from mnemon_ls.spaces import SpacesService


def check_isolated_when_gone(root: Path, provider: str, server, name: str) -> None:
    """A space of ``provider`` on ``server`` (``endpoint``, ``stop()``) and a native space both answer a federated
    recall; once ``server`` is stopped, a fresh service answers from the native space alone, with the provider's
    space ``unavailable`` ("cannot be reached") in ``sources`` and listed in ``failed``. ``name``: the space name."""
    service = SpacesService(root, provider_timeout=120)
    service.thirdparty.enable(provider, {"endpoint": server.endpoint, "timeoutSeconds": "10"})
    team = service.create_space(name, "team", active=True, provider=provider).record.id
    service.remember("dark mode is what the team ships first", space_id=team)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    both = {r["spaceId"] for r in service.recall("dark mode theme").to_dict()["results"]}
    assert both == {team, native}
    service.close()
    server.stop()
    fresh = SpacesService(root, provider_timeout=120)
    result = fresh.recall("dark mode theme").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native]
    status = {s["spaceId"]: s for s in result["sources"]}
    assert status[team]["status"] == "unavailable" and "cannot be reached" in status[team]["hint"]
    assert result["failed"] == [team]
    fresh.close()


def check_silent_server_named(service: SpacesService, provider: str) -> None:
    """Enabling ``provider`` on a server that accepts the connection and never answers fails within its
    ``timeoutSeconds`` (1 s here) with the message naming that field."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts the connection, never answers
    try:
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(ProviderUnavailable) as slow:
            service.thirdparty.enable(provider, {"endpoint": endpoint, "timeoutSeconds": "1"})
        assert slow.value.message == (f"provider {provider}: the server at {endpoint} gave no answer within 1 s "
                                      "(timeoutSeconds)")
    finally:
        silent.close()
