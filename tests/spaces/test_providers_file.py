"""Reading ``state/memory-providers.json`` (reference dsh-mnemon.md 6.1, version 4): a file written by a newer
version is refused read-only (never quarantined, rewritten, moved or deleted, by provider operations or by
native writes); a file that parses but holds wrong-typed values is damaged (quarantined, salvaged strictly,
noticed), never interpreted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mnemon_ls.errors import FormatTooNew
from mnemon_ls.spaces import SpacesService

from tests.conftest import FrozenClock

NEWER = {"version": 99, "services": {"honcho": {"endpoint": "https://h.example/v1", "apiKey": "sk-newer-0001"}},
         "enabled": {"honcho": True}, "whatever": {"a newer": "shape"},
         "bodies": [{"id": "honcho-1", "name": "H", "description": "d", "active": True, "providerId": "honcho",
                     "connection": {}, "createdAt": "x", "updatedAt": "x"}]}


def _write(root: Path, doc: object) -> Path:
    path = root / "state" / "memory-providers.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    os.chmod(path, 0o600)
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return path


def _stat(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


def test_a_newer_provider_file_is_read_only_and_native_spaces_keep_working(root: Path, clock: FrozenClock) -> None:
    path = _write(root, NEWER)
    before = _stat(path)
    service = SpacesService(root, clock=clock)
    # native reads and writes work; the provider file is neither rewritten nor moved by them
    created = service.create_space("Main", "native notes", active=True)
    service.remember("The build uses make", space_id=created.record.id)
    assert [v.record.id for v in service.list_spaces()] == [created.record.id]
    service.update_space(created.record.id, name="Main notes")
    assert _stat(path) == before
    # every provider-plane operation says why, and writes nothing
    calls = [lambda: service.thirdparty.list(), lambda: service.thirdparty.test("honcho"),
             lambda: service.thirdparty.disable("honcho"),
             lambda: service.configure_provider("honcho", {"endpoint": "https://other.example/v1"}),
             lambda: service.configure_provider("honcho", {}, enabled=False),
             lambda: service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "x"}])]
    for call in calls:
        with pytest.raises(FormatTooNew) as refused:
            call()
        assert refused.value.code == "format-too-new"
        assert refused.value.data["version"] == 99 and refused.value.data["file"] == str(path)
        assert "written by a newer version of mnemon-ls (format version 99; this version reads 1..4)" in \
            refused.value.message
        assert "sk-newer-0001" not in refused.value.message
        assert _stat(path) == before
    [notice] = service.notices()
    assert notice["quarantined"] is None and "newer version" in notice["message"]
    assert not (root / "state" / "quarantine").exists()
    findings = [f for f in service.thirdparty.diagnose() if f.subject == "providers"]
    assert [f.level for f in findings] == ["warning"] and "newer version" in findings[0].message
    service.close()
    assert _stat(path) == before


@pytest.mark.parametrize("doc, reason, kept", [
    ({"version": 4, "services": {"honcho": {"endpoint": "https://h.example/v1"}}, "enabled": {"honcho": "yes"},
      "bodies": []}, "enabled.honcho: must be true or false", {}),
    ({"version": 4, "services": {"honcho": {"endpoint": "https://h.example/v1"}}, "enabled": {"honcho": 1},
      "bodies": []}, "enabled.honcho: must be true or false", {}),
    ({"version": 4, "services": {"honcho": {"endpoint": ["https://h.example/v1"]}}, "enabled": {"honcho": True},
      "bodies": []}, "services.honcho.endpoint: must be a string, number or boolean", {"honcho": True}),
    ({"version": 4, "services": {"honcho": {}}, "enabled": {"honcho": True},
      "bodies": [{"id": "honcho-1", "name": "H", "description": "d", "active": "true", "providerId": "honcho",
                  "connection": {}, "createdAt": "x", "updatedAt": "x"}]}, "bodies[0].active: must be true or false",
     {"honcho": True}),
    ({"version": 4, "services": {"honcho": {}}, "enabled": {"honcho": True},
      "bodies": [{"id": "honcho-1", "name": "H", "description": "d", "active": True, "providerId": "honcho",
                  "connection": "userId=u", "createdAt": "x", "updatedAt": "x"}]},
     "bodies[0].connection: must be an object", {"honcho": True}),
    ({"version": True, "services": {}, "enabled": {}, "bodies": []}, "expected a JSON object with version 1..4", {}),
])
def test_a_wrong_typed_provider_file_is_damaged_and_never_interpreted(root: Path, clock: FrozenClock, doc: dict,
                                                                       reason: str, kept: dict) -> None:
    path = _write(root, doc)
    original = path.read_bytes()
    service = SpacesService(root, clock=clock)
    state = service.state()
    assert dict(state.enabled) == kept  # "yes", 1: never taken as enabled; a valid flag is salvaged
    assert state.provider_bodies == ()  # the wrong-typed space is not salvaged as something else
    [problem] = service.notices()
    assert problem["reason"] == reason
    assert Path(problem["quarantined"]).read_bytes() == original
    rebuilt = json.loads(path.read_text())
    assert rebuilt["enabled"] == kept and rebuilt["bodies"] == []
    assert all(isinstance(v, (str, int, float, bool)) for s in rebuilt["services"].values() for v in s.values())
    service.close()


def test_the_strict_model_accepts_the_reference_format(root: Path, clock: FrozenClock) -> None:
    doc = {"version": 4, "services": {"honcho": {"endpoint": "https://h.example/v1", "apiKey": "sk-ok-0002",
                                                 "budget": 3, "rerank": True, "ratio": 0.5}},
           "enabled": {"honcho": True},
           "bodies": [{"id": "honcho-1", "name": "H", "description": "d", "active": True, "providerId": "honcho",
                       "externalId": "w", "metadataSource": "provider", "connection": {"workspace": "w"},
                       "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}]}
    path = _write(root, doc)
    before = _stat(path)
    service = SpacesService(root, clock=clock)
    assert [v.record.id for v in service.list_spaces()] == ["honcho-1"]
    assert service.notices() == [] and _stat(path) == before
    service.close()
