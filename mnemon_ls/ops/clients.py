"""The ``clients.setup`` operation (``mnemon-ls setup CLIENT``): add mnemon-ls to an assistant client's MCP
configuration, and its hooks where the client has them, or take it out again (:mod:`mnemon_ls.clients`); what
those hooks run, ``mnemon-ls hook EVENT``, is :mod:`mnemon_ls.cli.hooks`.

It writes the client's configuration files, not memory: it opens no storage root and holds no pack gate
(``gated=False``, and its command opens no host: :attr:`~mnemon_ls.ops.surfaces.CliCommand.host`); ``--project``
files go to the workspace (``--workspace``, else the nearest repository upward, else the current directory).
Only the command line exposes it. ``setup git`` is not a client: it names the records merge driver
(``mnemon-ls records merge-driver``) in the repository's ``.git/config`` and ``.gitattributes``
(:mod:`mnemon_ls.gitmerge`; ``--project`` changes nothing there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, StrictBool

from .base import Call, CliArg, CliCommand, Operation, WorkspaceParams


class SetupParams(WorkspaceParams):
    """``{workspace?, client, project?, remove?, dryRun?}``."""

    client: Literal["claude-code", "codex", "cursor", "vscode", "git"] = Field(
        description="the assistant client, or git: the records merge driver in the repository's .git/config and "
                    ".gitattributes")
    project: StrictBool = Field(False, description="write the workspace's shared configuration instead of the user's")
    remove: StrictBool = Field(False, description="take mnemon-ls out again (other entries stay)")
    dry_run: StrictBool = Field(False, alias="dryRun", description="show what would change, write nothing")


def _setup(_call: Call, p: SetupParams) -> dict[str, Any]:
    """Plan the client's changes, write them unless ``dry_run``; the report (:func:`mnemon_ls.clients.report`).
    Raises ``invalid-input`` naming a file it cannot parse or that leads outside the workspace, or ``workspace``
    when it starts with ``~name`` (another user's home; nothing written)."""
    from .. import clients
    from ..host import default_workspace

    # Project files go to the workspace's top (the repository), else the current directory.
    from ..settings import own_home_path

    workspace = (Path(os.path.abspath(own_home_path(p.workspace, "workspace"))) if p.workspace
                 else default_workspace() or Path(os.getcwd()))
    changes = clients.plan(p.client, workspace=workspace, project=p.project, remove=p.remove)
    written = [] if p.dry_run else clients.apply(changes)
    return clients.report(p.client, changes, project=p.project, remove=p.remove, dry_run=p.dry_run, written=written)


def _setup_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    from ..clients import report_text

    return report_text(data)


OPERATIONS = (
    Operation(
        "clients.setup", SetupParams, _setup,
        "Add mnemon-ls to an assistant client's MCP configuration (and its hooks), or remove it.", effect="write",
        gated=False,
        cli=CliCommand(("setup",), "add mnemon-ls to an assistant's MCP configuration (and its hooks); git: the "
                       "records merge driver",
                       (CliArg("client", help=""),  # no help line of its own: the choices say it
                        CliArg("project", flag="--project", kind="flag"),
                        CliArg("remove", flag="--remove", kind="flag"),
                        CliArg("dry_run", flag="--dry-run", kind="flag")),
                       text=_setup_text, host=False)),
)
