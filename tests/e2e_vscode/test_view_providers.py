"""The Memory Providers view in a real VS Code (code-server in Chromium): the providers the server knows with
their state, and enable / test / create a space in / disable one from the view's inline actions. Every change
is read back with the CLI (``mnemon-ls provider list``, ``space list``), the same store the editor wrote.

The provider is Holographic (``providers/holographic`` with hermes-agent's engine), which ``.ci/run`` installs
before these tests; a developer's run without it skips this module. This file sorts after test_view.py on
purpose: it leaves the provider disabled, as it found it."""

from __future__ import annotations

import pytest

from tests.e2e_vscode.tools import REQUIRED

if not REQUIRED:  # without Playwright a developer's run skips this module (under .ci/run the import must work)
    pytest.importorskip("playwright.sync_api", reason="VS Code end-to-end tests need Playwright for Python (pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

from tests.e2e_vscode.codeserver import mnemon_cli  # noqa: E402
from tests.e2e_vscode.workbench import SERVER_MS, UI_MS  # noqa: E402

pytestmark = pytest.mark.e2e_vscode

PROVIDERS, SPACES = "Memory Providers", "Memory Spaces"


def providers(code_server, workspace) -> dict[str, dict]:
    return {p["providerId"]: p for p in mnemon_cli(code_server, workspace, "provider", "list")["providers"]}


def test_the_providers_view_lists_providers_and_enables_tests_and_disables_one(code_server, vscode) -> None:
    listed = providers(code_server, vscode.workspace)
    if not listed["holographic"]["installed"]:
        message = "mnemon-ls-provider-holographic is not installed in this environment (.ci/run installs it)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    assert not listed["holographic"]["configured"], listed["holographic"]
    vscode.show_mnemon()
    view = vscode.only(PROVIDERS)  # room for the providers' rows (a tree draws only the rows in sight)
    holographic = vscode.row(view, "Holographic")
    expect(vscode.description(holographic)).to_contain_text("installed, not configured", timeout=SERVER_MS)
    # A reference provider that is not installed is listed as such (under the one "Not installed" row), with no
    # action to pretend otherwise.
    missing = next(p["label"] for p in listed.values() if not p["installed"])
    group = vscode.row(view, "Not installed")
    group.click()
    expect(vscode.description(vscode.row(view, missing))).to_contain_text("not installed", timeout=UI_MS)
    vscode.row(view, missing).hover()
    expect(vscode.row(view, missing).locator(".actions .action-label")).to_have_count(0, timeout=UI_MS)
    group.click()  # collapsed again
    expect(vscode.row(view, missing)).to_have_count(0, timeout=UI_MS)

    try:
        vscode.inline_action(holographic, "Enable Provider")
        vscode.notification("enabled Holographic")
        expect(vscode.description(holographic)).to_contain_text("enabled", timeout=SERVER_MS)
        state = providers(code_server, vscode.workspace)["holographic"]
        assert (state["configured"], state["enabled"], state["usable"]) == (True, True, True), state

        vscode.inline_action(holographic, "Test Provider")
        vscode.notification("Holographic is healthy")
        expect(vscode.description(holographic)).to_contain_text("healthy", timeout=SERVER_MS)

        # Holographic can create namespaces: a space made from its row lives in it.
        name = "Holo notes"
        vscode.inline_action(holographic, "Create Space in Provider")
        # Two input boxes in a row, each waited for by its own prompt (src/providers.ts createSpaceIn).
        vscode.input_text(name, prompt="Name (1 to 100 characters)")
        vscode.input_text("Facts kept in the Holographic store", prompt="What belongs in it")
        vscode.notification(f'created the Memory Space "{name}" in Holographic')
        expect(vscode.description(vscode.row(vscode.view(SPACES), name))).to_contain_text("Holographic", timeout=SERVER_MS)
        spaces = [(s["name"], s["providerId"]) for s in mnemon_cli(code_server, vscode.workspace, "space", "list")]
        assert (name, "holographic") in spaces, spaces
        holographic = vscode.row(vscode.view(PROVIDERS), "Holographic")
        expect(vscode.description(holographic)).to_contain_text("enabled · 1 space", timeout=SERVER_MS)  # counts it

        vscode.inline_action(holographic, "Disable Provider")
        vscode.notification("disabled Holographic")
        expect(vscode.description(holographic)).to_contain_text("configured, disabled", timeout=SERVER_MS)
        expect(vscode.row(vscode.view(SPACES), name)).to_have_count(0, timeout=SERVER_MS)
    finally:
        if providers(code_server, vscode.workspace)["holographic"]["enabled"]:  # leave the window as it was
            mnemon_cli(code_server, vscode.workspace, "provider", "disable", "holographic")
    state = providers(code_server, vscode.workspace)["holographic"]
    assert (state["configured"], state["enabled"]) == (True, False), state
    spaces = mnemon_cli(code_server, vscode.workspace, "space", "list")
    assert all(s["providerId"] != "holographic" for s in spaces), spaces


#: The providers whose real server the view test runs: ``{id: (label, the variable naming its server command)}``.
SERVED = {"hindsight": ("Hindsight", "MNEMON_HINDSIGHT_API"), "openviking": ("OpenViking", "MNEMON_OPENVIKING_SERVER")}


@pytest.mark.parametrize("provider", sorted(SERVED))
def test_a_served_provider_says_what_its_spaces_cannot_do(code_server, vscode, provider: str) -> None:
    """A real Hindsight or OpenViking server (providers/<id>/tests/servers.py, its command in the variable of
    :data:`SERVED`), enabled from the CLI: the view lists it enabled and, under its row, what it can and cannot do
    (no related walk, links, graph, merge or entities); its space shows in Memory Spaces. Disabled again at the
    end."""
    import os
    import sys
    from pathlib import Path

    label, variable = SERVED[provider]
    if not providers(code_server, vscode.workspace)[provider]["installed"] or not os.environ.get(variable):
        message = f"mnemon-ls-provider-{provider} or its server ({variable}) is missing (.ci/run has both)"
        if REQUIRED and os.environ.get(variable):
            pytest.fail(message)
        pytest.skip(message)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))
    from provider_servers import serve

    server, embeddings = serve(provider, os.environ[variable], "e2e-key")
    try:
        mnemon_cli(code_server, vscode.workspace, "provider", "enable", provider, "--set", f"endpoint={server.endpoint}")
        mnemon_cli(code_server, vscode.workspace, "space", "create", "--provider", provider, "--name", f"{label} team",
                   "--description", "team decisions", "--active")
        vscode.show_mnemon()
        vscode.run_command("Mnemon: Refresh Views")
        view = vscode.only(PROVIDERS)  # room for the provider's details (a tree draws only the rows in sight)
        row = vscode.row(view, label)
        expect(vscode.description(row)).to_contain_text("enabled", timeout=SERVER_MS)
        row.click()  # expanded: its details
        expect(vscode.description(vscode.row(view, "Cannot"))).to_have_text("entities, related, graph, link, merge",
                                                                            timeout=UI_MS)
        expect(vscode.description(vscode.row(view, "Can"))).to_contain_text("forget (hard delete)", timeout=UI_MS)
        row.click()  # collapsed again
        expect(vscode.description(vscode.row(vscode.view(SPACES), f"{label} team"))).to_contain_text(label,
                                                                                                     timeout=SERVER_MS)
    finally:
        try:
            if providers(code_server, vscode.workspace)[provider]["enabled"]:  # leave the window as it was
                mnemon_cli(code_server, vscode.workspace, "provider", "disable", provider)
        finally:
            server.stop()
            embeddings.stop()


