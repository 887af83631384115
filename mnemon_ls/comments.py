"""Comment markers of a remembered selection (pure): a person selects a comment in a source file and runs
"Remember selection"; the fact is the comment's words, not its ``# ``, ``// ``, ``-- ``, ``; `` or ``/* */``.

:func:`strip_comment_markers` takes the selected text and the document's language: the editor's language
id (VS Code's ``python``, ``shellscript``, ``typescriptreact``; Neovim's filetype ``sh``, ``cs``, ``dosini``),
else what :func:`language_for` finds from the file name. Rules:

- every non-blank line starts (after its indentation) with one of the language's line markers: each loses
  the marker (repeated, as in ``##``, ``///``, ``//!``, ``---``, ``;;``) and one space after it;
- the text (trimmed) is one block comment (``/* ... */``, ``<!-- ... -->``, ``{- ... -}``, ``(* ... *)``,
  ``--[[ ... ]]``), or every non-blank line is one: the delimiters go, and in a ``/* */`` block a line
  starting with ``*`` (the Javadoc style) loses that ``*`` and one space;
- anything else (code; a comment after code on the same line; code and comments mixed; a language this
  module does not know, plain text and Markdown included) is returned exactly as given.

Indentation and line breaks are kept; the caller normalizes whitespace as it would for any selection.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

#: Block comment delimiters, by name.
_C, _HTML, _HASKELL, _ML, _LUA = ("/*", "*/"), ("<!--", "-->"), ("{-", "-}"), ("(*", "*)"), ("--[[", "]]")

#: Line markers and block delimiters of each syntax.
_SYNTAX: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "hash": (("#",), ()),
    "slash": (("//",), (_C,)),
    "slash-hash": (("//", "#"), (_C,)),  # PHP, Terraform/HCL
    "dash": (("--",), (_C,)),  # SQL
    "lua": (("--",), (_LUA,)),
    "haskell": (("--",), (_HASKELL,)),
    "semicolon": ((";",), ()),
    "ini": ((";", "#"), ()),
    "percent": (("%",), ()),
    "vim": (('"',), ()),
    "css": ((), (_C,)),
    "html": ((), (_HTML,)),
    "ml": ((), (_ML,)),
    "fsharp": (("//",), (_ML,)),
}

#: Language ids (VS Code's and Neovim's filetypes) -> syntax.
_LANGUAGES: dict[str, str] = {
    **dict.fromkeys((
        "python", "shellscript", "sh", "bash", "zsh", "fish", "ruby", "perl", "r", "yaml", "toml", "dockerfile",
        "makefile", "make", "powershell", "ps1", "coffeescript", "julia", "elixir", "cmake", "nix", "tcl",
        "graphql", "awk", "crystal", "nim", "properties", "conf", "gitignore", "ignore", "gitconfig",
        "sshconfig", "tmux", "requirements", "pip-requirements", "starlark", "bzl", "gdscript"), "hash"),
    **dict.fromkeys((
        "javascript", "typescript", "javascriptreact", "typescriptreact", "tsx", "jsx", "c", "cpp", "cuda-cpp",
        "csharp", "cs", "java", "go", "rust", "swift", "kotlin", "scala", "dart", "jsonc", "json5", "groovy",
        "objective-c", "objective-cpp", "objc", "objcpp", "zig", "proto", "proto3", "glsl", "hlsl", "verilog",
        "solidity", "d", "v", "qml", "scss", "less"), "slash"),
    **dict.fromkeys(("php", "terraform", "hcl"), "slash-hash"),
    **dict.fromkeys(("sql", "mysql", "plsql", "pgsql", "postgres"), "dash"),
    "lua": "lua",
    **dict.fromkeys(("haskell", "elm", "purescript", "idris", "agda"), "haskell"),
    **dict.fromkeys(("lisp", "commonlisp", "clojure", "scheme", "racket", "fennel", "emacs-lisp", "elisp",
                     "asm", "nasm", "asm-intel-x86-generic", "autohotkey"), "semicolon"),
    **dict.fromkeys(("ini", "dosini"), "ini"),
    **dict.fromkeys(("latex", "tex", "plaintex", "bibtex", "erlang", "matlab", "prolog"), "percent"),
    **dict.fromkeys(("vim", "viml"), "vim"),
    "css": "css",
    **dict.fromkeys(("html", "xml", "xsl", "svg", "vue", "svelte", "astro"), "html"),
    **dict.fromkeys(("ocaml", "pascal", "objectpascal", "delphi", "sml", "coq"), "ml"),
    "fsharp": "fsharp",
}

#: File name suffixes (and whole names) -> language id, for a document whose language the editor did not say.
_SUFFIXES: dict[str, str] = {
    **dict.fromkeys((".py", ".pyi", ".pyw"), "python"),
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh"), "sh"),
    ".fish": "fish", ".rb": "ruby", ".pl": "perl", ".pm": "perl", ".r": "r",
    **dict.fromkeys((".yml", ".yaml"), "yaml"),
    ".toml": "toml", ".ps1": "powershell", ".jl": "julia", ".ex": "elixir", ".exs": "elixir", ".cmake": "cmake",
    ".nix": "nix", ".tcl": "tcl", ".graphql": "graphql", ".gql": "graphql", ".awk": "awk", ".cr": "crystal",
    ".nim": "nim", ".properties": "properties", ".conf": "conf", ".bzl": "starlark", ".gd": "gdscript",
    **dict.fromkeys((".js", ".mjs", ".cjs"), "javascript"), ".jsx": "javascriptreact",
    **dict.fromkeys((".ts", ".mts", ".cts"), "typescript"), ".tsx": "typescriptreact",
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"), "cpp"),
    ".cs": "csharp", ".java": "java", ".go": "go", ".rs": "rust", ".swift": "swift", ".kt": "kotlin",
    ".kts": "kotlin", ".scala": "scala", ".dart": "dart", ".jsonc": "jsonc", ".json5": "json5", ".groovy": "groovy",
    ".gradle": "groovy", ".m": "objective-c", ".mm": "objective-cpp", ".zig": "zig", ".proto": "proto",
    ".glsl": "glsl", ".sol": "solidity", ".scss": "scss", ".less": "less", ".php": "php", ".tf": "terraform",
    ".hcl": "hcl", ".sql": "sql", ".lua": "lua", ".hs": "haskell", ".elm": "elm", ".purs": "purescript",
    **dict.fromkeys((".lisp", ".lsp", ".cl"), "lisp"),
    **dict.fromkeys((".clj", ".cljs", ".cljc", ".edn"), "clojure"),
    ".el": "emacs-lisp", ".scm": "scheme", ".ss": "scheme", ".rkt": "racket", ".fnl": "fennel",
    **dict.fromkeys((".asm", ".s"), "asm"),
    **dict.fromkeys((".ini", ".cfg"), "ini"),
    **dict.fromkeys((".tex", ".sty", ".cls"), "latex"), ".bib": "bibtex", ".erl": "erlang", ".hrl": "erlang",
    ".vim": "vim", ".css": "css",
    **dict.fromkeys((".html", ".htm", ".xhtml"), "html"),
    **dict.fromkeys((".xml", ".xsd", ".xsl", ".svg", ".plist"), "xml"),
    ".vue": "vue", ".svelte": "svelte", ".ml": "ocaml", ".mli": "ocaml", ".pas": "pascal",
    **dict.fromkeys((".fs", ".fsi", ".fsx"), "fsharp"),
    # whole file names
    "makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile", "containerfile": "dockerfile",
    "cmakelists.txt": "cmake", ".gitignore": "gitignore", ".dockerignore": "ignore", ".gitconfig": "gitconfig",
    ".bashrc": "sh", ".zshrc": "sh", ".profile": "sh", ".editorconfig": "ini", "build": "starlark",
    "build.bazel": "starlark", "workspace": "starlark", "requirements.txt": "pip-requirements",
}


def language_for(path: str | None) -> str | None:
    """The language id of a file path or ``file:`` URI by its name (``src/app.py`` -> ``python``,
    ``Makefile`` -> ``makefile``), ``None`` when the name says nothing this module knows."""
    if not path:
        return None
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    if name in _SUFFIXES:
        return _SUFFIXES[name]
    suffix = PurePosixPath(name).suffix
    return _SUFFIXES.get(suffix) if suffix else None


def _line_pattern(markers: tuple[str, ...]) -> re.Pattern[str] | None:
    if not markers:
        return None
    alternatives = []
    for marker in markers:
        # A marker may repeat (## /// ;; ---); //! (a Rust inner doc comment) counts as //.
        repeated = f"{re.escape(marker[0])}{{{len(marker)},}}" if len(set(marker)) == 1 else re.escape(marker)
        alternatives.append(repeated + ("!?" if marker == "//" else ""))
    return re.compile(rf"^(?P<indent>[ \t]*)(?:{'|'.join(alternatives)}) ?")


def _strip_lines(lines: list[str], pattern: re.Pattern[str]) -> list[str] | None:
    """Each line without its marker, or ``None`` when a non-blank line has none."""
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
            continue
        match = pattern.match(line)
        if match is None:
            return None
        out.append(match["indent"] + line[match.end():])
    return out


def _open_pattern(opener: str) -> str:
    # /** and /*! (doc comments), (** (OCaml doc), {-| (Haddock), --[==[ (Lua long brackets) open too.
    if opener == "/*":
        return r"/\*+!?"
    if opener == "(*":
        return r"\(\*+"
    if opener == "{-":
        return r"\{-\|?"
    if opener == "--[[":
        return r"--\[=*\["
    return re.escape(opener)


def _close_pattern(closer: str) -> str:
    if closer == "*/":
        return r"\*+/"
    if closer == "*)":
        return r"\*+\)"
    if closer == "]]":
        return r"(?:--)?\]=*\]"
    return re.escape(closer)


def _strip_block(text: str, opener: str, closer: str) -> str | None:
    """``text`` (one block comment, trimmed) without its delimiters, or ``None`` when it is not exactly one."""
    match = re.fullmatch(rf"(?s)\s*{_open_pattern(opener)}(?P<body>.*?){_close_pattern(closer)}\s*", text)
    if match is None or re.search(_close_pattern(closer), match["body"]):
        return None  # not a block comment, or several (/* a */ code /* b */)
    body = match["body"]
    lines = body.split("\n")
    if opener == "/*":  # Javadoc continuation lines: " * text"
        inner = lines[1:]
        if inner and all(re.match(r"^[ \t]*\*(?!/)", line) or not line.strip() for line in inner):
            lines = lines[:1] + [re.sub(r"^[ \t]*\* ?", "", line) for line in inner]
    return "\n".join(line.strip(" ") if i == 0 else line.rstrip(" ") for i, line in enumerate(lines)).strip("\n")


def strip_comment_markers(text: str, language: str | None) -> str:
    """``text`` without the comment markers of ``language`` (a language id, see the module doc) when the
    whole selection is a comment; otherwise ``text`` unchanged. Never raises; an unknown or missing
    ``language`` changes nothing."""
    syntax = _SYNTAX.get(_LANGUAGES.get((language or "").strip().lower(), ""))
    if syntax is None or not text.strip():
        return text
    markers, blocks = syntax
    lines = text.replace("\r\n", "\n").split("\n")
    for opener, closer in blocks:
        whole = _strip_block(text, opener, closer)
        if whole is not None:
            return whole
        # every non-blank line a block comment of its own: /* a */ and /* b */ on two lines
        per_line = [line if not line.strip() else _strip_block(line, opener, closer) for line in lines]
        if all(p is not None for p in per_line):
            return "\n".join(p for p in per_line if p is not None)
    pattern = _line_pattern(markers)
    if pattern is not None:
        stripped = _strip_lines(lines, pattern)
        if stripped is not None:
            return "\n".join(stripped)
    return text
