"""An imported section whose body starts with a Markdown code block indented 4 columns (``mnemon-ls import
--from``, a real subprocess on a real file). A document body may not start with such a line (it is stored
trimmed: :func:`mnemon_ls.documents.model.validate_content` refuses it), but an imported section's document
starts with its heading, so the indented line is kept, indentation and all, and nothing is refused: every item
of the file is imported."""

from __future__ import annotations

import json

from mnemon_ls.imports.reading import DOCUMENT_MIN_BYTES, markdown_items
from tests.cli.test_cli import Cli
from tests.imports.test_import_cli import run_import

CODE = "    def main():\n        pass\n" + "".join(f"    step_{i:03d} = run({i})\n" for i in range(60))
SOURCE = f"# Project\n\n- Use pnpm for the web client, never npm.\n\n## Snippet\n\n\n{CODE}\n"


def test_a_section_keeps_the_indentation_of_its_first_line_and_a_plain_one_is_trimmed() -> None:
    [entry, section] = markdown_items(SOURCE, "AGENTS.md", "AGENTS.md")
    assert len(CODE.encode()) > DOCUMENT_MIN_BYTES
    assert (entry.kind, section.kind) == ("entry", "section")
    assert section.text == f"# Snippet\n\n{CODE.rstrip()}\n"
    [plain] = markdown_items("## Notes\n\n  " + "x" * DOCUMENT_MIN_BYTES + "  \n", "A.md", "A.md")
    assert plain.text == f"# Notes\n\n{'x' * DOCUMENT_MIN_BYTES}\n"  # 2 columns: trimmed as before


def test_import_from_a_file_with_an_indented_code_section_imports_every_item(tmp_path) -> None:
    cli = Cli(tmp_path)
    source = cli.tmp / "elsewhere" / "AGENTS.md"
    source.parent.mkdir()
    source.write_text(SOURCE)
    done = run_import(cli, "agents-md", "--from", str(source))
    assert {a["destination"] for a in done["applied"]} == {"memory", "document"}
    assert done["counts"]["written"] == 2
    [doc] = json.loads(cli.ok("doc", "list", "--json"))["documents"]
    assert cli.ok_json("doc", "get", doc["id"])["content"] == f"# Snippet\n\n{CODE.rstrip()}"
    assert "Use pnpm for the web client" in (cli.data / "runtime" / "MEMORY.md").read_text()
