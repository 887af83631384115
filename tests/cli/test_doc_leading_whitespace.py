"""A document body's leading whitespace (real subprocesses, a real git repository). The document format trims a
body (reference dsh-mnemon.md 5.2-5.3: read back trimmed, ``contentHash`` of the trimmed body), so a Markdown
code block indented at the top silently lost its indentation, and ``doc update`` of only that whitespace said
"unchanged". The trim stays (the TypeScript plugin reads the same files), but nothing is lost without a word:
a body whose first line with text is indented is refused, saying why, and writes nothing; whitespace that
carries nothing (blank lines before, whitespace after) is trimmed, and a no-op update says it is not kept."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_doc_unchanged import cli
from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, server_env

REFUSAL = ("mnemon-ls: error: --content: starts with an indented line (4 spaces), which a document body cannot keep: "
           "a body is stored without its leading and trailing whitespace (the document format's rule); start it "
           "with a line that is not indented, e.g. a heading, or fence the code block with ```\n")


def refused(workspace: Path, data_dir: Path, *args: str) -> str:
    proc = subprocess.run([*mnemon_command(), *args, "--workspace", str(workspace), "--data-dir", str(data_dir)],
                          capture_output=True, text=True, env=server_env(), cwd=str(REPO), timeout=60)
    assert proc.returncode != 0 and proc.stdout == "", proc
    return proc.stderr


def files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_an_indented_first_line_is_refused_and_other_whitespace_is_said_not_kept(tmp_path: Path) -> None:
    workspace, data_dir = Path(make_repo(tmp_path / "repo").workdir), tmp_path / "root"
    assert refused(workspace, data_dir, "doc", "create", "--title", "Snippet", "--content",
                   "    def main():\n        pass\n") == REFUSAL
    assert not (data_dir / "documents" / "active").exists() or not any((data_dir / "documents" / "active").iterdir())

    created = json.loads(cli(workspace, data_dir, "doc", "create", "--title", "Snippet", "--content",
                             "\n\n# Main\n    def main():\n        pass\n\n", "--json"))["document"]
    doc_id, path = created["id"], Path(created["path"])
    assert path.read_text().endswith("\n# Main\n    def main():\n        pass\n")  # inner indentation kept
    before = files(data_dir / "documents")
    assert refused(workspace, data_dir, "doc", "update", doc_id, "--content",
                   "\n    # Main\n    def main():\n        pass") == REFUSAL
    said = cli(workspace, data_dir, "doc", "update", doc_id, "--content", "\n# Main\n    def main():\n        pass\n  \n")
    assert said == (f"Document unchanged: Snippet ({doc_id}): no change; revision 1 kept; a document body is stored "
                    "without its leading and trailing whitespace, so the whitespace sent around it changes nothing\n")
    assert files(data_dir / "documents") == before
    # the same body as stored says only "no change"
    assert cli(workspace, data_dir, "doc", "update", doc_id, "--content", "# Main\n    def main():\n        pass") == (
        f"Document unchanged: Snippet ({doc_id}): no change; revision 1 kept\n")
