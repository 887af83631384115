"""Staging steps every component of a pack import shares (:mod:`.importer`, :mod:`.stagedocs`).

The staging directory of a root (:func:`stage_for`: inside the root, so the swap's renames stay on one file
system; outside every root for a dry run), a component directory copied into it (:func:`copy_tree`), and a
component directory read steady (:func:`read_steady`): its :func:`.swap.tree_stamp` is taken around the read
and kept in ``ImportPlan.watched``, so a change made before the swap refuses the import (``changed-meanwhile``).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import fsio
from .swap import STAGE_PREFIX, changed_meanwhile_error, tree_stamp

if TYPE_CHECKING:
    from .plan import ImportPlan


def copy_tree(source: Path, target: Path, skip: Callable[[str], bool]) -> None:
    """Copy the regular files under ``source`` into ``target`` (directories 0700, files 0600); names for
    which ``skip(relative path)`` is true, links and special files are left out."""
    fsio.ensure_dir(target)
    if not source.is_dir():
        return
    for entry in os.scandir(source):
        if skip(entry.name) or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            copy_tree(Path(entry.path), target / entry.name, lambda name: False)
        elif entry.is_file(follow_symlinks=False):
            fsio.create_file_durably(target / entry.name, Path(entry.path).read_bytes())


def read_steady(directory: Path, read: Callable[[], Any], plan: "ImportPlan") -> Any:
    """``read()`` (which may first take hand edits in) until ``directory``'s :func:`tree_stamp` is the same
    before and after it, so what was read is what the stamp describes; the stamp goes into
    ``plan.watched`` (checked again before the swap). Three tries, then :class:`~mnemon_ls.errors.PackRefused`
    ``changed-meanwhile`` (the directory keeps changing). A dry run reads once and watches nothing."""
    if plan.dry_run:
        return read()
    for _attempt in range(3):
        before = tree_stamp(directory)
        result = read()
        if tree_stamp(directory) == before:
            plan.watched.append((directory, before))
            return result
    raise changed_meanwhile_error(directory)


def stage_for(root: Path, plan: "ImportPlan", stages: dict[Path, Path]) -> Path:
    """The staging directory inside ``root`` (renames stay on one file system), made on first use and
    listed in ``plan.dirs``; one per real path in ``stages``. A dry run stages in a new temporary directory
    outside every root instead."""
    key = Path(os.path.realpath(root))
    if key not in stages:
        if plan.dry_run:  # nothing under the root: not even a directory that is removed again
            import tempfile

            stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
        else:
            stage = root / f"{STAGE_PREFIX}{uuid.uuid4()}"
            fsio.ensure_dir(stage)
        stages[key] = stage
        plan.dirs.append(stage)
    return stages[key]
