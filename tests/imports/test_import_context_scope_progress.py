"""Three ways an import took an item out of its context, found by a user reading their MEMORY.md after an import:

- a bullet lost its heading: ``## What's left`` / ``- RAW files.`` became the entry ``RAW files.``, which says
  nothing alone. An entry made from a bullet now carries its heading (``What's left: RAW files.``);
- a path-scoped rule (a Copilot ``.instructions.md`` with ``applyTo``, a Claude Code ``.claude/rules`` file with
  ``paths``, a Cursor ``.mdc`` rule with ``globs``) became a rule of the whole repository. Its entries now say the
  paths they apply to (``For src/**/*.ts: ...``), and a section kept as a Document says so in its body;
- a Cline/Roo memory bank's ``activeContext.md`` and ``progress.md`` (temporary progress, rewritten every session)
  were imported into MEMORY.md as durable facts. Their items are now skipped, each saying why.

Run for real: the console script in a git workspace, with the real files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def plan_of(cli: Cli, source: str) -> dict:
    return json.loads(cli.ok("import", source, "--dry-run", "--json"))


def test_a_bullet_carries_its_heading_and_a_paragraph_stays_as_written(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "AGENTS.md", "# AGENTS.md\n\n- Use pnpm, never npm.\n\n## What's left\n\n- RAW files.\n"
                                "- What's left: the JPEG export.\n\nThe importer is half done.\n\n"
                                "## Why not Rust?\n\n- The team knows Python.\n")
    plan = plan_of(cli, "agents-md")
    assert [i["text"] for i in plan["items"]] == [
        "Use pnpm, never npm.",  # the heading only names the file: nothing to add
        "What's left: RAW files.",
        "What's left: the JPEG export.",  # already led by its heading: not twice
        "The importer is half done.",  # a paragraph is a sentence of its own
        "Why not Rust? The team knows Python."]
    cli.ok("import", "agents-md")
    assert "What's left: RAW files." in (cli.runtime / "MEMORY.md").read_text("utf-8")
    again = plan_of(cli, "agents-md")
    assert again["counts"]["alreadyImported"] == 5 and not again["items"]


def test_a_bullet_imported_before_it_carried_its_heading_is_not_imported_again(tmp_path):
    """Memory an older import wrote (``RAW files.``), and the same bullet without its heading in another file, are
    duplicates of the entry led by its heading, not new facts; equal bullets under different headings both stay."""
    cli = Cli(tmp_path)
    cli.seed(("memory", "Deploys go through staging first."))
    write(cli.ws / "AGENTS.md", "## Release\n\n- Deploys go through staging first.\n\n## Backend\n\n- Run make check."
                                "\n\n## Frontend\n\n- Run make check.\n")
    write(cli.ws / "CLAUDE.md", "- Run make check.\n")
    plan = plan_of(cli, "agents-md")
    assert [i["text"] for i in plan["items"]] == ["Backend: Run make check.", "Frontend: Run make check."]
    assert [(s["text"], s["why"], s["of"]) for s in plan["skipped"]] == [
        ("Release: Deploys go through staging first.", "exact-duplicate", "MEMORY.md")]
    cli.ok("import", "agents-md")
    claude = plan_of(cli, "claude-code")
    assert [(s["text"], s["why"]) for s in claude["skipped"]] == [("Run make check.", "already-imported")]


def test_path_scoped_rules_keep_their_scope(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / ".github" / "instructions" / "ts.instructions.md",
          '---\napplyTo: "src/**/*.ts,src/**/*.tsx"\n---\n- Use named exports only.\n')
    write(cli.ws / ".github" / "instructions" / "all.instructions.md", '---\napplyTo: "**"\n---\n- Write commit '
                                                                       'messages in the imperative.\n')
    assert [i["text"] for i in plan_of(cli, "copilot")["items"]] == [
        "Write commit messages in the imperative.",  # applyTo "**": every file
        "For src/**/*.ts, src/**/*.tsx: Use named exports only."]
    write(cli.ws / ".claude" / "rules" / "api.md", "---\npaths:\n  - \"src/api/**/*.py\"\n  - tests/api/**\n---\n"
                                                    "# API rules\n\n- Every endpoint validates its input.\n\n"
                                                    "## Example\n\n```python\n@validate\ndef get(): ...\n```\n")
    plan = plan_of(cli, "claude-code")
    assert [(i["text"], i["destination"]) for i in plan["items"]] == [
        ("For src/api/**/*.py, tests/api/**: Every endpoint validates its input.", "memory"),  # under its title
        ("# Example\n\nApplies to src/api/**/*.py, tests/api/**.\n\n```python\n@validate\ndef get(): ...\n```\n",
         "document")]
    write(cli.ws / ".cursor" / "rules" / "sql.mdc", "---\ndescription: SQL\nglobs: db/**/*.sql, *.psql\n"
                                                     "alwaysApply: false\n---\n- Keywords are upper case.\n")
    write(cli.ws / ".cursor" / "rules" / "always.mdc", "---\nglobs: db/**\nalwaysApply: true\n---\n"
                                                        "- Answer in short sentences.\n")
    assert [i["text"] for i in plan_of(cli, "cursor")["items"]] == [
        "Answer in short sentences.",  # alwaysApply: Cursor attaches it to every request, whatever its globs
        "For db/**/*.sql, *.psql: Keywords are upper case."]
    cli.ok("import", "cursor")
    assert "For db/**/*.sql, *.psql: Keywords are upper case." in (cli.runtime / "MEMORY.md").read_text("utf-8")


def test_front_matter_lists_in_every_form():
    from mnemon_ls.imports.reading import front_matter_list, markdown_items

    assert front_matter_list("---\npaths: [\"a/**\", 'b']\n---\n", "paths") == ("a/**", "b")
    assert front_matter_list("---\napplyTo: '**/*.ts, **/*.tsx'\n---\n", "applyTo") == ("**/*.ts", "**/*.tsx")
    assert front_matter_list("---\npaths:\n  - a\n  - \"b c\"\nother: x\n---\n", "paths") == ("a", "b c")
    assert front_matter_list("---\nglobs:\n---\n", "globs") == ()
    assert front_matter_list("- no front matter\n", "globs") == ()
    [item] = markdown_items("- Use tabs.\n", "/x/r.md", "r.md", scope=("*.go",))
    assert (item.text, item.extra) == ("For *.go: Use tabs.", {"bare": "Use tabs."})
    titled = "# Orbit notes\n\n- Deploys go through staging.\n\n## Stations\n\n- Svalbard and Troll.\n"
    assert [i.text for i in markdown_items(titled, "/x/CLAUDE.md", "CLAUDE.md")] == [
        "Deploys go through staging.", "Stations: Svalbard and Troll."]  # the file's title is no context


def test_a_memory_banks_temporary_progress_is_skipped_saying_why(tmp_path):
    cli = Cli(tmp_path)
    bank = cli.ws / "memory-bank"
    write(bank / "techContext.md", "## Tech context\n\n- The scheduler runs as a single worker.\n")
    write(bank / "activeContext.md", "## Current focus\n\n- Now editing the RAW importer.\n")
    write(bank / "progress.md", "## What's left\n\n- RAW files.\n- JPEG export.\n")
    plan = plan_of(cli, "cline")
    assert [i["text"] for i in plan["items"]] == ["Tech context: The scheduler runs as a single worker."]
    assert [(Path(s["path"]).name, s["text"], s["why"]) for s in plan["skipped"]] == [
        ("activeContext.md", "Current focus: Now editing the RAW importer.", "temporary-progress"),
        ("progress.md", "What's left: RAW files.", "temporary-progress"),
        ("progress.md", "What's left: JPEG export.", "temporary-progress")]
    assert plan["skipped"][1]["of"] == ("progress.md, the memory bank's what works, what is left and the current "
                                        "status, rewritten every session")
    assert plan["counts"]["temporaryProgress"] == 3
    lines = cli.run("import", "cline", "--dry-run").stdout.splitlines()
    assert lines[lines.index("  skipped: \"What's left: RAW files.\"") + 1] == (
        f"     from {bank / 'progress.md'} (What's left): temporary progress (progress.md, the memory bank's what "
        "works, what is left and the current status, rewritten every session); memory keeps durable facts")
    assert lines[-2].endswith("0 near duplicate(s), 3 of temporary progress.")
    cli.ok("import", "cline")
    memory_md = (cli.runtime / "MEMORY.md").read_text("utf-8")
    assert "single worker" in memory_md and "RAW" not in memory_md
