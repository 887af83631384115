"""``mnemon-ls import SOURCE --from DIR`` reads the source's own files in ``DIR``, never every ``*.md`` in it (a real
subprocess, a real git workspace). ``agents-md --from DIR`` with no ``AGENTS.md`` in ``DIR`` read every Markdown
file there (a README, notes) and planned to import them; cursor and copilot read any ``*.md`` too. ``--from DIR``
now reads the source's layout under ``DIR``, else the file names of its places directly in ``DIR``
(``mnemon_ls.imports.places.direct_names``), and a ``DIR`` holding none of them is refused naming ``from`` and what
was looked for, with nothing changed on disk."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.imports import places
from tests.cli.test_cli import Cli
from tests.imports.test_import_refusals_first import names_and_mtimes


def plan_of(cli: Cli, source: str, directory: Path) -> dict:
    """The ``--dry-run --json`` plan of ``import SOURCE --from DIR``."""
    result = cli.run("import", source, "--from", str(directory), "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_agents_md_from_a_directory_without_agents_md_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    cli.ok("runtime", "add", "--content", "Deploys go through staging first.")
    notes = cli.tmp / "notes"
    notes.mkdir()
    (notes / "README.md").write_text("- The readme of some other project.\n")
    (notes / "todo.md").write_text("- Buy milk.\n")
    before = names_and_mtimes(cli.data)
    for extra in ((), ("--dry-run",)):
        result = cli.run("import", "agents-md", "--from", str(notes), *extra)
        assert result.returncode == 2, result.stdout
        assert result.stderr.strip().splitlines()[0] == (
            f"mnemon-ls: error: --from: {notes} holds no file agents-md reads: looked for AGENTS.md in it")
    scripted = cli.run("import", "agents-md", "--from", str(notes), "--json")
    error = json.loads(scripted.stdout or scripted.stderr)["error"]
    assert (error["field"], error["rule"]) == (
        "--from", f"{notes} holds no file agents-md reads: looked for AGENTS.md in it")
    assert names_and_mtimes(cli.data) == before


def test_agents_md_from_a_directory_reads_its_agents_md_only(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    other = cli.tmp / "other"
    other.mkdir()
    (other / "AGENTS.md").write_text("- Run the linter before committing.\n")
    (other / "README.md").write_text("- The readme of some other project.\n")
    plan = plan_of(cli, "agents-md", other)
    assert [f["path"] for f in plan["files"]] == [str(other / "AGENTS.md")]
    assert [i["text"] for i in plan["items"]] == ["Run the linter before committing."]


def test_cursor_and_copilot_from_a_directory_read_their_own_files_not_every_markdown_file(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    rules = cli.tmp / "rules"
    rules.mkdir()
    (rules / "style.mdc").write_text("- Keep functions short.\n")
    (rules / "README.md").write_text("- Not a rule.\n")
    assert [f["path"] for f in plan_of(cli, "cursor", rules)["files"]] == [str(rules / "style.mdc")]
    instructions = cli.tmp / "instructions"
    instructions.mkdir()
    (instructions / "python.instructions.md").write_text("- Type every function.\n")
    (instructions / "CHANGELOG.md").write_text("- Not an instruction.\n")
    assert [f["path"] for f in plan_of(cli, "copilot", instructions)["files"]] == [
        str(instructions / "python.instructions.md")]
    for source, directory in (("cursor", instructions), ("copilot", rules)):
        result = cli.run("import", source, "--from", str(directory), "--dry-run")
        assert result.returncode == 2
        assert f"--from: {directory} holds no file {source} reads: looked for " in result.stderr


def test_a_copied_memory_bank_is_still_read_whole() -> None:
    """A ``DIR`` that is one of the places' directories is still read as such: ``cline --from`` a copy of
    ``memory-bank/`` reads its ``*.md`` (the place is ``memory-bank/*.md``)."""
    assert places.direct_names("cline") == ("*.md",)
    assert places.direct_names("agents-md") == ("AGENTS.md",)
    assert places.direct_names("cursor") == ("*.mdc", ".cursorrules")
    assert places.direct_names("copilot") == ("copilot-instructions.md", "*.instructions.md")
    assert places.looked_for("hermes") == ("memories/USER.md", "memories/MEMORY.md", "USER.md", "MEMORY.md")


def test_a_copy_of_a_nested_place_is_read_with_its_subdirectories(tmp_path: Path) -> None:
    """``.cursor/rules/**/*.mdc`` and ``.github/instructions/**/*.instructions.md`` reach into subdirectories, but
    ``--from`` a copy of ``.cursor/rules`` or ``.github/instructions`` read only its top level (h-small49): a rule in
    ``rules/frontend/`` was left out. A place without ``**/`` (a memory bank) stays at its top level."""
    cli = Cli(tmp_path)
    rules = cli.tmp / "rules"
    (rules / "frontend").mkdir(parents=True)
    (rules / "style.mdc").write_text("- Keep functions short.\n")
    (rules / "frontend" / "react.mdc").write_text("- Prefer function components.\n")
    assert [f["path"] for f in plan_of(cli, "cursor", rules)["files"]] == [
        str(rules / "frontend" / "react.mdc"), str(rules / "style.mdc")]
    instructions = cli.tmp / "instructions"
    (instructions / "py").mkdir(parents=True)
    (instructions / "py" / "typing.instructions.md").write_text("- Type every function.\n")
    assert [f["path"] for f in plan_of(cli, "copilot", instructions)["files"]] == [
        str(instructions / "py" / "typing.instructions.md")]
    assert places.nested_names("cline") == frozenset()
    assert places.nested_names("cursor") == {"*.mdc"}
