"""Runtime memory operations: add, replace or remove one entry (``runtime.mutate``), the store as it is
(``runtime.snapshot`` for editors, ``runtime.list`` for a person), ``runtime.recover``, and the compaction of a
full target (``runtime.compact``); what capacity maintenance moved out of MEMORY.md is :mod:`.runtime_archived`.

A mutation is validated whole when its params are parsed (:func:`mnemon_ls.runtime.ops.validate_request`:
target, action, importance, branches, texts), so a bad request is refused before any store is opened.
It then runs :meth:`mnemon_ls.host.WorkspaceHost.mutate_runtime`: a MEMORY.md mutation over capacity
archives the overflow first (``runtimeMemory.maintenance: archive``; the receipt's ``maintenance`` says what
went where), and a hand edit the commit would overwrite is saved and named in ``preserved``. The command
line imports hand edits of USER.md/MEMORY.md first (it has no file watcher), printing each on stderr.

A full USER.md is ``runtime-capacity`` with the compaction plan in ``data.maintenance``
(:func:`mnemon_ls.runtime.compaction.plan_data`); the language server also announces it as
``mnemon/maintenanceRequired`` (an observer, :mod:`mnemon_ls.lsp.maintenance`), and the command line tells a
person the commands that make room (:func:`capacity_text`). ``runtime.compact`` takes either an assistant's
rewrite of the numbered plan (``entries``) or a person's changes (``merge``/``drop``, numbered as ``runtime
list`` prints them), checked by the same Host rules (:mod:`mnemon_ls.runtime.compaction`); its receipt says
what was merged into what, what was dropped and the bytes before and after. The language server sends
``mnemon/maintenanceCompleted`` and announces hand edits the commit saved aside through its observers.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import Field, PrivateAttr, model_validator

from ..digits import ascii_int
from ..errors import InvalidInput, RevisionConflict, echo_repr, echo_value
from ..jsontext import JsonUnreadable, json_loads
from ..runtime.model import (BRANCH_PATTERN, IMPORTANCES, MAX_BRANCH_CHARS, MAX_BRANCHES, MAX_ENTRY_BYTES,
                             PROJECTION_FILES, TARGETS, parse_timestamp_ms)
from . import command_ids, humantext, modeltext
from . import citing, staleness
from .base import Call, CliArg, CliCommand, LspCommand, LspMethod, McpTool, Operation, WorkspaceParams
from .command_args import RememberArgs
from .published import limits


def routes_from_json(raw: str) -> Any:
    """A ``--routes`` value parsed as JSON; :class:`InvalidInput` naming ``routes`` when it is not JSON (the
    shape is checked by :func:`mnemon_ls.maintenance.parse_routes` when the mutation runs)."""
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput("routes", f"must be JSON like '[{{\"sourceIndexes\": [1, 2], \"spaceId\": \"default\"}}]' "
                                     f"({exc})") from None


class RuntimeMutateParams(WorkspaceParams):
    """``mnemon/runtime/mutate``: ``{workspace?, action, target, content?, oldText? | key?, importance?, branches?,
    routes?, cites?}`` (``cites``: target memory, add or replace; a replace without ``cites`` keeps the entry's).

    Texts are checked by the Runtime Source (normalization, ``§``, 8192 bytes, matching) when the params are
    parsed; the checked request is :attr:`request`.
    """

    action: Literal["add", "replace", "remove"] = Field(
        description="add a new entry, replace or remove the one old_text selects")
    target: Literal["user", "memory"] = Field(
        "memory", description="memory = MEMORY.md (this workspace); user = USER.md (the person)")
    content: str | None = Field(None, description="the entry text (add, replace); one fact, no '§' lines, at "
                                                  f"most {MAX_ENTRY_BYTES} UTF-8 bytes")
    old_text: str | None = Field(None, alias="oldText", description="selects one entry (replace, remove): exact "
                                                                    "content first, else a unique substring")
    key: str | None = Field(None, description="selects one entry (replace, remove) instead of oldText, without its "
                                              "text: its key, memory:<sha256> or user:<sha256>, as citations.review "
                                              "lists it")
    importance: Literal["critical", "normal", "low"] | None = Field(None, description="default normal")
    branches: list[str] | None = Field(None, description="show the entry only on these git branches (target "
                                                         "memory); [] removes the scope on replace",
                                        json_schema_extra=limits(maxItems=MAX_BRANCHES, items={
                                            "maxLength": MAX_BRANCH_CHARS, "pattern": BRANCH_PATTERN}))
    routes: Any = Field(  # shape checked by mnemon_ls.maintenance.parse_routes, in its words
        None, description="when MEMORY.md overflows: which Memory Space takes which entries, [{sourceIndexes: "
                          "[1-based entry numbers], spaceId}] covering every entry once (default: routed by topic)")
    cites: citing.Cites = None
    _request: Any = PrivateAttr(None)

    @model_validator(mode="after")
    def _checked(self) -> "RuntimeMutateParams":
        from ..runtime import ops

        if self.cites:
            if self.target != "memory":
                raise InvalidInput("cites", "only MEMORY.md entries (target memory) cite code; USER.md is about the "
                                            "person")
            if self.action == "remove":
                raise InvalidInput("cites", "is not allowed with remove")
        self._request = ops.validate_request(self.action, self.target, self.content, self.old_text, self.importance,
                                             self.branches, self.key)  # raises InvalidInput (not a ValueError)
        return self

    @property
    def request(self) -> Any:
        """The validated :class:`~mnemon_ls.runtime.ops.MutationRequest`."""
        return self._request


class RuntimeSnapshotParams(WorkspaceParams):
    """``mnemon/runtime/snapshot``: ``{workspace?}``."""


class RuntimeListParams(WorkspaceParams):
    """``runtime list``: ``{workspace?, target?}``."""

    target: Literal["user", "memory"] | None = None


class RuntimeRecoverParams(WorkspaceParams):
    """``runtime recover``: ``{workspace?}``."""


_ENTRIES_SCHEMA = {"type": "array", "items": {"type": "object"}}


#: What a Runtime revision is: sha256 hex (:func:`mnemon_ls.runtime.model.revision_of`).
_REVISION = re.compile(r"[0-9a-f]{64}")
#: What a person may give for it: its first 12 hex digits or more (as ``runtime add`` and a conflict print it).
_REVISION_PREFIX = re.compile(r"[0-9a-f]{12,64}")


class RuntimeCompactParams(WorkspaceParams):
    """``mnemon/runtime/compact``: ``{workspace?, target? (user), revision?, entries? | merge?/drop?, pending?}``.

    Either ``entries``, an assistant's rewrite of the numbered plan (``revision`` required: the plan's), or a
    person's changes, ``merge`` and/or ``drop`` (entry numbers as ``runtime list`` prints them; ``revision``
    optional: the current one, fenced); a ``revision`` that is not sha256 hex is ``invalid-input``, a stale one
    ``revision-conflict`` naming ``revision`` (:func:`_compact`). Shapes are checked here
    (:func:`mnemon_ls.runtime.compaction.person_form`); the rules over the plan under the store's lock.
    """

    target: Literal["user", "memory"] = Field("user", description="the target to compact: user = USER.md "
                                                                   "(default), memory = MEMORY.md")
    revision: str | None = Field(None, description="the revision the entry numbers refer to: required with entries "
                                                   "(the plan's, data.maintenance.revision); optional with merge/drop "
                                                   "(default: the current one)")
    entries: Any = Field(None, json_schema_extra=_ENTRIES_SCHEMA, description=(
        "an assistant's rewrite of the numbered plan: [{content, importance, sourceIndexes: [1-based plan entry "
        "numbers], branches?}], every number in exactly one entry"))
    merge: Any = Field(None, json_schema_extra=_ENTRIES_SCHEMA, description=(
        "a person's changes instead of entries: [{sourceIndexes: [entry numbers], content: the merged text, "
        "importance? (default the highest of its entries)}]; entries neither merged nor dropped stay as they are"))
    drop: Any = Field(None, json_schema_extra={"type": "array", "items": {"type": "integer"}}, description=(
        "entry numbers to drop (with or without merge); what is dropped is kept word for word in runtime/archived/"))
    pending: Any = Field(None, json_schema_extra={"type": "object"}, description=(
        "the plan's pending mutation {action, content?, oldText?, importance?, branches?}, applied in the same commit"))
    _form: Any = PrivateAttr(None)

    @model_validator(mode="after")
    def _checked(self) -> "RuntimeCompactParams":
        from ..runtime import compaction

        person = self.merge is not None or self.drop is not None
        if self.entries is not None and person:
            raise InvalidInput("merge" if self.merge is not None else "drop", "cannot be combined with entries "
                               "(entries rewrites the whole plan; merge and drop name only the changes)")
        # a malformed revision is refused before anything decides there is nothing to do: without entries it
        # is read as with merge/drop (12 to 64 digits), with entries it is the plan's (all 64)
        if self.revision is not None and self.entries is None and not _REVISION_PREFIX.fullmatch(self.revision):
            raise InvalidInput("revision", "must be a revision: 12 to 64 lowercase hex digits (the first 12, as "
                                           "`mnemon-ls runtime add` prints it, or the whole sha256 of the runtime "
                                           "listing's --json)")
        if self.revision is not None and self.entries is not None and not _REVISION.fullmatch(self.revision):
            raise InvalidInput("revision", "must be a revision: 64 lowercase hex digits (sha256), as the plan "
                                           "(data.maintenance.revision) or the runtime listing gives it")
        if self.entries is None and not person:
            raise InvalidInput("entries", "is required: give entries (an assistant's rewrite of the numbered plan) or "
                                          "merge and/or drop (entry numbers, as `mnemon-ls runtime list` prints them)")
        if self.entries is not None and self.revision is None:
            raise InvalidInput("revision", "is required with entries (the plan's revision: data.maintenance.revision)")
        if person:
            self._form = compaction.person_form(self.merge, self.drop)  # raises InvalidInput naming merge[i]/drop[k]
        return self

    @property
    def form(self) -> Any:
        """The person's :class:`~mnemon_ls.runtime.compaction.PersonForm`, or ``None`` (``entries`` given)."""
        return self._form

    @property
    def file(self) -> str:
        """``USER.md`` or ``MEMORY.md`` (the progress title)."""
        return PROJECTION_FILES[self.target]


