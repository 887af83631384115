"""mnemon_ls.cli.light: ``hook`` and ``wake`` parsed without the operation registry answer exactly as the full
command line does, and hand back everything else.

The light path is what ``python -m mnemon_ls hook|wake`` runs (:mod:`mnemon_ls.__main__`); the full one is
:func:`mnemon_ls.cli.full.main`. Both run here in fresh interpreters on the same real repository and storage root.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from mnemon_ls.cli import light as cli_light
from mnemon_ls.cli.common import SETTINGS_DESTS
from mnemon_ls.cli.ops import _field_type
from mnemon_ls.cli.parser import settings_parent
from mnemon_ls.ops.wake import WakeRequest
from mnemon_ls.ops.workspace import WakeParams
from tests.helpers.procs import child_env

FULL = "import sys; from mnemon_ls.cli.full import main; sys.exit(main(sys.argv[1:]))"


def test_the_wake_request_has_the_wake_params_fields_and_types():
    hints = typing.get_type_hints(WakeRequest)
    fields = {f.name for f in dataclasses.fields(WakeRequest)}
    assert fields == set(WakeParams.model_fields)
    for name in fields:
        assert _field_type(hints[name]) == _field_type(WakeParams.model_fields[name].annotation), name


def test_settings_dests_are_the_settings_flags():
    dests = {action.dest for action in settings_parent()._actions}
    assert set(SETTINGS_DESTS) == dests - {"json"}


@pytest.mark.parametrize("argv", [["hook", "prompt"], ["hook", "prompt", "--json"], ["hook", "session-start"],
                                  ["hook", "session-start", "--json"]])
def test_hooks_as_setup_writes_them_parse_as_the_parser_would(argv):
    parsed = vars(cli_light.build_parser("hook").parse_args(argv))
    assert vars(cli_light.as_written(argv)) == parsed


@pytest.mark.parametrize("argv", [["hook"], ["hook", "prompt", "--jsonx"], ["hook", "prompt", "-h"],
                                  ["wake", "--budget", "many"], ["wake", "--help"], ["wake", "--branch"],
                                  ["wake", "--colour"], ["wake", "\udcff"], ["doctor"], []])
def test_anything_else_is_handed_to_the_full_command_line(argv):
    assert cli_light.main(argv) is None


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("light")
    repo = base / "repo"
    repo.mkdir()
    env = child_env(MNEMON_DATA_DIR=str(base / "data"), HOME=str(base))
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    for argv in (["runtime", "add", "--content", "we build with make"],
                 ["runtime", "add", "--content", "only on topic", "--branch", "topic"],
                 ["space", "create", "--name", "Notes", "--description", "facts", "--active"],
                 ["remember", "the cache lives in .cache"]):
        subprocess.run([sys.executable, "-m", "mnemon_ls", *argv], check=True, cwd=str(repo), env=env,
                       capture_output=True)
    return repo, env


@pytest.mark.parametrize("argv, stdin", [
    (["wake"], ""), (["wake", "--json"], ""), (["wake", "--branch", "topic"], ""), (["wake", "--budget", "1024"], ""),
    (["wake", "--budget", "10"], ""), (["wake", "--branch", "bad..name"], ""), (["wake", "--budget", "many"], ""),
    (["wake", "--scope", "custom"], ""), (["wake", "--workspace", ""], ""),
    (["hook", "prompt"], "{}"), (["hook", "prompt", "--writeback-mode", "off"], "{}"),
    (["hook", "prompt", "--recall-mode", "off", "--writeback-mode", "off"], "{}"),
    (["hook", "session-start"], "{}"), (["hook", "session-start", "--json"], "not json"),
    (["hook", "session-start", "--scope", "custom", "--data-dir", "relative"], "{}"), (["hook", "stop"], "{}"),
])
def test_the_light_path_answers_as_the_full_command_line(repo, argv, stdin):
    where, env = repo
    light = subprocess.run([sys.executable, "-m", "mnemon_ls", *argv], input=stdin, capture_output=True, text=True,
                           cwd=str(where), env=env, timeout=120)
    full = subprocess.run([sys.executable, "-c", FULL, *argv], input=stdin, capture_output=True, text=True,
                          cwd=str(where), env=env, timeout=120)
    assert (light.returncode, light.stdout, light.stderr) == (full.returncode, full.stdout, full.stderr)
    if argv == ["wake", "--json"]:
        assert json.loads(light.stdout)["text"].startswith("MNEMON RUNTIME MEMORY SNAPSHOT")
