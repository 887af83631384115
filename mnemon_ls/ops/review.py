"""Memory where the code is (issue 24 item 5): the memories that cite a file (``citations.file``: the editor's
code lenses and hovers, grouped by the range each cites now), the memories that need a person's review
(``citations.review``: a citation whose lines changed or whose file is gone) and "Still true: re-anchor to the
current code" (``citations.reanchor``). Edit and Remove are each Source's own operations (``runtime.mutate``,
``records.edit``/``forget``, ``documents.update``/``archive``, ``spaces.forget``).

A memory is named by its Source and its side-file key (:mod:`mnemon_ls.citations.store`): ``runtime``
``memory:<sha256 of the entry>``, ``spaces`` ``<spaceId>/<itemId>``, ``documents`` ``<documentId>``,
``records`` ``<scope>/<recordId>``. Each memory shown is ``{source, key, id, label, title?, content, preview,
updatedAt, age}`` (``content``: the whole text of a MEMORY.md entry, which its Edit and Remove select by, of a
record or an item; a document's description; ``title``: a record's or a document's; ``preview``: title and
content on one line, at most :data:`PREVIEW_CHARS`; ``age``: whole days, ``"3d"``) plus the Source's ids
(``spaceId``, ``scope``); a key whose memory is no longer there (an entry edited by hand, a forgotten item) is
left out.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..errors import InvalidInput, MnemonError
from . import command_ids
from .base import Call, CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, Params, WorkspaceParams

#: Longest ``preview`` of a memory, in characters.
PREVIEW_CHARS = 160
#: The freshness states that need a person's review.
NEEDS_REVIEW = ("changed", "gone")
_LABELS = {"runtime": "MEMORY.md", "spaces": "Memory Space", "documents": "Document", "records": "Record"}
Source = Literal["runtime", "spaces", "documents", "records"]


class CitedFileParams(WorkspaceParams):
    """``mnemon/citations/file``: ``{workspace?, path, line?}``."""

    path: str = Field(description="the file: relative to the workspace, absolute, or a file: URI")
    line: int | None = Field(None, ge=1, strict=True, description="only the ranges holding this line (1-based)")


class ReviewParams(WorkspaceParams):
    """``mnemon/citations/review``: ``{workspace?}``."""


class ReanchorParams(WorkspaceParams):
    """``mnemon/citations/reanchor``: ``{workspace?, source, key}``."""

    source: Source = Field(description="the memory's Source: runtime (MEMORY.md), spaces, documents or records")
    key: str = Field(min_length=1, max_length=4200,
                     description="the memory's citation key, as citations.review and citations.file answer it")


class CitingArgs(Params):
    """Argument object of ``mnemon.server.showCitingMemories``: ``{uri, line?}`` (what a code lens runs)."""

    uri: str = Field(description="the cited workspace file (a file URI)")
    line: int | None = Field(None, ge=1, strict=True, description="only the memories citing this line (1-based)")


# ------------------------------------------------------------------ the memories behind the keys


class _Memories:
    """Looks up the memory behind each side-file key, each Source read at most once per call."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.now_ms = int(datetime.now(timezone.utc).timestamp() * 1000)
        self._entries: dict[str, Any] | None = None
        self._records_by_id: dict[str, Any] | None = None

    def describe(self, source: str, key: str) -> dict[str, Any] | None:
        """The memory ``key`` of ``source`` (module doc), or ``None`` when it is no longer there."""
        try:
            found = getattr(self, f"_{source}")(key)
        except MnemonError:
            return None
        if found is None:
            return None
        content = found.pop("content")
        title = found.get("title")
        preview = " ".join((f"{title}: {content}" if title and content else title or content).split())
        if len(preview) > PREVIEW_CHARS:
            preview = preview[:PREVIEW_CHARS - 1].rstrip() + "…"
        return {"source": source, "key": key, "label": _LABELS[source]} | found | {
            "content": content, "preview": preview, "age": self._age(found.get("updatedAt"))}

    def _age(self, when: Any) -> str:
        from ..runtime.snapshot import age_label

        if isinstance(when, int):
            when = datetime.fromtimestamp(when / 1000, tz=timezone.utc).isoformat()
        return age_label(when, self.now_ms) if isinstance(when, str) else "unknown"

    def _runtime(self, key: str) -> dict[str, Any] | None:
        from ..citations.store import runtime_key

        if self._entries is None:
            self._entries = {runtime_key(e.content): e for e in self.call.host.runtime.read().of("memory")}
        entry = self._entries.get(key)
        return None if entry is None else {"id": key, "content": entry.content, "updatedAt": entry.updated_at}

    def _spaces(self, key: str) -> dict[str, Any] | None:
        space_id, _, item_id = key.partition("/")
        item = self.call.host.spaces.get_item(space_id, item_id)
        if item is None:
            return None
        return {"id": item.id, "spaceId": space_id, "content": item.content, "updatedAt": item.created_at}

    def _documents(self, key: str) -> dict[str, Any] | None:
        if self._records_by_id is None:
            self._records_by_id = {e.record.id: e.record for e in self.call.host.documents.list("active").documents}
        record = self._records_by_id.get(key)
        if record is None:
            return None
        return {"id": record.id, "title": record.title, "content": record.description, "updatedAt": record.updated_at}

    def _records(self, key: str) -> dict[str, Any] | None:
        from .records import source

        scope, _, record_id = key.partition("/")
        record = source(self.call).get(record_id, scope)
        if record.status == "forgotten":
            return None
        return {"id": record.id, "scope": record.scope, "title": record.title, "content": record.content,
                "updatedAt": record.updated_at}