# ------------------------------------------------------------------ runs


def _mutate(call: Call, p: RuntimeMutateParams) -> dict[str, Any]:
    """``runtime.mutate`` (:func:`_mutated`), the stored text its receipt echoes redacted unless ``secrets: allow``
    (:func:`mnemon_ls.runtime.foreign.shown_receipt`, after the citations followed the entries that moved); a
    ``key`` selects an entry without sending its text."""
    data = _mutated(call, p)
    if call.host.settings.secrets != "allow":
        from ..runtime.foreign import shown_receipt

        data = shown_receipt(data)
    return data


def _mutated(call: Call, p: RuntimeMutateParams) -> dict[str, Any]:
    """``runtime.mutate``: the citations resolved first (a bad one writes nothing), the mutation, then the
    entry's citations kept under its new content (a replace without ``cites`` carries the old ones over,
    re-anchored; a remove drops them)."""
    from ..citations.store import runtime_key

    from .citemoves import cited_hot, follow

    citations = citing.resolve(call, p.cites)
    before = cited_hot(call) if p.target == "memory" else {}
    data = call.host.mutate_runtime(p.request, p.routes).to_dict()
    if data.get("target") != "memory":
        return data
    follow(call, before, data)  # what capacity maintenance moved out takes its citations along
    citing_host = call.host.citations
    if "added" in data and citations:
        key, changes = runtime_key(data["added"]), {}
    elif "replaced" in data:
        old, key = runtime_key(data["replaced"]["from"]), runtime_key(data["replaced"]["to"])
        carried = citations or citing_host.of("runtime", old)
        if not carried:
            return data
        citations, changes = carried, ({old: None} if old != key else {})
    elif "removed" in data:
        key = runtime_key(data["removed"])
        if citing_host.of("runtime", key):
            citing_host.put("runtime", {key: None}, keep=_live_runtime_keys(call))
        return data
    else:
        return data
    citing_host.put("runtime", {**changes, key: citations}, keep=_live_runtime_keys(call))
    data["cites"] = citing_host.views(citing_host.of("runtime", key))
    replaced = [("runtime", old)] if "replaced" in data and old != key else []
    superseded = staleness.supersede(call, "runtime", key, citing_host.of("runtime", key), exclude=replaced,
                                     also=replaced)
    if replaced:
        data["supersedes"] = {"source": "runtime", "key": old, "preview": staleness.short(data["replaced"]["from"])}
    if superseded:
        data["possiblySuperseded"] = superseded
    return data


