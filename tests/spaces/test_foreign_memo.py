"""Recall results a second time through :func:`mnemon_ls.spaces.foreign.redact_results`: the kept verdicts
(its memo) give the same redaction and the same notice as the first pass, for content, tags, entities and
branches, and a text over the memo's length is still scanned."""

from __future__ import annotations

import copy

from mnemon_ls.spaces import foreign

KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _result() -> dict:
    return {"spaceId": "s1", "spaceName": "Team", "id": "i1", "content": f"deploy token {KEY} for CI",
            "tags": ["ci", KEY, "branch:main"], "entities": ["GitHub", KEY], "branches": ["main"]}


def test_a_second_pass_redacts_exactly_as_the_first() -> None:
    first, second = [_result()], [_result()]
    notices_first = foreign.redact_results(first)
    notices_second = foreign.redact_results(second)
    assert first == second
    assert second[0]["content"] == "deploy token [redacted:github-token] for CI"
    assert second[0]["tags"] == ["ci", "[redacted:github-token]", "branch:main"]
    assert second[0]["entities"] == ["GitHub", "[redacted:github-token]"]
    assert notices_first == notices_second == [
        "space Team (s1) item i1 holds what looks like a credential (github-token) that another program stored; "
        "sent redacted, the store is unchanged: `mnemon-ls redact --apply` replaces it"]


def test_clean_results_are_left_as_they_are_twice() -> None:
    clean = {"spaceId": "s1", "spaceName": "Team", "id": "i2", "content": "The build uses pnpm, not npm",
             "tags": ["build"], "entities": ["pnpm"], "branches": []}
    for _ in range(2):
        results = [copy.deepcopy(clean)]
        assert foreign.redact_results(results) == []
        assert results == [clean]


def test_a_long_text_is_scanned_without_the_memo() -> None:
    long = "x " * foreign.MEMO_CHARS + f"token {KEY}"
    results = [{"spaceId": "s1", "spaceName": "Team", "id": "i3", "content": long, "tags": [], "entities": []}]
    assert len(foreign.redact_results(results)) == 1
    assert results[0]["content"].endswith("token [redacted:github-token]")
