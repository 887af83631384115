""":MnemonProviders (editors/neovim/lua/mnemon/providers.lua) end to end on Neovim 0.7.2 and 0.11 against the
real server: the picker lists every known provider with its state, a provider that is not installed offers
nothing, and (when the Holographic provider package and its hermes-agent engine are installed, as .ci/run
does before it runs this file again) configure with a plain field, enable, test, create a space in it and
disable, and (with the Mem0 package) a secret field, each read back from ``state/memory-providers.json`` and the space registry;
with the Hindsight or OpenViking package and its server (``MNEMON_HINDSIGHT_API``, ``MNEMON_OPENVIKING_SERVER``),
what it cannot do and a space in it.
The user's picks go through the vim.ui.select / vim.ui.input stubs of test_neovim_manage.py, and
inputsecret() through a stub that records its prompt."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mnemon_ls.errors import MnemonError
from mnemon_ls.spaces import plugins

from .nvim_helpers import Session
from .test_neovim import INFO, binary, session  # noqa: F401  (fixtures)
from .test_neovim_manage import answer, run, start

REFERENCE_IDS = ("openviking", "honcho", "mem0", "hindsight", "holographic", "retaindb", "byterover", "supermemory")


def holographic_runs() -> bool:
    """The Holographic provider package is installed and its engine (hermes-agent) imports."""
    try:
        plugins.load("holographic")
    except MnemonError:
        return False
    import importlib.util
    return importlib.util.find_spec("hermes_state") is not None  # a module of the hermes-agent distribution


def provider_file(root: Path) -> dict:
    path = root / "state" / "memory-providers.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def listed(session: Session) -> dict[str, dict]:
    session.lua("T.p = nil; require('mnemon.providers').list({}, function(e, p) T.p = e and { err = e } or p end)")
    session.wait("T.p ~= nil", "mnemon/providers/list")
    return {p["providerId"]: p for p in session.lua("return T.p")}


def test_the_picker_lists_every_provider_and_one_not_installed_offers_nothing(session: Session, tmp_path: Path) -> None:
    start(session, tmp_path)
    answer(session, "Honcho")
    note = run(session, "MnemonProviders", "nothing to do here")
    assert note["level"] == INFO and "Honcho is not installed" in note["msg"]
    assert "mnemon-ls-provider-honcho" in note["msg"]
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert len(shown) == 1, "no action menu for a provider that is not installed"
    labels = shown[0]
    assert prompts[0] == f"mnemon: {len(labels)} providers"
    for provider_id in REFERENCE_IDS:
        assert any(f"({provider_id}): " in label for label in labels), (provider_id, labels)
    assert "Honcho (honcho): not installed" in labels
    installed = [label for label in labels if "not installed" not in label]
    assert labels[:len(installed)] == installed, "installed providers come first"


@pytest.mark.skipif("mem0" not in plugins.installed(), reason="the Mem0 provider package (providers/mem0) is not "
                    "installed here (.ci/run installs it and runs this file again)")
def test_a_secret_field_is_asked_with_inputsecret_and_only_its_name_comes_back(session: Session, tmp_path: Path) -> None:
    """Mem0's ``apiKey`` (a credential field it declares; configuring opens nothing): the value goes through
    inputsecret() (never vim.ui.input, never echoed) and only the field's name comes back. (Holographic
    declares no credential, and a field a provider does not declare is refused.)"""
    ws = start(session, tmp_path)
    root = ws / ".mnemon"
    session.lua("""
        T.secret_prompts = {}
        vim.fn.inputsecret = function(prompt) table.insert(T.secret_prompts, prompt); return "sk-nvim-secret-1" end
    """)
    view = listed(session)["mem0"]
    assert "apiKey" in view["fields"]["secret"]
    plain = [f for f in view["fields"]["service"] if f not in view["fields"]["secret"]]
    mark = session.mark()
    answer(session, "apiKey")
    session.lua("require('mnemon.providers').configure(...)", view)
    session.wait_note("Mem0: apiKey saved", mark)
    assert "sk-nvim-secret-1" not in json.dumps(session.notes())
    assert session.lua("return T.secret_prompts")[0].startswith("mnemon: Mem0 apiKey: (not shown")
    count = 1 + len(plain) + len(view["fields"]["secret"])  # "(defaults)", the plain fields, the secrets
    assert session.lua("return T.prompts") == [f"mnemon: {count} fields"], "the value was not asked with vim.ui.input"
    assert provider_file(root)["services"]["mem0"]["apiKey"] == "sk-nvim-secret-1"
    assert stat.S_IMODE(os.stat(root / "state" / "memory-providers.json").st_mode) == 0o600
    assert listed(session)["mem0"]["configuredSecrets"] == ["apiKey"]
    session.lua('vim.fn.inputsecret = function() return "" end')  # an empty secret clears it
    answer(session, "apiKey")
    session.lua("require('mnemon.providers').configure(...)", {**view, "configured": True})
    session.wait_note("Mem0: apiKey cleared", mark)
    assert "apiKey" not in provider_file(root)["services"]["mem0"]


@pytest.mark.skipif(not holographic_runs(), reason="the Holographic provider package (providers/holographic) and "
                    "hermes-agent are not installed here (.ci/run installs them and runs this file again)")
def test_configure_enable_test_create_a_space_and_disable_holographic(session: Session, tmp_path: Path) -> None:
    ws = start(session, tmp_path)
    root = ws / ".mnemon"
    store = tmp_path / "holographic" / "memory_store.db"

    # Configure a plain field: pick the provider, "Configure", the field, type the value.
    answer(session, "Holographic", "Configure", "dataPath", str(store))
    note = run(session, "MnemonProviders", "Holographic: dataPath saved")
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert shown[1] == ["Configure", "Enable"], "installed, not configured: configure or enable"
    assert "can: recall, browse, entities, related, forget (hard delete)" in prompts[1]
    assert "cannot: graph, link, merge" in prompts[1]
    assert shown[2][0].startswith("(defaults)") and "dataPath" in shown[2]
    assert provider_file(root)["services"]["holographic"]["dataPath"] == str(store)

    # Enable: the engine opens on the configured store; then the menu offers what an enabled provider can.
    answer(session, "Holographic", "Enable")
    note = run(session, "MnemonProviders", "mnemon: enabled Holographic")
    assert note["level"] == INFO
    assert listed(session)["holographic"]["enabled"] is True
    answer(session, "Holographic", "Test")
    note = run(session, "MnemonProviders", "Holographic is healthy")
    labels, menu = session.lua("return { T.shown[1], T.shown[2] }")
    assert menu == ["Configure", "Disable", "Test", "Discover", "Create space"]
    assert any(label.startswith("Holographic (holographic): enabled") for label in labels)
    assert store.exists(), "the engine opened the configured store"
    answer(session, "Holographic")
    session.nv.command("MnemonProviders")
    session.wait("#T.shown == 2", "the menu")
    assert any(label.startswith("Holographic (holographic): enabled, 0 spaces; healthy")
               for label in session.lua("return T.shown[1]"))

    # Create a space in it: a new Holographic namespace, active for reading.
    answer(session, "Holographic", "Create space", "Holo bank", "Facts kept by Hermes")
    run(session, "MnemonProviders", "space Holo bank created in Holographic")
    session.lua("T.s = nil; require('mnemon').list_spaces({}, function(e, s) T.s = s end)")
    session.wait("T.s ~= nil", "mnemon/spaces/list")
    spaces = session.lua("return T.s")
    assert [(s["name"], s["providerId"], s["active"]) for s in spaces] == [("Holo bank", "holographic", True)]

    # Disable: its spaces leave the list, its configuration stays; the menu offers Enable again.
    answer(session, "Holographic", "Disable")
    run(session, "MnemonProviders", "mnemon: disabled Holographic")
    state = listed(session)["holographic"]
    assert (state["configured"], state["enabled"], state["spaces"]) == (True, False, 0)
    session.lua("T.s = nil; require('mnemon').list_spaces({}, function(e, s) T.s = s end)")
    session.wait("T.s ~= nil", "mnemon/spaces/list")
    assert session.lua("return T.s") == []
    answer(session, "Holographic")
    session.nv.command("MnemonProviders")
    session.wait("#T.shown == 2", "the menu")
    assert session.lua("return T.shown[2]") == ["Configure", "Enable", "Test"]


def _postgres_server():
    """A PostgreSQL 16 server (tests/helpers/postgres_server.py), or the reason there is none here."""
    from tests.helpers.postgres_server import PostgresServer, pgserver_bin

    if "postgres" not in plugins.installed():
        pytest.skip("the PostgreSQL provider package (providers/postgres) is not installed here")
    bin_dir = pgserver_bin()
    if bin_dir is None:
        pytest.skip("pgserver (PostgreSQL for the tests) is not installed: pip install './providers/postgres[test]'")
    return PostgresServer(bin_dir).start()


def test_the_picker_shows_a_configured_postgres_connected_then_unreachable(session: Session, tmp_path: Path) -> None:
    """The connection state comes with the list (checked by the server, no engine opened): connected with the
    server's version, then unreachable with libpq's reason once the server stops; never the password."""
    import subprocess

    from tests.helpers import procs
    from tests.helpers.zygote import mnemon_command

    server = _postgres_server()
    try:
        server.sql("CREATE DATABASE team")
        ws = start(session, tmp_path)
        env = procs.child_env(MNEMON_DATA_DIR=str(tmp_path / "data"), HOME=str(tmp_path / "home"))
        enabled = subprocess.run(mnemon_command("provider", "enable", "postgres", "--workspace", str(ws), "--scope",
                                                "workspace", "--set", f"host={server.host}", "--set",
                                                f"port={server.port}", "--set", "database=team", "--set",
                                                f"user={server.user}", "--secret", "password"),
                                 input=server.password + "\n", capture_output=True, text=True, env=env, cwd=ws,
                                 timeout=procs.WAIT_SECONDS)
        assert enabled.returncode == 0, enabled.stderr
        where = f"postgresql 127.0.0.1:{server.port}/team as {server.user}"
        view = listed(session)["postgres"]
        assert (view["connection"]["state"], view["connection"]["location"]) == ("connected", where)
        answer(session, "<cancel>")
        session.nv.command("MnemonProviders")
        session.wait("#T.shown == 1", "the picker")
        line = next(label for label in session.lua("return T.shown[1]") if label.startswith("PostgreSQL (postgres)"))
        assert line.startswith("PostgreSQL (postgres): enabled, 0 spaces; connected (PostgreSQL 16")
        assert line.endswith(f"as role {server.user}; schema mnemon at version 4)")
        server.halt()
        answer(session, "<cancel>")
        session.nv.command("MnemonProviders")
        session.wait("#T.shown == 1", "the picker")
        line = next(label for label in session.lua("return T.shown[1]") if label.startswith("PostgreSQL (postgres)"))
        assert line.startswith("PostgreSQL (postgres): enabled, 0 spaces; unreachable: connection failed: connection "
                               f'to server at "127.0.0.1", port {server.port} failed: Connection refused'), line
        assert server.password not in json.dumps([listed(session), session.notes(), session.lua("return T.shown")])
    finally:
        server.stop()


#: The providers whose real server the picker test runs: ``{id: (label, the variable naming its server command)}``.
SERVED = {"hindsight": ("Hindsight", "MNEMON_HINDSIGHT_API"), "openviking": ("OpenViking", "MNEMON_OPENVIKING_SERVER")}


def _provider_server(provider: str):
    """A real server of ``provider`` (providers/<provider>/tests/servers.py: its command from the variable of
    :data:`SERVED`) with its loopback embedding endpoint, or the reason there is none here."""
    import sys

    label, variable = SERVED[provider]
    if provider not in plugins.installed():
        pytest.skip(f"the {label} provider package (providers/{provider}) is not installed here")
    if not os.environ.get(variable):
        pytest.skip(f"no {label} server here ({variable}: see providers/{provider}/README.md)")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))
    from provider_servers import serve

    return serve(provider, os.environ[variable], "nvim-key")


def _on_server(provider: str, server, external_id: str) -> bool:
    """Whether ``provider``'s server has the bank (Hindsight) or folder (OpenViking) ``external_id``."""
    if provider == "hindsight":
        return external_id in {b["bank_id"] for b in server.call("GET", "/v1/default/banks?limit=1000")["banks"]}
    return server.call("GET", f"/api/v1/fs/stat?uri={external_id}")["status"] == "ok"