def _live_runtime_keys(call: Call) -> Any:
    """``key -> bool``: whether a side-file key names a MEMORY.md entry there now (others are dropped: an entry
    edited by hand, compacted or archived since)."""
    from ..citations.store import runtime_key

    live = {runtime_key(e.content) for e in call.host.runtime.read().of("memory")}
    return live.__contains__


def _with_cites(call: Call, entries: Any) -> list[dict[str, Any]]:
    """Runtime entries as JSON, a MEMORY.md entry with citations also with ``cites`` (each with freshness)."""
    from ..runtime.ops import entry_key
    from ..citations.store import runtime_key

    views = citing.views_of(call, "runtime")
    found = []
    for entry in entries:
        data = entry.to_json()
        cites = views(runtime_key(entry.content)) if entry.target == "memory" else []
        if cites:
            data["cites"] = cites
        staleness.review_mark(call, data, entry.updated_at, source="runtime",
                              key=entry_key(entry.target, entry.content))
        found.append(data)
    return found


def _snapshot(call: Call, _p: Any) -> dict[str, Any]:
    effective = call.host.runtime.read()
    limits = call.host.settings.runtime_memory
    entries = _with_cites(call, (*effective.user, *effective.memory))
    # a credential another program wrote is shown redacted, with where it is (mnemon_ls/runtime/foreign.py)
    notices = call.host.runtime.redact_listed(entries)
    return {
        "revision": effective.revision,
        "entries": entries,
        "usage": {t: {"used": effective.used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
        "problems": [*effective.all_problems, *notices],
    }


def _list(call: Call, p: RuntimeListParams) -> dict[str, Any]:
    state = call.host.runtime.read()
    targets = (p.target,) if p.target else TARGETS
    from ..runtime.ops import entry_key

    listed = [e for t in targets for e in state.of(t)]
    entries = _with_cites(call, listed)
    for entry, data in zip(listed, entries):  # the key review lists and replace/remove --key take: of the stored
        data["key"] = entry_key(entry.target, entry.content)  # content, so an entry shown redacted is named by it
    notices = call.host.runtime.redact_listed(entries)  # mnemon_ls/runtime/foreign.py
    return {"revision": state.revision, "entries": entries, "problems": [*state.all_problems, *notices]}


def _shown_contents(call: Call, state: Any, targets: Any) -> tuple[list[str], list[str]]:
    """``(the content of each entry of ``targets`` as it is shown, notices)``: redacted when another program wrote
    a credential (:meth:`~mnemon_ls.runtime.source.RuntimeSource.redact_listed`)."""
    shown = [{"target": e.target, "content": e.content} for t in targets for e in state.of(t)]
    notices = call.host.runtime.redact_listed(shown)
    return [e["content"] for e in shown], notices


def _recover(call: Call, _p: Any) -> list[dict[str, Any]]:
    return [store.recover() | {"store": str(store.runtime_dir)} for store in call.host.runtime.stores]


def _compact(call: Call, p: RuntimeCompactParams) -> dict[str, Any]:
    runtime = call.host.runtime
    revision = p.revision if p.form is None else runtime.compaction_revision(p.target, p.revision)
    if call.progress is not None:
        call.progress("Checking the compaction against the plan", None)
    from .citemoves import cited_hot, follow

    before = cited_hot(call) if p.target == "memory" else {}
    try:
        data = runtime.compact(revision, p.target, p.entries, p.pending, form=p.form).to_dict()
    except RevisionConflict as exc:
        if p.revision is None or "field" in exc.data:  # the current revision, read here: no argument to name
            raise
        raise RevisionConflict(f"revision: {exc.message}", field="revision", **exc.data) from None
    follow(call, before, data, carry_replaced=True)
    if call.host.settings.secrets != "allow":  # the stored text it echoes (an entry kept as another program wrote it)
        from ..runtime.foreign import shown_receipt

        data = shown_receipt(data)
    return data


def _receipt_cli_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    count = data["entryCount"]
    text = (f"{data['message']} {PROJECTION_FILES[data['target']]}: {count} {'entry' if count == 1 else 'entries'}, "
            f"{data['usage']['used']}/{data['usage']['limit']} UTF-8 bytes; revision {data['revision'][:12]}")
    for name, saved in (data.get("preserved") or {}).items():
        text += f"\nYour hand edit of {name} was saved at {saved} before it was rewritten."
    for cite in data.get("cites") or ():
        text += f"\ncites {humantext.citation_text(cite)}"
    text += "".join(f"\n{line}" for line in humantext.superseding_lines(data))
    return text


def _list_text(_data: dict[str, Any], call: Call, p: RuntimeListParams) -> str:
    from ..citations.store import runtime_key
    from ..runtime.snapshot import age_label

    views = citing.views_of(call, "runtime")
    now_ms = parse_timestamp_ms(datetime.now(timezone.utc).isoformat()) or 0
    state = call.host.runtime.read()
    targets = (p.target,) if p.target else TARGETS
    contents = iter(_shown_contents(call, state, targets)[0])
    lines = []
    for target in targets:
        entries = state.of(target)
        limit = call.host.settings.runtime_memory.limit_for(target)
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        lines.append(f"{PROJECTION_FILES[target]} ({target}; {count}; {state.used[target]}/{limit} UTF-8 bytes)")
        for index, entry in enumerate(entries, 1):
            scope = f"; branches={','.join(entry.branches)}" if entry.branches else ""
            lines.append(f"  {index}. [{entry.importance}; created={age_label(entry.created_at, now_ms)}; "
                         f"updated={age_label(entry.updated_at, now_ms)}{scope}] {next(contents)}")
            if target == "memory":
                lines += [f"     cites {humantext.citation_text(c)}" for c in views(runtime_key(entry.content))]
    return "\n".join(lines)


def _list_warnings(_data: dict[str, Any], call: Call) -> list[str]:
    state = call.host.runtime.read()
    return [f"{problem}; run `mnemon-ls runtime recover`" for problem in state.problems] + [
        *state.entry_problems, *state.capacity_problems, *_shown_contents(call, state, TARGETS)[1]]


def capacity_text(error: Any) -> str | None:
    """A full USER.md (``runtime-capacity`` with a compaction plan) in a person's words: what the change needs,
    then the commands that make room (``runtime list`` numbers the entries, ``runtime compact --merge ... --as
    ... --drop ...`` merges and drops them) or the other ways out; ``None`` for any other error."""
    plan = error.data.get("maintenance") if getattr(error, "code", None) == "runtime-capacity" else None
    if not isinstance(plan, dict) or not isinstance(plan.get("entries"), list):
        return None
    data, target, count = error.data, plan["target"], len(plan["entries"])
    numbers = list(range(1, count + 1))
    merge, drop = numbers[:2], numbers[2:3]
    example = f"--merge {','.join(map(str, merge))} --as \"one shorter text\"" + (f" --drop {drop[0]}" if drop else "")
    said = (f"merges entries {' and '.join(map(str, merge))} into that text" if len(merge) > 1
            else "rewrites entry 1 as that text") + (f" and drops entry {drop[0]}" if drop else "")
    return (f"{plan['file']} is full: this change needs {data['projected']} of {data['limit']} UTF-8 bytes (now "
            f"{data['used']}). Make room, then run this command again: `mnemon-ls runtime list --target {target}` "
            f"numbers its {count} entr{'y' if count == 1 else 'ies'}; `mnemon-ls runtime compact --target {target} "
            f"{example}` {said} (the entries left may use at most {plan['budgetBytes']} UTF-8 bytes for this "
            "change to fit; what leaves is kept word for word in runtime/archived/). Or remove an entry (`mnemon-ls "
            f"runtime remove --target {target} --old-text TEXT`) or raise the limit (--{target}-limit-bytes, setting "
            f"runtimeMemory.{target}LimitBytes).")


def _compact_error_text(error: Any) -> str | None:
    """``runtime compact`` given nothing to do, in the command line's words; ``None`` for any other error."""
    if getattr(error, "field", None) == "entries" and str(getattr(error, "rule", "")).startswith("is required:"):
        return ("nothing to compact: give --merge N,M --as TEXT and/or --drop N (entry numbers as `mnemon-ls runtime "
                "list --target user` prints them), or an assistant's rewrite with --plan FILE or --entries FILE "
                "--revision REVISION")
    return None


def _compact_cli_text(data: dict[str, Any], call: Call, _p: Any) -> str:
    maintenance = data["maintenance"]
    count = data["entryCount"]
    what = "replaced or dropped" if maintenance.get("dropped") else "replaced"
    kept = len(maintenance["archived"])
    lines = [f"{data['message']} {PROJECTION_FILES[data['target']]}: {count} {'entry' if count == 1 else 'entries'}, "
             f"{data['usage']['used']}/{data['usage']['limit']} UTF-8 bytes; revision {data['revision'][:12]}; "
             f"{kept} {what} {'entry' if kept == 1 else 'entries'} kept in "
             f"{call.host.runtime.store_for(data['target']).archive_dir}"]
    lines += [f"  {line}" for line in modeltext.compaction_lines(maintenance, data["usage"]["limit"])]
    return "\n".join(lines)


def _json_file(value: str, field: str) -> Any:
    """JSON from the file ``value`` (``-``: standard input); :class:`InvalidInput` naming ``field``."""
    import sys

    try:
        if value == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(value, "rb") as handle:
                raw = handle.read()
    except OSError as exc:
        raise InvalidInput(field, f"{value} cannot be read ({exc.strerror or exc})") from None
    try:
        return json_loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInput(field, f"is not UTF-8 JSON ({exc})") from None
    except JsonUnreadable as exc:
        raise InvalidInput(field, f"is not UTF-8 JSON ({exc})") from None


_PLAN_KEYS = ("revision", "target", "entries", "pending")


def _plan_file(value: str) -> dict[str, Any]:
    """``--plan FILE``: the whole request ``{revision, target, entries, pending?}`` as params."""
    request = _json_file(value, "plan")
    if not isinstance(request, dict):
        raise InvalidInput("plan", "must be a JSON object {revision, target, entries, pending?}")
    unknown = sorted(set(request) - set(_PLAN_KEYS))
    if unknown:
        raise InvalidInput(f"plan.{unknown[0]}", "is not a known field (revision, target, entries, pending)")
    return {key: request[key] for key in _PLAN_KEYS if request.get(key) is not None}


def _pending_json(value: str) -> Any:
    try:
        return json_loads(value)
    except JsonUnreadable as exc:
        raise InvalidInput("pending", f"is not JSON ({exc})") from None


def _entry_numbers(flag: str) -> Any:
    """``2,3`` as ``[2, 3]`` (the numbers ``runtime list`` prints); :class:`InvalidInput` naming ``flag``."""
    def convert(value: str) -> list[int]:
        numbers = [ascii_int(part.strip(), signed=False) for part in value.split(",")]  # ASCII digits only
        if any(number is None for number in numbers):
            raise InvalidInput(flag, f"must be entry numbers like 2,3 (as `mnemon-ls runtime list` prints them; got "
                                     f"{echo_repr(value)})", param=flag.removeprefix("--"), value=echo_value(value))
        return numbers
    return convert


_COMPACT_ARGS = (
    CliArg("merge", flag="--merge", member="sourceIndexes", metavar="N,M", convert=_entry_numbers("--merge"),
           help="entry numbers (as `runtime list --target user` prints them) to merge into the text of the --as "
                "that follows (repeatable)"),
    CliArg("merge", flag="--as", member="content", metavar="TEXT", required=True,
           help="the text the entries of the --merge before it become"),
    CliArg("merge", flag="--importance", member="importance", choices=IMPORTANCES,
           help="importance of that merged entry (default: the highest of its entries)"),
    CliArg("drop", flag="--drop", metavar="N,M", convert=_entry_numbers("--drop"), names_errors=True,
           help="entry numbers to drop; what leaves is kept word for word in runtime/archived/"),
    CliArg("target", flag="--target", help="compacted target (default user)"),
    CliArg("entries", flag="--plan", dest="plan", metavar="FILE", convert=_plan_file, spread=_PLAN_KEYS,
           help="JSON {revision, target, entries: [{content, importance, sourceIndexes}], pending?} ('-' reads "
                "standard input)"),
    CliArg("entries", flag="--entries", metavar="FILE", convert=lambda value: _json_file(value, "entries"),
           help="JSON list [{content, importance, sourceIndexes}] ('-' reads standard input); needs --revision"),
    CliArg("revision", flag="--revision", names_errors=True,
           help="the revision the numbers refer to: the plan's (data.maintenance.revision) with --entries; with "
                "--merge/--drop optional: its first 12 hex digits as `runtime add` prints them, or the whole one "
                "`runtime list --json` prints (default: the current one)"),
    CliArg("pending", flag="--pending", metavar="JSON", convert=_pending_json,
           help="the plan's pending mutation as JSON {action, content?, oldText?, importance?}"),
)


_MUTATE_TOOL = McpTool(
    "mnemon_runtime_memory",
    "Add, replace or remove one entry of Runtime memory, the hot memory in every wake snapshot. Use target=user for "
    "durable facts about the person (role, preferences), target=memory for this workspace's working reference "
    "(commands that work, pitfalls, current decisions). Do not store secrets, temporary progress or raw logs; long "
    "texts belong in a Document. Capacity is in UTF-8 bytes; an entry is at most 8 KiB.",
    narrow={"routes": list[dict[str, Any]] | None})


def _mutate_cli(action: str, help_text: str) -> CliCommand:
    args = [CliArg("target", flag="--target", default="memory", help="user (USER.md) or memory (MEMORY.md; default)")]
    if action != "add":
        args.append(CliArg("old_text", flag="--old-text", stdin=True,
                           help="text selecting one entry: exact content first, else a unique substring "
                                "('-' reads standard input)"))
        args.append(CliArg("key", flag="--key", metavar="KEY",
                           help="selects the entry by its key instead (memory:<sha256>, as `review --json` lists it)"))
    if action != "remove":
        args += [CliArg("content", flag="--content", required=True, stdin=True,
                        help="entry text ('-' reads standard input)"),
                 CliArg("importance", flag="--importance", help=""),
                 CliArg("branches", flag="--branch", repeat=True, metavar="NAME",
                        help="scope to a git branch (repeatable; target memory only)")]
    if action == "replace":
        args.append(CliArg("branches", flag="--no-branches", kind="clear", help="remove the entry's branch scope"))
    if action != "remove":
        args.append(citing.CITE_ARG)
    args.append(CliArg("routes", flag="--routes", metavar="JSON", convert=routes_from_json, help=(
        "when MEMORY.md overflows, which Memory Space takes which entries: "
        "'[{\"sourceIndexes\": [1, 2], \"spaceId\": \"default\"}]' covering every entry once")))
    return CliCommand(("runtime", action), help_text, tuple(args), text=_receipt_cli_text, fixed={"action": action},
                      hand_edits_first=True, error_text=capacity_text)


OPERATIONS = (
    Operation(
        "runtime.mutate", RuntimeMutateParams,
        _mutate,
        "Add, replace or remove one Runtime memory entry (USER.md or MEMORY.md).", effect="write",
        text=modeltext.runtime_receipt,
        lsp=LspMethod("mnemon/runtime/mutate"),
        lsp_command=LspCommand(
            command_ids.REMEMBER_SELECTION, RememberArgs,
            "Add the selected text (a comment without its markers) to MEMORY.md of the document's folder; "
            "branches scope it.",
            fields={"content": "text", "importance": "importance", "branches": "branches"},
            fixed={"action": "add", "target": "memory"}, comment="text", cite="range", quiet="quiet",
            message=humantext.remembered_in_memory, failure="not remembered: "),
        mcp=_MUTATE_TOOL,
        cli=(_mutate_cli("add", "add an entry"), _mutate_cli("replace", "replace the entry OLD_TEXT selects"),
             _mutate_cli("remove", "remove the entry OLD_TEXT selects"))),
    Operation(
        "runtime.snapshot", RuntimeSnapshotParams, _snapshot,
        "Every Runtime entry (no branch filter), the store revision, usage of each target and problems.",
        lsp=LspMethod("mnemon/runtime/snapshot")),
    Operation(
        "runtime.list", RuntimeListParams, _list,
        "Every Runtime entry with importance, ages, branches and key (the user:/memory:<sha256> key review lists "
        "and replace/remove --key take; no branch filter).",
        cli=CliCommand(("runtime", "list"), "list entries (--json gives each its key, as review lists it)",
                       (CliArg("target", flag="--target", help=""),),
                       text=_list_text, warnings=_list_warnings, hand_edits_first=True)),
    Operation(
        "runtime.recover", RuntimeRecoverParams, _recover,
        "Quarantine a damaged memories.json and restore every recoverable entry.", effect="write",
        cli=CliCommand(("runtime", "recover"), "quarantine a damaged memories.json and restore every recoverable entry",
                       text=lambda d, _c, _p: "\n".join(f"{r['store']}: {r['message']}" for r in d))),
    Operation(
        "runtime.compact", RuntimeCompactParams, _compact,
        "Compact a full USER.md (or MEMORY.md): an assistant's rewrite of the numbered plan of its capacity error "
        "(entries), or a person's merges and drops (merge, drop); the pending change lands in the same commit and "
        "what leaves is kept word for word in runtime/archived/.", effect="write",
        text=modeltext.runtime_receipt, progress="Compacting {file}",
        lsp=LspMethod("mnemon/runtime/compact"),
        mcp=McpTool(
            "mnemon_runtime_compact",
            "Replace the entries of a full USER.md (or MEMORY.md) by a shorter rewrite you made from the numbered plan "
            "of the runtime-capacity error, and apply the pending change in the same commit. Every plan entry number "
            "goes into exactly one sourceIndexes; never lower an entry's importance; stay within the byte budget. "
            "Instead of entries, merge ([{sourceIndexes, content}]) and drop ([numbers]) name only the changes; "
            "entries neither merged nor dropped stay. A rule broken changes nothing and names the entry and the rule.",
            fields=("revision", "entries", "target", "pending", "merge", "drop", "workspace"),
            narrow={"entries": list[dict[str, Any]] | None, "pending": dict[str, Any] | None,
                    "merge": list[dict[str, Any]] | None, "drop": list[int] | None}),
        cli=CliCommand(("runtime", "compact"),
                       "make room in a full USER.md/MEMORY.md: merge or drop numbered entries, or commit the plan an "
                       "assistant rewrote", _COMPACT_ARGS, text=_compact_cli_text, hand_edits_first=True,
                       error_text=_compact_error_text)),
)
