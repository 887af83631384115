"""Comment markers of a remembered selection (mnemon_ls/comments.py): a selection that is a comment is
remembered as the comment's words, in every comment syntax; code, mixed selections and unknown languages
are kept exactly as selected."""

from __future__ import annotations

import pytest

from mnemon_ls.comments import language_for, strip_comment_markers


@pytest.mark.parametrize(("language", "text", "expected"), [
    # "# "
    ("python", "# Deploy with make release\n# (needs the VPN)", "Deploy with make release\n(needs the VPN)"),
    ("shellscript", "  ## run it twice", "  run it twice"),
    ("sh", "#no space after the marker", "no space after the marker"),
    ("yaml", "# a\n\n# b", "a\n\nb"),
    # "// "
    ("typescript", "// The cache is per tenant\n  // and never shared", "The cache is per tenant\n  and never shared"),
    ("rust", "/// Doc comment\n//! inner doc", "Doc comment\ninner doc"),
    ("go", "//tight", "tight"),
    ("php", "# either\n// marker", "either\nmarker"),
    # "-- "
    ("sql", "-- orders are never deleted", "orders are never deleted"),
    ("lua", "--- LuaDoc line", "LuaDoc line"),
    ("haskell", "-- pure code only", "pure code only"),
    # "; "
    ("clojure", ";; the atom holds the session", "the atom holds the session"),
    ("ini", "; legacy section\n# still read", "legacy section\nstill read"),
    # others
    ("latex", "% draft only", "draft only"),
    ("vim", '" map leader is space', "map leader is space"),
])
def test_line_comment_markers_go(language: str, text: str, expected: str) -> None:
    assert strip_comment_markers(text, language) == expected


@pytest.mark.parametrize(("language", "text", "expected"), [
    ("c", "/* one line */", "one line"),
    ("java", "/**\n * Retries three times\n * then gives up.\n */", "Retries three times\nthen gives up."),
    ("javascript", "  /* indented block */  ", "indented block"),
    ("cpp", "/* a */\n/* b */", "a\nb"),
    ("css", "/* the grid is 8px */", "the grid is 8px"),
    ("sql", "/* batch job: nightly */", "batch job: nightly"),
    ("html", "<!-- keep the footer static -->", "keep the footer static"),
    ("markdown", "<!-- not a comment syntax this module knows for markdown -->",
     "<!-- not a comment syntax this module knows for markdown -->"),
    ("haskell", "{- | the parser is total -}", "| the parser is total"),
    ("ocaml", "(** the doc *)", "the doc"),
    ("lua", "--[[ long\ncomment ]]", "long\ncomment"),
])
def test_block_comment_delimiters_go(language: str, text: str, expected: str) -> None:
    assert strip_comment_markers(text, language) == expected


@pytest.mark.parametrize(("language", "text"), [
    ("python", "x = 1  # a trailing comment stays with its code"),
    ("python", "# a comment\nfollowed_by = code"),
    ("c", "/* a */ int x; /* b */"),
    ("typescript", "const url = 'http://example.com'"),
    ("plaintext", "# not code at all"),
    ("markdown", "# A heading"),
    (None, "# unknown language"),
    ("sql", "SELECT 1 -- trailing"),
])
def test_code_mixed_selections_and_unknown_languages_are_kept(language: str | None, text: str) -> None:
    assert strip_comment_markers(text, language) == text


def test_the_language_comes_from_the_file_name_when_the_editor_does_not_say() -> None:
    assert [language_for(p) for p in ("src/app.py", "file:///w/Makefile", "a/b.tsx", "q.SQL", "x.el", "notes.txt",
                                      "README", None)] == [
        "python", "makefile", "typescriptreact", "sql", "emacs-lisp", None, None, None]
    assert strip_comment_markers("; config", language_for("setup.cfg")) == "config"
