"""mnemon_ls.runtime.ops: request validation, matching (reference 3.4), mutations, capacity, packing (4.3).

Pure functions, no disk. The NFC comparison of contents is the documented extension in ops.py: an NFD
spelling of a stored text is the same entry (duplicate add, exact match), bytes stay those of the
stored spelling.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mnemon_ls.errors import AmbiguousMatch, DuplicateContent, InvalidInput, NoMatch, RuntimeCapacityError
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.model import Entry, normalize_text, used_bytes
from mnemon_ls.runtime.ops import Candidate, MutationRequest, apply_mutation, locate, pack, validate_request

T0 = "2026-09-01T08:00:00.000Z"
NOW = "2026-09-13T08:00:00.000Z"


def e(content, target="memory", importance="normal", branches=(), at=T0):
    return Entry(content, at, at, target, importance, tuple(branches))


# ---------------------------------------------------------------- request validation


def test_validate_request_normalizes_texts():
    request = validate_request("replace", "memory", content=" new\n text ", old_text=" \nX\t ", importance="low")
    assert request == MutationRequest("replace", "memory", "new text", "X", "low", None)
    assert validate_request("add", "user", "hi") == MutationRequest("add", "user", "hi", None, None, None)
    assert validate_request("add", "memory", "hi", branches=[]).branches == ()
    assert validate_request("add", "memory", "hi", branches=["main", "feature/deep"]).branches == (
        "main", "feature/deep")


@pytest.mark.parametrize(
    "kwargs, field, words",
    [
        (dict(action="add", target="project", content="x"), "target", "user, memory"),
        (dict(action="upsert", target="memory", content="x"), "action", "add, replace, remove"),
        (dict(action="add", target="memory", content="x", importance="high"), "importance", "critical"),
        (dict(action="add", target="user", content="x", branches=["main"]), "branches", "target=memory only"),
        (dict(action="add", target="user", content="x", branches=[]), "branches", "target=memory only"),
        (dict(action="add", target="memory", content="x", branches=["-x"]), "branches[0]", "start"),
        (dict(action="add", target="memory", content="x", branches=["a", "a..b"]), "branches[1]", ".."),
        (dict(action="add", target="memory", content="x", branches=["a@{b"]), "branches[0]", "a@{b"),
        (dict(action="add", target="memory", content="x", branches=["x/"]), "branches[0]", "end"),
        (dict(action="add", target="memory", content="x", branches=["y" * 129]), "branches[0]", "129"),
        (dict(action="add", target="memory", content="x", branches=[f"b{i}" for i in range(17)]), "branches", "16"),
        (dict(action="add", target="memory", content="x", branches=["a", "b", "a"]), "branches[2]", "repeats"),
        (dict(action="add", target="memory", content=""), "content", "required"),
        (dict(action="add", target="memory", content=" \n\t "), "content", "required"),
        (dict(action="add", target="memory", content="a\u00a7b"), "content", "delimiter"),
        (dict(action="add", target="memory", content="x" * 8193), "content", "8193"),
        (dict(action="add", target="memory", content="\u8bed" * 2731), "content", "8193"),
        (dict(action="add", target="memory", content=None), "content", "is required"),
        (dict(action="replace", target="memory", content="x", old_text=""), "oldText", "required"),
        (dict(action="replace", target="memory", content="x", old_text=" \n "), "oldText", "required"),
        (dict(action="remove", target="memory", old_text="a\u00a7"), "oldText", "delimiter"),
        (dict(action="remove", target="memory"), "oldText", "required"),
        (dict(action="remove", target="memory", old_text="x", branches=["main"]), "branches", "remove"),
        (dict(action="replace", target="memory", old_text="x"), "content", "is required"),
    ],
)
def test_validate_request_rejections_name_the_field(kwargs, field, words):
    with pytest.raises(InvalidInput) as info:
        validate_request(**kwargs)
    assert info.value.field == field
    assert words in info.value.message
    assert info.value.code == "invalid-input"


# ---------------------------------------------------------------- matching (reference 3.4, cases 11-17)


def test_exact_match_wins_over_substring():
    entries = [e("EGO_LINUX_CHROME"), e("X")]
    assert locate(entries, "memory", "X") == 1


def test_exact_match_wins_for_user_target_too():
    entries = [e("mem X"), e("EGO_LINUX_CHROME", "user"), e("X", "user")]
    assert locate(entries, "user", normalize_text(" \nX\t ")) == 2


def test_unique_substring_selects():
    entries = [e("uses TypeScript 5"), e("SQLite is the store"), e("TypeScript", "user")]
    assert locate(entries, "memory", "TypeScript") == 0


def test_no_match_names_target_and_text():
    with pytest.raises(NoMatch) as info:
        locate([e("alpha"), e("zzz", "user")], "memory", "zzz")
    assert info.value.message == "oldText: no memory entry contains 'zzz'"
    assert info.value.data == {"field": "oldText", "target": "memory", "oldText": "zzz"}


def test_two_substrings_are_ambiguous():
    with pytest.raises(AmbiguousMatch) as info:
        locate([e("SQLite for cache"), e("SQLite for index"), e("other")], "memory", "SQLite")
    assert info.value.message.startswith("oldText: 2 memory entries ")
    assert "use a unique substring" in info.value.message
    assert info.value.data["matches"] == 2


def test_two_identical_exact_entries_are_ambiguous():
    with pytest.raises(AmbiguousMatch) as info:
        locate([e("same"), e("same"), e("same but longer")], "memory", "same")
    assert info.value.data["matches"] == 2
    assert "identical" in info.value.message


def test_exact_match_only_in_other_target_falls_back_to_substring():
    entries = [e("X", "user"), e("X marks the spot"), e("nothing")]
    assert locate(entries, "memory", "X") == 1
    with pytest.raises(AmbiguousMatch):
        locate([e("X", "user"), e("X one"), e("X two")], "memory", "X")


def test_matching_is_case_sensitive():
    with pytest.raises(NoMatch):
        locate([e("TypeScript")], "memory", "typescript")


# ---------------------------------------------------------------- NFC / NFD (documented extension)

BASES = list("abcXYZ 语条") + ["\U0001f600"]
composable = st.tuples(
    st.lists(st.sampled_from(BASES + ["\u00e9", "\u00c5", "\u0301"]), max_size=20).map("".join),
    st.sampled_from(["\u00e9", "\u00c5", "\u1e0d", "\u00f1", "\uac00"]),
    st.lists(st.sampled_from(BASES + ["\u00fc", "\u0323"]), max_size=20).map("".join),
).map("".join)

HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@HYPOTHESIS
@given(composable)
def test_nfc_and_nfd_spellings_are_one_entry(text):
    text = normalize_text(text)
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    assume(nfc and nfd != nfc)
    for first, second in ((nfc, nfd), (nfd, nfc)):
        added = apply_mutation([], validate_request("add", "memory", first), NOW)
        assert added.entries == (e(first, at=NOW),)
        assert used_bytes(added.entries, "memory") == len(first.encode("utf-8"))
        again = apply_mutation(added.entries, validate_request("add", "memory", second), NOW)
        assert again.changed is False
        assert again.message == "Entry already exists."
        assert again.detail == {"added": first}
        assert again.entries == added.entries
        assert locate([e("other " + first), *added.entries], "memory", second) == 1
        other_target = apply_mutation(added.entries, validate_request("add", "user", second), NOW)
        assert other_target.changed is True and len(other_target.entries) == 2


def test_nfd_entry_bytes_are_counted_on_stored_spelling():
    nfd = unicodedata.normalize("NFD", "caf\u00e9")
    outcome = apply_mutation([], validate_request("add", "memory", nfd), NOW)
    assert outcome.entries[0].content == nfd
    assert used_bytes(outcome.entries, "memory") == 6  # c a f e + U+0301 (2 bytes)


# ---------------------------------------------------------------- add / replace / remove


def test_add_appends_with_now_and_default_importance():
    outcome = apply_mutation([e("a")], validate_request("add", "memory", "第一条\n  测试"), NOW)
    assert outcome.changed and outcome.message == "Entry added."
    assert outcome.entries[1] == Entry("第一条 测试", NOW, NOW, "memory", "normal", ())
    assert outcome.detail == {"added": "第一条 测试"}
    assert outcome.pending == outcome.entries[1] and outcome.excluded is None


def test_add_duplicate_is_a_no_op_and_other_target_is_new():
    entries = (e("same", importance="low"),)
    dup = apply_mutation(entries, validate_request("add", "memory", " same ", importance="critical"), NOW)
    assert (dup.changed, dup.entries, dup.detail) == (False, entries, {"added": "same"})
    other = apply_mutation(entries, validate_request("add", "user", "same"), NOW)
    assert other.entries == (*entries, Entry("same", NOW, NOW, "user", "normal", ()))


def test_replace_keeps_position_created_and_importance_unless_given():
    entries = [e("first"), e("uses TypeScript 5", importance="critical", branches=["main"]), e("last")]
    kept = apply_mutation(entries, validate_request("replace", "memory", "uses Rust", "TypeScript"), NOW)
    assert kept.entries[1] == Entry("uses Rust", T0, NOW, "memory", "critical", ("main",))
    assert kept.detail == {"replaced": {"from": "uses TypeScript 5", "to": "uses Rust"}}
    assert kept.excluded == entries[1] and kept.pending == kept.entries[1]
    assert [x.content for x in kept.entries] == ["first", "uses Rust", "last"]
    low = apply_mutation(entries, validate_request("replace", "memory", "uses Rust", "TypeScript", "low"), NOW)
    assert low.entries[1].importance == "low"


def test_replace_branch_scope_keep_replace_clear():
    entries = [e("scoped", branches=["main"])]
    keep = apply_mutation(entries, validate_request("replace", "memory", "scoped v2", "scoped"), NOW)
    assert keep.entries[0].branches == ("main",)
    dev = apply_mutation(entries, validate_request("replace", "memory", "scoped v2", "scoped", branches=["dev"]), NOW)
    assert dev.entries[0].branches == ("dev",)
    clear = apply_mutation(entries, validate_request("replace", "memory", "scoped", "scoped", branches=[]), NOW)
    assert clear.changed and clear.entries[0].branches == ()
    assert "branches" not in clear.entries[0].to_json()


def test_replace_with_identical_content_importance_and_scope_changes_nothing():
    entries = (e("same"),)
    outcome = apply_mutation(entries, validate_request("replace", "memory", "same", "sam"), NOW)
    assert outcome.changed is False and outcome.entries == entries


def test_replace_into_a_duplicate_of_another_entry_is_rejected():
    with pytest.raises(InvalidInput) as info:
        apply_mutation([e("one"), e("two")], validate_request("replace", "memory", "two", "one"), NOW)
    assert info.value.field == "content"


def test_remove_by_unique_substring():
    entries = [e("keep me", "user"), e("drop this SQLite note")]
    outcome = apply_mutation(entries, validate_request("remove", "memory", old_text="SQLite"), NOW)
    assert outcome.entries == (entries[0],)
    assert outcome.detail == {"removed": "drop this SQLite note"}
    assert outcome.excluded == entries[1] and outcome.pending is None


@pytest.mark.parametrize("action", ["replace", "remove"])
def test_selector_errors_propagate_from_apply(action):
    content = "new" if action == "replace" else None
    entries = [e("EGO_LINUX_CHROME"), e("X"), e("dup"), e("dup")]
    assert apply_mutation(entries, validate_request(action, "memory", content, " \nX\t "), NOW).excluded == entries[1]
    with pytest.raises(NoMatch):
        apply_mutation(entries, validate_request(action, "memory", content, "absent"), NOW)
    with pytest.raises(AmbiguousMatch):
        apply_mutation(entries, validate_request(action, "memory", content, "dup"), NOW)
    with pytest.raises(AmbiguousMatch):
        apply_mutation(entries, validate_request(action, "memory", content, "p"), NOW)


# ---------------------------------------------------------------- capacity


def test_check_capacity_carries_numbers():
    before = [e("x" * 4090, "user")]
    after = [*before, e("\u8d85\u51fa", "user")]
    with pytest.raises(RuntimeCapacityError) as info:
        ops.check_capacity(before, after, "user", 4096)
    assert info.value.data == {"target": "user", "used": 4090, "projected": 4100, "limit": 4096}
    assert info.value.code == "runtime-capacity"
    ops.check_capacity(before, [e("x" * 4096, "user")], "user", 4096)


# ---------------------------------------------------------------- packing (reference 4.3)


def test_pack_case_33():
    candidates = [Candidate("n" * 48, "normal"), Candidate("critical rule", "critical"), Candidate("low detail", "low")]
    assert pack(candidates, 28) == [1, 2]


def test_pack_orders_by_importance_then_position_and_emits_original_order():
    candidates = [
        Candidate("low-1", "low"),       # 5
        Candidate("normal-1", "normal"),  # 8
        Candidate("crit-1", "critical"),  # 6
        Candidate("normal-2", "normal"),  # 8
    ]
    assert pack(candidates, 6) == [2]
    assert pack(candidates, 6 + 4 + 8) == [1, 2]
    assert pack(candidates, 6 + 4 + 8 + 4 + 8) == [1, 2, 3]
    assert pack(candidates, 6 + 4 + 8 + 4 + 8 + 4 + 5) == [0, 1, 2, 3]
    assert pack(candidates, 0) == []


def test_pack_skips_a_large_candidate_and_keeps_trying_smaller_ones():
    candidates = [Candidate("x" * 20, "critical"), Candidate("y" * 30, "normal"), Candidate("z" * 5, "low")]
    assert pack(candidates, 29) == [0, 2]


def test_pack_counts_utf8_bytes():
    candidates = [Candidate("\u8bed" * 3, "normal"), Candidate("ab", "normal")]
    assert pack(candidates, 9) == [0]
    assert pack(candidates, 15) == [0, 1]


def test_validate_candidates_rejects_duplicates_including_nfd():
    with pytest.raises(DuplicateContent) as info:
        ops.validate_candidates([{"content": "a", "importance": "low"}, {"content": " a\n"}], "memory")
    assert info.value.data["field"] == "candidates[1].content"
    with pytest.raises(DuplicateContent):
        ops.validate_candidates([{"content": "caf\u00e9"}, {"content": "cafe\u0301"}], "memory")


@pytest.mark.parametrize(
    "candidates, field",
    [
        ([{"content": "a\u00a7"}], "candidates[0].content"),
        ([{"content": "ok"}, {"content": " "}], "candidates[1].content"),
        ([{"content": "ok", "importance": "top"}], "candidates[0].importance"),
        ([{"content": "x" * 8193}], "candidates[0].content"),
        (["text"], "candidates[0]"),
        ("text", "candidates"),
        ([{"content": "ok", "branches": ["bad name"]}], "candidates[0].branches[0]"),
    ],
)
def test_validate_candidates_field_names(candidates, field):
    with pytest.raises(InvalidInput) as info:
        ops.validate_candidates(candidates, "memory")
    assert info.value.field == field


def test_validate_candidates_branches_on_user_target():
    with pytest.raises(InvalidInput) as info:
        ops.validate_candidates([{"content": "u", "branches": ["main"]}], "user")
    assert info.value.field == "candidates[0].branches"


def test_validate_candidates_normalizes_and_defaults():
    assert ops.validate_candidates([{"content": " a \n b"}, Candidate("c", "low", ("main",))], "memory") == [
        Candidate("a b", "normal", None), Candidate("c", "low", ("main",))]


def test_materialize_copies_timestamps_and_inherits_branches():
    committed = [e("kept", branches=["main"], at=T0), e("kept", "user", at="2000-01-01T00:00:00.000Z")]
    result = ops.materialize(
        [Candidate("kept", "critical"), Candidate("kept", "low", ()), Candidate("new", "low", ("dev",))],
        committed, "memory", NOW)
    assert result == [
        Entry("kept", T0, T0, "memory", "critical", ("main",)),
        Entry("kept", T0, T0, "memory", "low", ()),
        Entry("new", NOW, NOW, "memory", "low", ("dev",)),
    ]


@pytest.mark.parametrize("value", [-1, 10241, 1.5, "10", True])
def test_validate_budget_rejects(value):
    with pytest.raises(InvalidInput) as info:
        ops.validate_budget(value, 10240)
    assert info.value.field == "maxBytes"
    assert "budget is invalid" in info.value.rule


def test_validate_budget_accepts_range():
    assert ops.validate_budget(None, 10240) == 10240
    assert ops.validate_budget(0, 10240) == 0
    assert ops.validate_budget(10240, 10240) == 10240


def test_compaction_budget_formula():
    assert ops.compaction_budget(10240, None, True) == 7168
    assert ops.compaction_budget(10240, "abc", False) == 7165
    assert ops.compaction_budget(10240, "abc", True) == 7161
    assert ops.compaction_budget(4096, "\u8d85\u51fa", True) == 2867 - 6 - 4
    assert ops.compaction_budget(10, "x" * 9, True) == 0


@pytest.mark.parametrize("text", ["a\x00b", "a\x1b[31mred", "bell\x07", "del\x7f", "c1\x85x"])
def test_control_characters_are_rejected_in_new_content(text):
    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.runtime.ops import validate_request

    with pytest.raises(InvalidInput) as info:
        validate_request("add", "memory", text)
    assert info.value.field == "content"
    assert "control characters" in info.value.rule


def test_duplicate_add_with_other_scope_says_what_is_kept():
    from mnemon_ls.runtime.model import Entry
    from mnemon_ls.runtime.ops import apply_mutation, validate_request

    entries = (Entry("note", "t", "t", "memory", "normal", ("main",)),)
    outcome = apply_mutation(entries, validate_request("add", "memory", "note", branches=["feat"]), "now")
    assert outcome.changed is False
    assert outcome.entries == entries
    assert outcome.message == ("Entry already exists. It keeps importance normal and scope main; "
                               "use replace to change them.")