@pytest.mark.parametrize("provider", sorted(SERVED))
def test_a_served_provider_is_enabled_and_gated_by_its_capabilities_in_the_picker(session: Session, tmp_path: Path,
                                                                                  provider: str) -> None:
    """A real Hindsight or OpenViking server: the picker says what it can and cannot do (no related walk, no links,
    no merge, no graph), enables it on the endpoint typed in, and creates a space in it (a new bank or memory
    folder on the server)."""
    label = SERVED[provider][0]
    server, embeddings = _provider_server(provider)
    try:
        ws = start(session, tmp_path)
        root = ws / ".mnemon"
        answer(session, label, "Configure", "endpoint", server.endpoint)
        run(session, "MnemonProviders", f"{label}: endpoint saved")
        prompts = session.lua("return T.prompts")
        assert "can: recall, browse, forget (hard delete)" in prompts[1], prompts[1]
        assert "cannot: entities, related, graph, link, merge" in prompts[1], prompts[1]
        assert provider_file(root)["services"][provider]["endpoint"] == server.endpoint
        answer(session, label, "Enable")
        run(session, "MnemonProviders", f"mnemon: enabled {label}")
        assert listed(session)[provider]["enabled"] is True
        name = f"nvim {os.getpid()} {tmp_path.name}"
        answer(session, label, "Create space", name, "Team decisions")
        run(session, "MnemonProviders", f"space {name} created in {label}")
        session.lua("T.s = nil; require('mnemon').list_spaces({}, function(e, s) T.s = s end)")
        session.wait("T.s ~= nil", "mnemon/spaces/list")
        [space] = [s for s in session.lua("return T.s") if s["providerId"] == provider and s["name"] == name]
        assert space["active"] is True
        caps = space["capabilities"]
        assert (caps["related"], caps["link"], caps["forget"], caps["write"]) == (False, False, True, "exact")
        assert _on_server(provider, server, space["location"]["externalId"]), "the space is on the server"
    finally:
        server.stop()
        embeddings.stop()
