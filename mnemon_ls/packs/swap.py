"""The commit protocol of a pack import: the swap journal, the swap, its roll back and roll forward.

:mod:`.importer` stages what an import brings (``ImportPlan.pairs``: staged path -> target) and calls
:func:`swap`; steps 3-5 of its module doc are here. The journal ``<root>/.dsh-pack-swap.json`` (``{"version":
1, "pairs": [{staged, target, backup, stamp?}], "dirs": [...], "roots": [...]}``, absolute paths) decides the
import; :func:`recover` (run by every host on the root, and by every pack operation) finishes a decided
swap a killed process left. A component directory the import read (``ImportPlan.watched``: runtime/,
documents/) carries its :func:`tree_stamp` in the journal: changed before the swap moves it, the swap is
rolled back (``changed-meanwhile``); changed after the import was killed and before the roll forward, the old
directory is kept aside in ``<root>/.dsh-pack-displaced-<uuid>/`` (never removed; :func:`displaced_findings`
reports it), so a hand edit is never lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .. import fsio
from ..errors import MnemonError, PackRefused
from .. import packgate as gate

if TYPE_CHECKING:
    from .plan import ImportPlan

PACK_LOCK = ".dsh-pack.lock"

JOURNAL = ".dsh-pack-swap.json"
STAGE_PREFIX = ".dsh-pack-stage-"
BACKUP_PREFIX = ".dsh-pack-backup-"
DISPLACED_PREFIX = ".dsh-pack-displaced-"
#: Files of a component directory that are never carried into its staged copy (derived or transient).
_DERIVED = (".search.sqlite3", ".access.lock", ".index.lock", ".memories.lock", ".mnemon-ls-index.db", ".cover.json")

#: Test seam: called with a step name ("staged", "journal", "swap:<i>:moved", "swap:<i>:placed",
#: "swapped", "cleaned") during an import.
_step_hook: Callable[[str], None] | None = None


def step(name: str) -> None:
    """Call the test seam :data:`_step_hook` with ``name``, if one is set."""
    if _step_hook is not None:
        _step_hook(name)


def _roll_forward(journal: dict[str, Any], root: Path) -> list[str]:
    """Finish the journal's pairs; returns what :func:`_displace` moved aside."""
    displaced = []
    for pair in journal["pairs"]:
        staged, target, backup = Path(pair["staged"]), Path(pair["target"]), Path(pair["backup"])
        if not os.path.lexists(staged):
            continue  # placed already
        if os.path.lexists(target):
            if os.path.lexists(backup):  # created by another program after the old one was moved away
                displaced.append(_displace(target, root))
            else:
                os.rename(target, backup)
        if os.path.lexists(backup) and _changed_since(pair, backup):
            # changed by hand after the import was decided (killed before this roll forward, or while the
            # swap compared it): kept aside, never cleaned
            displaced.append(_displace(backup, root, name=target.name))
        os.rename(staged, target)
        fsio.fsync_dir(target.parent)
    return displaced


def _changed_since(pair: dict[str, Any], moved: Path) -> bool:
    """Whether the directory ``moved`` (a pair's old target, moved aside) differs from the
    :func:`tree_stamp` the journal recorded for it when the import was decided."""
    stamp = pair.get("stamp")
    if not isinstance(stamp, list):
        return False
    return tree_stamp(moved) != stamp


def clean(dirs: Sequence[str]) -> None:
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)


