"""Sources that cannot be imported as they are, each refused by name with its rule, nothing of them imported. Run for
real: the console script in a git workspace, with the real files and symlinks.

- A Cursor ``.mdc`` rule whose front matter is not closed (``---`` on line 1, no ``---`` after it) was imported as
  written: its front matter lines (``description: ...``, ``alwaysApply: ...``) became MEMORY.md entries. Now it is
  refused, naming the file and the rule.
- A symlink loop among the sources was refused as ``cannot be resolved (RuntimeError)`` (Python's exception name,
  not a reason); now it says it is a symlink loop, naming the path."""

from __future__ import annotations

from tests.cli.test_cli import Cli
from tests.imports.test_import_cursor_rule_types import plan_of, write

UNCLOSED = "---\ndescription: Payments API\nalwaysApply: true\n- Return typed errors, never raw strings.\n"
GOOD = "---\ndescription: Testing\nalwaysApply: true\n---\n- Run pytest with -n 2.\n"


def test_a_cursor_rule_whose_front_matter_is_not_closed_is_refused_and_nothing_of_it_imported(tmp_path):
    cli = Cli(tmp_path)
    broken = cli.ws / ".cursor" / "rules" / "payments.mdc"
    write(broken, UNCLOSED)
    write(cli.ws / ".cursor" / "rules" / "testing.mdc", GOOD)
    plan = plan_of(cli)
    assert plan["refused"] == [{"path": str(broken), "reason": (
        "is a Cursor rule whose front matter is not closed (line 1 is --- and no later --- line ends it); nothing of "
        "it imported")}]
    assert [f["path"] for f in plan["files"]] == [str(cli.ws / ".cursor" / "rules" / "testing.mdc")]
    assert [i["text"] for i in plan["items"]] == ["Run pytest with -n 2."]
    out = cli.run("import", "cursor", "--dry-run").stdout
    assert f"  refused {broken}: is a Cursor rule whose front matter is not closed" in out
    cli.ok("import", "cursor")
    memory = (cli.runtime / "MEMORY.md").read_text("utf-8")
    assert "Run pytest with -n 2." in memory
    assert "description" not in memory and "typed errors" not in memory


def test_a_lone_unclosed_rule_named_by_from_is_refused_naming_the_rule(tmp_path):
    cli = Cli(tmp_path)
    broken = cli.ws / "payments.mdc"
    write(broken, UNCLOSED)
    result = cli.run("import", "cursor", "--from", str(broken), "--dry-run")
    assert result.returncode != 0
    assert f"{broken} is a Cursor rule whose front matter is not closed" in result.stderr
    assert not cli.memories.exists()


def test_a_symlink_loop_is_named_as_one(tmp_path):
    cli = Cli(tmp_path)
    a, b = cli.ws / "CLAUDE.md", cli.ws / "loop.md"
    a.symlink_to(b)
    b.symlink_to(a)
    write(cli.ws / "CLAUDE.local.md", "- Deploys go through staging first.\n")
    plan = plan_of(cli, "claude-code")
    assert plan["refused"] == [{"path": str(a), "reason": (
        f"is a symlink loop: resolving {a} leads back to a link already followed; not read")}]
    assert [i["text"] for i in plan["items"]] == ["Deploys go through staging first."]
    out = cli.run("import", "claude-code", "--dry-run").stdout
    assert "RuntimeError" not in out and f"refused {a}: is a symlink loop" in out


UNCLOSED_RULE = "---\npaths:\n  - src/api/**\n- Return typed errors, never raw strings.\n"


def test_a_claude_rule_and_a_copilot_instructions_file_whose_front_matter_is_not_closed_are_refused(tmp_path):
    cli = Cli(tmp_path)
    rule = cli.ws / ".claude" / "rules" / "api.md"
    write(rule, UNCLOSED_RULE)
    write(cli.ws / "CLAUDE.md", "---\n- Deploys go through staging first.\n")  # a thematic break: plain Markdown
    plan = plan_of(cli, "claude-code")
    assert plan["refused"] == [{"path": str(rule), "reason": (
        "is a Claude Code rule or memory file whose front matter is not closed (line 1 is --- and no later --- line "
        "ends it); nothing of it imported")}]
    assert [i["text"] for i in plan["items"]] == ["Deploys go through staging first."]
    instructions = cli.ws / ".github" / "instructions" / "api.instructions.md"
    write(instructions, "---\napplyTo: 'src/api/**'\n- Return typed errors, never raw strings.\n")
    write(cli.ws / ".github" / "copilot-instructions.md", "- Run pytest with -n 2.\n")
    plan = plan_of(cli, "copilot")
    assert plan["refused"] == [{"path": str(instructions), "reason": (
        "is a Copilot instructions file whose front matter is not closed (line 1 is --- and no later --- line ends "
        "it); nothing of it imported")}]
    assert [i["text"] for i in plan["items"]] == ["Run pytest with -n 2."]
