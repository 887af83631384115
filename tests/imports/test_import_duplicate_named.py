"""An item that repeats an earlier item of the same import is named as a duplicate of that item (real
subprocesses, a real git workspace). A Cursor rule and ``.cursorrules`` both held a line of CLAUDE.md that an
earlier ``import claude-code`` had imported: the receipt said "imported before" for both, though the second was a
duplicate of the first in the same run (the ledger was asked before the items of the run). Now the items of the run
come first: the second copy is "an exact duplicate of tooling.mdc: Tooling", the first still "imported before"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli

PNPM = "Use pnpm for the web client, never npm."


def test_a_repeat_within_the_run_is_named_as_a_duplicate_of_its_first_copy(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    (cli.ws / "CLAUDE.md").write_text(f"# Rules\n\n- {PNPM}\n- Run the linter before each commit.\n", "utf-8")
    (cli.ws / ".cursor" / "rules").mkdir(parents=True)
    rule = cli.ws / ".cursor" / "rules" / "tooling.mdc"
    rule.write_text(f"---\ndescription: Tooling\nalwaysApply: true\n---\n- {PNPM}\n- Keep functions short.\n", "utf-8")
    (cli.ws / ".cursorrules").write_text(f"# Editor\n\n- {PNPM}\n", "utf-8")
    cli.ok("import", "claude-code")

    plan = json.loads(cli.ok("import", "cursor", "--dry-run", "--json"))
    assert [(Path(s["path"]).name, s["why"], s["of"]) for s in plan["skipped"]] == [
        ("tooling.mdc", "already-imported", "an earlier import"),
        (".cursorrules", "exact-duplicate", "tooling.mdc: Tooling")]
    assert (plan["counts"]["alreadyImported"], plan["counts"]["exactDuplicates"]) == (1, 1)
    lines = cli.ok("import", "cursor").splitlines()
    first = lines.index(f"  skipped: {PNPM!r}")
    assert lines[first + 1] == f"     from {rule} (Tooling): imported before"
    second = lines.index(f"  skipped: {PNPM!r}", first + 1)
    cursorrules = cli.ws / ".cursorrules"
    assert lines[second + 1] == f"     from {cursorrules} (Editor): an exact duplicate of tooling.mdc: Tooling"
