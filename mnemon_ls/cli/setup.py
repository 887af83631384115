"""The CLI command that connects assistants outside the editor: ``mnemon-ls setup CLIENT`` (their MCP entry
and hooks, :mod:`mnemon_ls.clients`); what those hooks run, ``mnemon-ls hook EVENT``, is
:mod:`mnemon_ls.cli.hooks`. The handler takes the CLI's ``emit`` as an argument, like :mod:`.doctor`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable

from ..errors import EXIT_OK
from ..host import default_workspace


def cmd_setup(args: argparse.Namespace, emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """``mnemon-ls setup CLIENT``: show, then write (unless ``--dry-run``), the client's MCP entry and hooks."""
    from .. import clients

    # Project files go to the workspace's top (the repository), else the current directory.
    workspace = (Path(os.path.abspath(os.path.expanduser(args.workspace))) if args.workspace
                 else default_workspace() or Path(os.getcwd()))
    changes = clients.plan(args.client, workspace=workspace, project=args.project, remove=args.remove)
    written = [] if args.dry_run else clients.apply(changes)
    emit(args, clients.report(args.client, changes, project=args.project, remove=args.remove,
                               dry_run=args.dry_run, written=written), clients.report_text(
        args.client, changes, project=args.project, remove=args.remove, dry_run=args.dry_run))
    return EXIT_OK