def _leftovers(root: Path) -> list[str]:
    try:
        names = os.listdir(root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [str(root / n) for n in names if n.startswith((STAGE_PREFIX, BACKUP_PREFIX))]


def recover(root: Path | str) -> dict[str, Any] | None:
    """Finish a swap a killed import left decided (module doc), under the pack lock; remove stage and
    backup directories no journal names. Returns ``{"rolledForward": pairs}`` when it finished one,
    else ``None``. Writes nothing when there is nothing to do."""
    root = Path(root)
    journal_path = root / JOURNAL
    if not journal_path.exists() and not _leftovers(root):
        return None
    # a journal names every root its swap touches (the importing root first, as the import locked them):
    # all of them are locked, so no host of any of them sees the roll forward half done
    roots = [root]
    journal = _read_journal(journal_path)
    if journal is not None and isinstance(journal.get("roots"), list):
        named = [Path(r) for r in journal["roots"] if isinstance(r, str)]
        roots = named + [root] if root not in named else named
    with contextlib.ExitStack() as stack:
        for each in roots:
            stack.enter_context(fsio.file_lock(each / PACK_LOCK))
        stack.enter_context(gate.hold(roots, exclusive=True))
        return _recover_locked(root, roots)


def _read_journal(path: Path) -> dict[str, Any] | None:
    data = fsio.read_bytes_or_none(path)
    if data is None:
        return None
    try:
        journal = json.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON: written atomically, a damaged one was never complete
        return None
    return journal if isinstance(journal, dict) and isinstance(journal.get("pairs"), list) else None


def _recover_locked(root: Path, roots: Sequence[Path] = ()) -> dict[str, Any] | None:
    journal_path = root / JOURNAL
    exists = os.path.lexists(journal_path)
    journal = _read_journal(journal_path) if exists else None
    result = None
    if exists:
        if journal is not None:
            displaced = _roll_forward(journal, root)
            result = {"rolledForward": len(journal["pairs"]), **({"displaced": displaced} if displaced else {})}
        # every root's copy goes (the other roots' first), then this one
        _drop_journals([Path(r) / JOURNAL for r in roots if Path(r) != root], journal_path)
        if journal is not None:
            clean(journal.get("dirs", ()))
    for each in {*roots, root}:
        clean(_leftovers(Path(each)))
    return result


# ------------------------------------------------------------------------------------------ planning


def transient(name: str) -> bool:
    return name.startswith(_DERIVED) or name.endswith((".tmp", ".publish"))


def tree_stamp(directory: Path) -> list[list[Any]]:
    """``[relative path, size in bytes, mtime in nanoseconds, inode]`` of every file under ``directory``
    (links not followed; derived and transient files left out), sorted; ``[]`` when it does not exist. Lists,
    so a stamp read back from the swap journal (JSON) compares equal to a fresh one."""
    stamp = []
    for folder, _dirs, names in os.walk(directory):
        for name in names:
            if transient(name):
                continue
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            stamp.append([os.path.relpath(path, directory), st.st_size, st.st_mtime_ns, st.st_ino])
    return sorted(stamp)


def _changed_meanwhile(plan: "ImportPlan") -> Path | None:
    """The first of ``plan.watched`` whose files changed since they were read, else ``None``."""
    return next((path for path, stamp in plan.watched if tree_stamp(path) != stamp), None)


def swap(root: Path, plan: ImportPlan) -> None:
    backups: dict[Path, Path] = {}
    pairs = []
    for index, (staged, target) in enumerate(plan.pairs):
        # the backup lives in the staged path's root (the same file system as the target)
        owner = next((p.parent for p in staged.parents if p.name.startswith(STAGE_PREFIX)), root)
        if owner not in backups:
            backups[owner] = owner / f"{BACKUP_PREFIX}{uuid.uuid4()}"
            fsio.ensure_dir(backups[owner])
            plan.dirs.append(backups[owner])
        pair: dict[str, Any] = {"staged": str(staged), "target": str(target),
                                "backup": str(backups[owner] / f"{index}-{target.name}")}
        stamp = next((stamp for path, stamp in plan.watched if path == target), None)
        if stamp is not None:
            pair["stamp"] = stamp
        pairs.append(pair)
        fsio.ensure_dir(target.parent)
    journal = {"version": 1, "pairs": pairs, "dirs": [str(d) for d in plan.dirs],
               "roots": [str(r) for r in (root, *plan.other_roots)]}
    journal_path = root / JOURNAL
    copies = [Path(r) / JOURNAL for r in plan.other_roots]
    changed = _changed_meanwhile(plan)
    if changed is not None:
        clean(journal["dirs"])
        raise changed_meanwhile_error(changed)
    text = (json.dumps(journal, indent=2) + "\n").encode("utf-8")
    try:
        # the copies first: any journal written means decided (everything is staged), and none of the
        # roots' directories moves before every root holds one
        for copy in copies:
            fsio.write_file_atomically(copy, text)
        fsio.write_file_atomically(journal_path, text)
    except BaseException:
        for copy in copies:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(copy)
        clean(journal["dirs"])
        raise
    step("journal")
    done: list[dict[str, str]] = []
    try:
        for index, pair in enumerate(pairs):
            staged, target, backup = Path(pair["staged"]), Path(pair["target"]), Path(pair["backup"])
            moved = False
            if os.path.lexists(target):
                os.rename(target, backup)
                moved = True
            pair["moved"] = "1" if moved else ""
            done.append(pair)
            if moved and _changed_since(pair, backup):  # changed after the check above: rolled back, kept
                raise _ChangedMeanwhile(target)
            step(f"swap:{index}:moved")
            if "stamp" in pair:  # what is placed, to tell a change made to it before a roll back
                pair["placed"] = tree_stamp(staged)
            os.rename(staged, target)
            fsio.fsync_dir(target.parent)
            step(f"swap:{index}:placed")
    except Exception as exc:
        displaced = _roll_back(done, root)
        _drop_journals(copies, journal_path)
        clean(journal["dirs"])
        if isinstance(exc, _ChangedMeanwhile):
            raise changed_meanwhile_error(exc.path, displaced) from None
        mapped = exc if isinstance(exc, MnemonError) else None
        kept = (f"; what another program created meanwhile was kept in {', '.join(displaced)}" if displaced else "")
        raise PackRefused(f"the swap into {root} failed ({mapped.message if mapped else exc}); every component was "
                          f"rolled back and nothing of the pack was imported{kept}", reason="swap-failed",
                          displaced=displaced) from exc
    step("swapped")
    _drop_journals(copies, journal_path)
    clean(journal["dirs"])
    step("cleaned")


class _ChangedMeanwhile(Exception):
    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


def changed_meanwhile_error(changed: Path, displaced: Sequence[str] = ()) -> PackRefused:
    """The ``changed-meanwhile`` refusal for ``changed`` (``data.file``; ``data.displaced``: what the roll back
    kept aside, written to while the swap ran)."""
    kept = (f"; what was written meanwhile to the copy the import had placed is kept in {', '.join(displaced)}"
            if displaced else "")
    return PackRefused(f"{changed} changed while the pack was being imported (a hand edit, or a program that does "
                       "not take mnemon-ls's locks); nothing was imported, so that change is kept: run the import "
                       f"again{kept}", reason="changed-meanwhile", file=str(changed),
                       **({"displaced": list(displaced)} if displaced else {}))


def _drop_journals(copies: Sequence[Path], journal_path: Path) -> None:
    """Remove the other roots' journal copies, then the importing root's (durably): while that one exists,
    :func:`recover` still knows the swap."""
    for copy in copies:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(copy)
        fsio.fsync_dir(copy.parent)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal_path)
    fsio.fsync_dir(journal_path.parent)


