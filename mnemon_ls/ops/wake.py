"""The wake operation's run function and its command-line presentation, importable without pydantic.

``workspace.wake`` is declared in :mod:`.workspace` (its params model :class:`~.workspace.WakeParams`), with
:func:`run` and :data:`COMMAND` from here: every surface runs :func:`run`. The command line's light path
(:mod:`mnemon_ls.cli.light`: ``mnemon-ls wake`` runs at every session start of some clients) calls the same
:func:`run` with a :class:`WakeRequest` its own parser built, so it never imports pydantic or the registry;
``tests/cli/test_light.py`` checks that :class:`WakeRequest` has the fields and types of ``WakeParams`` and that
both paths print the same.

The language server's ``mnemon/wake`` is a session request (:class:`~.surfaces.LspMethod` ``session``): with
``viewId`` it answers a turn View's pinned wake; otherwise it renders the branch the server probes and
announces, and the projections the wake repaired are announced instead of answered (:func:`session_wake`,
which ``mnemon/turn/begin`` pins too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .surfaces import Call, CliArg, CliCommand


@dataclass(frozen=True)
class WakeRequest:
    """The params of ``workspace.wake`` built without pydantic: ``branch`` (render as if on it; validated by
    the Host), ``budget_chars`` (1024..4194304 characters; validated by the Host), ``workspace`` (unused on
    the command line, which opens its own host)."""

    branch: str | None = None
    budget_chars: int | None = None
    workspace: str | None = None


def run(call: Call, p: Any) -> dict[str, Any]:
    """``workspace.wake``: repair the projections, render the snapshot for ``p.branch`` (default the checked-out
    branch) within ``p.budget_chars``; returns the snapshot's ``to_dict()`` plus ``root`` and ``repairs``.
    For the language server's session (``call.client``): the View ``p.view_id``'s pinned wake when given,
    else :func:`session_wake` of the folder ``p.workspace`` for ``p.surface``. Raises
    :class:`~mnemon_ls.errors.InvalidInput` naming ``branch`` or ``budget``, and
    :class:`~mnemon_ls.errors.NotFound` naming ``viewId``."""
    client = call.client
    if client is not None:
        view_id = getattr(p, "view_id", None)
        if view_id is not None:
            return client.views.get(view_id).wake
        return session_wake(client, client.folder(p.workspace), p.branch, p.budget_chars,
                            getattr(p, "surface", "lsp"))
    host = call.host
    snapshot, repairs = host.wake(branch=p.branch, budget_chars=p.budget_chars,
                                  surface="cli" if call.surface == "cli" else "tool")
    return snapshot.to_dict() | {"root": str(host.root), "repairs": [
        report.to_dict() | {"store": str(store.runtime_dir)} for store, report in repairs]}


def session_wake(client: Any, folder: Any, branch: str | None = None, budget_chars: int | None = None,
                 surface: str = "lsp") -> dict[str, Any]:
    """The wake of one folder of the language server's session (``client``,
    :class:`~mnemon_ls.ops.client.ClientSession`): without ``branch``, the branch the session probes now (and
    announces when it changed); rendered under the folder's pack gate; the projections it repaired announced by
    the session. Returns the snapshot's ``to_dict()`` plus ``workspace`` (the folder URI). Raises what
    :meth:`~mnemon_ls.host.WorkspaceHost.wake` raises."""
    probed = client.branch(folder) if branch is None else None
    host = folder.host
    with host.pack_gate():
        snapshot, repairs = host.wake(branch, budget_chars, probed=probed, surface=surface)
    client.repaired(folder, repairs)
    return snapshot.to_dict() | {"workspace": folder.uri}


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


#: ``mnemon-ls wake``.
COMMAND = CliCommand(
    ("wake",), "print the wake snapshot an assistant gets", (
        CliArg("branch", flag="--branch", metavar="NAME", help="render as if on this branch"),
        CliArg("budget_chars", flag="--budget", metavar="CHARS",
               help="largest snapshot in characters (1024..4194304)")),
    text=lambda d, _c, _p: d["text"], warnings=lambda d, _c: repair_lines(d["repairs"]), warning_prefix="")
