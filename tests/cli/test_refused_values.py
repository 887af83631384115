"""Defects of an adversarial pass over the ``--json`` errors of the real CLI (subprocesses, a temporary git
workspace and ``--data-dir``): every refused value carries its field (the argument as typed), ``rule``,
``param`` (the operation's or the setting's name) and the ``value`` as sent, as a refused ``--limit 0`` does;
an option given twice that takes a list says how to write one; the pack file is named ``path`` whatever is wrong
with it; and a path argument starting ``~name`` (another user's home) is refused, never looked up."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.cli.test_option_names import run, workspace
from tests.cli.test_root_values import OWN_HOME, OWN_HOME_CWD
from tests.cli.test_usage_error_shape import refused
from tests.helpers import procs


@pytest.mark.parametrize("args, field, param, value", [
    (("remember", ""), "content", None, ""),
    (("runtime", "add", "--content", "  "), "--content", "content", "  "),
    (("doc", "create", "--title", " ", "--content", "x"), "--title", "title", " "),
    (("doc", "create", "--title", "T", "--content", ""), "--content", "content", ""),
    (("doc", "create", "--title", "T", "--content", "    code"), "--content", "content", "    code"),
])
def test_a_value_refused_as_empty_or_indented_is_echoed(tmp_path: Path, args: tuple[str, ...], field: str,
                                                        param: str | None, value: str) -> None:
    """An attack pass: ``remember ''`` and a document title or body refused as empty or as starting with an
    indented line had ``field`` and ``rule`` but not the ``value`` sent."""
    ws = workspace(tmp_path)
    _code, _line, error = refused(ws, tmp_path, *args)
    assert (error["field"], error.get("param"), error["value"]) == (field, param, value)
    assert error["rule"].startswith(("is required", "starts with an indented line"))


@pytest.mark.parametrize("args, field, param, value", [
    (("remember", "a\x01b"), "content", None, "a\\x01b"),
    (("runtime", "add", "--content", "a\x1b[31mb"), "--content", "content", "a\\x1b[31mb"),
    (("runtime", "add", "--content", "a \u00a7 b"), "--content", "content", "a \u00a7 b"),
    (("doc", "create", "--title", "T\x07", "--content", "x"), "--title", "title", "T\\x07"),
    (("space", "create", "--name", "a\x01b", "--description", "d"), "--name", "name", "a\\x01b"),
])
def test_a_value_refused_for_a_character_is_echoed_escaped(tmp_path: Path, args: tuple[str, ...], field: str,
                                                           param: str | None, value: str) -> None:
    """The helper of the pass above: a value refused for a control character (or the runtime delimiter) had no
    ``value``; it is repeated now with the character escaped (never raw: it would reach the terminal)."""
    ws = workspace(tmp_path)
    _code, _line, error = refused(ws, tmp_path, *args)
    assert (error["field"], error.get("param"), error["value"]) == (field, param, value), error


def test_compact_drop_refusals_have_the_param_and_the_value(tmp_path: Path) -> None:
    """An attack pass: ``--drop 9`` (no entry 9) had ``param`` but no ``value``, ``--drop -1`` neither; ``--drop 1
    --drop 2`` was refused as given twice without saying how to give two."""
    ws = workspace(tmp_path)
    for text in ("alpha fact", "beta fact"):
        assert run(ws, tmp_path, "runtime", "add", "--target", "memory", "--content", text).returncode == 0
    before = procs.tree_snapshot(tmp_path)
    _code, line, error = refused(ws, tmp_path, "runtime", "compact", "--target", "memory", "--drop", "9")
    assert line == "--drop 9: entry 9 does not exist: MEMORY.md has entries 1..2"
    assert (error["field"], error["param"], error["value"]) == ("--drop", "drop[0]", 9)
    _code, _line, error = refused(ws, tmp_path, "runtime", "compact", "--target", "memory", "--drop", "1,1")
    assert (error["param"], error["value"]) == ("drop[1]", 1)
    _code, line, error = refused(ws, tmp_path, "runtime", "compact", "--target", "memory", "--drop=-1")
    assert (error["field"], error["param"], error["value"]) == ("--drop", "drop", "-1")
    code, line, error = refused(ws, tmp_path, "runtime", "compact", "--target", "memory", "--drop", "1", "--drop", "2")
    assert (code, line) == (2, "--drop: given twice; give it once (several as one list: --drop 1,2)")
    assert error["rule"] == "given twice; give it once (several as one list: --drop 1,2)"
    _code, line, _error = refused(ws, tmp_path, "recall", "q", "--limit", "1", "--limit", "2")
    assert line == "--limit: given twice; give it once"  # one value, no list: no such hint
    assert procs.tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("option, typed, param", [
    ("--scope", "bogus", "storageScope"),
    ("--secrets", "maybe", "secrets"),
    ("--memory-maintenance", "never", "runtimeMemory.maintenance"),
    ("--hand-edits", "keep", "handEdits"),
    ("--user-limit-bytes", "x", "runtimeMemory.userLimitBytes"),
])
def test_a_settings_flag_value_its_choices_refuse_names_the_setting(tmp_path: Path, option: str, typed: str,
                                                                     param: str) -> None:
    """An attack pass: ``--storage-scope bogus`` (``--scope``) and every settings flag of choices had no
    ``param``, where the same flag's value refused by the setting's rule (``--user-limit-bytes 0``) has it."""
    ws = workspace(tmp_path)
    _code, line, error = refused(ws, tmp_path, "runtime", "list", option, typed)
    assert line.startswith(f"{option}: must ") and line.endswith(f"(got '{typed}')")
    assert (error["field"], error["param"], error["value"]) == (option, param, typed)


def test_the_pack_file_is_named_path_whatever_is_wrong_with_it(tmp_path: Path) -> None:
    """An attack pass: ``pack import FILE`` named FILE ``pack`` (not a ZIP, empty) or ``path`` (a directory,
    missing); the operation's parameter is ``path`` (MCP, the language server), shown as ``FILE`` here."""
    ws = workspace(tmp_path)
    (tmp_path / "notes.txt").write_text("not a zip\n")
    (tmp_path / "empty.zip").write_bytes(b"")
    (tmp_path / "folder").mkdir()
    for name, code in (("notes.txt", "pack-invalid"), ("empty.zip", "pack-invalid"), ("folder", "invalid-input"),
                       ("missing.zip", "invalid-input")):
        for action in ("import", "inspect"):
            _exit, line, error = refused(ws, tmp_path, "pack", action, str(tmp_path / name))
            assert line.startswith(f"FILE: {tmp_path / name} ")
            assert (error["code"], error["field"], error["param"]) == (code, "FILE", "path"), (name, action)