def _roll_back(done: list[dict[str, str]], root: Path) -> list[str]:
    """Undo the ``done`` pairs (newest first); returns what :func:`_displace` moved aside."""
    displaced = []
    for pair in reversed(done):
        staged, target, backup = Path(pair["staged"]), Path(pair["target"]), Path(pair["backup"])
        if not os.path.lexists(staged) and os.path.lexists(target):
            os.rename(target, staged)
            if "placed" in pair and tree_stamp(staged) != pair["placed"]:
                # written to after it was placed (a hand edit of the new runtime/): kept aside, never cleaned
                displaced.append(_displace(staged, root, name=target.name))
        if pair.get("moved") and os.path.lexists(backup):
            if os.path.lexists(target):
                displaced.append(_displace(target, root))
            os.rename(backup, target)
        fsio.fsync_dir(target.parent)
    return displaced


def _displace(target: Path, root: Path, name: str | None = None) -> str:
    """Move ``target``, which another program created while the swap had moved the old one away (a
    process that does not take the pack gate, e.g. an older mnemon-ls or the TypeScript plugin), to
    ``<root>/.dsh-pack-displaced-<uuid>/<name>``, where it is kept (never cleaned: it may hold a write).
    Returns the new path."""
    keep = root / f"{DISPLACED_PREFIX}{uuid.uuid4()}"
    fsio.ensure_dir(keep)
    os.rename(target, keep / (name or target.name))
    fsio.fsync_dir(root)
    return str(keep / (name or target.name))


def displaced_findings(root: Path) -> list[Any]:
    """Doctor findings (:class:`~mnemon_ls.findings.Finding`, ``warning``) for what a pack swap kept aside
    under ``<root>/.dsh-pack-displaced-<uuid>/``: a component directory changed by hand after an import was
    decided and killed (found by the roll forward), or a file another program created during a swap. Never
    removed by mnemon-ls: its content is not in the memory until the person copies it back."""
    from ..findings import Finding

    found = []
    for name in sorted(os.listdir(root)) if root.is_dir() else ():
        if name.startswith(DISPLACED_PREFIX) and (root / name).is_dir() and not (root / name).is_symlink():
            kept = ", ".join(sorted(os.listdir(root / name))) or "(empty)"
            found.append(Finding("warning", str(root / name),
                                 f"kept aside by a pack import ({kept}): it changed while the import was being "
                                 "swapped in, so it is not part of the memory now",
                                 "compare it with the current files, copy back what you want (a hand edit of "
                                 "USER.md, MEMORY.md or a document counts at the next command), then delete the "
                                 "folder"))
    return found
