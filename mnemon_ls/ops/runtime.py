"""Runtime memory operations: add, replace or remove one entry (``runtime.mutate``), the store as it is
(``runtime.snapshot`` for editors, ``runtime.list`` for a person) and ``runtime.recover``.

A mutation is validated whole when its params are parsed (:func:`mnemon_ls.runtime.ops.validate_request`:
target, action, importance, branches, texts), so a bad request is refused before any store is opened.
It then runs :meth:`mnemon_ls.host.WorkspaceHost.mutate_runtime`: a MEMORY.md mutation over capacity
archives the overflow first (``runtimeMemory.maintenance: archive``; the receipt's ``maintenance`` says what
went where), and a hand edit the commit would overwrite is saved and named in ``preserved``. The command
line imports hand edits of USER.md/MEMORY.md first (it has no file watcher), printing each on stderr.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import Field, PrivateAttr, model_validator

from ..errors import InvalidInput
from ..runtime.model import PROJECTION_FILES, TARGETS, parse_timestamp_ms
from . import modeltext
from .base import Call, CliArg, CliCommand, LspMethod, McpTool, Operation, WorkspaceParams


def routes_from_json(raw: str) -> Any:
    """A ``--routes`` value parsed as JSON; :class:`InvalidInput` naming ``routes`` when it is not JSON (the
    shape is checked by :func:`mnemon_ls.maintenance.parse_routes` when the mutation runs)."""
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput("routes", f"must be JSON like '[{{\"sourceIndexes\": [1, 2], \"spaceId\": \"default\"}}]' "
                                     f"({exc})") from None


class RuntimeMutateParams(WorkspaceParams):
    """``mnemon/runtime/mutate``: ``{workspace?, action, target, content?, oldText?, importance?, branches?,
    routes?}``.

    Texts are checked by the Runtime Source (normalization, ``§``, 8192 bytes, matching) when the params are
    parsed; the checked request is :attr:`request`.
    """

    action: Literal["add", "replace", "remove"] = Field(
        description="add a new entry, replace or remove the one old_text selects")
    target: Literal["user", "memory"] = Field(
        "memory", description="memory = MEMORY.md (this workspace); user = USER.md (the person)")
    content: str | None = Field(None, description="the entry text (add, replace); one fact, no '§' lines")
    old_text: str | None = Field(None, alias="oldText", description="selects one entry (replace, remove): exact "
                                                                    "content first, else a unique substring")
    importance: Literal["critical", "normal", "low"] | None = Field(None, description="default normal")
    branches: list[str] | None = Field(None, description="show the entry only on these git branches (target "
                                                         "memory); [] removes the scope on replace")
    routes: Any = Field(  # shape checked by mnemon_ls.maintenance.parse_routes, in its words
        None, description="when MEMORY.md overflows: which Memory Space takes which entries, [{sourceIndexes: "
                          "[1-based entry numbers], spaceId}] covering every entry once (default: routed by topic)")
    _request: Any = PrivateAttr(None)

    @model_validator(mode="after")
    def _checked(self) -> "RuntimeMutateParams":
        from ..runtime import ops

        self._request = ops.validate_request(self.action, self.target, self.content, self.old_text, self.importance,
                                             self.branches)  # raises InvalidInput (not a ValueError: unchanged)
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


# ------------------------------------------------------------------ runs


def _snapshot(call: Call, _p: Any) -> dict[str, Any]:
    effective = call.host.runtime.read()
    limits = call.host.settings.runtime_memory
    return {
        "revision": effective.revision,
        "entries": [e.to_json() for e in (*effective.user, *effective.memory)],
        "usage": {t: {"used": effective.used[t], "limit": limits.limit_for(t)} for t in ("user", "memory")},
        "problems": list(effective.all_problems),
    }


def _list(call: Call, p: RuntimeListParams) -> dict[str, Any]:
    state = call.host.runtime.read()
    targets = (p.target,) if p.target else TARGETS
    return {"revision": state.revision, "entries": [e.to_json() for t in targets for e in state.of(t)],
            "problems": list(state.all_problems)}


def _recover(call: Call, _p: Any) -> list[dict[str, Any]]:
    return [store.recover() | {"store": str(store.runtime_dir)} for store in call.host.runtime.stores]


# ------------------------------------------------------------------ text


def _receipt_cli_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    count = data["entryCount"]
    text = (f"{data['message']} {PROJECTION_FILES[data['target']]}: {count} {'entry' if count == 1 else 'entries'}, "
            f"{data['usage']['used']}/{data['usage']['limit']} UTF-8 bytes; revision {data['revision'][:12]}")
    for name, saved in (data.get("preserved") or {}).items():
        text += f"\nYour hand edit of {name} was saved at {saved} before it was rewritten."
    return text


def _list_text(_data: dict[str, Any], call: Call, p: RuntimeListParams) -> str:
    from ..runtime.snapshot import age_label

    now_ms = parse_timestamp_ms(datetime.now(timezone.utc).isoformat()) or 0
    state = call.host.runtime.read()
    lines = []
    for target in ((p.target,) if p.target else TARGETS):
        entries = state.of(target)
        limit = call.host.settings.runtime_memory.limit_for(target)
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        lines.append(f"{PROJECTION_FILES[target]} ({target}; {count}; {state.used[target]}/{limit} UTF-8 bytes)")
        for index, entry in enumerate(entries, 1):
            scope = f"; branches={','.join(entry.branches)}" if entry.branches else ""
            lines.append(f"  {index}. [{entry.importance}; created={age_label(entry.created_at, now_ms)}; "
                         f"updated={age_label(entry.updated_at, now_ms)}{scope}] {entry.content}")
    return "\n".join(lines)


def _list_warnings(_data: dict[str, Any], call: Call) -> list[str]:
    state = call.host.runtime.read()
    return [f"{problem}; run `mnemon-ls runtime recover`" for problem in state.problems] + [
        *state.entry_problems, *state.capacity_problems]


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
        args.append(CliArg("old_text", flag="--old-text", required=True, stdin=True,
                           help="text selecting one entry: exact content first, else a unique substring "
                                "('-' reads standard input)"))
    if action != "remove":
        args += [CliArg("content", flag="--content", required=True, stdin=True,
                        help="entry text ('-' reads standard input)"),
                 CliArg("importance", flag="--importance", help=""),
                 CliArg("branches", flag="--branch", repeat=True, metavar="NAME",
                        help="scope to a git branch (repeatable; target memory only)")]
    if action == "replace":
        args.append(CliArg("branches", flag="--no-branches", kind="clear", help="remove the entry's branch scope"))
    args.append(CliArg("routes", flag="--routes", metavar="JSON", convert=routes_from_json, help=(
        "when MEMORY.md overflows, which Memory Space takes which entries: "
        "'[{\"sourceIndexes\": [1, 2], \"spaceId\": \"default\"}]' covering every entry once")))
    return CliCommand(("runtime", action), help_text, tuple(args), text=_receipt_cli_text, fixed={"action": action},
                      hand_edits_first=True)


OPERATIONS = (
    Operation(
        "runtime.mutate", RuntimeMutateParams,
        lambda c, p: c.host.mutate_runtime(p.request, p.routes).to_dict(),
        "Add, replace or remove one Runtime memory entry (USER.md or MEMORY.md).", effect="write",
        text=modeltext.runtime_receipt,
        lsp=LspMethod("mnemon/runtime/mutate"),
        mcp=_MUTATE_TOOL,
        cli=(_mutate_cli("add", "add an entry"), _mutate_cli("replace", "replace the entry OLD_TEXT selects"),
             _mutate_cli("remove", "remove the entry OLD_TEXT selects"))),
    Operation(
        "runtime.snapshot", RuntimeSnapshotParams, _snapshot,
        "Every Runtime entry (no branch filter), the store revision, usage of each target and problems.",
        lsp=LspMethod("mnemon/runtime/snapshot")),
    Operation(
        "runtime.list", RuntimeListParams, _list,
        "Every Runtime entry with importance, ages and branches (no branch filter).",
        cli=CliCommand(("runtime", "list"), "list entries", (CliArg("target", flag="--target", help=""),),
                       text=_list_text, warnings=_list_warnings, hand_edits_first=True)),
    Operation(
        "runtime.recover", RuntimeRecoverParams, _recover,
        "Quarantine a damaged memories.json and restore every recoverable entry.", effect="write",
        cli=CliCommand(("runtime", "recover"), "quarantine a damaged memories.json and restore every recoverable entry",
                       text=lambda d, _c, _p: "\n".join(f"{r['store']}: {r['message']}" for r in d))),
)
