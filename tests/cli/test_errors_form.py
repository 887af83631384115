"""Error texts of the CLI in ``field: rule`` form with the value given and the exit codes of docs/storage.md
and docs/cli.md (2 invalid input, 3 rejected: capacity, conflict, ambiguous or missing match), through real CLI
subprocesses; a refused request writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_DATA_DIR": str(tmp_path / "data"),
                              "MNEMON_SEMANTIC": "off"}
    return subprocess.run([*mnemon_command(), *args, "--scope", "global"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)


def project(tmp_path: Path) -> None:
    made = cli(tmp_path, "space", "create", "--name", "Project", "--description", "facts", "--active")
    assert made.returncode == 0, made.stderr


def test_an_importance_out_of_range_names_the_value_given_and_writes_nothing(tmp_path: Path) -> None:
    project(tmp_path)
    assert cli(tmp_path, "remember", "first fact").returncode == 0
    before = procs.tree_snapshot(tmp_path)
    done = cli(tmp_path, "remember", "x", "--importance", "9")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "mnemon-ls: error: --importance: must be an integer in 1..5 (got 9)\n"
    assert procs.tree_snapshot(tmp_path) == before


def test_forgetting_an_item_twice_is_a_missing_match_exit_3(tmp_path: Path) -> None:
    project(tmp_path)
    done = cli(tmp_path, "remember", "a fact to forget", "--json")
    assert done.returncode == 0, done.stderr
    item = json.loads(done.stdout)["id"]
    assert cli(tmp_path, "space", "forget", item, "--space", "default").returncode == 0
    before = procs.tree_snapshot(tmp_path)
    again = cli(tmp_path, "space", "forget", item, "--space", "default")
    assert (again.returncode, again.stdout) == (3, "")  # docs/memory.md, docs/storage.md: a missing match exits 3
    assert again.stderr.startswith("mnemon-ls: error: ITEM_ID: no active item with this id in the space"), again.stderr
    assert again.stderr.endswith(f"(got {item})\n"), again.stderr
    malformed = cli(tmp_path, "space", "forget", "", "--space", "default")
    assert malformed.returncode == 2, malformed.stderr  # an id that cannot be one stays invalid input
    assert procs.tree_snapshot(tmp_path) == before


def test_merging_a_third_party_space_is_refused_with_a_field_and_the_capability_code(tmp_path: Path) -> None:
    from mnemon_ls.spaces import SpacesService

    project(tmp_path)
    service = SpacesService(tmp_path / "data")
    service.configure_provider("honcho", {}, enabled=True)
    [other] = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "peer-1"}])
    service.close()
    before = procs.tree_snapshot(tmp_path)
    done = cli(tmp_path, "space", "merge", other.id, "--into", "project", "--json")
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"mnemon-ls: error: space: {other.name} ({other.id}) is a honcho space and "
                                  "cannot merge (merge is Mnemon-native only)"), done.stderr
    text = cli(tmp_path, "space", "merge", other.id, "--into", "project")
    assert text.stderr == (f"mnemon-ls: error: space: {other.name} ({other.id}) is a honcho space and cannot merge "
                           "(merge is Mnemon-native only)\n")
    assert procs.tree_snapshot(tmp_path) == before


def test_space_names_that_look_alike_and_ids_in_another_case_through_the_cli(tmp_path: Path) -> None:
    """``space status WORK-ID`` names the space ``work-id``; a fullwidth twin of a name is that name; a name
    with a zero-width character is refused naming the field and the rule (exit 2) and writes nothing."""
    project(tmp_path)
    made = cli(tmp_path, "space", "create", "--name", "Notes", "--description", "scratch", "--json")
    notes = json.loads(made.stdout)["id"]
    status = cli(tmp_path, "space", "status", notes.upper(), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["space"]["id"] == notes
    remembered = json.loads(cli(tmp_path, "remember", "--space", notes.upper(), "Tabs in Makefiles", "--json").stdout)
    assert remembered["spaceId"] == notes
    before = procs.tree_snapshot(tmp_path)
    twin = cli(tmp_path, "space", "create", "--name", "ＰＲＯＪＥＣＴ", "--description", "a fullwidth twin")
    assert (twin.returncode, twin.stdout) == (2, "")
    assert twin.stderr.startswith("mnemon-ls: error: --name: is already the name of space Project (default)")
    hidden = cli(tmp_path, "space", "create", "--name", "Pro\u200bject", "--description", "a zero-width twin")
    assert (hidden.returncode, hidden.stdout) == (2, "")
    assert hidden.stderr == ("mnemon-ls: error: --name: must not contain invisible format characters such as "
                             "zero-width spaces (found U+200B ZERO WIDTH SPACE, Unicode category Cf): a space name "
                             "is compared as it is seen\n")
    renamed = cli(tmp_path, "space", "update", notes.upper(), "--name", "No\ufefftes")
    assert renamed.returncode == 2 and "U+FEFF" in renamed.stderr
    assert procs.tree_snapshot(tmp_path) == before


def test_a_write_with_no_or_two_active_spaces_names_the_space_option_and_the_spaces(tmp_path: Path) -> None:
    none = cli(tmp_path, "remember", "a fact")
    assert none.returncode == 2
    assert none.stderr == ("mnemon-ls: error: --space: is required: 0 spaces are active, and a write without a "
                           "target needs exactly one: create a space (or activate one), or name one\n")
    project(tmp_path)
    made = cli(tmp_path, "space", "create", "--name", "Team", "--description", "team facts", "--active")
    assert made.returncode == 0, made.stderr
    before = procs.tree_snapshot(tmp_path)
    two = cli(tmp_path, "remember", "a fact", "--json")
    assert two.returncode == 2
    assert two.stderr == ("mnemon-ls: error: --space: is required: 2 spaces are active (Project, Team), and a write "
                          "without a target needs exactly one: name the space, or deactivate the others\n")
    error = json.loads(two.stdout)["error"]  # the option in the JSON too; the protocol's field name in param
    assert (error["field"], error["param"], error["active"]) == ("--space", "spaceId", 2)
    assert procs.tree_snapshot(tmp_path) == before


def test_recall_of_an_inactive_space_names_the_option_value_and_the_space(tmp_path: Path) -> None:
    project(tmp_path)
    made = cli(tmp_path, "space", "create", "--name", "Team", "--description", "team facts")
    assert made.returncode == 0, made.stderr
    done = cli(tmp_path, "recall", "fact", "--space", "Project", "--space", "team")
    assert done.returncode == 2
    assert done.stderr == "mnemon-ls: error: --space team: is not active for reading (Team; activate it first)\n"
