"""The record of seed 002 section 2: every validateRecord rule, and the on-disk JSON shape."""

from __future__ import annotations

import json

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.records import content_hash, validate_record
from mnemon_ls.records.store import encode

CONTENT = ("Files touched: 3 (2 created, 1 modified, 0 deleted)\nCreated: out/report.md, out/data.json\n"
           "Modified: src/util.ts\nArtifacts: 2 — out/report.md, out/data.json")


def seed_example() -> dict:
    """The seed's example record, with the contentHash its content really has."""
    return {
        "schemaVersion": 1,
        "id": "memory:auto:fact:1a2b3c4d5e6f7a8b:9e8d7c6b5a4f3e2d1c0b9a8f",
        "scope": "session",
        "scopeKey": "session-abc|root-xyz",
        "type": "fact",
        "title": "Session workspace digest (auto)",
        "content": CONTENT,
        "tags": [],
        "provenance": {"kind": "tool", "sessionId": "session-abc", "eventSeq": 42, "note": "workspace auto-writer"},
        "createdAt": 1760000000000,
        "updatedAt": 1760000000000,
        "useCount": 0,
        "contentHash": content_hash(CONTENT),
        "status": "active",
        "governance": {
            "origin": "derived",
            "sourceRefs": [{"kind": "session", "id": "session-abc"}, {"kind": "event", "id": "42"}],
            "verification": "unverified",
            "revision": 1,
            "retention": "session-end",
        },
    }


def test_seed_example_round_trips_exactly():
    record = validate_record(seed_example())
    line = encode(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = json.loads(line)
    assert back == seed_example()
    assert list(back) == list(seed_example())  # the seed's field order
    assert list(back["governance"]) == ["origin", "sourceRefs", "verification", "revision", "retention"]
    assert "verifiedAt" not in back["governance"]  # unset optionals are omitted, as in the seed
    types = {k: type(v).__name__ for k, v in back.items()}
    assert types == {"schemaVersion": "int", "id": "str", "scope": "str", "scopeKey": "str", "type": "str",
                     "title": "str", "content": "str", "tags": "list", "provenance": "dict", "createdAt": "int",
                     "updatedAt": "int", "useCount": "int", "contentHash": "str", "status": "str",
                     "governance": "dict"}


def test_content_hash_is_sha256_of_utf8():
    assert content_hash("a") == "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"


def _with(path: str, value):
    data = json.loads(json.dumps(seed_example()))
    target = data
    *parents, last = path.split(".")
    for key in parents:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize("path, value, field, rule", [
    ("contentHash", "sha256:" + "0" * 64, "contentHash", "must equal sha256 of content"),
    ("contentHash", "md5:abc", "contentHash", "sha256:<64 lowercase hex>"),
    ("contentHash", "sha256:" + "A" * 64, "contentHash", "sha256:<64 lowercase hex>"),
    ("governance.sourceRefs", [], "governance.sourceRefs", "needs at least one source reference"),
    ("governance.verification", "verified", "governance.verifiedAt", "is required when verification is verified"),
    ("governance.revision", 0, "governance.revision", "must be >= 1"),
    ("updatedAt", 1759999999999, "updatedAt", "must be >= createdAt"),
    ("type", "note", "type", "must be one of decision, preference, convention, fact (got 'note')"),
    ("scope", "team", "scope", "must be one of session, project, shared-project, user (got 'team')"),
    ("status", "deleted", "status", "must be one of active, archived, forgotten"),
    ("governance.origin", "guess", "governance.origin", "must be one of"),
    ("governance.verification", "maybe", "governance.verification", "must be one of"),
    ("governance.retention", "forever", "governance.retention", "must be one of"),
    ("provenance.kind", "robot", "provenance.kind", "must be one of user, agent, tool (got 'robot')"),
    ("schemaVersion", 2, "schemaVersion", "must be 1"),
    ("createdAt", 1.5, "createdAt", ""),
    ("useCount", True, "useCount", ""),
    ("extra", 1, "extra", "is not a field of a record"),
    ("id", KeyError, "id", "is required"),
    ("tags", [" "], "tags[0]", "non-empty string"),
])
def test_each_rule_names_field_and_rule(path, value, field, rule):
    with pytest.raises(InvalidInput) as caught:
        validate_record(_with(path, value))
    assert caught.value.field == field
    assert rule in caught.value.rule


def test_user_authored_needs_no_source_ref_and_verified_with_time_is_valid():
    data = _with("governance.sourceRefs", [])
    data["governance"]["origin"] = "user-authored"
    data["governance"]["verification"] = "verified"
    data["governance"]["verifiedAt"] = 1760000000001
    record = validate_record(data)
    assert record.governance.verified_at == 1760000000001


def test_missing_governance_is_completed_from_scope():
    data = _with("governance", KeyError)
    record = validate_record(data | {"scope": "project"})
    assert record.to_json()["governance"] == {"origin": "user-authored", "sourceRefs": [],
                                              "verification": "unverified", "revision": 1,
                                              "retention": "project-delete"}
