"""What an error repeats stays short and names the field as the command line shows it (real CLI subprocesses;
an adversarial pass found each): an importance that is no importance is repeated escaped and clipped
(``errors.echo_value``), a line number has a range (``cited --line`` of 400 digits was echoed whole), a
malformed ``runtime compact --revision`` given alone is refused as malformed (not "nothing to compact"), the
settings flags and ``--embed-seconds`` are named as options in the one range wording, and ``space link`` with
equal ids names ``SOURCE_ID`` as its usage line does. Nothing refused changes a byte under the root."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_error_fields import cli, workspace
from tests.cli.test_error_wording import project
from tests.helpers import procs

#: The first 12 hex digits of a revision, as ``runtime add`` prints it.
_PRINTED = re.compile(r"revision ([0-9a-f]{12})\b")


def test_an_importance_that_is_no_importance_is_repeated_escaped_and_short(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    for content in ("deploys go through staging", "tests run in CI"):
        added = cli(ws, tmp_path, "runtime", "add", "--target", "user", "--content", content)
        assert added.returncode == 0, added.stderr
    revision = json.loads(cli(ws, tmp_path, "runtime", "list", "--target", "user", "--json").stdout)["revision"]
    entries = tmp_path / "entries.json"
    entries.write_text(json.dumps([{"content": "deploys and tests", "importance": "\x1b[2J" + "y" * 600,
                                    "sourceIndexes": [1, 2]}]), encoding="utf-8")
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, "runtime", "compact", "--entries", str(entries), "--revision", revision)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("mnemon-ls: error: --entries (entries[0].importance): must be one of critical, "
                                  "normal, low (got '\\x1b[2Jyyy"), done.stderr
    assert done.stderr.endswith("y...)\n") and len(done.stderr) < 400 and done.stderr.count("\n") == 1
    assert procs.tree_snapshot(tmp_path) == before


def test_a_space_importance_that_is_no_number_is_repeated_short() -> None:
    import pytest

    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.spaces.model import validate_importance

    with pytest.raises(InvalidInput) as info:
        validate_importance("high\n" + "!" * 600, "items[0].importance")
    assert info.value.rule.startswith("must be an integer in 1..5 (got 'high\\n!!!")
    assert info.value.rule.endswith("!...)") and len(info.value.rule) < 320


def test_a_line_number_has_a_range_on_the_command_line(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    huge = "9" * 400
    before = procs.tree_snapshot(tmp_path)
    for args, line in (
            (("cited", "src/lib.py", "--line", huge),
             "--line: must be an integer in 1..1000000000 (got 99999999999999999999999999999999...)"),
            (("cited", "src/lib.py", "--line", "0"), "--line: must be an integer in 1..1000000000 (got 0)"),
            (("runtime", "add", "--content", "parse splits", "--cite", "src/lib.py:1-" + huge),
             f"--cite {('src/lib.py:1-' + huge)[:256]}... (endLine): must be an integer in 1..1000000000 "
             "(got 99999999999999999999999999999999...)")):
        done = cli(ws, tmp_path, *args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: {line}\n"), args
    assert procs.tree_snapshot(tmp_path) == before
    highest = cli(ws, tmp_path, "cited", "src/lib.py", "--line", "1000000000")
    assert highest.returncode == 0 and "No memory cites line 1000000000." in highest.stdout, highest.stderr


def test_a_malformed_revision_alone_is_refused_as_malformed(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    added = cli(ws, tmp_path, "runtime", "add", "--target", "user", "--content", "deploys go through staging")
    assert added.returncode == 0, added.stderr
    [printed] = _PRINTED.findall(added.stdout)
    before = procs.tree_snapshot(tmp_path)
    malformed = "mnemon-ls: error: --revision: must be a revision: 12 to 64 lowercase hex digits"
    for value in ("abc", printed.upper(), "x" * 600):
        alone = cli(ws, tmp_path, "runtime", "compact", "--revision", value)
        with_drop = cli(ws, tmp_path, "runtime", "compact", "--revision", value, "--drop", "1")
        assert (alone.returncode, alone.stdout, alone.stderr) == (2, "", with_drop.stderr), value
        assert alone.stderr.startswith(malformed), alone.stderr
        error = json.loads(cli(ws, tmp_path, "runtime", "compact", "--revision", value, "--json").stdout)["error"]
        assert (error["code"], error["field"], error["param"]) == ("invalid-input", "--revision", "revision")
    # a well-formed revision alone still has nothing to compact
    nothing = cli(ws, tmp_path, "runtime", "compact", "--revision", printed)
    assert nothing.returncode == 2 and nothing.stderr.startswith("mnemon-ls: error: nothing to compact"), nothing.stderr
    assert procs.tree_snapshot(tmp_path) == before


def test_settings_flags_and_embed_seconds_are_named_as_options(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    for args, line in (
            (("runtime", "list", "--user-limit-bytes", "0"),
             "--user-limit-bytes: must be an integer in 1..1048576 (got 0)"),
            (("runtime", "list", "--memory-limit-bytes", "2000000"),
             "--memory-limit-bytes: must be an integer in 1..1048576 (got 2000000)"),
            (("recall", "deploy", "--embed-seconds", "-1"), "--embed-seconds: must be a number in 0..86400 (got -1.0)"),
            (("recall", "deploy", "--embed-seconds", "nan"), "--embed-seconds: must be a number in 0..86400 (got nan)")):
        done = cli(ws, tmp_path, *args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: {line}\n"), args
    assert procs.tree_snapshot(tmp_path) == before


def test_link_with_equal_ids_names_both_as_the_usage_line_does(tmp_path: Path) -> None:
    ws = project(tmp_path)
    made = cli(ws, tmp_path, "remember", "deploys go through staging", "--json")
    item = json.loads(made.stdout)["id"]
    assert "SOURCE_ID" in cli(ws, tmp_path, "space", "link", "--help").stdout
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, "space", "link", item, item, "--space", "Project")
    assert (done.returncode, done.stderr) == (2, "mnemon-ls: error: TARGET_ID: must differ from SOURCE_ID\n")
    error = json.loads(cli(ws, tmp_path, "space", "link", item, item, "--space", "Project", "--json").stdout)["error"]
    assert (error["field"], error["rule"], error["param"]) == (  # --json: the words of the line; param: the operation's
        "TARGET_ID", "must differ from SOURCE_ID", "targetId")
    assert procs.tree_snapshot(tmp_path) == before


def test_an_expected_document_revision_has_one_rule_for_update_archive_and_restore(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    made = cli(ws, tmp_path, "doc", "create", "--title", "Release plan", "--content", "ship on Friday", "--json")
    assert made.returncode == 0, made.stderr
    doc_id = json.loads(made.stdout)["document"]["id"]
    before = procs.tree_snapshot(tmp_path)
    for revision, shown in (("0", "0"), ("-1", "-1"), (str(2**53), str(2**53)),
                            ("9" * 4000, "99999999999999999999999999999999...")):  # repeated short
        for command in (("doc", "update", doc_id, "--content", "ship on Monday"), ("doc", "archive", doc_id),
                        ("doc", "restore", doc_id)):
            done = cli(ws, tmp_path, *command, "--revision", revision)
            rule = f"must be an integer in 1..9007199254740991 (got {shown})"
            assert (done.returncode, done.stdout, done.stderr) == (2, "", f"mnemon-ls: error: --revision: {rule}\n"), command
            error = json.loads(cli(ws, tmp_path, *command, "--revision", revision, "--json").stdout)["error"]
            assert (error["code"], error["rule"]) == ("invalid-input", rule), command
    assert procs.tree_snapshot(tmp_path) == before
