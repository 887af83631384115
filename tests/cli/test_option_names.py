"""A command-line error names the option the person typed, never the params field behind it, on its line and in
``--json``'s ``field`` (the operation's field kept in ``param``); argparse's own errors read as every rule does and
name their argument in ``field``; options are never read from a prefix, integers are ASCII digits only (real CLI
subprocesses, a temporary git workspace and ``--data-dir``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.helpers.zygote import mnemon_command


def run(ws: Path, tmp_path: Path, *args: str, root: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    env.pop("MNEMON_DATA_DIR", None)
    tail = ("--data-dir", str(tmp_path / "root")) if root else ()
    return subprocess.run([*mnemon_command(), *args, *tail], capture_output=True, text=True, env=env, cwd=ws,
                          timeout=60)


def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "ws")
    commit_files(repo, {"src/lib.py": "def parse(text):\n    return text.split()\n"}, "lib")
    return Path(repo.workdir)


def refused(ws: Path, tmp_path: Path, *args: str, root: bool = True) -> tuple[int, str, dict]:
    """Exit code, the stderr line (without ``mnemon-ls: error: ``) and the ``--json`` error object."""
    line = run(ws, tmp_path, *args, root=root)
    scripted = run(ws, tmp_path, *args, "--json", root=root)
    assert line.stdout == "" and line.stderr.startswith("mnemon-ls: error: "), line
    assert scripted.returncode == line.returncode
    return line.returncode, line.stderr.removeprefix("mnemon-ls: error: ").rstrip("\n"), json.loads(scripted.stdout)["error"]


def test_operation_errors_name_the_option_typed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "wake", "--budget", "10")
    assert (code, line) == (2, "--budget: must be an integer in 1024..4194304 characters (got 10)")
    assert (error["field"], error["param"], error["message"]) == ("--budget", "budget", line)
    code, line, error = refused(ws, tmp_path, "migrate", "--from", str(tmp_path / "nowhere"))
    assert (code, line) == (2, f"--from: {tmp_path / 'nowhere'} does not exist or is not a directory; nothing to migrate")
    assert (error["field"], error["param"]) == ("--from", "from")
    code, line, error = refused(ws, tmp_path, "import", "claude-code", "--from", str(tmp_path / "nowhere"))
    assert (code, line, error["field"]) == (2, f"--from: {tmp_path / 'nowhere'} does not exist", "--from")
    code, line, error = refused(ws, tmp_path, "records", "propose", "--title", "t", "--content", "c")
    assert (code, line) == (2, "--source-ref: a model-suggested record needs at least one source reference")
    assert (error["field"], error["param"]) == ("--source-ref", "governance.sourceRefs")
    code, line, error = refused(ws, tmp_path, "records", "create", "--title", "t", "--content", "c",
                                "--record-scope", "session")  # an option not given, named for what it lacks
    assert (code, line) == (2, "--session-id: is required for the session scope (a session is one server lifetime)")
    assert (error["field"], error["param"]) == ("--session-id", "sessionId")
    code, line, error = refused(ws, tmp_path, "doc", "update", "0123456789abcdef", "--content", "x", "--revision", "0")
    assert (code, line) == (2, "--revision: must be an integer in 1..9007199254740991 (got 0)")
    assert (error["field"], error["rule"]) == ("--revision", "must be an integer in 1..9007199254740991 (got 0)")


def test_a_missing_document_field_is_named_as_argparse_names_a_required_option(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "doc", "create")
    assert (code, line, error["field"], error["rule"]) == (2, "the following arguments are required: --title",
                                                           "--title", "is required")
    code, line, error = refused(ws, tmp_path, "doc", "create", "--title", "Deploy")
    assert (code, line, error["field"]) == (2, "the following arguments are required: --content", "--content")
    assert (error["code"], error["message"], error["param"]) == ("invalid-input", line, "content")


def test_file_errors_name_the_option_that_carried_the_file(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("# Out\n")
    code, line, error = refused(ws, tmp_path, "doc", "create", "--file", str(outside))
    assert (code, error["field"], error["param"]) == (2, "--file", "sourcePaths[0]")
    assert line == f"--file: must stay inside the workspace {ws} (got {str(outside)!r}, which resolves to {outside})"
    code, line, error = refused(ws, tmp_path, "doc", "create", "--file", "src")
    assert (code, line, error["field"]) == (2, f"--file: {ws / 'src'} is a directory, not a file", "--file")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    code, line, error = refused(ws, tmp_path, "pack", "inspect", str(junk))
    assert (code, line) == (2, f"FILE: {junk} is not a ZIP archive (File is not a zip file)")
    assert (error["code"], error["field"], error["param"]) == ("pack-invalid", "FILE", "path")
    code, line, error = refused(ws, tmp_path, "pack", "inspect", str(tmp_path / "none.zip"))
    assert (code, line, error["field"]) == (2, f"FILE: {tmp_path / 'none.zip'} does not exist", "FILE")


def test_scope_custom_without_a_root_names_the_data_dir_option(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "wake", "--scope", "custom", root=False)
    assert (code, line) == (2, "--data-dir: is required with --scope custom (the root to use)")
    assert error["field"] == "--data-dir" and "param" not in error


def test_merging_a_space_into_itself_is_bad_input_naming_into(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert run(ws, tmp_path, "space", "create", "--name", "Alpha", "--description", "facts").returncode == 0
    code, line, error = refused(ws, tmp_path, "space", "merge", "Alpha", "--into", "Alpha")
    assert (code, line) == (2, "--into: must differ from every source space (a space cannot be merged into itself)")
    assert (error["code"], error["field"], error["param"]) == ("invalid-input", "--into", "targetId")


def test_usage_errors_name_their_argument_and_read_as_rules(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "doc", "create", "--title", "t", "--frob")
    assert (code, line) == (2, "unrecognized arguments: --frob (see `mnemon-ls doc create --help`)")
    assert error == {"code": "invalid-input", "message": "unrecognized arguments: --frob", "field": "--frob",
                     "rule": "is not an argument of `mnemon-ls doc create`"}  # every error has its rule
    code, line, error = refused(ws, tmp_path, "doc", "create", "--title", "t", "--conten", "x")  # no prefixes
    assert (code, error["field"]) == (2, "--conten") and line.startswith("unrecognized arguments: --conten x")
    code, line, error = refused(ws, tmp_path, "wake", "--budg", "5000")
    assert (code, error["field"]) == (2, "--budg")
    for typed in ("x", "1_0", "\u0661", "+1", " 1", "1.0"):
        code, line, error = refused(ws, tmp_path, "doc", "update", "0123456789abcdef", "--content", "x",
                                    "--revision", typed)
        rule = f"must be an integer in 1..9007199254740991 (got {typed!r})"
        assert (code, line) == (2, f"--revision: {rule} (see `mnemon-ls doc update --help`)"), typed
        assert (error["field"], error["message"]) == ("--revision", f"--revision: {rule}")
    code, line, error = refused(ws, tmp_path, "cited", "src/lib.py", "--line", "\u0661")
    assert (code, error["field"]) == (2, "--line") and line.startswith("--line: must be an integer"), line
    code, line, error = refused(ws, tmp_path, "recall", "retry", "--limit", "ten")
    assert (code, line) == (2, "--limit: must be an integer in 1..50 (got 'ten') (see `mnemon-ls recall --help`)")
    code, line, error = refused(ws, tmp_path, "wake", "--user-limit-bytes", "1_0")
    assert line == "--user-limit-bytes: must be an integer in 1..1048576 (got '1_0') (see `mnemon-ls wake --help`)"


def test_recall_limit_help_says_the_cap(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    shown = " ".join(run(ws, tmp_path, "recall", "--help", root=False).stdout.split())
    assert ("--limit LIMIT results wanted, 1..50 (default 10); at most 12 are returned whatever the limit (the recall "
            "cap): a larger limit only has more candidates searched and ranked") in shown


def test_doc_update_help_says_what_each_field_changes(tmp_path: Path) -> None:
    """``doc update --help`` listed ``--title TITLE``, ``--description DESCRIPTION`` and ``--source PATH`` with no
    words: nothing said that an omitted one is kept, or that ``--source`` replaces the document's source paths
    rather than adding one (the MCP tool and the protocol page showed the same blanks)."""
    ws = workspace(tmp_path)
    shown = " ".join(run(ws, tmp_path, "doc", "update", "--help", root=False).stdout.split())
    assert "--title TITLE the new title (kept when omitted)" in shown
    assert "--description DESCRIPTION the new one-sentence description (kept when omitted)" in shown
    assert ("--source PATH a workspace file the document is about (repeatable): the ones given replace its list "
            "(kept when omitted)") in shown


def test_entry_numbers_and_integer_settings_are_ascii_digits_too(tmp_path: Path) -> None:
    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.settings import settings_from_environment

    ws = workspace(tmp_path)
    code, line, error = refused(ws, tmp_path, "runtime", "compact", "--drop", "\u0662", "--revision", "a" * 12)
    assert (code, error["field"]) == (2, "--drop")
    assert line == "--drop: must be entry numbers like 2,3 (as `mnemon-ls runtime list` prints them; got '\u0662')"
    for typed in ("1_0", "\u0661\u0660"):
        try:
            settings_from_environment({"MNEMON_USER_LIMIT_BYTES": typed})
        except InvalidInput as exc:
            assert exc.message == f"MNEMON_USER_LIMIT_BYTES: must be an integer (got {typed!r})"
        else:
            raise AssertionError(typed)
    assert settings_from_environment({"MNEMON_USER_LIMIT_BYTES": "2048"}) == {"userLimitBytes": 2048}
