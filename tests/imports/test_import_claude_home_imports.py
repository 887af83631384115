"""Claude Code's ``@~/...`` imports (a CLAUDE.md naming a file of the home directory), each case with real files
and symlinks and ``HOME`` a temporary directory (the console script in a git workspace). Every ``~`` import is
either read or named in the dry run with its reason; nothing outside the home directory or the workspace is read:

- ``@~/x.md`` inside ``HOME``: read, its items imported;
- ``@~/link.md`` (or ``@~/dir/x.md`` through a linked directory) whose real path leaves ``HOME``: refused, never
  read;
- ``@~/../x.md``: refused (it leaves ``HOME``), whether or not the file is there;
- ``@~bob/x.md`` (another user's home): refused, never looked up (it used to be taken for a path relative to the
  importing file, found nothing and was passed over without a word);
- ``@~/missing.md``: named as missing (it too was passed over without a word: ``@~/`` names a file of the home
  directory, not a decorator or a package as a bare ``@name`` may)."""

from __future__ import annotations

from tests.cli.test_cli import Cli
from tests.imports.test_import_cursor_rule_types import plan_of as cursor_plan_of, write

SECRET = "Outside the home directory: never read."


def plan_of(cli: Cli) -> dict:
    return cursor_plan_of(cli, "claude-code")


def test_a_home_file_is_read(tmp_path):
    cli = Cli(tmp_path)
    write(cli.home / ".claude" / "notes.md", "- Deploys go through staging first.\n")
    write(cli.ws / "CLAUDE.md", "- My notes: @~/.claude/notes.md.\n")  # the sentence's full stop is no part of it
    plan = plan_of(cli)
    assert [f["path"] for f in plan["files"]] == [str(cli.ws / "CLAUDE.md"), str(cli.home / ".claude" / "notes.md")]
    assert plan["refused"] == []
    assert "Deploys go through staging first." in [i["text"] for i in plan["items"]]
    cli.ok("import", "claude-code")
    assert "Deploys go through staging first." in (cli.runtime / "MEMORY.md").read_text("utf-8")


def test_a_home_symlink_whose_real_path_leaves_home_is_refused(tmp_path):
    cli = Cli(tmp_path)
    outside = cli.tmp / "outside"
    write(outside / "keys.md", f"- {SECRET}\n")
    write(outside / "tokens.md", f"- {SECRET}\n")
    (cli.home / "keys.md").symlink_to(outside / "keys.md")
    (cli.home / "linked-dir").symlink_to(outside, target_is_directory=True)
    write(cli.ws / "CLAUDE.md", "- See @~/keys.md and @~/linked-dir/tokens.md\n")
    plan = plan_of(cli)
    assert plan["refused"] == [
        {"path": str(cli.home / "keys.md"),
         "reason": f"is a symlink leaving {cli.home} (it points to {outside / 'keys.md'})"},
        {"path": str(cli.home / "linked-dir" / "tokens.md"),
         "reason": f"is a symlink leaving {cli.home} (it points to {outside / 'tokens.md'})"}]
    assert [f["path"] for f in plan["files"]] == [str(cli.ws / "CLAUDE.md")]
    assert not [i for i in plan["items"] if SECRET in i["text"]]


def test_a_path_out_of_home_is_refused_whether_or_not_it_exists(tmp_path):
    cli = Cli(tmp_path)
    write(cli.tmp / "there.md", f"- {SECRET}\n")
    write(cli.ws / "CLAUDE.md", "- See @~/../there.md and @~/../not-there.md.\n")
    claude = cli.ws / "CLAUDE.md"
    assert plan_of(cli)["refused"] == [
        {"path": str(cli.tmp / "there.md"), "reason": f"is imported by {claude} (@~/../there.md) but leaves "
                                                      f"{cli.home}; not read"},
        {"path": str(cli.tmp / "not-there.md"), "reason": f"is imported by {claude} (@~/../not-there.md) but "
                                                          f"leaves {cli.home}; not read"}]


def test_another_users_home_is_refused_and_never_looked_up(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "CLAUDE.md", "- Shared notes: @~root/notes.md\n")
    plan = plan_of(cli)
    assert plan["refused"] == [{"path": "~root/notes.md", "reason": (
        f"is imported by {cli.ws / 'CLAUDE.md'} (@~root/notes.md) but names the home directory of user 'root' "
        f"(~root/): only ~/ (your home directory, {cli.home}) is followed; not read")}]
    assert [f["path"] for f in plan["files"]] == [str(cli.ws / "CLAUDE.md")]


def test_a_missing_home_file_is_named(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "CLAUDE.md", "- My notes: @~/.claude/gone.md, and @types/node is a package.\n")
    plan = plan_of(cli)
    assert plan["refused"] == [{"path": str(cli.home / ".claude" / "gone.md"), "reason": (
        f"is imported by {cli.ws / 'CLAUDE.md'} (@~/.claude/gone.md) but there is no such file; not read")}]
    lines = cli.run("import", "claude-code", "--dry-run").stdout.splitlines()
    assert lines[0].endswith("1 file(s) read, 1 refused.")
    cli.ok("import", "claude-code")  # a missing import refuses nothing else
    assert [t for t in cli.contents("user") + cli.contents("memory") if t.startswith("My notes:")]
