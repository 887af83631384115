"""``mnemon-ls runtime compact``: send an assistant's compaction of a full USER.md (or MEMORY.md) back.

The plan comes from the ``runtime-capacity`` error of the mutation that did not fit (``mnemon-ls runtime
add --target user ... --json`` prints it as ``error.maintenance``; the language server returns it in
``data.maintenance``). The compaction is either one JSON file ``--plan FILE`` (``-``: standard input)
holding the whole request ``{revision, target, entries: [{content, importance, sourceIndexes}], pending?}``
(the shape of ``mnemon/runtime/compact`` without ``workspace``), or ``--entries FILE`` (``-``: standard
input) holding the entries list with ``--revision`` and ``--target`` (default ``user``) and the pending
mutation as ``--pending JSON``. Both call :meth:`mnemon_ls.runtime.source.RuntimeSource.compact`, the same
operation the language server calls.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from .errors import EXIT_OK, InvalidInput
from .runtime.model import PROJECTION_FILES


def add_parser(actions: Any, common: argparse.ArgumentParser) -> None:
    """Register ``runtime compact`` on the ``runtime`` sub-parsers."""
    compact = actions.add_parser("compact", parents=[common],
                                 help="commit a compaction of a full USER.md/MEMORY.md (the plan of its capacity error)")
    source = compact.add_mutually_exclusive_group(required=True)
    source.add_argument("--plan", metavar="FILE",
                        help="JSON {revision, target, entries: [{content, importance, sourceIndexes}], pending?} "
                             "('-' reads standard input)")
    source.add_argument("--entries", metavar="FILE",
                        help="JSON list [{content, importance, sourceIndexes}] ('-' reads standard input); "
                             "needs --revision")
    compact.add_argument("--revision", help="the plan's revision (data.maintenance.revision)")
    compact.add_argument("--target", choices=("user", "memory"), help="compacted target (default user)")
    compact.add_argument("--pending", metavar="JSON",
                         help="the plan's pending mutation as JSON {action, content?, oldText?, importance?}")


def _load(value: str, field: str) -> Any:
    """JSON from the file ``value`` (``-``: standard input); :class:`InvalidInput` naming ``field``."""
    try:
        raw = sys.stdin.buffer.read() if value == "-" else open(value, "rb").read()
    except OSError as exc:
        raise InvalidInput(field, f"{value} cannot be read ({exc.strerror or exc})") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(field, f"is not UTF-8 JSON ({exc})") from None


def request_of(args: argparse.Namespace) -> dict[str, Any]:
    """``{revision, target, entries, pending}`` from ``--plan`` or ``--entries`` + flags."""
    if args.plan is not None:
        if args.revision or args.pending or args.target:
            raise InvalidInput("plan", "already holds revision, target and pending: do not combine it with "
                                       "--revision, --target or --pending")
        request = _load(args.plan, "plan")
        if not isinstance(request, dict):
            raise InvalidInput("plan", "must be a JSON object {revision, target, entries, pending?}")
        unknown = sorted(set(request) - {"revision", "target", "entries", "pending"})
        if unknown:
            raise InvalidInput(f"plan.{unknown[0]}", "is not a known field (revision, target, entries, pending)")
        return {"revision": request.get("revision"), "target": request.get("target", "user"),
                "entries": request.get("entries"), "pending": request.get("pending")}
    if not args.revision:
        raise InvalidInput("revision", "is required with --entries (the plan's data.maintenance.revision)")
    pending = None
    if args.pending is not None:
        try:
            pending = json.loads(args.pending)
        except json.JSONDecodeError as exc:
            raise InvalidInput("pending", f"is not JSON ({exc})") from None
    return {"revision": args.revision, "target": args.target or "user", "entries": _load(args.entries, "entries"),
            "pending": pending}


def runtime_compact(args: argparse.Namespace, host_of: Callable[[argparse.Namespace], Any],
                    emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """``mnemon-ls runtime compact``: validate, commit, print the receipt (``--json``: the receipt dict)."""
    request = request_of(args)
    host = host_of(args)
    receipt = host.runtime.compact(request["revision"], request["target"], request["entries"], request["pending"])
    data = receipt.to_dict()
    text = (f"{receipt.message} {PROJECTION_FILES[receipt.target]}: {receipt.entry_count} "
            f"{'entry' if receipt.entry_count == 1 else 'entries'}, {receipt.used}/{receipt.limit} UTF-8 bytes; "
            f"revision {receipt.revision[:12]}; {len(data['maintenance']['archived'])} replaced entries kept in "
            f"{host.runtime.store_for(receipt.target).archive_dir}")
    emit(args, data, text)
    return EXIT_OK
