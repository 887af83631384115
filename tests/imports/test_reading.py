"""The Markdown splitting and the routing of :mod:`mnemon_ls.imports` on small texts (pure functions)."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.imports import classify
from mnemon_ls.imports.reading import DOCUMENT_MIN_BYTES, Item, Refusal, markdown_items, read_source


def texts(markdown: str) -> list[tuple[str, str, str]]:
    return [(i.kind, i.title, i.text) for i in markdown_items(markdown, "/x/AGENTS.md", "AGENTS.md")]


def test_bullets_paragraphs_and_nested_bullets():
    assert texts("Intro line one\ncontinues here.\n\n- first\n  - nested detail\n- second\n  wrapped\n") == [
        ("entry", "AGENTS.md", "Intro line one continues here."),
        ("entry", "AGENTS.md", "first nested detail"),
        ("entry", "AGENTS.md", "second wrapped")]


def test_a_heading_inside_a_code_fence_is_text_and_the_section_is_kept_whole():
    md = "# Build\n\n```sh\n# not a heading\nmake\n```\n\n# Next\n\n- after\n"
    assert texts(md) == [("section", "Build", "# Build\n\n```sh\n# not a heading\nmake\n```\n"),
                         ("entry", "Next", "Next: after")]


def test_front_matter_and_the_export_block_are_skipped_and_headings_nest():
    md = ("---\ndescription: x\nglobs: '*.py'\n---\n# A\n## B\n- under b\n"
          "<!-- mnemon-ls:begin (written by ...) -->\n- exported fact\n<!-- mnemon-ls:end -->\n# C\n- under c\n")
    assert texts(md) == [("entry", "A > B", "B: under b"), ("entry", "C", "C: under c")]


def test_a_long_section_becomes_a_document_at_the_threshold():
    body = "x" * DOCUMENT_MIN_BYTES
    assert texts(f"# Fits\n{body}\n")[0][0] == "entry"  # exactly the threshold: still entries
    assert texts(f"# Long\n{body}y\n")[0][0] == "section"


def test_routing_of_entries():
    def route(text: str, hint: str | None = None) -> str:
        return classify.route(Item(text, "t", "/x", "entry", hint))[0]

    assert route("I prefer tabs over spaces.") == "user"
    assert route("Always respond in German with a formal tone.") == "user"
    assert route("The user prefers terse explanations.") == "user"
    assert route("The API is versioned under /v2.") == "memory"
    assert route("Anything at all", "user") == "user"
    assert route("y" * (classify.MAX_ENTRY_BYTES + 1)) == "space"


def test_read_source_refuses_a_directory_and_a_missing_file(tmp_path: Path):
    (tmp_path / "dir.md").mkdir()
    refused = read_source(tmp_path / "dir.md", tmp_path)
    assert isinstance(refused, Refusal) and refused.reason == "is not a regular file"
    assert isinstance(read_source(tmp_path / "gone.md", tmp_path), Refusal)
