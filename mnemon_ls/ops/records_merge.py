"""The ``records.merge_driver`` operation: ``mnemon-ls records merge-driver %O %A %B``, the git merge driver of
the records files (:mod:`mnemon_ls.records.merge`), which ``mnemon-ls setup git`` names in ``.git/config``.

Git runs it with three file paths (relative to the top of the working tree, where it runs the command), reads
the merged result back from ``%A`` and takes the exit code as the verdict: 0 a clean merge, anything else a
conflict. That fits an operation of the command line only: the paths are its arguments, the result goes into
``%A`` (a write, but of no storage root: ``host=False``, ``gated=False``) and :attr:`CliCommand.exit_code` maps
an unclean merge (a line that is not a record was added) to 1. An unreadable file is ``invalid-input`` (exit
2: git reports a conflict too, and ``%A`` is untouched).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..errors import EXIT_FAILURE, EXIT_OK
from .base import Call, CliArg, CliCommand, Operation, WorkspaceParams


class MergeDriverParams(WorkspaceParams):
    """``{base, ours, theirs}``: the file paths git passes as ``%O``, ``%A`` and ``%B``."""

    base: str = Field(min_length=1, description="the common ancestor's version (git's %O)")
    ours: str = Field(min_length=1, description="the current branch's version, replaced by the result (git's %A)")
    theirs: str = Field(min_length=1, description="the other branch's version (git's %B)")


def _merge(_call: Call, p: MergeDriverParams) -> dict[str, Any]:
    """Merge and write ``ours`` (:func:`mnemon_ls.records.merge.merge_files`): ``{file, clean, records,
    fromTheirs, conflicts [{id, copyId, reason}], malformed [{side, line, reason, text}]}``."""
    from ..records.merge import merge_files

    result = merge_files(p.base, p.ours, p.theirs)
    return {"file": p.ours, "clean": result.clean, "records": result.records, "fromTheirs": result.from_theirs,
            "conflicts": [c.to_dict() for c in result.conflicts], "malformed": result.malformed}


def _text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    """One summary line, then one line per record marked for review and per line that is not a record (git
    prints the driver's output during the merge)."""
    lines = [f"mnemon-ls records merge: {data['records']} records, {data['fromTheirs']} lines from theirs, "
             f"{len(data['conflicts'])} marked stale for review"
             + (f", {len(data['malformed'])} lines that are not records (kept; resolve them by hand)"
                if data["malformed"] else "")]
    lines += [f"  {c['id']}: {c['reason']}" for c in data["conflicts"]]
    lines += [f"  {m['side']} line {m['line']}: {m['reason']}" for m in data["malformed"]]
    return "\n".join(lines)


OPERATIONS = (
    Operation(
        "records.merge_driver", MergeDriverParams, _merge,
        "Merge three versions of a records file by record id (the git merge driver).", effect="write", gated=False,
        cli=CliCommand(("records", "merge-driver"),
                       "git merge driver of records files: merge BASE OURS THEIRS by record id into OURS",
                       (CliArg("base", path=True, help="the common ancestor's file (%%O)"),
                        CliArg("ours", path=True, help="the current branch's file, replaced by the result (%%A)"),
                        CliArg("theirs", path=True, help="the other branch's file (%%B)")),
                       text=_text, host=False,
                       exit_code=lambda d: EXIT_OK if d["clean"] else EXIT_FAILURE)),
)