def _tables(call: Call) -> dict[str, dict[str, list[Any]]]:
    from ..citations.store import SOURCES

    return {source: call.host.citations.table(source) for source in SOURCES}


def _relative(call: Call, raw: str) -> str:
    """The workspace-relative POSIX path of ``raw`` (relative, absolute or a file URI); :class:`InvalidInput`
    naming ``path`` for a file outside the workspace."""
    import os

    from ..host import uri_to_path

    workspace = call.host.citations.workspace
    if workspace is None:
        raise InvalidInput("path", "needs a workspace folder: citations are relative to the workspace")
    if raw.startswith("file:") or os.path.isabs(raw):
        full = os.path.normpath(str(uri_to_path(raw, "path")))
    else:
        full = os.path.normpath(os.path.join(workspace, raw))
    for base in {os.path.abspath(workspace), os.path.realpath(workspace)}:
        for candidate in (full, os.path.realpath(full)):
            if candidate.startswith(base.rstrip(os.sep) + os.sep):
                return Path(os.path.relpath(candidate, base)).as_posix()
    raise InvalidInput("path", f"must be a file inside the workspace {workspace} (got {raw!r})")


# ------------------------------------------------------------------ runs


def _file(call: Call, p: CitedFileParams) -> dict[str, Any]:
    """``citations.file``: ``{path, ranges: [{startLine, endLine, memories: [memory + {freshness, cite}]}],
    count, text}``; a range is where the cited lines are now (a moved citation's ``movedTo``)."""
    path = _relative(call, p.path)
    memories = _Memories(call)
    citing = call.host.citations
    ranges: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for source, table in _tables(call).items():
        for key in sorted(table):
            for cite in citing.views(c for c in table[key] if c.path == path):
                where = cite.get("movedTo") or cite
                start, end = where["startLine"], where["endLine"]
                if p.line is not None and not start <= p.line <= end:
                    continue
                memory = memories.describe(source, key)
                if memory is not None:
                    ranges.setdefault((start, end), []).append(memory | {"freshness": cite["freshness"],
                                                                         "cite": cite})
    listed = [{"startLine": s, "endLine": e, "memories": found} for (s, e), found in sorted(ranges.items())]
    data = {"path": path, "ranges": listed, "count": len({(m["source"], m["key"]) for r in listed
                                                          for m in r["memories"]})}
    return data | {"text": _file_text(data, p.line)}


def _review(call: Call, _p: ReviewParams) -> dict[str, Any]:
    """``citations.review``: ``{memories: [memory + {cites: [citation with freshness]}], count}``, the memories
    with a citation ``changed`` or ``gone``, by Source then key."""
    memories = _Memories(call)
    citing = call.host.citations
    found = []
    for source, table in _tables(call).items():
        for key in sorted(table):
            views = citing.views(table[key])
            if any(v["freshness"] in NEEDS_REVIEW for v in views):
                memory = memories.describe(source, key)
                if memory is not None:
                    found.append(memory | {"cites": views})
    return {"memories": found, "count": len(found)}


def _reanchor(call: Call, p: ReanchorParams) -> dict[str, Any]:
    """``citations.reanchor``: each citation of the memory that moved goes to its new range; each that changed
    is hashed again as its lines are now (the range cut at the file's end); a gone or unreadable one is left
    as it is (``left``). Answers ``{source, key, cites, reanchored, left}``. :class:`InvalidInput` naming
    ``key`` when the memory has no citations or is no longer there (nothing written)."""
    from ..citations import freshness
    from ..citations.model import Citation, text_lines

    citing = call.host.citations
    cites = citing.of(p.source, p.key)
    if not cites:
        raise InvalidInput("key", f"no memory of {p.source} has citations under {p.key!r} (see citations.review)")
    if _Memories(call).describe(p.source, p.key) is None:
        raise InvalidInput("key", f"names a memory of {p.source} that is no longer there ({p.key!r})")
    anchored, left, count = [], [], 0
    for cite in cites:
        state = freshness.evaluate(citing.workspace, cite)
        new = cite
        if state["freshness"] == "moved":
            new = Citation(cite.path, state["movedTo"]["startLine"], state["movedTo"]["endLine"], cite.sha256,
                           cite.symbol)
        elif state["freshness"] == "changed":
            try:
                with open(Path(citing.workspace, *cite.path.split("/")), "rb") as handle:  # type: ignore[arg-type]
                    total = len(text_lines(handle.read()))
                if cite.start_line <= total:
                    new = citing.resolve([{"path": cite.path, "startLine": cite.start_line,
                                           "endLine": min(cite.end_line, total), "symbol": cite.symbol}])[0]
            except (OSError, ValueError, MnemonError):
                new = cite
        if new != cite:
            count += 1
        elif state["freshness"] != "fresh":
            left.append(cite)
        anchored.append(new)
    if count:
        citing.file(p.source).update({p.key: anchored})
    return {"source": p.source, "key": p.key, "cites": citing.views(citing.of(p.source, p.key)),
            "reanchored": count, "left": citing.views(left)}


