"""Who reads an operation's answer: a ``person`` or an ``assistant`` (a language model).

Decided here, once, for every operation whose answer differs by reader (``spaces.recall``,
``documents.search``): the MCP server's tools (surface ``mcp``) and anything handed to an assistant's
context by the project itself (surface ``tool``: hooks, the wake given to tools) answer an assistant; the
language server answers whoever sent the request, so its clients say so (the VS Code language-model tools
send ``audience: "assistant"``; the editor's own views send nothing and get a person's answer); the
command line answers a person.

What an assistant is not sent is the Source's rule, applied by the Source that knows its results'
confidence: a recall item with tier ``low`` outside the ranking's head, whatever found it
(:func:`mnemon_ls.spaces.service_recall.withheld_from_assistant`), a Documents hit ``semantic-low``
(:meth:`mnemon_ls.documents.search.Search.find`). Both count what they withheld in the answer's
``withheld.lowConfidence``, and the model-facing text says so (:mod:`.modeltext`): nothing is dropped
silently.
"""

from __future__ import annotations

from typing import Any, Literal

from .base import Call

Audience = Literal["person", "assistant"]
#: Surfaces whose every answer goes to an assistant.
ASSISTANT_SURFACES = frozenset({"mcp", "tool"})
#: The params field's description (LSP wire ``audience``; not offered as an MCP argument or a CLI option).
AUDIENCE_HELP = ("who reads the answer: assistant (a language model's tool: results with low confidence are "
                 "withheld and counted) or person (default on the language server)")


def audience_of(call: Call, params: Any) -> Audience:
    """``assistant`` for a call from an assistant surface (:data:`ASSISTANT_SURFACES`) whatever the params
    say, else the params' ``audience`` when given, else ``person``."""
    if call.surface in ASSISTANT_SURFACES:
        return "assistant"
    return getattr(params, "audience", None) or "person"
