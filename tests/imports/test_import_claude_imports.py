"""Claude Code's ``@path`` imports: a CLAUDE.md that says ``See @docs/conventions.md`` has Claude Code read that
file with it (relative to the importing file, ``~/`` for the home directory, at most 5 hops, never inside a code
span or a code block). The import read CLAUDE.md alone, so what a project keeps in the imported files was never
imported. Now it follows them: each file once (a cycle ends), no more than 5 hops, and a path that leaves the
workspace (or the home directory, for ``~/``) is refused by name, never read. Run for real: the console script in a
git workspace, with the real files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli

CLAUDE_MD = """# Project

- Conventions are in @docs/conventions.md and my own notes in @~/.claude/orbit-notes.md.
- Not followed: `@docs/spanned.md`, mail ops@docs/spanned.md, and @../outside.md (outside the workspace).
- Missing files are no import: @types/node.

```sh
cat @docs/fenced.md
```
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_imports_are_followed_inside_the_workspace_and_home_and_escapes_are_refused_by_name(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "CLAUDE.md", CLAUDE_MD)
    # conventions.md imports CLAUDE.md back (a cycle) and a file of its own directory (relative to itself)
    write(cli.ws / "docs" / "conventions.md", "# Conventions\n\n- Times are stored as UTC epoch milliseconds.\n\n"
                                              "Back to @../CLAUDE.md, and see @http.md\n")
    write(cli.ws / "docs" / "http.md", "# HTTP\n\n## API\n\n- The API is versioned under /v2.\n")
    write(cli.ws / "docs" / "spanned.md", "- From a code span: never read.\n")
    write(cli.ws / "docs" / "fenced.md", "- From a code block: never read.\n")
    write(cli.home / ".claude" / "orbit-notes.md", "- I prefer answers in British English.\n")
    write(cli.tmp / "outside.md", "- Outside the workspace: never read.\n")
    plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json"))
    assert [f["path"] for f in plan["files"]] == [
        str(cli.ws / "CLAUDE.md"), str(cli.ws / "docs" / "conventions.md"), str(cli.ws / "docs" / "http.md"),
        str(cli.home / ".claude" / "orbit-notes.md")]
    assert plan["refused"] == [{"path": str(cli.tmp / "outside.md"),
                                "reason": f"is imported by {cli.ws / 'CLAUDE.md'} (@../outside.md) but leaves "
                                          f"{cli.ws}; not read"}]
    texts = {i["text"]: i["destination"] for i in plan["items"]}
    assert texts["Times are stored as UTC epoch milliseconds."] == "memory"  # its heading is the file's title
    assert texts["API: The API is versioned under /v2."] == "memory"
    assert texts["I prefer answers in British English."] == "user"
    assert not [t for t in texts if "never read" in t]
    lines = cli.run("import", "claude-code", "--dry-run").stdout.splitlines()
    assert lines[0].endswith("4 file(s) read, 1 refused.")
    assert f"  refused {cli.tmp / 'outside.md'}: is imported by {cli.ws / 'CLAUDE.md'} (@../outside.md) but " \
           f"leaves {cli.ws}; not read" in lines
    # the imported files are part of the plan: one changed since the dry run refuses the import, nothing written
    write(cli.ws / "docs" / "http.md", "# HTTP\n\n## API\n\n- The API is versioned under /v3.\n")
    refused = cli.run("import", "claude-code")
    assert refused.returncode == 3 and f"{cli.ws / 'docs' / 'http.md'} changed since the dry run" in refused.stderr
    assert not (cli.runtime / "MEMORY.md").exists() or "UTC epoch" not in (cli.runtime / "MEMORY.md").read_text()
    cli.ok("import", "claude-code", "--dry-run")
    cli.ok("import", "claude-code")
    assert "API: The API is versioned under /v3." in (cli.runtime / "MEMORY.md").read_text("utf-8")


def test_at_most_five_hops_are_followed_and_the_sixth_is_refused_saying_so(tmp_path):
    cli = Cli(tmp_path)
    write(cli.ws / "CLAUDE.md", "- Start: @hop1.md\n")
    for n in range(1, 7):
        write(cli.ws / f"hop{n}.md", f"- Fact number {n} of the chain.\n- Next: @hop{n + 1}.md\n")
    plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json"))
    assert [Path(f["path"]).name for f in plan["files"]] == ["CLAUDE.md", *(f"hop{n}.md" for n in range(1, 6))]
    assert plan["refused"] == [{"path": str(cli.ws / "hop6.md"),
                                "reason": f"is imported by {cli.ws / 'hop5.md'} more than 5 hops from the first "
                                          "file (Claude Code follows at most 5); not read"}]
    assert not [i for i in plan["items"] if "number 6" in i["text"]]


def test_a_home_import_stays_in_home_and_a_symlink_out_of_the_workspace_is_refused(tmp_path):
    cli = Cli(tmp_path)
    write(cli.tmp / "secret" / "keys.md", "- Outside: never read.\n")
    (cli.ws / "linked.md").symlink_to(cli.tmp / "secret" / "keys.md")
    write(cli.ws / "CLAUDE.md", "- See @linked.md and @~/../secret/keys.md and @/etc/hostname\n")
    plan = json.loads(cli.ok("import", "claude-code", "--dry-run", "--json"))
    reasons = {f["path"]: f["reason"] for f in plan["refused"]}
    assert reasons[str(cli.ws / "linked.md")].startswith(f"is a symlink leaving {cli.ws}")
    assert reasons[str(cli.tmp / "secret" / "keys.md")] == (
        f"is imported by {cli.ws / 'CLAUDE.md'} (@~/../secret/keys.md) but leaves {cli.home}; not read")
    if Path("/etc/hostname").is_file():
        assert reasons["/etc/hostname"] == (f"is imported by {cli.ws / 'CLAUDE.md'} (@/etc/hostname) but leaves "
                                            f"{cli.ws} and {cli.home}; not read")
    assert [Path(f["path"]).name for f in plan["files"]] == ["CLAUDE.md"]


def test_import_paths_skip_code_and_email_and_unescape_spaces():
    from mnemon_ls.imports.claude_code import import_paths

    text = "See @a.md, `@b.md` x@c.md\n@d\\ e.md\n```\n@f.md\n```\n~~~\n@g.md\n~~~\n@h.md"
    assert import_paths(text) == ["a.md,", "d e.md", "h.md"]
