"""``mnemon-ls import --dry-run`` says which items the import will refuse, and says it as the import does (real
subprocesses, a real git workspace, a real Memory Space, real files).

The dry run predicted only a Document's refusals (a body over ``documents.maxBodyBytes``, the active Documents
full), while the import's writes refuse other items too: a runtime entry holding the reserved ``§`` (the runtime
entry rule), a Memory Space item over its 8,000 bytes. The dry run said those "would go" and the import then
refused them. And a capacity refusal was worded one way by the dry run ("have N of L bytes left and this body alone
is ...") and another by the import ("creating x.md ... would make the active documents ..."). Now the dry run runs
the writes' own checks, and one function words the capacity rule: the dry run's refused items (and their field and
rule) are the import's, word for word. The import's text also marked a written item as refused when a refused one
in the same section shared its file and heading."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import Cli

HUGE = " ".join(f"Sample {i} of the ground station log is kept for the calibration review." for i in range(120))
POLICY = " ".join(f"Fixture {i} is rebuilt from the recorded session before every release." for i in range(40))
SOURCE = (f"{HUGE}\n\n# Project\n\n- Entries are split by the \u00a7 sign in the old notes.\n"
          f"- Use pnpm for the web client, never npm.\n\n## Fixture policy\n\n{POLICY}\n")
LIMIT = 10 * 1024 * 1024  # documents.activeLimitBytes, the default


def refused(items: list[dict]) -> list[tuple]:
    return [(i["path"], i["title"], i["destination"], i["code"], i["field"], i["rule"]) for i in items]


def test_the_dry_run_predicts_the_refusals_the_import_makes_in_its_words(tmp_path: Path) -> None:
    assert len(HUGE.encode()) > 8000
    cli = Cli(tmp_path)
    (cli.ws / "AGENTS.md").write_text(SOURCE, encoding="utf-8")
    cli.ok("space", "create", "--name", "Imported", "--description", "what came from elsewhere", "--active")
    big = cli.ok_json("doc", "create", "--title", "Archive of logs", "--content", "Logs.")
    managed = Path(big["document"]["path"] if "document" in big else big["path"])
    managed.write_bytes(managed.read_bytes().replace(b"Logs.", b"log line\n" * (LIMIT // 9 + 1)))
    cli.ok("doc", "list")  # the refresh adopts the hand edit: the active documents are at their limit now

    dry = cli.run("import", "agents-md", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    predicted = refused([{**i, **i["refusal"]} for i in planned["items"] if i["refusal"]])
    real = cli.run("import", "agents-md", "--json")
    assert real.returncode == 3, real.stderr
    done = json.loads(real.stdout)
    assert refused(done["refusedItems"]) == predicted
    path = str(cli.ws / "AGENTS.md")
    assert [(p, d, c, f) for p, _t, d, c, f, _r in predicted] == [
        (path, "space", "invalid-input", "content"),  # a Memory Space item is at most 8,000 bytes
        (path, "memory", "invalid-input", "content"),  # a runtime entry must not hold the reserved delimiter
        (path, "document", "document-capacity", "documents.activeLimitBytes")]
    assert predicted[1][5] == "must not contain '\u00a7' (U+00A7), the reserved entry delimiter"
    assert predicted[2][5].startswith("the active documents would be ") and "(limit 10485760)" in predicted[2][5]
    assert planned["counts"]["refusedItems"] == done["counts"]["refusedItems"] == 3
    assert [a["title"] for a in done["applied"]] == ["Project"]  # the pnpm bullet

    dry_text = cli.run("import", "agents-md", "--dry-run").stdout.splitlines()
    real_text = cli.run("import", "agents-md").stdout.splitlines()
    rules = [line.split("refused", 1)[1].split(": ", 1)[1] for line in dry_text if line.startswith("     refused")]
    assert rules and rules == [line.split("refused", 1)[1].split(": ", 1)[1] for line in real_text
                               if line.startswith("     refused")]


def test_the_import_text_marks_only_the_refused_item_of_a_section(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    (cli.ws / "AGENTS.md").write_text("# Notes\n\n- Entries are split by the \u00a7 sign in old files.\n"
                                      "- Use pnpm for the web client.\n", encoding="utf-8")
    result = cli.run("import", "agents-md")
    assert result.returncode == 3
    lines = result.stdout.splitlines()
    assert lines[1] == "  1. refused to MEMORY.md: 'Entries are split by the \u00a7 sign in old files.'"
    assert lines[4] == "  2. went to MEMORY.md: 'Use pnpm for the web client.'"
    assert not lines[6].startswith("     refused")
