"""Capacity maintenance over MCP: the USER.md compaction plan in a ``runtime-capacity`` tool error, and the
``mnemon_runtime_compact`` tool that sends the compaction back (issue 9).

The tool calls :meth:`mnemon_ls.runtime.source.RuntimeSource.compact`, the same operation as the language
server's ``mnemon/runtime/compact`` and ``mnemon-ls runtime compact``. Registered from
:mod:`mnemon_ls.mcp.server` with one line (:func:`register`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from ..errors import MnemonError, RuntimeCapacityError

if TYPE_CHECKING:
    from .server import MnemonMcp


def plan_text(error: MnemonError) -> str | None:
    """The compaction plan of a ``target=user`` ``runtime-capacity`` error as text for the model (the
    numbered entries with importance, the budget, the revision and the rules), or ``None``."""
    plan = error.data.get("maintenance") if isinstance(error, RuntimeCapacityError) else None
    if not isinstance(plan, dict):
        return None
    lines = [f"{plan['file']} is full. Compact it with mnemon_runtime_compact: revision={plan['revision']}, "
             f"target={plan['target']}, pending={json.dumps(plan['pending'], ensure_ascii=False)}, entries = a list "
             f"of {{content, importance, sourceIndexes}} using at most {plan['budgetBytes']} UTF-8 bytes. Rules:"]
    lines += [f"- {rule}" for rule in plan["rules"][1:]]
    lines.append("Numbered entries:")
    lines += [f"{e['index']}. [importance={e['importance']}] {e['content']}" for e in plan["entries"]]
    return "\n".join(lines)


def register(mcp: "MnemonMcp") -> None:
    """Add ``mnemon_runtime_compact`` (a write tool) to ``mcp``."""
    from ..ops import modeltext as fmt

    async def mnemon_runtime_compact(
        revision: Annotated[str, Field(description="the plan's revision (from the runtime-capacity error)")],
        entries: Annotated[list[dict[str, Any]], Field(description="the compacted entries: [{content, importance, sourceIndexes: [1-based plan entry numbers]}], every number exactly once")],
        target: Annotated[Literal["user", "memory"], Field(description="the full target (user = USER.md)")] = "user",
        pending: Annotated[dict[str, Any] | None, Field(description="the pending mutation of the plan, applied after the compaction")] = None,
        workspace: Annotated[str | None, Field(description="Workspace directory when the client has several roots")] = None,
        ctx: Context | None = None,
    ) -> str:
        """Replace the entries of a full USER.md (or MEMORY.md) by a shorter rewrite you made from the numbered
        plan of the runtime-capacity error, and apply the pending change in the same commit. Every plan entry
        number goes into exactly one sourceIndexes; never lower an entry's importance; stay within the byte
        budget. A rule broken changes nothing and names the entry and the rule."""
        receipt = await mcp._call(ctx, workspace, lambda h: h.runtime.compact(revision, target, entries, pending))
        return fmt.runtime_receipt(receipt.to_dict())

    mcp._tool(write=True)(mnemon_runtime_compact)
