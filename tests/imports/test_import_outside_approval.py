"""Claude Code's ``@path`` imports outside the repository: an approval step, and credential locations never read.

A repository's CLAUDE.md could make an import read any file of the home directory (``@~/.aws/credentials``), and
with ``HOME=/`` any file at all (``@~/etc/shadow``), the dry run showing its content. Claude Code asks for approval
the first time a project's memory imports files outside the project; now the import does too: a file imported from
outside the repository and the Claude home (``~/.claude``) is listed in the plan as needing approval (``needsApproval``,
each reference in ``importedBy``) and not read unless ``--allow-outside`` is passed; a credential location
(``~/.ssh``, ``~/.aws``, ``/etc/shadow``, ...) is refused, naming the path and the rule, even with it. Two references
to one file read it once and list both. Run for real: the console script in a git workspace, real files, ``HOME`` a
temporary directory (or ``/``)."""

from __future__ import annotations

import json

from mnemon_ls.imports.claude_code import without_import_lines
from tests.cli.test_cli import Cli
from tests.imports.test_import_cursor_rule_types import plan_of, write

SECRET = "aws_secret_access_key = never-shown-0123456789"


def test_a_home_file_outside_the_claude_home_needs_approval_and_is_read_only_when_allowed(tmp_path):
    cli = Cli(tmp_path)
    write(cli.home / "notes.md", "- Deploys go through staging first.\n")
    write(cli.ws / "CLAUDE.md", "- My notes: @~/notes.md\n- Build with make.\n")
    plan = plan_of(cli, "claude-code")
    claude = cli.ws / "CLAUDE.md"
    assert plan["needsApproval"] == [{"path": str(cli.home / "notes.md"), "importedBy": [f"{claude} (@~/notes.md)"],
                                      "reason": (f"is outside the repository and your Claude home ({cli.ws}, "
                                                 f"{cli.home / '.claude'}): Claude Code asks you to approve such an "
                                                 "import the first time, so it is not read unless you allow files "
                                                 "outside (--allow-outside, allowOutside); credential locations are "
                                                 "never read")}]
    assert plan["counts"]["needsApproval"] == 1 and plan["allowOutside"] is False
    assert [f["path"] for f in plan["files"]] == [str(claude)]
    assert "Deploys go through staging first." not in json.dumps(plan)
    out = cli.run("import", "claude-code", "--dry-run").stdout
    assert f"  needs approval {cli.home / 'notes.md'} (imported by {claude} (@~/notes.md)): is outside" in out
    assert "1 file(s) outside the repository were not read: review them, then run again with --allow-outside" in out

    cli.ok("import", "claude-code")
    assert "Deploys go through staging first." not in (cli.runtime / "MEMORY.md").read_text("utf-8")
    allowed = json.loads(cli.ok("import", "claude-code", "--dry-run", "--allow-outside", "--json"))
    assert allowed["needsApproval"] == [] and allowed["allowOutside"] is True
    assert [f["path"] for f in allowed["files"]] == [str(claude), str(cli.home / "notes.md")]
    cli.ok("import", "claude-code", "--allow-outside")
    assert "Deploys go through staging first." in (cli.runtime / "MEMORY.md").read_text("utf-8")


def test_credential_locations_are_refused_even_when_outside_files_are_allowed(tmp_path):
    cli = Cli(tmp_path)
    write(cli.home / ".aws" / "credentials", f"{SECRET}\n")
    write(cli.home / ".ssh" / "config.md", f"- {SECRET}\n")
    write(cli.home / ".claude" / "keys.md", f"- {SECRET}\n")  # in the Claude home, but a link into ~/.ssh
    (cli.home / ".claude" / "keys.md").unlink()
    (cli.home / ".claude" / "keys.md").symlink_to(cli.home / ".ssh" / "config.md")
    write(cli.ws / "CLAUDE.md", "- @~/.aws/credentials and @~/.ssh/config.md and @~/.claude/keys.md\n")
    claude = cli.ws / "CLAUDE.md"
    for flags in ((), ("--allow-outside",)):
        plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json", *flags))
        assert plan["refused"] == [
            {"path": str(cli.home / ".aws" / "credentials"), "reason": (
                f"is imported by {claude} (@~/.aws/credentials) but is a credential location (.aws holds AWS "
                "credentials): never read, even when files outside are allowed")},
            {"path": str(cli.home / ".ssh" / "config.md"), "reason": (
                f"is imported by {claude} (@~/.ssh/config.md) but is a credential location (.ssh holds SSH keys): "
                "never read, even when files outside are allowed")},
            {"path": str(cli.home / ".claude" / "keys.md"), "reason": (
                f"is imported by {claude} (@~/.claude/keys.md) but is a credential location (.ssh holds SSH keys): "
                "never read, even when files outside are allowed")}]
        assert plan["needsApproval"] == [] and [f["path"] for f in plan["files"]] == [str(claude)]
        assert "never-shown" not in json.dumps(plan)


