"""Every directory mnemon-ls writes for one workspace, as ``mnemon-ls doctor`` lists it.

:func:`written_places` answers from the host's resolution and the environment, so the list is the
paths the writers use (the same functions resolve them): the storage root, the root of USER.md when
``runtimeUserScope=global`` splits it off, the data directory that holds the ``workspaces`` roots, the
default folder of ``pack export``, the record scopes (``<workspace>/.dsh`` and
:func:`mnemon_ls.records.paths.records_home_dir`) and the temporary directory. What is written only
when a person names the place (``setup`` writes a client's configuration file, ``serve --log-file`` its
log, ``pack export --output`` the named file) is said in :data:`ONLY_WHEN_ASKED`. Resolving never
writes (invariant 7).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import MnemonError

#: The last line of the list in ``doctor``'s text.
ONLY_WHEN_ASKED = ("only where you name it: `setup` writes the client's configuration file, "
                   "`serve --log-file` the log, `pack export --output` the pack")


@dataclass(frozen=True, slots=True)
class Place:
    """One directory mnemon-ls writes: ``what`` (a short label), ``path`` (absolute), ``holds`` (what
    it writes there, one phrase)."""

    what: str
    path: Path
    holds: str

    def to_dict(self) -> dict[str, str]:
        """``{what, path, holds}`` (``path`` as a string), for ``doctor --json``."""
        return {"what": self.what, "path": str(self.path), "holds": self.holds}

    def line(self) -> str:
        """``  <what>: <path> (<holds>)``: one line of ``doctor``'s text."""
        return f"  {self.what}: {self.path} ({self.holds})"


def written_places(host: Any) -> list[Place]:
    """The directories mnemon-ls writes for ``host`` (a :class:`~mnemon_ls.host.WorkspaceHost`), in the
    order ``doctor`` prints them, each once. A place whose environment variable is unusable (a NUL in
    ``DSH_HOME``) is left out: the writes that need it fail naming the variable. Never writes."""
    from .packs.backups import export_dir
    from .records.paths import MEMORY_DIR, project_dir, records_home_dir
    from .roots import ROOT_AREAS

    resolution = host.resolution
    env = host.global_env  # with --scope global --data-dir X the records home is under X
    places = [Place("storage root", resolution.root, ", ".join(f"{area}/" for area in ROOT_AREAS))]
    if resolution.split_user:
        places.append(Place("USER.md root (runtimeUserScope=global)", resolution.user_root,
                            "runtime/ with USER.md, and what a pack import of USER.md keeps there"))
    if resolution.scope == "workspaces":
        places.append(Place("data directory", resolution.root.parent.parent,
                            "workspaces/<sha256 of the workspace path>: one storage root per workspace"))
    try:
        places.append(Place("pack exports", export_dir(host), "pack export without --output"))
    except MnemonError:
        pass
    if host.workspace is not None:
        places.append(Place("records: project and shared-project scopes", project_dir(host.workspace),
                            f"{MEMORY_DIR}/records.jsonl, {MEMORY_DIR}/shared.jsonl, .gitignore"))
    try:
        home = records_home_dir(env)
        places.append(Place("records: user and session scopes", home, "user.jsonl, sessions/"))
    except MnemonError:
        pass
    places.append(Place("temporary files", Path(tempfile.gettempdir()),
                        "removed after use: the copy migrate reads, a pack import's dry run, drafts for the Mnemon "
                        "CLI"))
    seen: set[tuple[str, Path]] = set()
    unique = []
    for place in places:
        if (place.what, place.path) not in seen:
            seen.add((place.what, place.path))
            unique.append(place)
    return unique
