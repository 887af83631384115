"""``doctor``'s look for memory another storage root holds that this workspace does not read (read-only).

Owns :func:`survey`: the global root and ``<workspace>/.mnemon`` compared with this workspace's root by the
rules ``mnemon-ls migrate`` (:mod:`mnemon_ls.migrate`) uses to skip duplicates, and the ``migrate --from``
line that copies what is missing.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from .errors import InvalidInput
from .findings import Finding
from .roots import global_root
from .runtime.model import TARGETS, match_key
from .runtime.store import RuntimeStore

if TYPE_CHECKING:
    from .host import WorkspaceHost


def survey(host: "WorkspaceHost", env: Mapping[str, str] | None = None) -> list[Finding]:
    """``doctor`` findings naming memory this workspace does not read (read-only; cheap).

    Looks at the global root (when this workspace uses another root) and at ``<workspace>/.mnemon``
    (when that is not this workspace's root): Runtime entries and documents not in this root are
    counted by content (the same rule ``migrate`` uses), Memory Space stores by number. A warning with
    the ``mnemon-ls migrate --from ...`` line when something is not here yet; ``ok`` when everything is.
    """
    from .documents import DocumentStore

    findings: list[Finding] = []
    candidates: list[tuple[str, Path]] = []
    with contextlib.suppress(InvalidInput):
        candidates.append(("global", global_root(env)))
    if host.resolution.workspace is not None:
        candidates.append(("workspace", host.resolution.workspace / ".mnemon"))
    own = os.path.realpath(host.root)
    for name, root in candidates:
        if not root.is_dir() or os.path.realpath(root) == own:
            continue
        state = RuntimeStore(root).read()
        missing = 0
        shared: list[str] = []  # targets this workspace reads from that root itself
        for target in TARGETS:
            store = host.runtime.store_for(target)
            if os.path.realpath(store.root) == os.path.realpath(root):
                shared.append(f"{target.upper()}.md")
                continue  # already read from there (runtimeUserScope=global)
            here = {match_key(e.content) for e in store.read().of(target)}
            missing += sum(1 for e in state.of(target) if match_key(e.content) not in here)
        documents = 0
        if (root / "documents" / "index.json").is_file():
            theirs = DocumentStore(root, None).read().records
            ours = ({(r.title, r.content_hash) for r in host.documents.read().records}
                    if (host.root / "documents" / "index.json").is_file() else set())
            documents = sum(1 for r in theirs if (r.title, r.content_hash) not in ours)
        data = root / "data"
        stores = (sorted(e.name for e in os.scandir(data) if (Path(e.path) / "mnemon.db").is_file())
                  if data.is_dir() else [])
        ours_spaces = (host.root / "data").is_dir()
        if not (missing or documents or (stores and not ours_spaces)):
            if missing == 0 and (state.entries or documents or stores):
                read_there = (f"this workspace reads its {' and '.join(shared)} from there (the user profile is "
                              "global); everything else in it is in this workspace's storage root too") if shared else (
                              "everything in it is in this workspace's storage root too")
                findings.append(Finding("ok", str(root), f"the {name} storage root: {read_there}"))
            continue
        parts = []
        if missing:
            parts.append(f"{missing} Runtime entr{'y' if missing == 1 else 'ies'}")
        if documents:
            parts.append(f"{documents} document{'' if documents == 1 else 's'}")
        if stores:
            parts.append(f"{len(stores)} Memory Space store{'' if len(stores) == 1 else 's'} ({', '.join(stores)})")
        findings.append(Finding(
            "warning", str(root),
            f"the {name} storage root holds memory this workspace does not read: {', '.join(parts)}",
            f"`mnemon-ls migrate --from {name}` copies it into {host.root} (verified; the source stays as it is; "
            "`--dry-run` shows what would be copied)"))
    return findings