# ------------------------------------------------------------------ text


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _memory_line(memory: dict[str, Any]) -> str:
    return f"{memory['label']} · {memory['age']} · {memory['freshness']}: {memory['preview']}"


def _file_text(data: dict[str, Any], line: int | None = None) -> str:
    """The memories citing a file (those citing ``line`` when given), as Markdown (what the code lens's command
    shows)."""
    if not data["ranges"]:
        return f"# {data['path']}\n\nNo memory cites {'this file' if line is None else f'line {line}'}."
    out = [f"# Memories citing {data['path']}"]
    for found in data["ranges"]:
        out.append(f"\n## {_lines(found['startLine'], found['endLine'])}\n")
        out += [f"- {_memory_line(m)} (`{m['source']}` `{m['key']}`)" for m in found["memories"]]
    return "\n".join(out)


def _review_text(data: dict[str, Any], *_args: Any) -> str:
    from .humantext import citation_text

    if not data["memories"]:
        return "No memory needs review: every citation is fresh or moved."
    out = [f"{data['count']} {'memory needs' if data['count'] == 1 else 'memories need'} review:"]
    for memory in data["memories"]:
        out.append(f"- {memory['label']} ({memory['age']}) {memory['preview']}\n  source={memory['source']} "
                   f"key={memory['key']}")
        out += [f"  cites {citation_text(c)}" for c in memory["cites"]]
    return "\n".join(out)


def _reanchor_text(data: dict[str, Any], *_args: Any) -> str:
    from .humantext import citation_text

    out = [f"Re-anchored {data['reanchored']} citation{'' if data['reanchored'] == 1 else 's'} of {data['source']} "
           f"{data['key']} to the current code."]
    out += [f"cites {citation_text(c)}" for c in data["cites"]]
    if data["left"]:
        out.append("Left as they are (the file is gone or cannot be read; edit or remove the memory): "
                   + ", ".join(citation_text(c) for c in data["left"]))
    return "\n".join(out)


def _cli_file_text(data: dict[str, Any], *_args: Any) -> str:
    return data["text"]


_TOOL = "mnemon_citations"
_TOOL_TEXT = ("Memory that cites code: action=review (default) lists memories whose cited code changed or is gone; "
              "action=file lists the memories citing one workspace file (path); action=reanchor (source, key from "
              "review) re-anchors a memory's citations to the code as it is now: only when the memory is still "
              "true of the changed code.")

OPERATIONS = (
    Operation(
        "citations.file", CitedFileParams, _file,
        "The memories citing one workspace file, by the range each cites now (code lenses, hovers).",
        text=_cli_file_text,
        lsp=LspMethod("mnemon/citations/file"),
        lsp_command=LspCommand(command_ids.SHOW_CITING_MEMORIES, CitingArgs,
                               "Show the memories citing a file (or one line of it), rendered and opened",
                               fields={"line": "line"}, file="path", render="citing", show=True,
                               failure="Show citing memories failed: "),
        mcp=McpTool(_TOOL, fields=("path", "line", "workspace"), action="file", required=("path",)),
        cli=CliCommand(("cited",), "list the memories citing a file, by cited range", (
            CliArg("path", dest="file", metavar="FILE"), CliArg("line", flag="--line")), text=_cli_file_text)),
    Operation(
        "citations.review", ReviewParams, _review,
        "The memories needing review: a citation whose lines changed or whose file is gone.",
        text=_review_text,
        lsp=LspMethod("mnemon/citations/review"),
        mcp=McpTool(_TOOL, _TOOL_TEXT, fields=("workspace",), action="review", default_action=True),
        cli=CliCommand(("review",), "list the memories whose cited code changed or is gone", text=_review_text)),
    Operation(
        "citations.reanchor", ReanchorParams, _reanchor,
        "Still true: re-anchor a memory's citations to the current code (moved: the new range; changed: the "
        "lines as they are now).", effect="write", text=_reanchor_text,
        lsp=LspMethod("mnemon/citations/reanchor"),
        mcp=McpTool(_TOOL, fields=("source", "key", "workspace"), action="reanchor", required=("source", "key")),
        cli=CliCommand(("reanchor",), "still true: re-anchor a memory's citations to the current code", (
            CliArg("source", dest="source_name", metavar="SOURCE"), CliArg("key", metavar="KEY")),
            text=_reanchor_text)),
)
