"""A person's compaction of a full USER.md (issue 23 item 9): ``merge`` and ``drop`` instead of a rewrite of
every entry, checked by the same Host rules (:func:`mnemon_ls.runtime.compaction.person_entries`, then
``derive_candidates``), with dropped entries kept word for word in the local archive like replaced ones.

Real stores under tmp_path and a frozen clock (the fixtures of tests/runtime/test_compaction.py); every refused
request is checked to leave every byte, mtime and inode under the root as it was.
"""

from __future__ import annotations

import json

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.runtime.compaction import person_form
from mnemon_ls.runtime.ops import validate_request
from tests.runtime.test_compaction import ALPHA, BRAVO, CHARLIE, PENDING, SEP, filled, make_store, overflow

DELTA = "reads diffs before the summary"


def four(root, clock, user: int = 160):
    """ALPHA (normal), BRAVO (critical), CHARLIE (low), DELTA (normal): 4 x 30 bytes + 3 delimiters = 132."""
    store = make_store(root, clock, user)
    for content, importance in ((ALPHA, "normal"), (BRAVO, "critical"), (CHARLIE, "low"), (DELTA, "normal")):
        store.mutate(validate_request("add", "user", content, importance=importance))
    return store


def archived(root) -> list[dict]:
    path = root / "runtime" / "archived" / "memories.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_merge_and_drop_keep_the_rest_in_place_and_archive_what_leaves(tmp_path, clock):
    store = four(tmp_path, clock)
    revision = store.read().revision
    receipt = store.maintenance.compact_plan(revision, "user", None, form=person_form(
        [{"sourceIndexes": [3, 1], "content": "tabs in Go; short subjects"}], [2]))
    # the merge stands where its first entry stood; DELTA (neither merged nor dropped) stays as it was
    assert (tmp_path / "runtime" / "USER.md").read_text() == SEP.join(["tabs in Go; short subjects", DELTA]) + "\n"
    entries = store.read().of("user")
    assert [(e.content, e.importance) for e in entries] == [("tabs in Go; short subjects", "normal"),
                                                            (DELTA, "normal")]
    maintenance = receipt.to_dict()["maintenance"]
    assert maintenance["entries"] == [
        {"content": "tabs in Go; short subjects", "importance": "normal", "sourceIndexes": [3, 1]},
        {"content": DELTA, "importance": "normal", "sourceIndexes": [4]}]
    assert maintenance["dropped"] == [2]
    assert (maintenance["bytesBefore"], maintenance["bytesAfter"]) == (132, 60)
    assert [a["sourceIndex"] for a in maintenance["archived"]] == [1, 2, 3]
    assert maintenance["summary"] == ("Compacted USER.md: 2 entries replace 3, 1 dropped (60/160 bytes); the replaced "
                                      "and dropped text is kept in runtime/archived/")
    # the dropped entry (BRAVO) is kept word for word, with its importance, beside the merged ones
    kept = {row["content"]: row for row in archived(tmp_path)}
    assert set(kept) == {ALPHA, BRAVO, CHARLIE}
    assert kept[BRAVO]["importance"] == "critical" and kept[BRAVO]["revision"] == revision
    assert (tmp_path / "runtime" / "archived" / "USER.md").read_text() == SEP.join([ALPHA, BRAVO, CHARLIE]) + "\n"


def test_a_merge_takes_the_highest_importance_of_its_entries_by_default(tmp_path, clock):
    store = four(tmp_path, clock)
    store.maintenance.compact_plan(store.read().revision, "user", None, form=person_form(
        [{"sourceIndexes": [2, 3], "content": "no force-push; short subjects"}], None))
    assert [(e.content, e.importance) for e in store.read().of("user")] == [
        (ALPHA, "normal"), ("no force-push; short subjects", "critical"), (DELTA, "normal")]


def test_drop_alone_is_a_compaction(tmp_path, clock):
    store = four(tmp_path, clock)
    receipt = store.maintenance.compact_plan(store.read().revision, "user", None, form=person_form(None, [4, 1]))
    assert [e.content for e in store.read().of("user")] == [BRAVO, CHARLIE]
    assert receipt.to_dict()["maintenance"]["dropped"] == [1, 4]
    assert {row["content"] for row in archived(tmp_path)} == {ALPHA, DELTA}


def test_a_pending_add_lands_with_the_persons_compaction(tmp_path, clock):
    store = filled(tmp_path, clock)
    plan = overflow(store).data["maintenance"]
    store.maintenance.compact_plan(plan["revision"], "user", None, validate_request("add", "user", PENDING),
                       form=person_form([{"sourceIndexes": [1, 2], "content": "Go tabs; no force-push"}], [3]))
    assert (tmp_path / "runtime" / "USER.md").read_text() == SEP.join(["Go tabs; no force-push", PENDING]) + "\n"


