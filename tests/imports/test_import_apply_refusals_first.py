"""The editor's import (``mnemon/import/apply``, :func:`mnemon_ls.imports.scan.apply`) with a stale fingerprint or
an id that is no item of the scan: it took the imports lock (a marker created and deleted under ``state/``)
before it refused, so bad input changed the storage root's ``state/`` directory. The request is now checked
before the lock (and again under it), so a refused apply changes nothing on disk: names and mtimes of every file
and directory of the root are the same after it. A real git workspace and a real host."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import MnemonError
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.imports import scan
from mnemon_ls.settings import load_settings
from tests.gitrepo import make_repo
from tests.imports.test_import_refusals_first import names_and_mtimes


@pytest.mark.parametrize("bad", ["fingerprint", "id", "same-id-twice"])
def test_a_refused_apply_changes_nothing_on_disk(tmp_path: Path, bad: str) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    (ws / "AGENTS.md").write_text("- Deploys go through staging first.\n- The build uses tox.\n")
    host = WorkspaceHost(ws, load_settings({"storageScope": "custom", "dataDir": str(tmp_path / "data")}))
    scanned = scan.scan(host, env={"HOME": str(tmp_path / "home")})  # keeps the scan's digests under state/
    ids = [item["id"] for source in scanned["sources"] for item in source["items"]]
    assert len(ids) == 2
    before = names_and_mtimes(host.root)
    fingerprint = "0" * 64 if bad == "fingerprint" else scanned["fingerprint"]
    picked = {"fingerprint": ids, "id": ["no-such-item"], "same-id-twice": [ids[0], ids[0]]}[bad]
    with pytest.raises(MnemonError) as refused:
        scan.apply(host, picked, fingerprint, env={"HOME": str(tmp_path / "home")})
    assert refused.value.field == {"fingerprint": "fingerprint", "id": "ids[0]", "same-id-twice": "ids[1]"}[bad]
    assert names_and_mtimes(host.root) == before
    assert host.runtime.read().of("memory") == ()