@pytest.mark.parametrize("args, field, param, rule", [
    (("pack", "export", "--output", "~nosuchuser/x.zip"), "--output", "path", OWN_HOME_CWD),  # none writes in ~root
    (("pack", "import", "~root/x.zip"), "FILE", "path", OWN_HOME_CWD),
    (("pack", "inspect", "~nosuchuser/x.zip"), "FILE", "path", OWN_HOME_CWD),
    (("import", "claude-code", "--from", "~root/x", "--dry-run"), "--from", "from", OWN_HOME_CWD),
    (("migrate", "--from", "~root/x", "--dry-run"), "--from", "from", OWN_HOME),  # global, workspace or absolute
    (("records", "export", "--output", "~nosuchuser/x.json"), "--output", None, OWN_HOME_CWD),
])
def test_a_path_of_another_users_home_is_refused(tmp_path: Path, args: tuple[str, ...], field: str,
                                                 param: str | None, rule: str) -> None:
    """An attack pass: these path arguments went through ``os.path.expanduser``, so ``~root/x`` read (or wrote
    into) another user's home; the one rule is ``settings.own_home_path``: refused naming the argument."""
    ws = workspace(tmp_path)
    typed = next(a for a in args if a.startswith("~"))
    before = procs.tree_snapshot(tmp_path)
    code, line, error = refused(ws, tmp_path, *args)
    assert (code, line) == (2, f"{field}: {rule} (got '{typed}')")
    assert (error["field"], error.get("param"), error["rule"], error["value"]) == (
        field, param, f"{rule} (got '{typed}')", typed)
    assert procs.tree_snapshot(tmp_path) == before


def test_a_path_of_your_own_home_expands(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (tmp_path / "home").mkdir()
    done = run(ws, tmp_path, "pack", "export", "--output", "~/backup.zip", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(tmp_path / "home" / "backup.zip")
    assert zipfile.is_zipfile(tmp_path / "home" / "backup.zip")
    looked = run(ws, tmp_path, "pack", "inspect", "~/backup.zip", "--json")
    assert looked.returncode == 0, looked.stderr


def test_a_compaction_refused_for_several_problems_names_each_in_the_text(tmp_path: Path) -> None:
    """A new user's pass: ``runtime compact --merge 2,3 --as ... --drop 5`` of a USER.md with one entry said the
    first problem and "(2 more problems in data.problems)": the language server's field, which a command line
    without ``--json`` never shows. Each problem is in the line now; ``--json`` still lists them apart."""
    ws = workspace(tmp_path)
    assert run(ws, tmp_path, "runtime", "add", "--target", "user", "--content", "likes tea").returncode == 0
    before = procs.tree_snapshot(tmp_path)
    _code, line, error = refused(ws, tmp_path, "runtime", "compact", "--target", "user", "--merge", "2,3", "--as",
                                 "one shorter text", "--drop", "5")
    assert "data.problems" not in line
    assert line.startswith("--merge 2,3: entry 2 does not exist: USER.md has entries 1..1; 2 more: "), line
    assert "entry 3 does not exist" in line and "entry 5 does not exist" in line, line
    assert len(error["problems"]) == 3
    assert procs.tree_snapshot(tmp_path) == before
