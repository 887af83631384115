"""The import plan (the dry run) and its application.

:func:`build_plan` reads the source files (:mod:`.reading`: refusals are listed, never fatal), splits them
into items (the format module), redacts each item's text (:func:`mnemon_ls.redact.redact_text`), skips what
was imported before (:mod:`.ledger`), what a person rejected as an import proposal (``mnemon_import_propose``)
and exact or near duplicates (near: equal :func:`~mnemon_ls.runtime.ops.similarity_key`, or the same set of words)
of runtime memory or of an earlier item of the same run (asked first: a second copy is named a duplicate of the
first, even when its text was imported before), routes the rest
(:func:`.classify.route`) and applies the runtime budget: an entry that would take USER.md or MEMORY.md past
its limit goes to the active Memory Space instead. The plan carries the sha256 of every file it read.

A dry run saves the plan's file digests as ``state/import-plans/<source>-<16 hex>.json`` (the only thing a
dry run writes). :func:`apply` refuses (:class:`~mnemon_ls.errors.RevisionConflict` naming the file, nothing
written) when a file changed, appeared or went away since that dry run, or since the plan it just built;
then writes each item through the Sources' own paths (:meth:`~mnemon_ls.host.WorkspaceHost.mutate_runtime`,
``documents.create``, ``spaces.remember``), appending each to the ledger after its write. An item a Source
refuses (its rule broken: a Document over ``documents.maxBodyBytes``, the active Documents full, ...) is listed
in ``refusedItems`` with the field and the rule, recorded in the ledger as refused, and the import goes on with
the rest (``status`` ``partly-imported``); a later import tries it again and says it was refused before. The
plan marks an item whose refusal is certain up front (``refusal``): it runs the checks of the item's write without
writing (:meth:`Router.refusal`), so the dry run names the items the import will refuse, with the same field and
rule (a capacity refusal worded by :func:`capacity_rule` in both)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .. import fsio
from ..errors import EXIT_INVALID, EXIT_REJECTED, InvalidInput, MnemonError, RevisionConflict, echo_repr, echo_value
from ..records.model import content_hash
from ..redact import redact_text
from ..roots_checks import path_error
from ..runtime.model import DELIMITER_BYTES, PROJECTION_FILES, match_key, normalize_text, utf8_len
from ..runtime.ops import similarity_key
from ..settings import INSTEAD_WORKSPACE, own_home_path
from . import classify, formats, ledger, places, sources
from .found import Found, read_all
from .reading import Item, file_digest, item_name

if TYPE_CHECKING:
    from ..host import WorkspaceHost

_WORDS = re.compile(r"\w+")


def _words_key(text: str) -> str:
    words = sorted(set(w.lower() for w in _WORDS.findall(text)))
    return " ".join(words) if len(words) >= 4 else ""


def plan_path(root: Path, source: str, from_path: str | None) -> Path:
    """Where the dry run of ``source`` (read from ``from_path``, or the default places) keeps its digests."""
    tag = hashlib.sha256((from_path or "").encode("utf-8")).hexdigest()[:16]
    return root / "state" / "import-plans" / f"{source}-{tag}.json"


def _space_target(host: "WorkspaceHost", space_id: str | None) -> tuple[str | None, str | None]:
    """``(space id, None)`` of the space that takes overflow, or ``(None, why not)``."""
    if not (host.root / "data").is_dir() and space_id is None:
        return None, ("there is no Memory Space yet: create one (`mnemon-ls space create --name NAME --description TEXT"
                      " --active`) or name one with --space")
    try:
        state = host.spaces.state()
    except Exception as exc:  # noqa: BLE001 - the reason is shown; nothing is written
        return None, f"the Memory Spaces cannot be read ({exc})"
    if space_id is not None:
        for s in state.all:
            if s.id == space_id or s.name == space_id:
                return s.id, None
        raise InvalidInput("spaceId", f"no Memory Space {echo_repr(space_id)} (see `mnemon-ls space list`)")
    active = [s for s in state.all if s.active]
    if len(active) == 1:
        return active[0].id, None
    return None, (f"{len(active)} Memory Spaces are active; a target needs exactly one: activate one or name it "
                  "with --space")


def _rejected(host: "WorkspaceHost") -> set[str]:
    """Content hashes of the import proposals (records tagged ``import``, project scope) a person rejected:
    :mod:`mnemon_ls.ops.imports`' ``mnemon_import_propose`` files them, and a rejected one is not imported.
    Unreadable records count as none rejected."""
    if host.workspace is None:
        return set()
    try:
        records = host.records.read("project")
    except (MnemonError, OSError):
        return set()
    return {r.content_hash for r in records.values() if "import" in r.tags and r.governance.verification == "rejected"}


def find(host: "WorkspaceHost", source: str, from_path: str | None = None, *,
         env: Mapping[str, str] | None = None, allow_outside: bool = False) -> Found:
    """Read the files of ``source`` (from ``from_path``, or its default places in ``host``'s workspace and the
    home directory of ``env``, default ``os.environ``) and split them into items; a refused file is listed, never
    fatal. The files they import are read after each (:func:`.found.read_all`; one outside the repository and the
    Claude home only with ``allow_outside``, else listed as needing approval: :mod:`.outside`). Raises
    :class:`InvalidInput` naming
    ``source`` (unknown), ``from`` (missing, holding NUL, or a directory holding none of the source's files:
    :func:`.places.looked_for`) or ``workspace`` (none, and no ``from_path``)."""
    import os

    if source not in sources.SOURCE_NAMES:
        raise InvalidInput("source", f"must be one of {', '.join(sources.SOURCE_NAMES)} (got "
                                     f"{echo_repr(source)})")
    fmt = sources.get(source)
    env = dict(os.environ if env is None else env)
    if from_path is not None:
        if "\x00" in from_path:  # os.lstat would raise ValueError, which no surface words
            raise InvalidInput("from", f"must not contain NUL (got {echo_repr(from_path)})")
        path = Path(own_home_path(from_path, "from", INSTEAD_WORKSPACE))  # ~name (another user's home) is refused
        if not path.is_absolute():
            path = (host.workspace or Path.cwd()) / path
        try:
            os.lstat(path)
        except FileNotFoundError:
            raise InvalidInput("from", f"{echo_value(str(path))} does not exist") from None
        except OSError as exc:
            raise path_error(exc, path, "from") from None
        located = formats.locate_from(fmt, path)
        if not located:  # a directory holding none of the source's files: say where it looked
            raise InvalidInput("from", f"{echo_value(str(path))} holds no file {source} reads: looked for "
                                       f"{', '.join(places.looked_for(source))} in it")
    else:
        if host.workspace is None:
            raise InvalidInput("workspace", "is required: the default places are in a workspace")
        located = fmt.locate(host.workspace, env)
    return read_all(fmt, located, env, workspace=host.workspace, allow_outside=allow_outside)


def readable(host: "WorkspaceHost", source: str, from_path: str | None = None, *,
             env: Mapping[str, str] | None = None, allow_outside: bool = False) -> Found:
    """:func:`find`, refused when files were found but none could be read. Reads only: :func:`apply` calls it
    before it takes the imports lock (whose marker is written under ``state/``), so bad input changes nothing on
    disk. Raises :class:`InvalidInput` naming ``source``, ``from`` (missing, ``~name``, or every file refused:
    ``data.refused``) or ``workspace``."""
    found = find(host, source, from_path, env=env, allow_outside=allow_outside)
    if found.refused and not found.files:
        first = found.refused[0]
        raise InvalidInput("from", f"no file could be read: {first['path']} {first['reason']}", refused=found.refused)
    return found


#: The count of each reason to skip an item (``counts`` of a plan).
SKIP_COUNTS = {"already-imported": "alreadyImported", "rejected-in-review": "rejected",
               "exact-duplicate": "exactDuplicates", "near-duplicate": "nearDuplicates",
               "temporary-progress": "temporaryProgress"}


def clean(raw: Item) -> tuple[str, list[str]] | None:
    """``(text, redacted kinds)`` of ``raw``: an entry's text normalised, then redacted; None when nothing is
    left."""
    text, found = redact_text(raw.text if raw.kind == "section" else normalize_text(raw.text))
    return (text, sorted({m.kind for m in found})) if text.strip() else None


@dataclass(frozen=True)
class Decision:
    """What becomes of one item: its redacted ``text``, ledger ``key``, the ``redacted`` kinds, and either
    ``destination`` and ``reason`` (imported; ``size`` its UTF-8 bytes) or ``skip`` (``{why, of}``). ``refusal``
    (``{code, field, rule}``): the destination's Source will refuse it, known up front (:func:`refusal_of`);
    ``refused_before``: when an earlier import recorded it as refused (ISO 8601); ``bare_key``: the ledger key of
    its text as the file has it, when the import led it with a heading or scope (:mod:`.ledger`)."""

    text: str
    key: str
    redacted: list[str]
    destination: str | None = None
    reason: str = ""
    size: int = 0
    skip: dict[str, str] | None = None
    refusal: dict[str, str] | None = None
    refused_before: str | None = None
    bare_key: str | None = None


class Router:
    """The state the items of one plan are decided against, in order (module doc): runtime memory's entries
    and bytes (the budget), the ledger, the rejected proposals, the items decided before (duplicates), and the
    Memory Space that takes overflow (``space_id``, or ``space_problem`` saying why there is none). One router
    decides the items of several sources as one plan (an editor's scan of every source). ``counts`` adds up
    the decisions (the plan's ``counts`` without ``refusedFiles``)."""

    def __init__(self, host: "WorkspaceHost", space_id: str | None = None) -> None:
        state = host.runtime.read()
        self.limits = host.settings.runtime_memory
        self.used = {t: state.used[t] for t in ("user", "memory")}
        self.count = {t: len(state.of(t)) for t in ("user", "memory")}
        self.known_exact = {match_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory") for e in state.of(t)}
        self.known_near = {similarity_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory")
                           for e in state.of(t)}
        self.known_near.update({_words_key(e.content): PROJECTION_FILES[t] for t in ("user", "memory")
                                for e in state.of(t)})
        self.known_near.pop("", None)
        self.host = host
        self.imported = ledger.read_keys(host.root)
        self.imported_bare = ledger.read_bare_keys(host.root)
        self.refused_before = ledger.read_refused(host.root)
        self._document_hashes: dict[str, str] | None = None  # contentHash -> the Document (read on first use)
        self._documents_planned = 0  # bytes of the documents this plan writes before the next one
        self.run_exact: dict[str, str] = {}  # the items of this run: key -> "<file name>: <title>"
        self.run_near: dict[str, str] = {}
        self.run_bare_exact: dict[str, str] = {}  # the bare texts of the entries led by a heading or scope
        self.run_bare_near: dict[str, str] = {}
        self.rejected = _rejected(host)
        self.space_id, self.space_problem = _space_target(host, space_id)
        self.counts = {"user": 0, "memory": 0, "document": 0, "space": 0, "alreadyImported": 0,
                       "exactDuplicates": 0, "nearDuplicates": 0, "rejected": 0, "temporaryProgress": 0,
                       "refusedItems": 0}

    def decide(self, raw: Item, cleaned: tuple[str, list[str]] | None = None, *, source: str) -> Decision | None:
        """The :class:`Decision` of ``raw``, an item of ``source`` (``cleaned``: its :func:`clean` when the caller
        has it; None when nothing is left of its text after redaction); an item to write takes its bytes from the
        budget unless it is refused (:meth:`refusal`), and every item is known to the items after it."""
        cleaned = cleaned or clean(raw)
        if cleaned is None:
            return None
        text, redacted = cleaned
        key = ledger.item_key(text)
        exact, near = match_key(text), similarity_key(text)
        words = _words_key(text)
        # An item of this run first: the second copy is a duplicate of the first (named), even when the text was
        # also imported before; then the ledger, the rejected proposals and runtime memory.
        skip = raw.extra.get("skip")  # the format says why (temporary progress: a Cline memory bank's progress.md)
        if skip is not None:
            self.counts[SKIP_COUNTS[skip["why"]]] += 1
            return Decision(text, key, redacted, skip=dict(skip))
        # An entry the import led with its heading or scope (``extra["bare"]``: the text as the file has it) is also
        # a duplicate when its bare text is an item or entry as it stands (the same bullet without a heading, in
        # another file, or imported before the heading was added); two entries whose bare texts are equal under
        # different headings both stay (they say different things).
        bare_text = raw.extra.get("bare")
        bare_cleaned = clean(Item(bare_text, raw.title, raw.path)) if bare_text else None
        bare = (match_key(bare_cleaned[0]), similarity_key(bare_cleaned[0]), _words_key(bare_cleaned[0])) \
            if bare_cleaned else None
        skip = self._duplicate(self.run_exact, self.run_near, exact, near, words) \
            or (bare and self._duplicate(self.run_exact, self.run_near, *bare)) \
            or self._duplicate(self.run_bare_exact, self.run_bare_near, exact, near, words)
        bare_key = ledger.item_key(bare_cleaned[0]) if bare_cleaned else None
        if skip is None and (key in self.imported or key in self.imported_bare or bare_key in self.imported):
            skip = {"why": "already-imported", "of": "an earlier import"}
        elif skip is None and self.rejected and content_hash(text) in self.rejected:
            skip = {"why": "rejected-in-review", "of": "an import proposal a person rejected"}
        elif skip is None:
            skip = self._duplicate(self.known_exact, self.known_near, exact, near, words) \
                or (bare and self._duplicate(self.known_exact, self.known_near, *bare))
        here = f"{Path(raw.path).name}: {raw.title}"
        self._remember(self.run_exact, self.run_near, (exact, near, words), here)
        if bare:
            self._remember(self.run_bare_exact, self.run_bare_near, bare, here)
        if skip is not None:
            self.counts[SKIP_COUNTS[skip["why"]]] += 1
            return Decision(text, key, redacted, skip=skip)
        destination, reason = classify.route(raw)
        if destination == "document":
            same = self._same_document(text)
            if same is not None:
                skip = {"why": "exact-duplicate", "of": same}
                self.counts[SKIP_COUNTS["exact-duplicate"]] += 1
                return Decision(text, key, redacted, skip=skip)
        size = utf8_len(text)
        refusal = None
        if destination in ("user", "memory"):
            add = size + (DELIMITER_BYTES if self.count[destination] else 0)
            limit = self.limits.limit_for(destination)
            if self.used[destination] + add > limit:
                reason = (f"{reason}, but {PROJECTION_FILES[destination]} has "
                          f"{max(0, limit - self.used[destination])} of {limit} bytes left (it needs {add}): "
                          "to the active Memory Space")
                destination = "space"
            else:
                refusal = self.refusal(destination, text, raw.path, raw.title, source)
                if refusal is None:  # a refused entry is not written: it takes nothing from the budget
                    self.used[destination] += add
                    self.count[destination] += 1
        if destination in ("document", "space"):
            refusal = self.refusal(destination, text, raw.path, raw.title, source)
        self.counts["refusedItems" if refusal else destination] += 1
        return Decision(text, key, redacted, destination, reason, size, refusal=refusal, bare_key=bare_key,
                        refused_before=self.refused_before.get(key))

    def _same_document(self, text: str) -> str | None:
        """``"Document <id> (<title>)"`` when a Document, active or archived, already has the body ``text`` would
        be stored as (its ``contentHash``), else None. The ledger alone kept a section from being imported twice:
        with it emptied or cut short (a hand edit, a restore), every import made one more copy of each Document,
        while runtime entries stayed exact duplicates. Reads ``documents/index.json`` once (writes nothing)."""
        from ..documents.model import sha256_hex, validate_content

        if self._document_hashes is None:
            self._document_hashes = {}
            for record in self.host.documents.index.view().records:
                self._document_hashes.setdefault(record.content_hash, f"Document {record.id} ({record.title})")
        try:
            body = validate_content(text, self.host.documents.max_body_bytes)
        except InvalidInput:
            return None  # refused as it is (_document_refusal)
        return self._document_hashes.get(sha256_hex(body))

    @staticmethod
    def _remember(exacts: dict[str, str], nears: dict[str, str], keys: tuple[str, str, str], here: str) -> None:
        """Know the keys (exact, near, words) of an item for the items after it (``here``: what holds it)."""
        exact, near, words = keys
        exacts.setdefault(exact, here)
        nears.setdefault(near, here)
        if words:
            nears.setdefault(words, here)

    @staticmethod
    def _duplicate(exacts: dict[str, str], nears: dict[str, str], exact: str, near: str,
                   words: str) -> dict[str, str] | None:
        """``{why, of}`` when the keys of an item are among ``exacts`` / ``nears`` (key -> what holds it)."""
        if exact in exacts:
            return {"why": "exact-duplicate", "of": exacts[exact]}
        if near in nears or (words and words in nears):
            return {"why": "near-duplicate", "of": nears.get(near) or nears[words]}
        return None

    def refusal(self, destination: str, text: str, path: str, title: str, source: str) -> dict[str, str] | None:
        """The refusal (``{code, field, rule}``, :func:`refusal_of`) the write of an item (``text``, from the file
        ``path`` under ``title``, of ``source``) to ``destination`` is certain to meet, or None. It runs the
        checks the write runs (:func:`write_item`), without writing: a runtime entry's
        (:func:`~mnemon_ls.runtime.ops.validate_request`, then the ``secrets`` pass of
        :meth:`~mnemon_ls.runtime.source.RuntimeSource.scrub`), a Document's (its fields, :func:`document_fields`,
        through the ``secrets`` pass and ``validate_create``, then the capacity plan: the documents routed before
        count as written) and a Memory Space item's content rule. A check that fails otherwise (a damaged store) is
        left to the write, which says so."""
        try:
            if destination in ("user", "memory"):
                from ..runtime import ops

                self.host.runtime.scrub(ops.validate_request("add", destination, text, None, "normal", None))
            elif destination == "document":
                return self._document_refusal(text, document_fields(self.host, source, path, title))
            else:
                from ..spaces.model import validate_content

                validate_content(text)
        except MnemonError as exc:
            return refusal_of(exc)
        return None

    def _document_refusal(self, text: str, fields: dict[str, Any]) -> dict[str, str] | None:
        """The refusal of ``documents.create`` of the body ``text`` with ``fields`` (module doc of
        :meth:`refusal`): the ``secrets`` pass and the field rules, then the active Documents' capacity (the
        rendered file's bytes, as the store counts them, plus those of the documents routed before)."""
        from ..redact import Scrubber

        store = self.host.documents
        scrub = Scrubber(store.secrets)
        title, text = scrub.text("title", fields["title"]), scrub.text("content", text)
        description = scrub.text("description", fields["description"])
        plan = store.capacity.plan(title=title, content=text, description=description,
                                   source_paths=fields["source_paths"])
        projected = plan.projected + self._documents_planned
        if projected > plan.limit:
            return {"code": "document-capacity", "field": "documents.activeLimitBytes",
                    "rule": capacity_rule(projected, plan.limit)}
        self._documents_planned += plan.projected - plan.used  # this document's bytes
        return None


def build_plan(host: "WorkspaceHost", source: str, from_path: str | None = None, *,
               space_id: str | None = None, env: Mapping[str, str] | None = None,
               allow_outside: bool = False) -> dict[str, Any]:
    """The plan of importing ``source`` into ``host``'s workspace (module doc).

    Returns ``{source, from, files: [{path, sha256, bytes}], refused: [{path, reason}], items: [{path, title,
    name (what the item is called on its own: :func:`~.reading.item_name`), destination: user|memory|document|space,
    reason, bytes, text, key, bareKey (:mod:`.ledger`; null unless the item was led by its heading or scope),
    redacted: [kind], refusal: {code, field, rule} or null (the item would be refused),
    refusedBefore: ISO 8601 or null}], skipped: [{path, title, name, text (redacted, as an item's),
    why: already-imported|rejected-in-review|exact-duplicate|near-duplicate|temporary-progress, of}],
    counts: {user, memory, document, space, alreadyImported, rejected, exactDuplicates, nearDuplicates,
    temporaryProgress, refusedItems (would be refused), refusedFiles, needsApproval}, spaceId, spaceProblem,
    needsApproval: [{path, reason, importedBy}], allowOutside}``. ``files`` (``importedBy``: the references naming
    an imported file) and ``refused`` hold the files the source's files import too (Claude Code's ``@path``:
    :func:`find`); ``needsApproval`` the imported files outside the repository and the Claude home, not read
    unless ``allow_outside`` (:mod:`.outside`).
    Raises :class:`InvalidInput` naming ``source`` (unknown), ``from`` (missing, or every file refused) or
    ``spaceId`` (no such space)."""
    found = readable(host, source, from_path, env=env, allow_outside=allow_outside)
    files, refused = found.files, found.refused
    router = Router(host, space_id)
    items, skipped = [], []
    for raw in found.items:
        decided = router.decide(raw, source=source)
        if decided is None:
            continue
        row = {"path": raw.path, "title": raw.title, "name": item_name(raw.title, raw.headed, decided.text)}
        if decided.skip is not None:
            skipped.append({**row, "text": decided.text, **decided.skip})
            continue
        items.append({**row, "destination": decided.destination, "reason": decided.reason, "bytes": decided.size,
                      "text": decided.text, "key": decided.key, "bareKey": decided.bare_key,
                      "redacted": decided.redacted,
                      "refusal": decided.refusal, "refusedBefore": decided.refused_before})
    counts = {**router.counts, "refusedFiles": len(refused), "needsApproval": len(found.needs_approval)}
    return {"source": source, "from": from_path, "files": files, "refused": refused, "items": items,
            "skipped": skipped, "counts": counts, "spaceId": router.space_id,
            "spaceProblem": router.space_problem if counts["space"] else None,
            "needsApproval": found.needs_approval, "allowOutside": allow_outside}


def save_plan(host: "WorkspaceHost", plan: dict[str, Any]) -> None:
    """Keep the plan's file digests for :func:`apply` (module doc)."""
    data = {"version": 1, "source": plan["source"], "from": plan["from"],
            "files": [{"path": f["path"], "sha256": f["sha256"]} for f in plan["files"]]}
    path = plan_path(host.root, plan["source"], plan["from"])
    fsio.ensure_dir(path.parent)
    fsio.write_file_atomically(path, json.dumps(data, indent=2).encode("utf-8") + b"\n")


def check_unchanged(expected: list[dict[str, str]], now_files: list[dict[str, Any]], since: str, again: str) -> None:
    """Refuse (:class:`RevisionConflict` naming the file, ``data``: ``path``, ``expected``, ``actual``) when a file
    of ``expected`` (``[{path, sha256}]``) reads differently now, or differs in ``now_files`` (what the plan just
    read), or a file of ``now_files`` is not in ``expected``; ``since`` and ``again`` (what to do) end the message."""
    now = {f["path"]: f["sha256"] for f in now_files}
    then = {f["path"]: f["sha256"] for f in expected}
    for path, digest in then.items():
        current = file_digest(Path(path))
        if current != digest or now.get(path, digest) != digest:
            state = "is gone or unreadable" if current is None else "changed"
            raise RevisionConflict(f"{path} {state} since {since}; nothing was imported: {again} and review it",
                                   path=path, expected=digest, actual=current)
    for path in now:
        if path not in then:
            raise RevisionConflict(f"{path} appeared since {since}; nothing was imported: {again}", path=path,
                                   expected=None, actual=now[path])


def imports_lock(host: "WorkspaceHost") -> Any:
    """The lock every import holds while it plans and writes (``state/.imports.lock``): one import at a time."""
    lock = host.root / "state" / ".imports.lock"
    fsio.ensure_dir(lock.parent)
    return fsio.file_lock(lock)


def apply(host: "WorkspaceHost", source: str, from_path: str | None = None, *, space_id: str | None = None,
          env: Mapping[str, str] | None = None, allow_outside: bool = False) -> dict[str, Any]:
    """Import ``source`` (module doc). Returns the plan (each item's ``refusal`` now the one its write met, or
    null when written) with ``applied: [{path, title, destination, ref}]``,
    ``refusedItems: [{path, title, destination, code, field, rule, refusedBefore}]`` (the items a Source refused:
    recorded in the ledger as refused, tried again by a later import), ``status`` (``imported``;
    ``partly-imported``: some items refused, the others written; ``refused``: every item to write refused) and
    ``counts`` of what was written (``user``, ``memory``, ``document``, ``space``, ``written``, ``refusedItems``).
    Raises :class:`RevisionConflict` (a file changed since the dry run), :class:`InvalidInput` (``spaceId`` when
    items need a space and there is none), and the errors of a write that are not an item's refusal (a storage
    failure: items before it stay written and are in the ledger, so a second import resumes)."""
    saved_path = plan_path(host.root, source, from_path)
    again = f"run the dry run again (`mnemon-ls import {source} --dry-run`)"
    # bad input is refused before the lock writes its marker
    readable(host, source, from_path, env=env, allow_outside=allow_outside)
    with imports_lock(host):
        plan = build_plan(host, source, from_path, space_id=space_id, env=env, allow_outside=allow_outside)
        saved = fsio.read_bytes_or_none(saved_path)
        if saved is not None:
            try:
                expected = json.loads(saved)["files"]
            except (ValueError, KeyError, TypeError):
                expected = None
            if expected is not None:
                check_unchanged(expected, plan["files"], "the dry run", again)
        check_unchanged(plan["files"], plan["files"], "it was read", again)
        if plan["counts"]["space"] and plan["spaceId"] is None:
            raise InvalidInput("spaceId", f"{plan['counts']['space']} item(s) go to a Memory Space, but "
                               f"{plan['spaceProblem']}; nothing was imported")
        applied, refused = [], []
        digests = {f["path"]: f["sha256"] for f in plan["files"]}
        for item in plan["items"]:
            row = {"path": item["path"], "title": item["title"], "destination": item["destination"]}
            ref, refusal = write_or_refuse(host, source, plan["spaceId"], item, digests.get(item["path"]))
            item["refusal"] = refusal  # what the write met, in place of the plan's prediction
            if refusal is not None:
                refused.append({**row, **refusal, "refusedBefore": item.get("refusedBefore")})
            else:
                applied.append({**row, "ref": ref})
        if saved is not None:
            saved_path.unlink(missing_ok=True)
    plan["applied"], plan["refusedItems"], plan["status"] = applied, refused, import_status(applied, refused)
    plan["counts"].update({t: sum(a["destination"] == t for a in applied) for t in ("user", "memory", "document",
                                                                                     "space")})
    plan["counts"].update(written=len(applied), refusedItems=len(refused))
    return plan


def import_status(applied: list[Any], refused: list[Any]) -> str:
    """``imported`` (nothing refused), ``partly-imported`` (some items refused, some written) or ``refused``
    (every item to write refused)."""
    return "imported" if not refused else "partly-imported" if applied else "refused"


def refusal_of(exc: MnemonError) -> dict[str, str] | None:
    """``{code, field, rule}`` of ``exc`` when it is a Source's refusal of one item (a broken rule: exit code 2 or
    3, e.g. ``invalid-input`` naming ``content``, ``document-capacity``), else None (a failure of the store, which
    stops the import). ``field``: the field named (a capacity refusal names ``documents.activeLimitBytes``)."""
    if exc.exit_code not in (EXIT_INVALID, EXIT_REJECTED):
        return None
    if isinstance(exc, InvalidInput):
        return {"code": exc.code, "field": exc.field, "rule": exc.rule}
    if exc.code == "document-capacity" and isinstance(exc.data.get("projected"), int) \
            and isinstance(exc.data.get("limit"), int):
        return {"code": exc.code, "field": "documents.activeLimitBytes",
                "rule": capacity_rule(exc.data["projected"], exc.data["limit"])}
    return {"code": exc.code, "field": str(exc.data.get("field") or "item"), "rule": exc.message}


def capacity_rule(projected: int, limit: int) -> str:
    """The rule of a Document an import cannot write because the active Documents would be ``projected`` bytes,
    over their ``limit`` (``documents.activeLimitBytes``): the one wording of the dry run's prediction
    (:meth:`Router.refusal`) and of the import's refusal (:func:`refusal_of`)."""
    return (f"the active documents would be {projected} bytes with this one (limit {limit}): archive some "
            "(`mnemon-ls doc list`, `mnemon-ls doc archive ID`) and import again")


def write_or_refuse(host: "WorkspaceHost", source: str, space_id: str | None, item: dict[str, Any],
                    sha256: str | None) -> tuple[str | None, dict[str, str] | None]:
    """:func:`write_item`, or the item's refusal: ``(ref, None)`` when written, ``(None, {code, field, rule})``
    when its Source refused it (:func:`refusal_of`; nothing of it written), then recorded in the ledger as
    refused (``origin`` ``refused``: not imported, so a later import tries it again). Raises the other errors of
    the write."""
    try:
        return write_item(host, source, space_id, item, sha256), None
    except MnemonError as exc:
        refusal = refusal_of(exc)
        if refusal is None:
            raise
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    ledger.append(host.root, [{"key": item["key"], "origin": "refused", "source": source, "path": item["path"],
                               "sha256": sha256, "title": item["title"][:200], "destination": item["destination"],
                               **refusal, "refusedAt": now}])
    return None, refusal


def write_item(host: "WorkspaceHost", source: str, space_id: str | None, item: dict[str, Any],
               sha256: str | None) -> str:
    """Write one planned ``item`` (``{path, title, destination, text, key, bareKey?}``) of ``source`` where it was
    routed (``space``: into ``space_id``), then append it to the ledger (``sha256``: its file's digest); the reference
    of what was written. Raises the Source's errors of the write (nothing is appended then)."""
    ref = _write(host, source, space_id, item)
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    ledger.append(host.root, [{"key": item["key"], "origin": "imported", "source": source, "path": item["path"],
                               "sha256": sha256, "title": item["title"][:200], "destination": item["destination"],
                               "ref": ref, "importedAt": now,
                               **({"bareKey": item["bareKey"]} if item.get("bareKey") else {})}])
    return ref


def _write(host: "WorkspaceHost", source: str, space_id: str | None, item: dict[str, Any]) -> str:
    """Write one item where the plan routed it; the reference of what was written."""
    from ..errors import DuplicateContent
    from ..maintenance.lineage import sha256_hex
    from ..runtime import ops

    destination, text = item["destination"], item["text"]
    if destination in ("user", "memory"):
        request = ops.validate_request("add", destination, text, None, "normal", None)
        try:
            host.mutate_runtime(request)
        except DuplicateContent:
            pass  # already there (written by someone else meanwhile): the ledger still records it
        return f"runtime:{destination}:{sha256_hex(text)}"
    if destination == "document":
        fields = document_fields(host, source, item["path"], item["title"])
        result = host.documents.create(fields["title"], text, description=fields["description"],
                                       source_paths=fields["source_paths"])
        return f"document:{result.document.record.id}"
    receipt = host.spaces.remember(text, space_id=space_id, source=f"import:{source}",
                                   tags=["import", f"import-{source}"])
    return f"memory-space:{space_id}/item:{receipt.id}"


def document_fields(host: "WorkspaceHost", source: str, path: str, title: str) -> dict[str, Any]:
    """``{title, description, source_paths}`` of the Document an item of ``source`` (from the file ``path``, under
    the heading path ``title``) becomes: its last heading (else the file name), "Imported from <path> (<source>)",
    and the file when it is inside the workspace (else None). What :func:`write_item` writes and
    :meth:`Router.refusal` checks."""
    inside = None
    if host.workspace is not None:
        try:
            inside = str(Path(path).resolve().relative_to(host.workspace.resolve()))
        except ValueError:
            inside = None
    return {"title": title.split(" > ")[-1][:200] or Path(path).name,
            "description": f"Imported from {path} ({source})"[:500], "source_paths": [inside] if inside else None}
