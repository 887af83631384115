"""``mnemon-ls import SOURCE`` and ``mnemon-ls export agents-md|claude-md`` run for real in a subprocess, on
fixtures of every format (``tests/fixtures/imports/``, written for these tests) copied into a real git
workspace; bad input: a binary file, a 50 MB file, invalid UTF-8, a symlink leaving the workspace, a file
changed between the dry run and the import."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mnemon_ls.imports.claude_code import project_dir_name
from tests.cli.test_cli import Cli
from tests.helpers import procs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


@pytest.fixture
def cli(tmp_path) -> Cli:
    return Cli(tmp_path)


def install(cli: Cli, fmt: str) -> None:
    """Copy the fixture tree of ``fmt`` into the workspace (hermes: into ``$HOME/.hermes/memories``; the
    Claude Code auto memory into ``$HOME/.claude/projects/<project>/memory``)."""
    if fmt == "hermes":
        shutil.copytree(FIXTURES / "hermes", cli.home / ".hermes" / "memories")
        return
    shutil.copytree(FIXTURES / fmt, cli.ws, dirs_exist_ok=True)
    if fmt == "claude-code":
        shutil.copytree(FIXTURES / "automemory",
                        cli.home / ".claude" / "projects" / project_dir_name(cli.ws) / "memory")


def run_import(cli: Cli, *args: str, code: int = 0) -> dict:
    result = cli.run("import", *args, "--json")
    assert result.returncode == code, result.stderr
    return json.loads(result.stdout) if code == 0 else {"stderr": result.stderr}


class where(dict):
    """Item text -> destination, looked up by a prefix of the text, or of the text after the heading or scope an
    entry made from a bullet is led by (``Commands: ``, ``For **/*.py: ``)."""

    def __init__(self, plan: dict) -> None:
        super().__init__((item["text"], item["destination"]) for item in plan["items"])

    def __getitem__(self, prefix: str) -> str:
        found = [v for k, v in self.items() if k.startswith(prefix) or f": {prefix}" in k]
        assert len(found) == 1, (prefix, list(self))
        return found[0]


def test_claude_code_routes_each_item_and_a_second_import_adds_nothing(cli):
    install(cli, "claude-code")
    sources = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in [*cli.ws.rglob("*.md"), *cli.home.rglob("*.md")]}
    plan = run_import(cli, "claude-code", "--dry-run")
    routed = where(plan)
    assert routed["Build everything with `just build`."] == "memory"
    assert routed["Times are stored as UTC epoch millisecon"] == "memory"
    assert routed["I prefer answers in British English with"] == "user"
    assert routed["# Fixture policy\n\nFixtures are built by"] == "document"  # a long headed section
    assert routed["Keep review comments to one sentence eac"] == "user"  # a feedback topic file
    assert routed["The stations are Svalbard, Troll and Kir"] == "memory"  # a project topic file
    assert routed["The release train leaves every second Tu"] == "memory"  # an index line that links nothing
    assert not any("Reviewer preference" in t for t in routed)  # index link lines are skipped
    key = next(i for i in plan["items"] if "staging login" in i["text"])
    assert "AKIAZ7Q4MXW2PLR9TBVN" not in key["text"] and key["redacted"] == ["aws-access-key-id"]
    assert plan["counts"]["exactDuplicates"] == 1  # the repeated bullet
    assert all(i["reason"] for i in plan["items"])
    root = cli.data
    before = procs.tree_snapshot(root)
    done = run_import(cli, "claude-code")
    assert done["counts"]["written"] == len(plan["items"]) == len(done["applied"])
    assert "AKIAZ7Q4MXW2PLR9TBVN" not in "".join(p.read_text("utf-8", "replace") for p in root.rglob("*") if p.is_file())
    user_md = (root / "runtime" / "USER.md").read_text()
    assert "I prefer answers in British English" in user_md and "Keep review comments" in user_md
    memory_md = (root / "runtime" / "MEMORY.md").read_text()
    assert "Times are stored as UTC" in memory_md and "Fixture policy" not in memory_md
    docs = json.loads(cli.ok("doc", "list", "--json"))
    assert [d["title"] for d in docs["documents"]] == ["Fixture policy"]
    ledger = [json.loads(line) for line in (root / "state" / "imports.jsonl").read_text().splitlines()]
    assert {row["destination"] for row in ledger} == {"user", "memory", "document"}
    assert all(row["origin"] == "imported" and row["source"] == "claude-code" and Path(row["path"]).is_absolute() and row["ref"] for row in ledger)
    assert before != procs.tree_snapshot(root)
    again = run_import(cli, "claude-code")
    assert again["counts"]["written"] == 0 and again["counts"]["alreadyImported"] == len(plan["items"])
    assert again["counts"]["exactDuplicates"] == 1  # the repeated bullet: a duplicate of its first copy, named
    # the instruction files are never modified (bytes and mtime)
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sources} == sources


@pytest.mark.parametrize("fmt, expected", [
    ("agents-md", {"Use `pnpm` for the web client, never `npm": "memory",
                   "Always answer me in a terse style, bullet": "user",
                   "# Release checklist\n\n| step | owner |\n|": "document"}),
    ("cursor", {"Type hints on every public function.": "memory",
                "Never commit generated protobuf files; th": "memory"}),
    ("copilot", {"Logging goes through `orbit.log.get(__na": "memory",
                 "SQL keywords are upper case and every ta": "memory"}),
    ("cline", {"Orbit replaces the spreadsheet the opera": "memory",
               "The scheduler runs as a single worker; d": "memory"}),
    ("hermes", {"The person is a flight dynamics engineer": "user",
                "Prefers explanations with a worked examp": "user",
                "Pass windows shorter than four minutes a": "memory"}),
])
def test_each_format_is_read_and_routed(cli, fmt, expected):
    install(cli, fmt)
    plan = run_import(cli, fmt, "--dry-run")
    routed = where(plan)
    for text, destination in expected.items():
        assert routed[text] == destination, (text, routed)
    assert not plan["refused"]


def test_from_points_at_a_file_elsewhere(cli, tmp_path):
    elsewhere = cli.tmp / "notes"
    shutil.copytree(FIXTURES / "hermes", elsewhere)
    plan = run_import(cli, "hermes", "--from", str(elsewhere / "MEMORY.md"), "--dry-run")
    assert [i["destination"] for i in plan["items"]] == ["memory", "memory"]
    assert plan["files"][0]["path"] == str(elsewhere / "MEMORY.md")


def test_hermes_from_takes_a_hermes_home_or_its_memories_directory(cli):
    """``--from`` a directory reads the format's layout under it, as the Sources table gives it: for Hermes,
    ``$HERMES_HOME/memories/{USER,MEMORY}.md``. A copy of a Hermes home (``~/.hermes`` from another machine)
    found no file before ("looked in ..."): only its ``memories/`` directory was read."""
    hermes_home = cli.tmp / "old-machine" / "hermes"
    shutil.copytree(FIXTURES / "hermes", hermes_home / "memories")
    for path in (hermes_home, hermes_home / "memories"):
        plan = run_import(cli, "hermes", "--from", str(path), "--dry-run")
        assert [f["path"] for f in plan["files"]] == [str(hermes_home / "memories" / "USER.md"),
                                                      str(hermes_home / "memories" / "MEMORY.md")], path
        assert [i["destination"] for i in plan["items"]] == ["user", "user", "memory", "memory"], path


def test_bad_files_are_refused_by_name_and_the_good_ones_imported(cli):
    rules = cli.ws / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "good.mdc").write_text("- Keep functions under forty lines.\n")
    (rules / "binary.mdc").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (rules / "latin1.mdc").write_bytes("- Caf\xe9 rule\n".encode("latin-1"))
    with open(rules / "huge.mdc", "wb") as f:  # 50 MB, sparse: refused from its size, never read
        f.truncate(50 * 1024 * 1024)
    outside = cli.tmp / "outside.mdc"
    outside.write_text("- A rule from outside the workspace.\n")
    (rules / "escape.mdc").symlink_to(outside)
    plan = run_import(cli, "cursor", "--dry-run")
    reasons = {Path(r["path"]).name: r["reason"] for r in plan["refused"]}
    assert reasons["binary.mdc"].startswith("is binary")
    assert reasons["latin1.mdc"].startswith("is not UTF-8")
    assert reasons["huge.mdc"].startswith("is larger than 1048576 bytes (52428800 bytes)")
    assert reasons["escape.mdc"].startswith("is a symlink leaving")
    assert [i["text"] for i in plan["items"]] == ["Keep functions under forty lines."]
    done = run_import(cli, "cursor")
    assert done["counts"]["written"] == 1 and done["counts"]["refusedFiles"] == 4


def test_only_bad_files_is_invalid_input_and_writes_nothing(cli):
    (cli.ws / "AGENTS.md").write_bytes(b"\xff\xfe broken")
    result = cli.run("import", "agents-md")
    assert result.returncode == 2 and "from: no file could be read" in result.stderr and "not UTF-8" in result.stderr
    assert not cli.data.exists() or not (cli.data / "state" / "imports.jsonl").exists()


def test_a_file_changed_after_the_dry_run_is_refused_and_nothing_is_written(cli):
    install(cli, "agents-md")
    run_import(cli, "agents-md", "--dry-run")
    root = cli.data
    before = procs.tree_snapshot(root)
    with open(cli.ws / "AGENTS.md", "a") as f:
        f.write("- A line added after the review.\n")
    out = run_import(cli, "agents-md", code=3)
    assert f"{cli.ws / 'AGENTS.md'} changed since the dry run; nothing was imported" in out["stderr"]
    assert procs.tree_snapshot(root) == before
    run_import(cli, "agents-md", "--dry-run")  # a new dry run, then the import goes through
    assert run_import(cli, "agents-md")["counts"]["written"] == 4


def test_what_does_not_fit_goes_to_the_active_space(cli):
    install(cli, "hermes")
    cli.ok("space", "create", "--name", "Imported", "--description", "what came from elsewhere", "--active")
    plan = run_import(cli, "hermes", "--dry-run", "--user-limit-bytes", "80")
    routed = where(plan)
    assert routed["The person is a flight dynamics engineer"] == "user"
    assert routed["Prefers explanations with a worked examp"] == "space"
    reason = next(i["reason"] for i in plan["items"] if i["destination"] == "space")
    assert "USER.md has 12 of 80 bytes left (it needs 53)" in reason
    done = run_import(cli, "hermes", "--user-limit-bytes", "80")
    assert any(a["ref"].startswith("memory-space:") for a in done["applied"])
    recalled = cli.ok("recall", "worked example")
    assert "Prefers explanations with a worked example first." in recalled


def test_no_space_for_the_overflow_refuses_before_writing(cli):
    install(cli, "hermes")
    before = procs.tree_snapshot(cli.data)
    result = cli.run("import", "hermes", "--user-limit-bytes", "80")
    assert result.returncode == 2 and "--space: 1 item(s) go to a Memory Space" in result.stderr
    assert "nothing was imported" in result.stderr
    after = procs.tree_snapshot(cli.data)
    assert {k: v for k, v in after.items() if "lock" not in k and v[0] == "file"} == \
        {k: v for k, v in before.items() if "lock" not in k and v[0] == "file"}


def test_export_writes_a_marked_block_in_place_and_remove_restores_the_file(cli):
    install(cli, "agents-md")
    original = (cli.ws / "AGENTS.md").read_bytes()
    cli.ok("runtime", "add", "--content", "Deploys go through staging first.")
    cli.ok("runtime", "add", "--content", "The feature flag lives in flags.yaml.", "--branch", "main")
    cli.ok("runtime", "add", "--content", "I like tea.", "--target", "user")
    out = json.loads(cli.ok("export", "agents-md", "--json"))
    assert out == {"file": str(cli.ws / "AGENTS.md"), "action": "updated", "facts": 2}
    text = (cli.ws / "AGENTS.md").read_text()
    assert text.startswith(original.decode()) and "I like tea" not in text
    assert "- Deploys go through staging first.\n" in text
    assert "- The feature flag lives in flags.yaml. _(only on branch main)_\n" in text
    # text after the block is kept when the block is regenerated
    with open(cli.ws / "AGENTS.md", "a") as f:
        f.write("\n## Written after the block\n")
    cli.ok("runtime", "add", "--content", "A third fact.")
    assert json.loads(cli.ok("export", "agents-md", "--json"))["action"] == "updated"
    text = (cli.ws / "AGENTS.md").read_text()
    assert text.count("<!-- mnemon-ls:begin") == 1 and "- A third fact.\n" in text
    assert text.endswith("<!-- mnemon-ls:end -->\n\n## Written after the block\n")
    assert json.loads(cli.ok("export", "agents-md", "--json"))["action"] == "unchanged"
    assert json.loads(cli.ok("export", "agents-md", "--remove", "--json"))["action"] == "removed"
    assert (cli.ws / "AGENTS.md").read_bytes() == original + b"\n## Written after the block\n"
    # a second import does not take the block back in
    cli.ok("export", "agents-md")
    plan = run_import(cli, "agents-md", "--dry-run")
    assert not any("Deploys go through staging" in i["text"] for i in plan["items"])
    assert not any("Workspace memory" in row["title"] for row in [*plan["items"], *plan["skipped"]])


def test_export_claude_md_creates_and_deletes_its_own_file_and_refuses_a_broken_block(cli):
    cli.ok("runtime", "add", "--content", "Deploys go through staging first.")
    assert json.loads(cli.ok("export", "claude-md", "--json"))["action"] == "created"
    assert json.loads(cli.ok("export", "claude-md", "--remove", "--json"))["action"] == "deleted"
    assert not (cli.ws / "CLAUDE.md").exists()
    (cli.ws / "CLAUDE.md").write_text("# Mine\n<!-- mnemon-ls:begin -->\nhalf a block\n")
    before = (cli.ws / "CLAUDE.md").read_bytes()
    result = cli.run("export", "claude-md")
    assert result.returncode == 2 and "file:" in result.stderr and "begin marker without" in result.stderr
    assert (cli.ws / "CLAUDE.md").read_bytes() == before


def test_export_refuses_a_symlink_leaving_the_workspace(cli):
    outside = cli.tmp / "elsewhere.md"
    outside.write_text("# not yours\n")
    os.symlink(outside, cli.ws / "AGENTS.md")
    result = cli.run("export", "agents-md")
    assert result.returncode == 2 and "symlink leaving" in result.stderr
    assert outside.read_text() == "# not yours\n"


def test_the_dry_run_text_says_per_item_where_and_why_and_bad_arguments_are_named(cli):
    install(cli, "hermes")
    result = cli.run("import", "hermes", "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Dry run: nothing was imported. Import from hermes: 2 file(s) read, 0 refused."
    assert "  1. would go to USER.md: 'The person is a flight dynamics engineer who reads code on a tablet.'" in lines
    assert any(line.startswith("     from ") and line.endswith("the source file holds the person's profile or "
                                                              "preferences") for line in lines)
    assert lines[-2].startswith("Would write: 2 to USER.md, 2 to MEMORY.md, 0 Document(s), 0 to the Memory Space;")
    missing = cli.run("import", "hermes", "--from", str(cli.tmp / "nowhere"))
    assert missing.returncode == 2 and f"from: {cli.tmp / 'nowhere'} does not exist" in missing.stderr
    unknown = cli.run("import", "emacs")
    assert unknown.returncode == 2 and "(got 'emacs')" in unknown.stderr


def test_the_text_names_each_skipped_item_by_its_text_and_why(cli):
    """Each skipped item is shown by its (redacted) text and the reason, not only by its file and heading: a
    section skipping three items printed three identical lines before."""
    (cli.ws / "CLAUDE.md").write_text("# Notes\n\n- Use tabs in Makefiles.\n- use TABS in makefiles!\n"
                                      "- Use tabs in Makefiles.\n- Deploy on Fridays.\n", "utf-8")
    plan = run_import(cli, "claude-code", "--dry-run")
    assert [(s["text"], s["why"]) for s in plan["skipped"]] == [
        ("use TABS in makefiles!", "near-duplicate"), ("Use tabs in Makefiles.", "exact-duplicate")]
    lines = cli.run("import", "claude-code", "--dry-run").stdout.splitlines()
    path = cli.ws / "CLAUDE.md"
    assert lines[lines.index("  skipped: 'use TABS in makefiles!'") + 1] == (
        f"     from {path} (Notes): a near duplicate of CLAUDE.md: Notes")
    assert lines[lines.index("  skipped: 'Use tabs in Makefiles.'") + 1] == (
        f"     from {path} (Notes): an exact duplicate of CLAUDE.md: Notes")
    run_import(cli, "claude-code")
    again = cli.run("import", "claude-code", "--dry-run").stdout.splitlines()
    assert again[again.index("  skipped: 'Deploy on Fridays.'") + 1] == f"     from {path} (Notes): imported before"


def test_the_text_says_where_it_looked_when_it_found_no_file(cli, tmp_path):
    """A source with no file in its default places (or an empty --from directory) says where it looked, instead
    of a bare '0 file(s) read' that leaves a user guessing whether the right place was searched."""
    lines = cli.run("import", "copilot", "--dry-run").stdout.splitlines()
    assert lines[1] == ("  found no file to read: looked for .github/copilot-instructions.md, "
                        ".github/instructions/**/*.instructions.md")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = cli.run("import", "cline", "--from", str(empty), "--dry-run")  # --from names a place: refused
    assert refused.returncode == 2
    assert f"--from: {empty} holds no file cline reads: looked for memory-bank/*.md, *.md in it" in refused.stderr