def test_a_byterover_provider_says_what_its_spaces_cannot_do(code_server, vscode, tmp_path) -> None:
    """The real ``brv`` (``MNEMON_BYTEROVER_BRV``) with providers/byterover/tests/servers.py's stand-in of its login
    service and a private ByteRover state, enabled from the CLI: the view lists it enabled and, under its row, what
    it can and cannot do (no browse, related walk, links, graph, merge or entities); its project space shows in
    Memory Spaces. Disabled again at the end, and every ByteRover process ended."""
    import os
    import sys
    from pathlib import Path

    if not providers(code_server, vscode.workspace)["byterover"]["installed"] or not os.environ.get("MNEMON_BYTEROVER_BRV"):
        message = "mnemon-ls-provider-byterover or its brv (MNEMON_BYTEROVER_BRV) is missing (.ci/run has both)"
        if REQUIRED and os.environ.get("MNEMON_BYTEROVER_BRV"):
            pytest.fail(message)
        pytest.skip(message)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))
    from provider_servers import servers_of

    servers = servers_of("byterover")
    stub = servers.LoginStub().start()
    home = servers.ByteRoverHome(os.environ["MNEMON_BYTEROVER_BRV"], stub)
    saved = dict(code_server.env)
    code_server.env.update(home.env)  # the CLI runs brv with this state (the editor's server only reads the tree)
    try:
        projects = tmp_path / "rover-projects"
        mnemon_cli(code_server, vscode.workspace, "provider", "enable", "byterover", "--set",
                   f"cliPath={os.environ['MNEMON_BYTEROVER_BRV']}", "--set", f"defaultDirectory={projects}")
        mnemon_cli(code_server, vscode.workspace, "space", "create", "--provider", "byterover", "--name", "Rover team",
                   "--description", "team decisions", "--active")
        vscode.show_mnemon()
        vscode.run_command("Mnemon: Refresh Views")
        view = vscode.only(PROVIDERS)  # room for the provider's details (a tree draws only the rows in sight)
        row = vscode.row(view, "ByteRover")
        expect(vscode.description(row)).to_contain_text("enabled", timeout=SERVER_MS)
        row.click()  # expanded: its details
        expect(vscode.description(vscode.row(view, "Cannot"))).to_have_text(
            "browse, entities, related, graph, link, merge", timeout=UI_MS)
        expect(vscode.description(vscode.row(view, "Can"))).to_contain_text("forget (hard delete)", timeout=UI_MS)
        row.click()  # collapsed again
        expect(vscode.description(vscode.row(vscode.view(SPACES), "Rover team"))).to_contain_text("ByteRover",
                                                                                                  timeout=SERVER_MS)
    finally:
        try:
            if providers(code_server, vscode.workspace)["byterover"]["enabled"]:  # leave the window as it was
                mnemon_cli(code_server, vscode.workspace, "provider", "disable", "byterover")
        finally:
            code_server.env.clear()
            code_server.env.update(saved)
            home.stop()
            stub.stop()
