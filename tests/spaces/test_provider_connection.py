"""A provider package this project ships but that is not installed (``postgres``): ``provider list`` says how to
install it, and a configuration stored while it was installed stays as it is (it was read as a damaged file,
quarantined and rebuilt without it). And the connection check of a provider with a server
(:mod:`mnemon_ls.spaces.provider_connection`): what its checker says, raises or leaks of a credential.
The PostgreSQL provider's own check runs against real servers in providers/postgres/tests/test_postgres_try.py."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from mnemon_ls.ops.providers import list_text
from mnemon_ls.spaces import SpacesService, plugins
from mnemon_ls.spaces.providers.base import Capabilities, Connection
from mnemon_ls.spaces.registry import SpaceRegistry

SECRET = "s3cret-pw-value"


def _installed(monkeypatch: pytest.MonkeyPatch, **entries: str) -> None:
    """The provider distributions this Python has, as ``{provider id: "module:OBJECT"}`` (none: ``{}``)."""
    monkeypatch.setattr(plugins, "_entry_points", {
        name: metadata.EntryPoint(name=name, value=value, group="mnemon_ls.providers") for name, value in entries.items()})
    monkeypatch.setattr(plugins, "_loaded", {})


def test_provider_list_says_how_to_install_the_postgres_package(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(monkeypatch)
    service = SpacesService(tmp_path)
    text = list_text(service.thirdparty.list())
    assert ("  postgres     not configured  not installed (mnemon-ls-provider-postgres); 0 spaces\n"
            "    install the mnemon-ls-provider-postgres package (from a checkout of mnemon-ls: pip install "
            "./providers/postgres)") in text
    view = next(v for v in service.thirdparty.list() if v["providerId"] == "postgres")
    assert (view["label"], view["kind"], view["installed"], "connection" in view) == ("PostgreSQL", "remote", False, False)


#: A stand-in for the postgres package's plugin (its fields; an engine that is never opened here).
PLUGIN = plugins.EnginePlugin(provider_id="postgres", label="PostgreSQL", kind="remote", capabilities=Capabilities(),
                              service_fields=("host", "password"), memory_fields=("spaceKey",),
                              secret_fields=frozenset({"password"}), engine="collections:OrderedDict",
                              connection="tests.spaces.test_provider_connection:leaky_check")


def leaky_check(service: dict) -> Connection:
    """A checker that puts the password into its message (the host must scrub it)."""
    if service.get("host") == "raise":
        raise RuntimeError(f"boom with {service['password']}")
    return Connection("connected", f"db at {service['host']}", f"logged in with {service['password']}")


def test_a_stored_postgres_configuration_outlives_uninstalling_the_package(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(monkeypatch, postgres="tests.spaces.test_provider_connection:PLUGIN")
    registry = SpaceRegistry(tmp_path)
    registry.provider_plane.configure_service("postgres", {"host": "db.internal", "password": SECRET}, enabled=True)
    registry.provider_plane.sync_namespaces("postgres", [{"externalId": "k1", "name": "Team",
                                                          "connection": {"spaceKey": "k1"}}])
    stored = (tmp_path / "state" / "memory-providers.json").read_bytes()
    _installed(monkeypatch)  # pip uninstall mnemon-ls-provider-postgres
    service = SpacesService(tmp_path)
    state = service.registry.read()
    assert state.services == {"postgres": {"host": "db.internal", "password": SECRET}}
    assert state.enabled == {"postgres": True} and [b.name for b in state.provider_bodies] == ["Team"]
    assert not (tmp_path / "state" / "quarantine").exists()
    assert (tmp_path / "state" / "memory-providers.json").read_bytes() == stored
    lines = list_text(service.thirdparty.list()).splitlines()
    assert lines[:2] == ["postgres     enabled         not installed (mnemon-ls-provider-postgres); 1 space; "
                         "fields: host, password",
                         "    install the mnemon-ls-provider-postgres package (from a checkout of mnemon-ls: pip "
                         "install ./providers/postgres)"]
    finding = next(f for f in service.thirdparty.diagnose() if f.subject == "provider postgres")
    assert finding.level == "warning" and "its package is not installed" in finding.message


def test_the_connection_check_is_scrubbed_of_credentials_and_never_raises(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(monkeypatch, postgres="tests.spaces.test_provider_connection:PLUGIN")
    service = SpacesService(tmp_path)
    service.registry.provider_plane.configure_service("postgres", {"host": "db.internal", "password": SECRET})
    found = service.thirdparty.connection("postgres")
    assert {k: found[k] for k in ("state", "location", "message")} == {
        "state": "connected", "location": "db at db.internal", "message": "logged in with ***"}
    view = next(v for v in service.thirdparty.list() if v["providerId"] == "postgres")
    assert view["connection"]["message"] == "logged in with ***"
    service.registry.provider_plane.configure_service("postgres", {"host": "raise"})
    broken = service.thirdparty.connection("postgres")
    assert (broken["state"], broken["message"]) == ("unreachable", "the check failed: RuntimeError: boom with ***")
    finding = next(f for f in service.thirdparty.diagnose() if f.subject == "provider postgres")
    # configured, not enabled: said, but nothing is unavailable because of it
    assert finding.level == "ok" and finding.message.endswith("; unreachable: the check failed: RuntimeError: boom "
                                                              "with ***")
    service.registry.provider_plane.configure_service("postgres", enabled=True)
    finding = next(f for f in service.thirdparty.diagnose() if f.subject == "provider postgres")
    assert finding.level == "warning" and "its spaces are unavailable until then" in finding.advice
    assert SECRET not in finding.message + finding.advice
