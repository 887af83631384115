"""The line ``claude /init`` writes at the top of every CLAUDE.md it generates ("This file provides guidance to
Claude Code (claude.ai/code) when working with code in this repository.") is not imported as a fact: it was a
MEMORY.md entry, shown in every wake and written by ``export agents-md`` into AGENTS.md, where it is false.
Found by a new user importing a CLAUDE.md made by ``/init``. Run for real: the console script in a git
workspace, with the real files."""

from __future__ import annotations

import json

from mnemon_ls.imports.reading import markdown_items
from tests.cli.test_cli import Cli

#: The head of a CLAUDE.md as ``claude /init`` writes it.
CLAUDE_MD = """# CLAUDE.md

This file provides guidance to Claude Code (claude.ai/code) when working with code in this repository.

## Commands

- Build: `make build`
- Run all tests: `pytest -x -q`

## Conventions

This file provides guidance to Claude Code when working with code in this repository, and to people too.
"""


def test_the_init_preamble_is_not_imported_and_not_exported_into_agents_md(tmp_path):
    cli = Cli(tmp_path)
    (cli.ws / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json"))
    assert [(i["text"], i["destination"]) for i in plan["items"]] == [
        ("Commands: Build: `make build`", "memory"),
        ("Commands: Run all tests: `pytest -x -q`", "memory"),
        # more than the preamble: a paragraph of its own, kept
        ("This file provides guidance to Claude Code when working with code in this repository, and to people "
         "too.", "memory")]
    cli.ok("import", "claude-code")
    memory_md = (cli.runtime / "MEMORY.md").read_text("utf-8")
    assert "(claude.ai/code)" not in memory_md and "Commands: Build: `make build`" in memory_md
    cli.ok("export", "agents-md")
    agents_md = (cli.ws / "AGENTS.md").read_text("utf-8")
    assert "- Commands: Run all tests: `pytest -x -q`" in agents_md and "(claude.ai/code)" not in agents_md


def test_every_format_skips_the_preamble_in_any_case_and_without_the_address():
    """A CLAUDE.md is often copied or linked as AGENTS.md: the splitting all Markdown formats share skips it."""
    for line in ["This file provides guidance to Claude Code (claude.ai/code) when working with code in this "
                 "repository.", "this file provides guidance to Claude Code when working with code in this repository"]:
        items = markdown_items(f"{line}\n\n- keep me\n", "/x/AGENTS.md", "AGENTS.md")
        assert [i.text for i in items] == ["keep me"]
