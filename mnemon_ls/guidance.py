"""The routing guidance and admission rules shown to assistants (MCP server instructions, the
``mnemon-routing`` prompt, and the guidance line of the wake snapshot).

Written for mnemon-ls in our own words, after the behaviour of the seeds' ``mnemon:routing`` and
``mnemon:runtime-memory`` sections (seed 001 "Per-Turn Context", "Root Agent Recall", "Explicit
Long-Term Writes"). One module holds the text so every surface says the same thing.
"""

from __future__ import annotations

#: The query gradient: where to look first, cheapest and most current first.
ROUTING_GUIDANCE = """\
Where to look, in this order (stop as soon as you have the answer):
1. The request itself and the repository: the user's words and the code are the most current facts.
   Do not recall memory merely to show that it exists.
2. Runtime memory: USER.md (who the user is, how they like to work) and MEMORY.md (this workspace's
   working reference) are already in the wake snapshot. Read it before asking the user again.
3. Documents: designs, investigations and handoffs of this workspace. Search them
   (mnemon_document_search) when the task touches a decision or a past investigation.
4. Memory Spaces: long-term stores recalled by meaning (mnemon_recall). Recall when the snapshot and
   the documents do not answer, or when older decisions may matter. Use an item's exact space id and
   id for mnemon_related.
5. A cold reference (an item that names a document id and a cold path) points at an archived
   document: follow it exactly (mnemon_document_manage get) instead of guessing its contents."""

#: What belongs in which tier, and what never belongs anywhere.
ADMISSION_RULES = """\
What to save, and where:
- USER.md (mnemon_runtime_memory target=user): durable facts about the person: role, preferences,
  conventions they insist on. Short, stable, useful in every project.
- MEMORY.md (mnemon_runtime_memory target=memory): this workspace's working reference: commands that
  work, layout facts, pitfalls, current decisions. One fact per entry; replace an entry when it changes;
  scope an entry to branches when it only holds there.
- A Document (mnemon_document_create): anything longer than a few lines that someone will read again:
  a design, an investigation, a handoff.
- A Memory Space (mnemon_remember): long-term facts and decisions worth recalling months later, in the
  space whose description fits.
Never save secrets or credentials, temporary progress ("now editing X"), raw logs or tool output, or
anything the repository already states. Save only what the user would want remembered; when the user
says not to remember something, do not."""

#: One line for the wake snapshot header (bounded; the full text is in the MCP instructions).
WAKE_GUIDANCE_LINE = ("Guidance: answer from the request and the repository first, then this snapshot; search "
                      "Documents, then recall Memory Spaces; never store secrets, temporary progress or raw logs.")


#: How an assistant recalls Memory Spaces, per surface that shows the wake: a tool of the MCP server or
#: of VS Code's language-model tools (``tool``), the language server's request (``lsp``), the CLI (``cli``).
RECALL_HINTS = {"tool": "mnemon_recall", "lsp": "mnemon/recall", "cli": "`mnemon-ls recall`"}


def recall_hint(surface: str) -> str:
    """The recall route to name in the wake for ``surface`` (a key of :data:`RECALL_HINTS`); raises
    ``KeyError`` for another."""
    return RECALL_HINTS[surface]


def instructions() -> str:
    """The MCP server's ``instructions``: what mnemon-ls is, the routing guidance and the admission rules
    (plain text, about 2,300 characters)."""
    return ("mnemon-ls is this workspace's memory: Runtime memory (USER.md, MEMORY.md), Documents and "
            "Memory Spaces, scoped to the workspace and its git branch. Read the wake snapshot "
            "(mnemon_wake, or the mnemon://wake resource) at the start of a session.\n\n"
            f"{ROUTING_GUIDANCE}\n\n{ADMISSION_RULES}")
