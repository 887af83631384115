"""The review activity score (reference dsh-mnemon.md 8.2, acceptance case 75), admission and persistence."""

from __future__ import annotations

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.records.activity import ActivityStore, ReviewActivity, parse_turn_activity, review_score


@pytest.mark.parametrize("text, turns, calls, tools, score, eligible", [
    (150, 1, 0, 0, 4, False),
    (150, 2, 0, 0, 5, True),
    (100, 1, 5, 3, 5, True),
    (0, 5, 0, 0, 5, True),
    (1000, 2, 100, 8, 9, True),
    (49, 1, 4, 2, 1, False),   # each part just below its first step
    (0, 0, 10, 4, 4, False),   # toolCalls capped at 2, diversity at 2
])
def test_score_formula_on_the_reference_cases(text, turns, calls, tools, score, eligible):
    result = review_score(text, turns, calls, tools)
    assert (result["score"], result["eligible"]) == (score, eligible)


def test_parts_of_the_score():
    assert review_score(1000, 2, 100, 8)["parts"] == {"textLength": 3, "turns": 2, "toolCalls": 2, "toolDiversity": 2}


def test_accumulation_unions_tool_names_and_admission_needs_a_signal():
    activity = ReviewActivity()
    for _ in range(5):  # five trivial turns: eligible by score, but nothing worth remembering
        activity.add_turn(parse_turn_activity({"userTextLength": 2}))
    verdict = activity.evaluate()
    assert verdict["eligible"] and not verdict["admitted"]
    activity.add_turn(parse_turn_activity({"toolNames": ["mnemon_recall", "mnemon_wake"], "toolCallCount": 2}))
    assert not activity.evaluate()["admitted"]  # only mnemon_ tools
    activity.add_turn(parse_turn_activity({"toolNames": ["mnemon_recall", "shell"], "toolCallCount": 1}))
    verdict = activity.evaluate()
    assert verdict["admitted"] and verdict["signals"]["nonMnemonToolCall"]
    assert activity.unique_tool_count == 3 and activity.tool_call_count == 3 and activity.turn_count == 7


@pytest.mark.parametrize("text, cue, suppressed", [
    ("Please remember this: deploys go through staging", True, False),
    ("记住：部署必须经过预发环境", True, False),
    ("Don't remember this, it is temporary", True, True),
    ("这个不要记，只是临时的", False, True),
    ("do not save this to memory", True, True),
    ("just fix the test", False, False),
])
def test_cues_in_english_and_chinese(text, cue, suppressed):
    activity = ReviewActivity()
    activity.add_turn(parse_turn_activity({"userText": text}))
    assert activity.signals["rememberCue"] is cue
    assert activity.suppressed is suppressed


def test_long_texts_are_signals_and_the_latest_turn_decides_suppression():
    activity = ReviewActivity()
    activity.add_turn(parse_turn_activity({"userText": "别记这个"}))
    activity.add_turn(parse_turn_activity({"userTextLength": 320, "assistantTextLength": 600}))
    assert activity.signals["longUserText"] and activity.signals["longAssistantText"] and not activity.suppressed


@pytest.mark.parametrize("bad, field", [
    ({"userTextLength": -1}, "activity.userTextLength"),
    ({"toolCallCount": 1.5}, "activity.toolCallCount"),
    ({"uniqueToolCount": 10**9}, "activity.uniqueToolCount"),
    ({"assistantTextLength": "5"}, "activity.assistantTextLength"),
    ({"toolNames": "shell"}, "activity.toolNames"),
    ({"turns": 1}, "activity.turns"),
])
def test_bad_counts_name_the_field(bad, field):
    with pytest.raises(InvalidInput) as caught:
        parse_turn_activity(bad)
    assert caught.value.field == field


def test_persisted_accumulation_survives_a_new_store_and_resets(tmp_path):
    path = tmp_path / "state" / "review-activity-x.json"
    ActivityStore(path).add_turn(parse_turn_activity({"userTextLength": 150}))
    again = ActivityStore(path).add_turn(parse_turn_activity({}))
    assert again.evaluate()["score"] == 5
    assert path.stat().st_mode & 0o777 == 0o600
    ActivityStore(path).reset()
    assert ActivityStore(path).load().evaluate()["score"] == 0
    path.write_text("{not json")
    assert ActivityStore(path).load().turn_count == 0  # soft state: a damaged file starts from zero
