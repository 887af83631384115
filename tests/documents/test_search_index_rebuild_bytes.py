"""The rebuild of the search index when its schema changes (real files, a real store, the real SQLite index).

``SCHEMA_VERSION`` went to 3 so that an index of version 2, which may hold the credential of a hand edit not
adopted (it was indexed as typed), is rebuilt. The rebuild dropped and recreated the tables inside the file, so
the old rows stayed in ``documents/.search.sqlite3``: in its free pages with a SQLite built without
``SECURE_DELETE``, and with one built with it (this Python's) until a checkpoint wrote the zeroed pages back from
the WAL (the language server keeps its connection open: until 1,000 pages were written or it closed). The token
could be read from the file after the rebuild. The rebuild now leaves no byte of the old index behind: freed pages
are zeroed (``secure_delete`` set, whatever the build's default), the WAL written back, the file rewritten
(``VACUUM``) and the WAL emptied, before the index is used."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemon_ls.documents.search_index import SCHEMA_VERSION

from tests.documents.test_indented_hand_edit import hand_edit
from tests.documents.test_support import make_store
from tests.documents.test_unadopted_credential import derived_bytes

TOKEN = "ghp_" + "Rq8mW2xR7tK4pL9vB3nH6cJ1dF5gS0aY2eU5"


def test_a_schema_rebuild_leaves_no_old_term_in_the_index_files(tmp_path: Path) -> None:
    # an index as version 2 left it: the unadopted edit's credential indexed as typed (here: under allow)
    store, root, _, clock = make_store(tmp_path, secrets="allow")
    created = store.create("Deploy notes", "# Deploy\nRun the script.")
    clock.tick()
    hand_edit(Path(created.document.path), f"    export GITHUB_TOKEN={TOKEN}\n    ./deploy.sh zebraword\n" * 40)
    assert [h.record.id for h in store.search.find(TOKEN).results] == [created.document.record.id]
    store.search.close()
    index = root / "documents" / ".search.sqlite3"
    with sqlite3.connect(index) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION - 1),))
    db.close()
    assert TOKEN.lower().encode() in derived_bytes(root).lower()

    store = make_store(tmp_path, secrets="redact")[0]  # this version: the index is rebuilt
    [hit] = store.search.find("zebraword").results
    assert "[redacted:github-token]" in hit.excerpt and store.search.find(TOKEN).results == ()
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
    db.close()
    assert TOKEN.lower().encode() not in derived_bytes(root).lower()  # not in a free page, not in the WAL
    store.search.close()
    assert TOKEN.lower().encode() not in derived_bytes(root).lower()
