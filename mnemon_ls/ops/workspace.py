"""Workspace-wide operations: the wake snapshot (``workspace.wake``) and the workspace's status
(``workspace.status``).

The wake repairs the Runtime projections first (a hand edit of USER.md/MEMORY.md is imported, or saved
and reported) and renders the snapshot for the current git branch; who reads it decides which commands it
names (an assistant's tools, or the command line). The language server's ``mnemon/wake`` is a session
request (it pins turn Views and announces branch changes) and stays in :mod:`mnemon_ls.lsp.runtime`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from . import modeltext
from .base import Call, CliArg, CliCommand, McpTool, Operation, WorkspaceParams


class WakeParams(WorkspaceParams):
    """``wake``: ``{workspace?, branch?, budgetChars? (1024..4194304 characters)}``."""

    branch: str | None = Field(None, description="render as if on this branch (default: the checked-out one)")
    budget_chars: int | None = Field(None, alias="budgetChars", strict=True,  # bounds: the Host's (names "budget")
                                     description="largest snapshot in characters (1024..4194304)")


class StatusParams(WorkspaceParams):
    """``status``: ``{workspace?}``."""


def _wake(call: Call, p: WakeParams) -> dict[str, Any]:
    host = call.host
    snapshot, repairs = host.wake(branch=p.branch, budget_chars=p.budget_chars,
                                  surface="cli" if call.surface == "cli" else "tool")
    return snapshot.to_dict() | {"root": str(host.root), "repairs": [
        report.to_dict() | {"store": str(store.runtime_dir)} for store, report in repairs]}


def repair_lines(repairs: list[dict[str, Any]]) -> list[str]:
    """One line per repaired projection of a wake's ``repairs``: the hand-edit result when there is one
    (imported, rejected with the item and rule, crash leftover), else what was rebuilt."""
    lines = []
    for report in repairs:
        store = Path(report["store"])
        for name in report["repaired"]:
            result = (report.get("handEdits") or {}).get(name)
            if result is not None:
                lines.append(f"{store / name}: {result['message']}" if result["status"] != "imported"
                             else f"{result['message']} ({store / name}; your edit is saved at {result['savedAs']})")
                continue
            saved = report["preserved"].get(name)
            lines.append(f"repaired {store / name}" + (f" (your edit is saved at {saved})" if saved else ""))
    return lines


def _status(call: Call, _p: Any) -> dict[str, Any]:
    data = call.host.status()
    if (call.host.root / "data").is_dir():
        views = [view.to_dict() for view in call.host.spaces.list_spaces()]
        data["spaces"] = {"total": len(views), "active": sum(1 for v in views if v["active"])}
    else:
        data["spaces"] = {"total": 0, "active": 0}
    return data


OPERATIONS = (
    Operation(
        "workspace.wake", WakeParams, _wake,
        "The wake snapshot: USER.md, MEMORY.md for the current git branch, and covers of Documents and Memory "
        "Spaces (projections repaired first).",
        text=lambda d: modeltext.bounded(d["text"]),
        mcp=McpTool(
            "mnemon_wake",
            "The wake snapshot: USER.md, MEMORY.md (filtered to the current git branch) and short covers of Documents "
            "and Memory Spaces. Read it at the start of a session, or again after a long pause.",
            fields=("branch", "workspace")),
        cli=CliCommand(("wake",), "print the wake snapshot an assistant gets", (
            CliArg("branch", flag="--branch", metavar="NAME", help="render as if on this branch"),
            CliArg("budget_chars", flag="--budget", metavar="CHARS",
                   help="largest snapshot in characters (1024..4194304)")),
            text=lambda d, _c, _p: d["text"], warnings=lambda d, _c: repair_lines(d["repairs"]), warning_prefix="")),
    Operation(
        "workspace.status", StatusParams, _status,
        "Where this workspace's memory lives, its branch, Runtime usage, Documents and Memory Spaces counts, and "
        "any problem found.",
        text=modeltext.status,
        mcp=McpTool(
            "mnemon_status",
            "Where this workspace's memory lives, its branch, how full Runtime memory is, Documents and Memory Spaces "
            "counts, and any problem found. Use it when a memory tool fails or the user asks.")),
)