REFUSED = {
    "out of range": (([{"sourceIndexes": [1, 5], "content": "x"}], None), "merge[0].sourceIndexes[1]",
                     "entry 5 does not exist: USER.md has entries 1..4"),
    "merged and dropped": (([{"sourceIndexes": [1, 2], "content": "x"}], [2]), "drop[0]",
                           "entry 2 is both merged and dropped; each entry is merged or dropped once"),
    "in two merges": (([{"sourceIndexes": [1, 2], "content": "x"}, {"sourceIndexes": [2, 3], "content": "y"}], None),
                      "merge[1].sourceIndexes[0]", "entry 2 is in two merges; each entry is merged or dropped once"),
    "lowers importance": (([{"sourceIndexes": [1, 2], "content": "x", "importance": "normal"}], None),
                          "merge[0].importance", "lowers importance: entry 2 is critical, this merge normal"),
    "repeats an entry that stays": (([{"sourceIndexes": [1, 2], "content": DELTA}], None), "merge[0].content",
                                    "is the text of entry 4, which stays as it is (merge or drop entry 4 too)"),
    "two merges one text": (([{"sourceIndexes": [1], "content": "same"}, {"sourceIndexes": [2], "content": "same"}],
                             None), "merge[1].content", "repeats merge[0].content"),
    "over the budget": (([{"sourceIndexes": [1, 2], "content": "q" * 70}], None), "entries",
                        "USER.md would still use 138 UTF-8 bytes for its entries, over the budget of 112 (70% of the "
                        "160-byte limit, minus the pending change); merge, shorten or drop more entries"),
    "changes nothing": (([{"sourceIndexes": [4], "content": DELTA, "importance": "normal"}], None), "entries",
                        "change nothing: each entry is its source index unchanged, so no USER.md byte is freed (a "
                        "compaction merges or shortens entries)", 400),  # within the budget: only the no-op is left
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_broken_rule_names_the_persons_field_and_changes_nothing(tmp_path, clock, disk, name):
    (merge, drop), field, rule, *limit = REFUSED[name]
    store = four(tmp_path, clock, *limit)
    before = disk.freeze(tmp_path)
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_plan(store.read().revision, "user", None, form=person_form(merge, drop))
    assert (info.value.field, info.value.rule) == (field, rule)
    assert disk.state(tmp_path) == before


NUMBERING = "entries are numbered from 1, as the compaction plan and `mnemon-ls runtime list` number them"

SHAPES = {
    "nothing": ((None, []), "drop", "names no change: give at least one merge or one entry to drop"),
    "empty merge": (([], None), "merge", "names no change: give at least one merge or one entry to drop"),
    "not a list": (("2,3", None), "merge",
                   "must be a list of {sourceIndexes, content, importance?}, not a string (got '2,3')"),
    "no numbers": (([{"content": "x"}], None), "merge[0].sourceIndexes",
                   "is required: the numbers of the entries to merge"),
    "no entry named": (([{"sourceIndexes": [], "content": "x"}], None), "merge[0].sourceIndexes",
                       "must name at least one entry"),
    "a string number": (([{"sourceIndexes": [1, "2"], "content": "x"}], None), "merge[0].sourceIndexes[1]",
                        "the second number is '2', not an entry number: " + NUMBERING),
    "a boolean number": ((None, [True]), "drop[0]", "the first number is True, not an entry number: " + NUMBERING),
    "entry zero": ((None, [2, 0]), "drop[1]", "the second number is 0, not an entry number: " + NUMBERING),
    "twice in one merge": (([{"sourceIndexes": [2, 2], "content": "x"}], None), "merge[0].sourceIndexes[1]",
                           "the second number names entry 2 again; name each entry once"),
    "section sign": (([{"sourceIndexes": [1], "content": "a\n\u00a7\nb"}], None), "merge[0].content",
                     "must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "unknown member": (([{"sourceIndexes": [1], "content": "x", "weight": 1}], None), "merge[0].weight",
                       "is not a known field (sourceIndexes, content, importance, branches)"),
    "bad importance": (([{"sourceIndexes": [1], "content": "x", "importance": "high"}], None), "merge[0].importance",
                       "must be one of critical, normal, low (got 'high')"),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_persons_form_is_checked_before_any_store_is_read(name):
    (merge, drop), field, rule = SHAPES[name]
    with pytest.raises(InvalidInput) as info:
        person_form(merge, drop)
    assert (info.value.field, info.value.rule) == (field, rule)
