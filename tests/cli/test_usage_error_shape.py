"""Usage errors of the parser read as every rule of the operations does (real CLI subprocesses, a temporary git
workspace and ``--data-dir``): a value its type refuses has the same ``--json`` shape as a range error of the
operation (``field``, ``rule``, ``value``, ``param``); a value not among the choices is ``must be one of ...
(got 'x')``; an option of one value given twice is refused while options meant to repeat keep collecting; an
option left without its value because the value starts with ``-`` is told how to write it; a file that is not a
pack is named; ``--scope workspace`` with no workspace says what to do in the command line's words; a params
field is named by its camelCase name however it was given."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_option_names import run, workspace
from tests.helpers import procs


def refused(cwd: Path, tmp_path: Path, *args: str, root: bool = True) -> tuple[int, str, dict]:
    """Exit code, the error line (without ``mnemon-ls: error: `` and the ``--help`` pointer) and the ``--json``
    error object of a refused command."""
    line = run(cwd, tmp_path, *args, root=root)
    scripted = run(cwd, tmp_path, *args, "--json", root=root)
    assert scripted.returncode == line.returncode, scripted.stderr
    text = line.stderr.strip().removeprefix("mnemon-ls: error: ").split(" (see `", 1)[0]
    return line.returncode, text, json.loads(scripted.stdout)["error"]


def test_a_value_the_type_refuses_has_the_shape_of_a_range_error(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, typed = refused(ws, tmp_path, "recall", "q", "--limit", "x")
    assert (code, line) == (2, "--limit: must be an integer in 1..50 (got 'x')")
    assert typed == {"code": "invalid-input", "message": line, "field": "--limit",
                     "rule": "must be an integer in 1..50 (got 'x')", "value": "x", "param": "limit"}
    _code, _line, ranged = refused(ws, tmp_path, "recall", "q", "--limit", "0")
    assert list(typed) == list(ranged)  # the same keys in the same order
    _code, _line, escaped = refused(ws, tmp_path, "recall", "q", "--limit", "1\x1b[31m")
    assert escaped["value"] == "1\\x1b[31m"  # echoed escaped, never a raw terminal escape


def test_a_document_revision_is_named_by_its_camelcase_field_with_the_value(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "doc", "restore", "0123456789abcdef", "--revision", "-1")
    assert (code, line) == (2, "--revision: must be an integer in 1..9007199254740991 (got -1)")
    assert (error["field"], error["param"], error["value"]) == ("--revision", "documentRevision", -1)
    _code, _line, typed = refused(ws, tmp_path, "doc", "restore", "0123456789abcdef", "--revision", "x")
    assert (typed["param"], typed["value"]) == ("documentRevision", "x")


def test_a_value_not_among_the_choices_reads_as_every_rule(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "runtime", "add", "--content", "x", "--importance", "high")
    assert (code, line) == (2, "--importance: must be one of critical, normal, low (got 'high')")
    assert error == {"code": "invalid-input", "message": line, "field": "--importance",
                     "rule": "must be one of critical, normal, low (got 'high')", "value": "high",
                     "param": "importance"}
    code, line, error = refused(ws, tmp_path, "runtime", "list", "--secrets", "maybe")
    assert (code, line) == (2, "--secrets: must be one of redact, reject, allow (got 'maybe')")
    assert (error["field"], error["value"], error["param"]) == ("--secrets", "maybe", "secrets")  # the setting
    code, line, error = refused(ws, tmp_path, "reanchor", "notes", "x")
    assert (code, line) == (2, "SOURCE: must be one of runtime, spaces, documents, records (got 'notes')")
    assert (error["field"], error["rule"], error["param"]) == (
        "SOURCE", "must be one of runtime, spaces, documents, records (got 'notes')", "source")


def test_an_option_of_one_value_given_twice_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    code, line, error = refused(ws, tmp_path, "recall", "q", "--limit", "1", "--limit", "2")
    assert (code, line) == (2, "--limit: given twice; give it once")
    assert (error["field"], error["rule"]) == ("--limit", "given twice; give it once")
    code, line, _error = refused(ws, tmp_path, "runtime", "add", "--content", "a", "--content", "b")
    assert (code, line) == (2, "--content: given twice; give it once")
    code, line, _error = refused(ws, tmp_path, "runtime", "list", "--secrets", "allow", "--secrets", "allow")
    assert (code, line) == (2, "--secrets: given twice; give it once")  # a settings flag, the same value or not
    assert procs.tree_snapshot(tmp_path) == before
    made = run(ws, tmp_path, "runtime", "add", "--content", "parse splits on whitespace", "--cite", "src/lib.py:1",
               "--cite", "src/lib.py:2", "--json")  # options meant to repeat keep collecting
    assert made.returncode == 0, made.stderr
    assert [c["startLine"] for c in json.loads(made.stdout)["cites"]] == [1, 2]


def test_a_value_that_starts_with_a_dash_is_told_how_to_write_it(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "doc", "create", "--title", "-x", "--content", "y")
    assert (code, line) == (2, "--title: expected one argument; to give a value that starts with -, write "
                               "--title=-x")
    assert (error["field"], error["rule"]) == ("--title", line.removeprefix("--title: "))
    code, line, _error = refused(ws, tmp_path, "doc", "create", "--content", "y", "--title", "-x;y")
    assert line == "--title: expected one argument; to give a value that starts with -, write '--title=-x;y'"
    code, line, _error = refused(ws, tmp_path, "doc", "create", "--content", "y", "--title")
    assert (code, line) == (2, "--title: expected one argument")  # an option followed it (--data-dir): no hint
    made = run(ws, tmp_path, "doc", "create", "--title=-x", "--content", "y", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["document"]["title"] == "-x"


def test_a_file_that_is_not_a_pack_is_named(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    junk = tmp_path / "bad\x1b.zip"
    junk.write_bytes(b"not a zip")
    for action in ("import", "inspect"):
        code, line, error = refused(ws, tmp_path, "pack", action, str(junk))
        shown = str(junk).replace("\x1b", "\\x1b")
        assert (code, line) == (2, f"FILE: {shown} is not a ZIP archive (File is not a zip file)")
        assert (error["code"], error["field"], error["param"]) == ("pack-invalid", "FILE", "path")


def test_scope_workspace_without_a_workspace_says_what_to_do(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, line, error = refused(plain, tmp_path, "runtime", "list", "--scope", "workspace", root=False)
    rule = ("--scope workspace needs a workspace, and no directory from here upward holds .git or .mnemon: pass "
            "--workspace DIR, or run inside a git repository")
    assert (code, line) == (2, f"--workspace: {rule}")
    assert (error["field"], error["rule"]) == ("--workspace", rule) and "storageScope" not in line


def test_an_error_of_the_operation_about_a_field_has_its_rule(tmp_path: Path) -> None:
    """An attack pass: a not-found (and a revision conflict) named the field but had no ``rule``; only an
    invalid-input error had one."""
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "doc", "update", "nosuchdoc", "--content", "x")
    assert (code, error["code"], error["field"]) == (2, "not-found", "id")
    assert error["rule"] == line.removeprefix("id: ") and error["rule"].startswith('document "nosuchdoc" does not')
