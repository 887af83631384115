"""Memory where the code is (issue 24 item 5): the memories that cite a file (``citations.file``: the editor's
code lenses and hovers, grouped by the range each cites now), the memories that need a person's review
(``citations.review``: a citation whose lines changed or whose file is gone, or a memory due for review by
``reviewAfterDays``, issue 24 item 6) and "Still true: re-anchor to the current code" (``citations.reanchor``,
which also restarts the memory's review clock). Edit and Remove are each Source's own operations (``runtime.mutate``,
``records.edit``/``forget``, ``documents.update``/``archive``, ``spaces.forget``).

A memory is named by its Source and its side-file key (:mod:`mnemon_ls.citations.store`): ``runtime``
``memory:<sha256 of the entry>`` (a USER.md entry, listed only when due for review: ``user:<sha256>``), ``spaces``
``<spaceId>/<itemId>``, ``documents`` ``<documentId>``, ``records`` ``<scope>/<recordId>``. Each memory shown is
``{source, key, id, label, title?, content, preview, updatedAt, age}`` (``content``: the whole text of a MEMORY.md
entry, of a record or an item; a document's description; ``title``: a record's or a document's; ``preview``: title and
content on one line, at most :data:`PREVIEW_CHARS`; ``age``: whole days, ``"3d"``; under ``secrets: redact`` or
``reject`` the preview, the title and every content are redacted, as a recall redacts what another program stored: a
Runtime entry's Edit and Remove select it by ``key``, which ``runtime.mutate`` takes instead of ``oldText``) plus the
Source's ids (``spaceId``, ``scope``; a runtime entry's ``target``); a key whose memory is no longer there (an entry
edited by hand, a forgotten item) is left out.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..citations.model import MAX_LINE, MAX_PATH_CHARS
from ..errors import InvalidInput, MnemonError, echo_repr
from . import command_ids
from .base import Call, CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, Params, WorkspaceParams
from .published import limits

#: Longest ``preview`` of a memory, in characters.
PREVIEW_CHARS = 160
#: Most Memory Space items of one space listed as due for review by one ``citations.review`` call (the longest
#: untouched first; the next are listed once these are confirmed, updated or recalled).
SPACE_ITEMS_PER_SPACE = 200
#: The freshness states that need a person's review.
NEEDS_REVIEW = ("changed", "gone")
_LABELS = {"runtime": "MEMORY.md", "spaces": "Memory Space", "documents": "Document", "records": "Record"}
Source = Literal["runtime", "spaces", "documents", "records"]


class CitedFileParams(WorkspaceParams):
    """``mnemon/citations/file``: ``{workspace?, path, line?}``."""

    path: str = Field(description="the file: relative to the workspace, absolute, or a file: URI",
                      json_schema_extra=limits(maxLength=MAX_PATH_CHARS))
    line: int | None = Field(None, ge=1, le=MAX_LINE, strict=True,
                             description="only the ranges holding this line (1-based)")


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
    line: int | None = Field(None, ge=1, le=MAX_LINE, strict=True,
                             description="only the memories citing this line (1-based)")


# ------------------------------------------------------------------ the memories behind the keys


class _Memories:
    """Looks up the memory behind each side-file key, each Source read at most once per call."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self.now_ms = int(datetime.now(timezone.utc).timestamp() * 1000)
        self._entries: dict[str, Any] | None = None
        self._records_by_id: dict[str, Any] | None = None
        #: Memory Space items already read by this call (``<spaceId>/<itemId>`` -> item; :func:`_due`).
        self.space_items: dict[str, Any] = {}

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
        shown = content
        if getattr(self.call.host.settings, "secrets", "redact") != "allow":  # what another program stored
            from ..redact import redact_text

            shown = redact_text(content)[0] if content else content
            title = redact_text(title)[0] if title else title
            content = shown  # a runtime entry's Edit and Remove select it by its key (runtime.mutate ``key``)
        preview = " ".join((f"{title}: {shown}" if title and shown else title or shown).split())
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
        from ..runtime.ops import entry_key

        if self._entries is None:
            state = self.call.host.runtime.read()
            self._entries = {entry_key(target, e.content): e for target in ("user", "memory") for e in state.of(target)}
        entry = self._entries.get(key)
        return None if entry is None else {"id": key, "target": entry.target, "content": entry.content,
                                           "updatedAt": entry.updated_at}

    def _spaces(self, key: str) -> dict[str, Any] | None:
        space_id, _, item_id = key.partition("/")
        item = self.space_items.get(key) or self.call.host.spaces.get_item(space_id, item_id)
        if item is None:
            return None
        return {"id": item.id, "spaceId": space_id, "content": item.content,
                "updatedAt": item.updated_at or item.created_at}

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
    naming ``path`` for a path past the one rule of a path (:func:`~mnemon_ls.citations.model.check_path`) or a
    file outside the workspace."""
    import os

    from ..citations.model import check_path
    from ..folders import uri_to_path

    check_path(raw, "path")
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
    raise InvalidInput("path", f"must be a file inside the workspace {workspace} (got {echo_repr(raw)})")


# ------------------------------------------------------------------ runs


def _file(call: Call, p: CitedFileParams) -> dict[str, Any]:
    """``citations.file``: ``{path, pathKind, ranges: [{startLine, endLine, memories: [memory + {freshness, cite,
    renamedFrom?}]}], count, text}``; a range is where the cited lines are now (a moved citation's ``movedTo``);
    ``pathKind`` is ``file``, ``directory`` (citations name files: none is listed, the text says so) or ``missing``
    (nothing at the path in the workspace: the memories still citing it are listed, the text says it is gone).
    A memory still citing the path this file had before git renamed it (:mod:`mnemon_ls.citations.renames`: the
    old path is missing and git says it became ``path``) is listed too, with ``renamedFrom``: the old path it
    cites (its ``cite`` says ``renamed`` with ``renamedTo``, or ``changed`` when its lines are nowhere here)."""
    path = _relative(call, p.path)
    memories = _Memories(call)
    citing = call.host.citations
    cites_here = _renamed_here(call, path)
    ranges: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for source, table in _tables(call).items():
        for key in sorted(table):
            for cite in citing.views(c for c in table[key] if c.path == path or cites_here(c.path)):
                where = cite.get("movedTo") or cite
                start, end = where["startLine"], where["endLine"]
                if p.line is not None and not start <= p.line <= end:
                    continue
                memory = memories.describe(source, key)
                if memory is not None:
                    old = {"renamedFrom": cite["path"]} if cite["path"] != path else {}
                    ranges.setdefault((start, end), []).append(memory | {"freshness": cite["freshness"],
                                                                         "cite": cite} | old)
    listed = [{"startLine": s, "endLine": e, "memories": found} for (s, e), found in sorted(ranges.items())]
    data = {"path": path, "pathKind": _path_kind(call, path), "ranges": listed,
            "count": len({(m["source"], m["key"]) for r in listed for m in r["memories"]})}
    return data | {"text": _file_text(data, p.line)}


def _path_kind(call: Call, path: str) -> str:
    """What is at the workspace-relative ``path``: ``directory``, ``missing`` (nothing, or a link to nothing) or
    ``file`` (anything else, a file or a link to one)."""
    import os

    full = os.path.join(str(call.host.citations.workspace), *path.split("/"))
    return "directory" if os.path.isdir(full) else "file" if os.path.exists(full) else "missing"


def _renamed_here(call: Call, path: str) -> Any:
    """A function ``cited path -> bool``: whether a citation of that other workspace-relative path cites ``path``
    under the name it had before git renamed it (the cited path is missing from the working tree and
    :func:`~mnemon_ls.citations.renames.renamed_to` leads to ``path``). Each path is looked at once; a present
    one costs one ``lstat`` and no git (the rename table is built only when a cited path is missing)."""
    import os

    from ..citations.renames import renamed_to

    workspace = call.host.citations.workspace
    known: dict[str, bool] = {}

    def cites_here(cited: str) -> bool:
        if cited == path or workspace is None:
            return False
        if cited not in known:
            missing = not os.path.lexists(os.path.join(workspace, *cited.split("/")))
            known[cited] = missing and renamed_to(Path(workspace), cited) == path
        return known[cited]
    return cites_here


def _review(call: Call, _p: ReviewParams) -> dict[str, Any]:
    """``citations.review``: ``{memories: [memory + {cites: [citation with freshness], reasons, reviewedAt?}],
    count}``, by Source then key: each memory with a citation ``changed`` or ``gone`` (those states among its
    ``reasons``) and each runtime entry, Memory Space item (bounded per space), Document and workspace record due
    for review (``"review-due"``: neither updated, recalled nor confirmed for ``reviewAfterDays``; :func:`_due`),
    whether or not it has citations (``cites`` may be ``[]``). ``reviewDueSince``: when a due memory became due
    (ISO-8601 UTC: its latest time plus ``reviewAfterDays``); ``reviewedAt``: when a person last confirmed it
    (ISO-8601 UTC), when they have."""
    from ..citations.reviewed import ReviewedFile
    from ..citations.store import SOURCES

    memories = _Memories(call)
    citing = call.host.citations
    tables = _tables(call)
    confirmed = ReviewedFile(call.host.root).read()
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for source, table in tables.items():
        for key in sorted(table):
            views = citing.views(table[key])
            stale = sorted({v["freshness"] for v in views if v["freshness"] in NEEDS_REVIEW})
            if stale:
                memory = memories.describe(source, key)
                if memory is not None:
                    found[(source, key)] = memory | {"cites": views, "reasons": stale}
    for source, key, since in _due(call, confirmed, memories.space_items):
        since_iso = datetime.fromtimestamp(since / 1000, tz=timezone.utc).isoformat()
        if (source, key) in found:
            found[(source, key)]["reasons"].append("review-due")
            found[(source, key)]["reviewDueSince"] = since_iso
            continue
        memory = memories.describe(source, key)
        if memory is not None:
            found[(source, key)] = memory | {"cites": citing.views(tables[source].get(key, [])),
                                             "reasons": ["review-due"], "reviewDueSince": since_iso}
    listed = sorted(found.values(), key=lambda m: (SOURCES.index(m["source"]), m["key"]))
    for memory in listed:
        when = confirmed.get(memory["source"], {}).get(memory["key"])
        if when is not None:
            memory["reviewedAt"] = datetime.fromtimestamp(when / 1000, tz=timezone.utc).isoformat()
    return {"memories": listed, "count": len(listed)}


def _due(call: Call, confirmed: dict[str, dict[str, int]],
         space_items: dict[str, Any] | None = None) -> list[tuple[str, str, int]]:
    """``(source, key, since)`` (``since``: when it became due, epoch ms) of each runtime entry (USER.md and
    MEMORY.md), active Document and workspace record (not a pending proposal, not forgotten) due for review now
    (:func:`mnemon_ls.citations.review.review_due` of its updated time and its confirmation), and of the Memory Space
    items due (the later of updated and last accessed, and the confirmation) among at most :data:`SPACE_ITEMS_PER_SPACE`
    (plus the space's confirmed items) per active native space: one SQL query on the store's time columns per space, the
    longest untouched first (:meth:`~mnemon_ls.spaces.service_recall.SpacesRecall.review_candidates`; a space may hold
    100,000 items, so a call never scans them all; third-party spaces are not scanned, their recall results still carry
    ``review: "due"``). The due space items go into ``space_items`` (key -> item) when given, so that they are not read
    again. ``[]`` when ``reviewAfterDays`` is 0."""
    from ..citations.review import DAY_MS, last_touched, review_due
    from ..runtime.ops import entry_key
    from .records import source as records_source

    days = call.host.settings.review_after_days
    if not days:
        return []
    now = call.host.now()
    due: list[tuple[str, str, int]] = []

    def check(source: str, key: str, updated_at: Any, recalled_at: Any = None) -> bool:
        reviewed = confirmed.get(source, {}).get(key)
        if not review_due(updated_at, recalled_at, now, days, reviewed):
            return False
        latest = last_touched(updated_at, recalled_at, now, reviewed)
        assert latest is not None  # (review_due found a time)
        due.append((source, key, latest + days * DAY_MS))
        return True

    state = call.host.runtime.read()
    for target in ("user", "memory"):
        for entry in state.of(target):
            check("runtime", entry_key(target, entry.content), entry.updated_at)
    for listed in call.host.documents.list("active").documents:
        check("documents", listed.record.id, listed.record.updated_at)
    spaces_confirmed = confirmed.get("spaces", {})
    before = (now - timedelta(days=days)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        candidates = call.host.spaces.review_candidates(before, SPACE_ITEMS_PER_SPACE + len(spaces_confirmed))
    except MnemonError:
        candidates = []  # no readable registry: nothing of that Source to list now
    per_space: dict[str, int] = {}
    for space_id, item in candidates:
        key = f"{space_id}/{item.id}"
        if per_space.get(space_id, 0) < SPACE_ITEMS_PER_SPACE and check(
                "spaces", key, item.updated_at or item.created_at, item.accessed_at):
            per_space[space_id] = per_space.get(space_id, 0) + 1
            if space_items is not None:
                space_items[key] = item
    try:
        records = records_source(call).list(limit=10000)
    except MnemonError:
        records = []  # no records home here (no workspace): nothing of that Source to review
    for record in records:
        if not record.is_proposal:
            check("records", f"{record.scope}/{record.id}", record.updated_at)
    return due


def _reanchor(call: Call, p: ReanchorParams) -> dict[str, Any]:
    """``citations.reanchor`` ("Still true"): each citation of the memory that moved goes to its new range; each
    that changed is hashed again as its lines are now (the range cut at the file's end); a gone or unreadable one
    is left as it is (``left``). Then records that a person confirmed the memory now
    (:mod:`mnemon_ls.citations.reviewed`), which restarts its review clock (``reviewAfterDays``); a memory without
    citations is only confirmed. Answers ``{source, key, cites, reanchored, left, reviewedAt, nextReviewDays,
    keptDamaged?}`` (``reviewedAt`` ISO-8601 UTC; ``nextReviewDays`` the ``reviewAfterDays`` setting, ``0`` when
    review is off; ``keptDamaged`` the copy of a damaged ``reviewed.json`` kept before it was written anew).
    :class:`InvalidInput` naming ``key`` when it names no memory of ``source``, and
    :class:`~mnemon_ls.errors.UnreadableStore` when ``reviewed.json`` must not be written over (a newer version,
    a link, a directory): nothing written."""
    from ..citations import freshness
    from ..citations.model import text_lines
    from ..citations.reviewed import ReviewedFile

    citing = call.host.citations
    cites = citing.of(p.source, p.key)
    if _Memories(call).describe(p.source, p.key) is None:
        raise InvalidInput("key", f"names no memory of {p.source} ({echo_repr(p.key)}; `review` lists the keys)")
    reviewed = ReviewedFile(call.host.root)
    reviewed.check_writable()  # before any citation moves: a refused confirmation changes nothing
    anchored, left, count = [], [], 0
    for cite in cites:
        state = freshness.evaluate(citing.workspace, cite)
        new = cite
        if state["freshness"] in ("moved", "renamed"):
            new = freshness.reanchored(citing.workspace, cite)
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
    now = call.host.now()
    kept = reviewed.confirm(p.source, p.key, int(now.timestamp() * 1000))
    answer = {"source": p.source, "key": p.key, "cites": citing.views(citing.of(p.source, p.key)),
              "reanchored": count, "left": citing.views(left),
              "reviewedAt": now.astimezone(timezone.utc).isoformat(),
              "nextReviewDays": call.host.settings.review_after_days}
    if kept is not None:
        answer["keptDamaged"] = kept
    return answer


# ------------------------------------------------------------------ text


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _memory_line(memory: dict[str, Any]) -> str:
    return f"{memory['label']} · {memory['age']} · {memory['freshness']}: {memory['preview']}"


def _file_text(data: dict[str, Any], line: int | None = None) -> str:
    """The memories citing a file (those citing ``line`` when given), as Markdown (what the code lens's command
    shows)."""
    kind = data.get("pathKind")
    if kind == "directory":
        return (f"# {data['path']}\n\n{data['path']} is a directory: citations name files, so give a file in it "
                "(a relative path is taken from the workspace; on the command line from the current directory "
                "inside it).")
    if not data["ranges"]:
        what = "this file" if line is None else f"line {line}"
        if kind == "missing":
            return (f"# {data['path']}\n\nNo memory cites {what}: {data['path']} does not exist in the workspace "
                    "(a relative path is taken from the workspace; on the command line from the current directory "
                    "inside it).")
        return f"# {data['path']}\n\nNo memory cites {what}."
    out = [f"# Memories citing {data['path']}"]
    if kind == "missing":
        out.append(f"\n{data['path']} no longer exists in the workspace: these memories cite it still.")
    for found in data["ranges"]:
        out.append(f"\n## {_lines(found['startLine'], found['endLine'])}\n")
        out += [f"- {_memory_line(m)}{_old_path(m)} (`{m['source']}` `{m['key']}`)" for m in found["memories"]]
    return "\n".join(out)


def _old_path(memory: dict[str, Any]) -> str:
    """`` (cites the old path `a.py`: git renamed it to this file)`` for a memory citing the file by the name it had
    before a rename (``renamedFrom``), else ``""``."""
    old = memory.get("renamedFrom")
    return f" (cites the old path `{old}`: git renamed it to this file)" if old else ""


def _review_text(data: dict[str, Any], *_args: Any) -> str:
    from .humantext import citation_text

    if not data["memories"]:
        return "No memory needs review: every citation is fresh or moved, and no memory is due for review."
    out = [f"{data['count']} {'memory needs' if data['count'] == 1 else 'memories need'} review:"]
    for memory in data["memories"]:
        out.append(f"- {memory['label']} ({memory['age']}) {memory['preview']}\n  why: {_reasons_text(memory)}\n"
                   f"  source={memory['source']} key={memory['key']}")
        out += [f"  cites {citation_text(c)}" for c in memory["cites"]]
    return "\n".join(out)


def _reasons_text(memory: dict[str, Any]) -> str:
    """Why a memory is listed for review, in words."""
    since = str(memory.get("reviewDueSince") or "")[:10]
    said = {"changed": "cited code changed", "gone": "cited file gone",
            "review-due": "not updated or confirmed for reviewAfterDays" + (f", due since {since}" if since else "")}
    return "; ".join(said.get(r, r) for r in memory.get("reasons", ()))


def _reanchor_text(data: dict[str, Any], *_args: Any) -> str:
    from .humantext import citation_text

    out = []
    if data["cites"]:
        out.append(f"Re-anchored {data['reanchored']} citation{'' if data['reanchored'] == 1 else 's'} of "
                   f"{data['source']} {data['key']} to the current code.")
        out += [f"cites {citation_text(c)}" for c in data["cites"]]
    else:
        out.append(f"{data['source']} {data['key']} has no citations to re-anchor.")
    if data["left"]:
        out.append("Left as they are (the file is gone or cannot be read; edit or remove the memory): "
                   + ", ".join(citation_text(c) for c in data["left"]))
    days = data.get("nextReviewDays")
    if days:
        out.append(f"Confirmed still true: due for review again in {days} days unless updated or recalled first.")
    if data.get("keptDamaged"):
        out.append(f"The damaged confirmation file was kept at {data['keptDamaged']} and written anew.")
    return "\n".join(out)


def _cli_file_text(data: dict[str, Any], *_args: Any) -> str:
    return data["text"]


#: The CLI help of ``cited FILE``.
_CITED_FILE_HELP = ("the file: relative to the current directory when run inside the workspace, else to the "
                    "workspace; absolute; or a file: URI (a directory, or a path where nothing is, is said so)")

_TOOL = "mnemon_citations"
_TOOL_TEXT = ("Memory that cites code: action=review (default) lists memories whose cited code changed or is gone, "
              "or that are due for review (not updated or confirmed for reviewAfterDays); "
              "action=file lists the memories citing one workspace file (path); action=reanchor (source, key from "
              "review) re-anchors a memory's citations to the code as it is now and restarts its review clock: only "
              "when the memory is still true.")

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
        cli=CliCommand(("cited",), "list the memories citing a file, by cited range (FILE relative to the current "
                       "directory inside the workspace, else to the workspace)", (
            CliArg("path", dest="file", metavar="FILE", path="in-workspace", help=_CITED_FILE_HELP),
            CliArg("line", flag="--line")), text=_cli_file_text)),
    Operation(
        "citations.review", ReviewParams, _review,
        "The memories needing review: a citation whose lines changed or whose file is gone, or not updated or "
        "confirmed for reviewAfterDays.",
        text=_review_text,
        lsp=LspMethod("mnemon/citations/review"),
        mcp=McpTool(_TOOL, _TOOL_TEXT, fields=("workspace",), action="review", default_action=True),
        cli=CliCommand(("review",), "list the memories whose cited code changed or is gone, or due for review",
                       text=_review_text)),
    Operation(
        "citations.reanchor", ReanchorParams, _reanchor,
        "Still true: re-anchor a memory's citations to the current code (moved: the new range; renamed: the "
        "file git says it became; changed: the lines as they are now) and restart its review clock.", effect="write",
        text=_reanchor_text,
        lsp=LspMethod("mnemon/citations/reanchor"),
        mcp=McpTool(_TOOL, fields=("source", "key", "workspace"), action="reanchor", required=("source", "key")),
        cli=CliCommand(("reanchor",),
                       "still true: re-anchor a memory's citations to the current code, restart its review clock", (
            CliArg("source", dest="source_name", metavar="SOURCE"), CliArg("key", metavar="KEY")),
            text=_reanchor_text)),
)
