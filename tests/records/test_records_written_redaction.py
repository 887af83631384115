"""What a record write stores passes the redaction pass in every field that takes free text: title, content and
tags did; a proposal's ``provenance.note`` and every ``governance.sourceRefs[].id`` (a URL or path may carry a
credential), from ``create``/``propose`` and from an imported bundle, were stored as given. Real JSONL files under
a real git repository (``tests/records/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.records import RecordsSource
from tests.cli.test_foreign_secrets import SECRET
from tests.records.conftest import Clock

URL = f"https://ci:{SECRET}@git.example.com/team/repo"
SHOWN_URL = "https://ci:[redacted:github-token]@git.example.com/team/repo"


def stored_text(dsh_home: Path, workspace: Path) -> str:
    return "".join(p.read_text() for root in (dsh_home, workspace) for p in root.rglob("*.jsonl"))


def test_a_proposal_stores_its_note_and_source_refs_redacted(source: RecordsSource, dsh_home, workspace) -> None:
    record = source.propose("project", "fact", "CI", "CI clones over HTTPS", note=f"seen in {URL}",
                            source_refs=[{"kind": "url", "id": URL}]).record.to_json()
    assert record["provenance"]["note"] == f"seen in {SHOWN_URL}"
    assert record["governance"]["sourceRefs"] == [{"kind": "url", "id": SHOWN_URL}]
    assert SECRET not in stored_text(dsh_home, workspace) and SHOWN_URL in stored_text(dsh_home, workspace)


def test_under_reject_the_write_is_refused_naming_the_field_and_nothing_is_stored(dsh_home, workspace) -> None:
    strict = RecordsSource(workspace, session_id="s1", user_id="ana", env={"DSH_HOME": str(dsh_home)},
                           clock=Clock(), secrets="reject")
    with pytest.raises(InvalidInput) as info:
        strict.create("project", "fact", "CI", "CI clones over HTTPS", source_refs=[{"kind": "url", "id": URL}])
    assert info.value.data["field"] == "sourceRefs[0].id"
    with pytest.raises(InvalidInput) as info:
        strict.propose("project", "fact", "CI", "CI clones over HTTPS", note=URL)
    assert info.value.data["field"] == "note"
    assert stored_text(dsh_home, workspace) == ""


def test_an_imported_bundle_is_stored_redacted(source: RecordsSource, dsh_home, workspace, tmp_path) -> None:
    record = source.create("project", "fact", "CI", "CI clones over HTTPS").record.to_json()
    record["provenance"] = {**record["provenance"], "note": f"from {URL}"}
    record["governance"] = {**record["governance"], "sourceRefs": [{"kind": "url", "id": URL}]}
    other = tmp_path / "other"
    other.mkdir()
    fresh = RecordsSource(other, user_id="ana", env={"DSH_HOME": str(tmp_path / "home2")}, clock=Clock())
    fresh.import_bundle({"schemaVersion": 1, "exportedAt": 1, "records": [record]})
    imported = fresh.list()[0].to_json()
    assert imported["provenance"]["note"] == f"from {SHOWN_URL}"
    assert imported["governance"]["sourceRefs"][0] == {"kind": "url", "id": SHOWN_URL}
    assert SECRET not in stored_text(tmp_path / "home2", other)
