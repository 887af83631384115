"""The source formats ``mnemon-ls import`` reads, by name, and their default places: :data:`SOURCE_NAMES` and
:data:`PLACES` (the one list the formats read them from, the help and the docs show), with :func:`places_help`.
A leaf: each format module (:mod:`.cursor`, ...) takes its places from here, and :mod:`.sources` finds the formats
by these names; loading it loads no format."""

from __future__ import annotations

#: Source names, in the order the help lists them.
SOURCE_NAMES = ("claude-code", "agents-md", "cursor", "copilot", "cline", "hermes")

#: The default places of each source, as shown (workspace-relative, or under ``~``; ``**/`` means any
#: subdirectory too). Each format's ``FORMAT.defaults`` and its ``locate`` follow this list.
PLACES: dict[str, tuple[str, ...]] = {
    "claude-code": ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/**/*.md",
                    "~/.claude/projects/<project>/memory/*.md"),
    "agents-md": ("AGENTS.md",),
    "cursor": (".cursor/rules/**/*.mdc", ".cursorrules"),
    "copilot": (".github/copilot-instructions.md", ".github/instructions/**/*.instructions.md"),
    "cline": ("memory-bank/*.md",),
    "hermes": ("~/.hermes/memories/USER.md", "~/.hermes/memories/MEMORY.md"),
}


#: What ``--from DIR`` reads under ``DIR`` first: the places relative to a workspace (or, for Hermes, to a Hermes
#: home such as a copy of ``~/.hermes``), as each format's ``layout`` gives them.
FROM_LAYOUT: dict[str, tuple[str, ...]] = {
    **{name: tuple(p for p in places if not p.startswith("~")) for name, places in PLACES.items()},
    "hermes": ("memories/USER.md", "memories/MEMORY.md"),
}


def direct_names(source: str) -> tuple[str, ...]:
    """The file names (glob patterns) ``--from DIR`` reads directly in ``DIR`` when none of
    :data:`FROM_LAYOUT` is there: the last part of each of the ``source``'s :data:`PLACES`, without repeats, so a
    ``DIR`` that is one of the places' directories (a copy of ``memory-bank/``, ``.cursor/rules/``, a Hermes
    ``memories/``) is read as such, and a ``DIR`` holding none of the source's files reads nothing (``agents-md``
    reads ``AGENTS.md`` only, never every ``*.md``). Raises :class:`KeyError` for an unknown ``source``."""
    return tuple(dict.fromkeys(place.rsplit("/", 1)[-1] for place in PLACES[source]))


def nested_names(source: str) -> frozenset[str]:
    """The :func:`direct_names` of ``source`` whose place reaches into subdirectories (``**/`` in :data:`PLACES`:
    ``*.mdc`` of ``.cursor/rules/**/*.mdc``): ``--from`` a copy of that directory reads its subdirectories too.
    Raises :class:`KeyError` for an unknown ``source``."""
    return frozenset(place.rsplit("/", 1)[-1] for place in PLACES[source] if "/**/" in place)


def looked_for(source: str) -> tuple[str, ...]:
    """What ``--from DIR`` looks for in ``DIR``, shown relative to it: :data:`FROM_LAYOUT` then
    :func:`direct_names`, without repeats (``("AGENTS.md",)`` for ``agents-md``)."""
    return tuple(dict.fromkeys((*FROM_LAYOUT[source], *direct_names(source))))


def places_help() -> str:
    """Every source with its default places (:data:`PLACES`), for the help of ``SOURCE``: ``claude-code
    (CLAUDE.md, ...), agents-md (AGENTS.md), ... or hermes (...)``."""
    shown = [f"{name} ({', '.join(PLACES[name])})" for name in SOURCE_NAMES]
    return ", ".join(shown[:-1]) + " or " + shown[-1]
