"""Errors of bad input name the field and the rule in one wording on every surface, and on the command line the
field is the option the person typed, on the line and as --json's field (real CLI subprocesses): a pydantic rule reads as MCP's does
(``input should be ...``, tests/mcp/test_mcp_error_fields.py), a document that does not exist names ``id``, a
stale document revision ``--revision``, a stale index revision ``--index-revision``; exit codes as docs/cli.md
gives them (2 invalid input or not found, 3 rejected)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.gitrepo import commit_files, make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def cli(ws: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    return subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(tmp_path / "root")],
                          capture_output=True, text=True, env=env, cwd=ws, timeout=60)


def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "ws")
    commit_files(repo, {"src/lib.py": "def parse(text):\n    return text.split()\n"}, "lib")
    return Path(repo.workdir)


def test_a_rule_of_the_params_model_names_the_option_in_mcp_words(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert cli(ws, tmp_path, "runtime", "add", "--content", "first").returncode == 0
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, "runtime", "add", "--content", "parse splits", "--cite", "src/lib.py:0")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "mnemon-ls: error: --cite src/lib.py:0 (startLine): must be an integer in 1..1000000000 (got 0)\n"
    scripted = cli(ws, tmp_path, "runtime", "add", "--content", "parse splits", "--cite", "src/lib.py:0", "--json")
    error = json.loads(scripted.stdout)["error"]  # the option; param: the operation's field; the rule as everywhere
    assert (error["field"], error["param"], error["rule"]) == (
        "--cite", "cites[0].startLine", "must be an integer in 1..1000000000 (got 0)")
    reversed_lines = cli(ws, tmp_path, "runtime", "add", "--content", "x", "--cite", "src/lib.py:2-1")
    assert reversed_lines.stderr == ("mnemon-ls: error: --cite src/lib.py:2-1 (endLine): must not be before startLine "
                                     "(1 < 2)\n")
    restore = cli(ws, tmp_path, "doc", "restore", "0123456789abcdef", "--revision", "-1")
    assert (restore.returncode, restore.stderr) == (2, "mnemon-ls: error: --revision: must be an integer in "
                                                       "1..9007199254740991 (got -1)\n")
    assert procs.tree_snapshot(tmp_path) == before


def test_document_errors_name_the_field_and_the_option(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    made = cli(ws, tmp_path, "doc", "create", "--title", "Deploy", "--content", "blue-green", "--json")
    assert made.returncode == 0, made.stderr
    doc = json.loads(made.stdout)["document"]["id"]
    missing = cli(ws, tmp_path, "doc", "get", "nosuchdocument")
    assert (missing.returncode, missing.stderr) == (2, 'mnemon-ls: error: id: document "nosuchdocument" does not '
                                                       'exist\n')
    before = procs.tree_snapshot(tmp_path)
    stale = cli(ws, tmp_path, "doc", "update", doc, "--content", "canary", "--revision", "4")
    assert (stale.returncode, stale.stdout) == (3, "")
    assert stale.stderr == (f"mnemon-ls: error: --revision: expected revision 4, the document is at 1 (document {doc}: "
                            "re-read it and retry; the stored copy was kept as it is)\n")
    scripted = json.loads(cli(ws, tmp_path, "doc", "update", doc, "--content", "canary", "--revision", "4",
                              "--json").stdout)["error"]
    assert (scripted["code"], scripted["field"], scripted["param"], scripted["expected"], scripted["actual"]) == (
        "revision-conflict", "--revision", "documentRevision", 4, 1)
    index = cli(ws, tmp_path, "doc", "update", doc, "--content", "canary", "--index-revision", "a" * 64)
    assert index.returncode == 3
    assert index.stderr.startswith("mnemon-ls: error: --index-revision: documents/index.json changed since revision "
                                   "aaaaaaaaaaaa (now "), index.stderr
    assert procs.tree_snapshot(tmp_path) == before


def test_a_long_or_multiline_value_is_not_printed_back_whole(tmp_path: Path) -> None:
    # the option is named with the value typed, clipped to 256 UTF-8 bytes and on one line; --json keeps the data
    ws = workspace(tmp_path)
    assert cli(ws, tmp_path, "space", "create", "--name", "Project", "--description", "facts",
               "--active").returncode == 0
    before = procs.tree_snapshot(tmp_path)
    long_tag = cli(ws, tmp_path, "remember", "retry facts", "--tag", "t" * 5000)
    assert (long_tag.returncode, long_tag.stderr) == (
        2, f"mnemon-ls: error: --tag {'t' * 256}...: must be at most 100 UTF-8 bytes\n")
    long_space = cli(ws, tmp_path, "recall", "retry", "--space", "Project", "--space", "ü" * 5000)
    assert (long_space.returncode, long_space.stderr) == (
        2, f"mnemon-ls: error: --space {'ü' * 128}...: names no space: a space id has at most 128 characters and a "
           "name at most 100 (got 5000 characters)\n")  # 256 UTF-8 bytes
    two_lines = cli(ws, tmp_path, "recall", "retry", "--space", "Project", "--space", "no\nsuch\x1b[31m")
    assert (two_lines.returncode, two_lines.stderr) == (
        2, "mnemon-ls: error: --space no\\nsuch\\x1b[31m: is not a registered space id or name\n")
    scripted = json.loads(cli(ws, tmp_path, "remember", "retry facts", "--tag", "t" * 5000, "--json").stdout)
    assert (scripted["error"]["field"], scripted["error"]["param"], scripted["error"]["rule"]) == (
        "--tag", "tags[0]", "must be at most 100 UTF-8 bytes")
    assert procs.tree_snapshot(tmp_path) == before


def test_a_value_of_the_wrong_type_is_named_with_its_type_and_start(tmp_path: Path) -> None:
    # "records: must be a list of records" said neither what came nor its type (errors.not_sent, every surface)
    ws = workspace(tmp_path)
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"schemaVersion": 1, "records": "decisions" * 40}), encoding="utf-8")
    before = procs.tree_snapshot(tmp_path)
    rule = "must be a list of records, not a string (got 'decisionsdecisionsdecisionsdecisionsdec...)"
    done = cli(ws, tmp_path, "records", "import", str(bundle))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: records: {rule}\n")
    error = json.loads(cli(ws, tmp_path, "records", "import", str(bundle), "--json").stdout)["error"]
    assert (error["code"], error["field"], error["rule"]) == ("invalid-input", "records", rule)
    assert procs.tree_snapshot(tmp_path) == before


def test_a_bad_or_missing_name_of_hook_setup_and_a_required_id_names_the_field(tmp_path: Path) -> None:
    # hook EVENT and setup CLIENT name their field and list the accepted values; a required id names itself
    ws = workspace(tmp_path)
    for argv, field, rule, value in (
            (("hook", "session-end"), "event", "must be one of session-start, prompt (got 'session-end')",
             "session-end"),
            (("setup", "emacs"), "client", "must be one of claude-code, codex, cursor, vscode, git (got 'emacs')",
             "emacs"),
            (("doc", "get"), "id", "is required", None)):
        done = cli(ws, tmp_path, *argv, "--json")
        error = json.loads(done.stdout)["error"]
        assert (done.returncode, error["code"], error["field"], error["rule"], error.get("value")) == (
            2, "invalid-input", field, rule, value), done.stdout
        said = "the following arguments are required: id" if field == "id" else f"{field}: {rule}"
        assert done.stderr.startswith(f"mnemon-ls: error: {said} (see `mnemon-ls "), done.stderr
