"""Automatic-edge helpers shared by the native provider (pure): entity extraction and causal cues.

Behaviour follows shared/reference/mnemon-cli.md 7.2 and 7.4 (no embeddings needed):

- :func:`extract_entities`: CamelCase words with at least two capitalised segments, 2-6 letter ALL-CAPS
  acronyms minus a stop list, file-path-like tokens with an extension, http(s) URLs, ``@mentions``, text
  inside 《》 or 「」, and a technology dictionary matched on whole ASCII words, case-sensitive.
- :func:`merge_entities`: ``merge`` mode = provided first, then extracted, exact-string de-dup, at most 50.
- :func:`causal_cue` / :func:`causal_sub_type`: the English (word-bounded, case-insensitive) and Chinese
  cue lists; sub-type ``prevents`` / ``enables`` / ``causes``.
"""

from __future__ import annotations

import regex

from .model import MAX_ENTITIES, MAX_ENTITY_BYTES

TECH_TERMS = frozenset("""
Go Rust Python Java JavaScript TypeScript Kotlin Swift Ruby PHP Scala Elixir Haskell Lua Zig C++ C#
SQLite PostgreSQL MySQL MariaDB Redis MongoDB Qdrant Milvus Elasticsearch OpenSearch Kafka RabbitMQ
Docker Kubernetes Helm Terraform Ansible Nginx Linux macOS Windows Git GitHub GitLab
OpenAI Claude Anthropic Gemini Ollama LLaMA React Vue Angular Svelte Django Flask FastAPI Rails
Spring Node.js Deno Bun npm pip gRPC GraphQL REST HTTP JSON YAML TOML Protobuf WebAssembly
AWS GCP Azure Vercel Cloudflare Neovim VSCode Emacs pytest Jest Webpack Vite
""".split())

_ACRONYM_STOP = frozenset("""
IN ON THE GO AT TO OF OR AND AN IS IT BE BY DO IF NO SO UP US WE MY ME HE OK AM PM ID TODO FIXME NOTE
""".split())

_CAMEL = regex.compile(r"\b(?:\p{Lu}\p{Ll}+){2,}[\p{L}\p{N}]*\b")
_ACRONYM = regex.compile(r"\b\p{Lu}{2,6}\b")
_PATH = regex.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])")
_URL = regex.compile(r"https?://[^\s<>\"'《》「」]+")
_MENTION = regex.compile(r"(?<![\w@])@[A-Za-z0-9_][A-Za-z0-9_.-]*")
_QUOTED = regex.compile(r"《([^《》]{1,100})》|「([^「」]{1,100})」")
_ASCII_WORD = regex.compile(r"[A-Za-z][A-Za-z0-9+#.]*")

_CAUSAL_EN = regex.compile(
    r"\b(?:because|therefore|due to|caused by|as a result|decided to|chosen because|so that|in order to|"
    r"leads to|results in)\b", regex.IGNORECASE)
_CAUSAL_ZH = regex.compile(r"因为|所以|由于|导致|因此|决定|为了|以便")
_PREVENTS = regex.compile(r"\b(?:despite|prevented|prevents|blocked)\b|阻止|防止", regex.IGNORECASE)
_ENABLES = regex.compile(r"\b(?:so that|in order to|enables|leads to)\b|为了|以便", regex.IGNORECASE)


def extract_entities(text: str) -> list[str]:
    """Entities found in ``text`` (module doc), in order of first appearance, exact-string de-duplicated."""
    found: list[tuple[int, str]] = []
    for match in _URL.finditer(text):
        found.append((match.start(), match.group(0).rstrip(".,;:!?)")))
    spans = [(m.start(), m.end()) for m in _URL.finditer(text)]

    def outside_urls(pos: int) -> bool:
        return not any(start <= pos < end for start, end in spans)

    for match in _QUOTED.finditer(text):
        found.append((match.start(), (match.group(1) or match.group(2)).strip()))
    for match in _MENTION.finditer(text):
        if outside_urls(match.start()):
            found.append((match.start(), match.group(0).rstrip(".-")))
    for match in _PATH.finditer(text):
        if outside_urls(match.start()) and not regex.fullmatch(r"[\d.]+", match.group(0)) \
                and not regex.fullmatch(r"v?\d+(?:\.\d+)+", match.group(0)):
            found.append((match.start(), match.group(0)))
    for match in _CAMEL.finditer(text):
        if outside_urls(match.start()):
            found.append((match.start(), match.group(0)))
    for match in _ACRONYM.finditer(text):
        if outside_urls(match.start()) and match.group(0) not in _ACRONYM_STOP:
            found.append((match.start(), match.group(0)))
    for match in _ASCII_WORD.finditer(text):
        word = match.group(0).rstrip(".")
        if word in TECH_TERMS and outside_urls(match.start()):
            found.append((match.start(), word))
    out: list[str] = []
    for _, entity in sorted(found, key=lambda pair: pair[0]):
        if entity and entity not in out and len(entity.encode("utf-8")) <= MAX_ENTITY_BYTES:
            out.append(entity)
    return out


def merge_entities(provided: list[str], content: str, mode: str = "merge") -> list[str]:
    """``provided`` (mode ``provided``), extracted (``auto``) or provided-then-extracted (``merge``), at most 50."""
    if mode == "provided":
        pool = list(provided)
    elif mode == "auto":
        pool = extract_entities(content)
    else:
        pool = [*provided, *extract_entities(content)]
    out: list[str] = []
    for entity in pool:
        if entity not in out:
            out.append(entity)
    return out[:MAX_ENTITIES]


def causal_cue(text: str) -> str | None:
    """The first causal cue in ``text`` (lower-cased English phrase or the Chinese word), or ``None``."""
    english = _CAUSAL_EN.search(text)
    chinese = _CAUSAL_ZH.search(text)
    if english and (not chinese or english.start() <= chinese.start()):
        return english.group(0).lower()
    return chinese.group(0) if chinese else None


def causal_sub_type(text: str) -> str:
    """``prevents`` / ``enables`` / ``causes`` for the text that holds the cue."""
    if _PREVENTS.search(text):
        return "prevents"
    if _ENABLES.search(text):
        return "enables"
    return "causes"


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """``|A ∩ B| / max(|A|, |B|)`` (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / max(len(a), len(b))
