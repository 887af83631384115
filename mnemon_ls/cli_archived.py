"""``mnemon-ls runtime archived [--json]``: what left MEMORY.md through capacity maintenance and where it
went (issue 9), read from ``runtime/archived/lineage.jsonl`` (:mod:`mnemon_ls.maintenance.lineage`).

Also the parsing of ``--routes JSON`` for ``runtime add|replace|remove``. The handlers take the CLI's
``host`` factory and ``emit`` function so that this module adds commands without reorganising cli.py.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from .errors import EXIT_OK


def describe_destination(record: dict[str, Any]) -> str:
    """``Memory Space <id>, item <id>`` or ``local archive <reference>`` for one lineage record dict."""
    from .maintenance.lineage import parse_space_reference

    reference = record["destination"]["reference"]
    target = parse_space_reference(reference)
    if target is not None:
        return f"Memory Space {target[0]}, item {target[1]}"
    return f"local archive {reference}"


def cmd_runtime_archived(args: argparse.Namespace, host_of: Callable[[argparse.Namespace], Any],
                         emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """Print every archived fact, oldest first: time, destination, summary (``--json``: the listing of
    :func:`mnemon_ls.maintenance.archived_listing`)."""
    from .maintenance import archived_listing

    host = host_of(args)
    listing = archived_listing(host.runtime)
    records = listing["records"]
    if not records:
        lines = [f"Nothing has been archived out of MEMORY.md ({listing['path']} does not list any fact)."]
    else:
        noun = "fact" if len(records) == 1 else "facts"
        lines = [f"{len(records)} {noun} left MEMORY.md (lineage: {listing['path']}):"]
        for record in records:
            note = "  (also still in MEMORY.md)" if record["stillInHotMemory"] else ""
            lines.append(f"- {record['archivedAt']}  -> {describe_destination(record)}{note}")
            lines.append(f"    {record['summary']}")
    if listing["damaged"]:
        lines.append(f"{len(listing['damaged'])} lineage lines do not parse and are skipped "
                     f"(lines {', '.join(map(str, listing['damaged'][:5]))}).")
    emit(args, listing, "\n".join(lines))
    return EXIT_OK
