"""A title another program wrote into ``documents/index.json`` was echoed raw by what a change to its document
says back (``doc archive``/``restore``/``update`` receipts) and by the notice of a document whose file is missing
(``doc list``); both now show it as the reads do (mnemon_ls/documents/shown.py), the index unchanged. Real command
line in a real git repository; the value written into ``index.json`` by hand (``hand_written``)."""

from __future__ import annotations

import json

from tests.cli.test_foreign_document_titles import TITLE, hand_written
from tests.cli.test_foreign_secrets import SECRET, run, store  # noqa: F401  (store: the fixture)

SHOWN = f"{TITLE} [redacted:github-token]"


def test_an_archive_and_a_restore_echo_the_title_redacted(store) -> None:  # noqa: F811
    repo, root = store
    document_id, _ = hand_written(repo, root)
    archived = run(repo, root, "doc", "archive", document_id[:8], "--revision", "1", "--json").stdout
    assert SECRET not in archived, archived
    revision = json.loads(archived)["document"]["revision"]
    assert json.loads(archived)["document"]["title"] == SHOWN
    restored = run(repo, root, "doc", "restore", document_id[:8], "--revision", str(revision)).stdout
    assert SECRET not in restored and SHOWN in restored, restored
    assert SECRET in (root / "documents" / "index.json").read_text()  # the index is left as it is


def test_the_missing_file_notice_shows_the_title_redacted(store) -> None:  # noqa: F811
    repo, root = store
    document_id, _ = hand_written(repo, root)
    for path in (root / "documents" / "active").glob("*.md"):
        path.unlink()
    out = run(repo, root, "doc", "list").stdout
    assert SECRET not in out, out
    assert f"({SHOWN}): " in out, out
