"""The credential scan's fast path (``str.lower`` instead of an ASCII-only ``translate``, keywords found with
``str.find``) keeps every offset: in CJK text, after a capital that lower-cases to two code points
(U+0130) or to an ASCII letter (the Kelvin sign), each value is found at its own position and
redacted, value gone."""

from __future__ import annotations

import pytest

from mnemon_ls.redact import find_secrets, redact_text

SECRET = "Tr0ub4dor&3xLEFv"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize("before", ["数据库迁移 ", "İİİ İstanbul ", "\u212a\u212a ", "ÄÖÜ ß ", "", "x" * 3000 + " 灰度 "])
def test_values_are_found_at_their_positions_in_any_script(before: str) -> None:
    text = f"{before}DB_PASSWORD={SECRET} 阶段 then {TOKEN} and API_KEY: 9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    found = {m.kind: (m.start, m.end) for m in find_secrets(text)}
    assert found["password"] == (text.index(SECRET), text.index(SECRET) + len(SECRET))
    assert found["github-token"] == (text.index(TOKEN), text.index(TOKEN) + len(TOKEN))
    value = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    assert found["api-key"] == (text.index(value), text.index(value) + len(value))
    redacted, _ = redact_text(text)
    assert SECRET not in redacted and TOKEN not in redacted and value not in redacted
    assert redacted.startswith(before) and redacted.endswith("[redacted:api-key]")


def test_every_assignment_keyword_holds_an_anchor_close_to_its_start() -> None:
    from mnemon_ls import redact_rules as redact  # the assignment rules live there

    words = [w for _, group in redact._STRONG_WORDS for w in group.split("|")] + redact._WEAK_WORDS.split("|")
    for word in words:
        longest = word.replace("[_\\-]?", "_").replace("s?", "s")  # the longest spelling the pattern allows
        leads = [longest.find(a) for a in redact._ANCHORS if a in longest]
        assert leads, word  # found by str.find of an anchor
        assert min(leads) <= redact._ANCHOR_LEAD, word  # and the walk back from it reaches the keyword's key
    assert redact._KEYWORD.pattern == "|".join(words)
