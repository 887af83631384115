"""Reading the files of one source, and the files they import: :func:`read_all` gives a :class:`Found`.

Each file is read safely (:func:`~.reading.read_source`: refusals are listed, never fatal) and split into items by
its format; then the files it imports (``Format.follow``: Claude Code's ``@path``) are read right after it, up to
:data:`~.claude_code.MAX_IMPORT_HOPS` hops, each file once (a cycle ends; a file the source reads itself is not
read again as an import; every reference to a file read is listed in its ``importedBy``). An import that leaves
its directory, or one hop too deep, is a refusal saying so. An imported file outside the repository and the Claude
home needs approval (:mod:`.outside`: listed, not read, unless ``allow_outside``); a credential location is refused
whatever ``allow_outside`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import outside
from .claude_code import MAX_IMPORT_HOPS
from .formats import Format, Located
from .reading import InvalidSource, Item, Refusal, read_source


@dataclass(frozen=True)
class Found:
    """What one source holds: ``files`` (``[{path, sha256, bytes, importedBy?}]``, read; ``importedBy``: every
    reference that named a file another file imports, ``"<importer> (@<path as written>)"``, one per reference even
    when several name the file, which is read once), ``refused`` (``[{path, reason}]``), the ``items`` of the files
    read, in file order, before redaction and routing, and ``needs_approval`` (``[{path, reason, importedBy}]``:
    imported files outside the repository and the Claude home, not read: :mod:`.outside`)."""

    files: list[dict[str, Any]]
    refused: list[dict[str, str]]
    items: list[Item]
    needs_approval: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Walk:
    """What :func:`_visit` carries: the ``env``, the real paths ``seen``, the file rows ``read`` by real path, the
    ``trusted`` roots (:func:`.outside.trusted_roots`) and ``allow_outside``."""

    env: Mapping[str, str]
    seen: set[Path]
    read: dict[Path, dict[str, Any]]
    trusted: list[Path]
    allow_outside: bool


def read_all(fmt: Format, located: list[Located], env: Mapping[str, str], *, workspace: Path | None = None,
             allow_outside: bool = False, trusted: Iterable[Path] = ()) -> Found:
    """The :class:`Found` of the files ``located`` of ``fmt`` and of the files they import (module doc); ``env``
    gives the home directory ``~/`` imports name and the Claude home. Imported files are read without approval
    inside ``workspace`` (the repository), the directories ``located`` were found in, ``trusted`` and the Claude
    home; elsewhere only with ``allow_outside``."""
    found = Found([], [], [])
    roots = outside.trusted_roots(workspace, [*(loc.base for loc in located), *trusted], env)
    walk = _Walk(env, {outside.real(loc.path) for loc in located}, {}, roots, allow_outside)
    for loc in located:
        _visit(fmt, loc, 0, walk, found)
    return found


def _visit(fmt: Format, loc: Located, hops: int, walk: _Walk, found: Found) -> None:
    """Read ``loc`` into ``found`` (its file, or its refusal, and its items), then the files it imports
    (``fmt.follow``: Claude Code's ``@path``), each right after its importer, ``hops`` deep: a file read before
    (or one of the source's own files) is not read again, so a cycle ends, but the reference is listed in its
    ``importedBy``; one more than :data:`~.claude_code.MAX_IMPORT_HOPS` hops away is refused, saying so, as a path
    that leaves its directory is (``fmt.follow``'s refusal), a credential location is, and one outside the trusted
    roots waits for approval (module doc)."""
    read = read_source(loc.path, loc.base)
    if isinstance(read, Refusal):
        found.refused.append(read.to_dict())
        return
    try:
        items = fmt.items(read, loc)
    except InvalidSource as exc:  # the file breaks its format's rules: refused, nothing of it imported
        found.refused.append({"path": str(read.path), "reason": exc.reason})
        return
    row: dict[str, Any] = {"path": str(read.path), "sha256": read.sha256, "bytes": read.size}
    if loc.via:
        row["importedBy"] = [loc.via]
    found.files.append(row)
    walk.read.setdefault(outside.real(read.path), row)
    found.items.extend(items)
    for target in fmt.follow(read, loc, walk.env) if fmt.follow else []:
        if isinstance(target, Refusal):
            found.refused.append(target.to_dict())
            continue
        real = outside.real(target.path)
        if real in walk.seen:
            if real in walk.read:  # read once; this reference is listed with the others
                walk.read[real].setdefault("importedBy", []).append(target.via)
            continue
        rule = outside.credential_rule(target.path) or outside.credential_rule(real)
        if rule:
            found.refused.append({"path": str(target.path), "reason": f"is imported by {target.via} but is {rule}: "
                                  "never read, even when files outside are allowed"})
            continue
        stays = outside.is_trusted(target.path, [outside.real(target.base)])  # else read_source refuses it
        if stays and not walk.allow_outside and not outside.is_trusted(target.path, walk.trusted):
            _needs_approval(found, target, walk.trusted)
            continue
        if hops + 1 > MAX_IMPORT_HOPS:
            found.refused.append({"path": str(target.path), "reason": f"is imported by {read.path} more than "
                                  f"{MAX_IMPORT_HOPS} hops from the first file (Claude Code follows at most "
                                  f"{MAX_IMPORT_HOPS}); not read"})
            continue
        walk.seen.add(real)
        _visit(fmt, target, hops + 1, walk, found)


def _needs_approval(found: Found, target: Located, trusted: list[Path]) -> None:
    """List ``target`` as needing approval (once per path, every reference in its ``importedBy``)."""
    path = str(target.path)
    row = next((r for r in found.needs_approval if r["path"] == path), None)
    if row is None:
        found.needs_approval.append({"path": path, "reason": outside.approval_reason(trusted),
                                     "importedBy": [target.via]})
    else:
        row["importedBy"].append(target.via)
