"""Asking the client for its code lenses again (``workspace/codeLens/refresh``): what every part of the server
that changes what a lens says calls (a write, a save, a branch change, a memory changed on disk; the lenses
themselves are :mod:`.cited`). Base layer of the language server: imports nothing of it.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("mnemon_ls.lsp")


def refresh_lenses(ls: Any) -> None:
    """Ask the client for its code lenses again (``workspace/codeLens/refresh``) when it declared
    ``workspace.codeLens.refreshSupport``; never raises (a refresh is a hint)."""
    if not ls.supports("workspace.code_lens.refresh_support"):
        return
    try:
        answer = ls.workspace_code_lens_refresh(None)
    except Exception as exc:
        log.info("workspace/codeLens/refresh not sent: %s", exc)
        return
    answer.add_done_callback(_answered)


def _answered(answer: Any) -> None:
    """Read the client's answer to a refresh, so that an error answer is logged, never left unretrieved."""
    if not answer.cancelled() and answer.exception() is not None:
        log.info("workspace/codeLens/refresh: %s", answer.exception())
