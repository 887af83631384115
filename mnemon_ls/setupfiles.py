"""The files ``mnemon-ls setup`` writes, as changes: :class:`Change` (one file's text before and after) and
:func:`read_text` (a file's text, refusing what is not UTF-8). Used by the assistant clients' configuration
(:mod:`mnemon_ls.clients`) and the records merge driver's (:mod:`mnemon_ls.gitmerge`). Base layer: imports only
:mod:`mnemon_ls.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import InvalidInput


@dataclass
class Change:
    """One file setup would write: ``path``, the ``before`` text (``None``: the file does not exist), the
    ``after`` text (``None``: delete the file, nothing but our entry was in it), a one-line ``summary`` per
    entry touched, and ``empty_dirs``: the directories (innermost first) that deleting the file leaves
    empty, which go too (never the home directory, the workspace or the XDG config directory)."""

    path: Path
    before: str | None
    after: str | None
    summary: list[str] = field(default_factory=list)
    empty_dirs: list[Path] = field(default_factory=list)
    #: The directory the removal of empty directories stops at (the home directory, the workspace...).
    base: Path | None = field(default=None, repr=False)

    @property
    def changed(self) -> bool:
        """Whether writing it would change the file."""
        return self.before != self.after

    @property
    def state(self) -> str:
        """``unchanged``, ``created``, ``updated`` or ``deleted``: what writing it does to the file."""
        if not self.changed:
            return "unchanged"
        return "deleted" if self.after is None else "created" if self.before is None else "updated"


def read_text(path: Path) -> str | None:
    """The file's text, ``None`` when it does not exist; not UTF-8 is refused like unparsable JSON."""
    if not path.exists():
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(str(path), f"is not UTF-8 text (byte {exc.start}); fix or move it, then run setup "
                                      "again (nothing was written)") from None