def test_with_home_at_the_root_system_files_need_approval_and_shadow_is_never_read(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "CLAUDE.md", "- Hosts: @~/etc/hostname\n- Users: @~/etc/shadow\n")
    claude = cli.ws / "CLAUDE.md"
    env = {"HOME": "/"}
    for flags in ((), ("--allow-outside",)):
        result = cli.run("import", "claude-code", "--dry-run", "--json", *flags, env=env)
        assert result.returncode == 0, result.stderr
        plan = json.loads(result.stdout)
        assert plan["refused"] == [{"path": "/etc/shadow", "reason": (
            f"is imported by {claude} (@~/etc/shadow) but is a system credential location (/etc/shadow holds the "
            "password hashes): never read, even when files outside are allowed")}]
        assert "root:" not in result.stdout
        read = [f["path"] for f in plan["files"]]
        if flags:
            assert read == [str(claude), "/etc/hostname"] and plan["needsApproval"] == []
        else:
            assert read == [str(claude)]
            assert [(f["path"], f["importedBy"]) for f in plan["needsApproval"]] == [
                ("/etc/hostname", [f"{claude} (@~/etc/hostname)"])]


def test_two_references_to_one_file_read_it_once_and_list_both(tmp_path):
    cli = Cli(tmp_path)
    write(cli.home / ".claude" / "notes.md", "- Deploys go through staging first.\n")
    write(cli.ws / "CLAUDE.md", "- Mine: @~/.claude/notes.md\n- Again: @~/.claude/../.claude/notes.md\n")
    claude = cli.ws / "CLAUDE.md"
    plan = plan_of(cli, "claude-code")
    assert plan["files"][1:] == [{"path": str(cli.home / ".claude" / "notes.md"), "sha256": plan["files"][1]["sha256"],
                                  "bytes": 36, "importedBy": [f"{claude} (@~/.claude/notes.md)",
                                                              f"{claude} (@~/.claude/../.claude/notes.md)"]}]
    assert [i["text"] for i in plan["items"]].count("Deploys go through staging first.") == 1
    out = cli.run("import", "claude-code", "--dry-run").stdout
    assert (f"  read once: {cli.home / '.claude' / 'notes.md'}, imported 2 times: {claude} (@~/.claude/notes.md); "
            f"{claude} (@~/.claude/../.claude/notes.md)") in out


def test_a_claude_home_link_to_a_file_outside_it_needs_approval(tmp_path):
    cli = Cli(tmp_path)
    write(cli.home / "private.md", "- Private plans.\n")
    (cli.home / ".claude").mkdir()
    (cli.home / ".claude" / "plans.md").symlink_to(cli.home / "private.md")
    write(cli.ws / "CLAUDE.md", "- Plans: @~/.claude/plans.md\n")
    plan = plan_of(cli, "claude-code")
    assert [f["path"] for f in plan["needsApproval"]] == [str(cli.home / ".claude" / "plans.md")]
    assert "Private plans." not in json.dumps(plan)


def test_a_line_that_is_only_an_import_is_no_memory_of_its_own(tmp_path):
    """A CLAUDE.md line holding nothing but ``@path`` imports became an item of its own (``'@~/team.md'`` to
    MEMORY.md), read or not; its file's lines are the memory. Prose naming an import stays, and so does a fenced
    block's line."""
    cli = Cli(tmp_path)
    write(cli.home / "team.md", "- Deploys go through staging first.\n")
    write(cli.ws / "docs" / "style.md", "- Tabs in Makefiles.\n")
    write(cli.ws / "CLAUDE.md", "- Build with make.\n\n@~/team.md\n- @docs/style.md\n"
                                "- See @docs/style.md for the style.\n")
    for flags, team in (((), []), (("--allow-outside",), ["Deploys go through staging first."])):
        plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json", *flags))
        texts = [item["text"] for item in plan["items"]]
        assert sorted(texts) == sorted(["Build with make.", "See @docs/style.md for the style.",
                                        "Tabs in Makefiles.", *team])
    assert without_import_lines("a\n@x.md\n- @~/y.md @z\n1. @q.md\n```\n@kept\n```\nsee @x.md\nmail a@b.c") == (
        "a\n```\n@kept\n```\nsee @x.md\nmail a@b.c")
