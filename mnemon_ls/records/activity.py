"""The review activity score and admission signals (reference dsh-mnemon.md sections 8.2-8.3).

Accumulated over the turns since the last review suggestion::

    textLengthScore    = min(floor(totalUserTextLength / 50), 3)
    turnScore          = turnCount
    toolCallScore      = min(floor(toolCallCount / 5), 2)
    toolDiversityScore = 0 if uniqueToolCount < 3 else min(uniqueToolCount - 3 + 1, 2)
    score = sum; eligible iff score >= 5

Admission (cheap signals): no "don't remember / don't save" intent in the latest turn (English or
Chinese), and at least one of: an explicit "remember this" cue, user text >= 320 characters in one
turn, assistant text >= 600 characters, a tool call whose name does not start with ``mnemon_``.

:class:`ActivityStore` persists the accumulation per workspace (``<root>/state/review-activity-<16
hex of the workspace path>.json``, written atomically under its lock), so a restart keeps it (the
reference lists losing it as a known gap). Nothing here imports pygls.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import fsio
from ..errors import InvalidInput

ELIGIBLE_SCORE = 5
LONG_USER_TEXT = 320
LONG_ASSISTANT_TEXT = 600
#: Largest count accepted per turn (a bigger number is refused as input, not clamped).
MAX_COUNT = 10_000_000
MAX_TOOL_NAMES = 256

REMEMBER_CUE = re.compile(
    r"\b(remember (this|that|it)|remember:|save (this|that|it)? ?(to|in|into) (the )?memory|keep (this|that|it) in "
    r"mind|memori[sz]e (this|that|it)|note (this|that) down)\b|记住|记下|记一下|保存到记忆|存到记忆|写入记忆|存进记忆",
    re.IGNORECASE)
DONT_REMEMBER = re.compile(
    r"\b(don'?t|do not|never|no need to) (remember|save|store|memori[sz]e|record)\b|\bforget (this|that|it)\b|"
    r"不要记|别记|不用记|无需记|不必记|不要保存|别保存|不要存|别存|忘掉|忘了这",
    re.IGNORECASE)


class TurnActivity(BaseModel):
    """One turn's activity as ``mnemon/turn/end`` carries it (every field optional; counts are integers
    0..10000000): ``userTextLength`` (characters), ``toolCallCount``, ``uniqueToolCount``, ``toolNames``
    (distinct names, <= 256), ``assistantTextLength`` (characters), ``userText`` (read for the cues only,
    never stored)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)

    user_text_length: int | None = Field(None, alias="userTextLength", ge=0, le=MAX_COUNT)
    tool_call_count: int | None = Field(None, alias="toolCallCount", ge=0, le=MAX_COUNT)
    unique_tool_count: int | None = Field(None, alias="uniqueToolCount", ge=0, le=MAX_COUNT)
    tool_names: list[str] | None = Field(None, alias="toolNames", max_length=MAX_TOOL_NAMES)
    assistant_text_length: int | None = Field(None, alias="assistantTextLength", ge=0, le=MAX_COUNT)
    user_text: str | None = Field(None, alias="userText", max_length=1_000_000)


def parse_turn_activity(data: Any, field: str = "activity") -> TurnActivity:
    """Validate ``data`` (a dict or ``None``); raises :class:`InvalidInput` naming ``activity.<field>``
    for a negative, fractional, boolean or huge count."""
    if data is None:
        return TurnActivity()
    if not isinstance(data, dict):
        raise InvalidInput(field, "must be an object")
    try:
        return TurnActivity.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            rule = "is not a field of the turn activity"
        elif name.endswith(("Length", "Count")) or err["type"].startswith(("int", "greater", "less")):
            rule = f"must be an integer in 0..{MAX_COUNT}"
        else:
            rule = err["msg"]
        raise InvalidInput(f"{field}.{name}", f"{rule} (got {err.get('input')!r})"[:300]) from None


def review_score(total_user_text_length: int, turn_count: int, tool_call_count: int,
                 unique_tool_count: int) -> dict[str, Any]:
    """The score of reference 8.2: ``{score, eligible, parts: {textLength, turns, toolCalls, toolDiversity}}``."""
    parts = {
        "textLength": min(total_user_text_length // 50, 3),
        "turns": turn_count,
        "toolCalls": min(tool_call_count // 5, 2),
        "toolDiversity": 0 if unique_tool_count < 3 else min(unique_tool_count - 3 + 1, 2),
    }
    score = sum(parts.values())
    return {"score": score, "eligible": score >= ELIGIBLE_SCORE, "parts": parts}


class ReviewActivity:
    """The accumulation since the last review suggestion (plain JSON state, see :meth:`to_json`)."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        s = state or {}
        self.total_user_text_length = int(s.get("totalUserTextLength", 0))
        self.turn_count = int(s.get("turnCount", 0))
        self.tool_call_count = int(s.get("toolCallCount", 0))
        self.tool_names: list[str] = [n for n in s.get("toolNames", []) if isinstance(n, str)][:MAX_TOOL_NAMES]
        self.unique_tool_count = int(s.get("uniqueToolCount", 0))
        signals = s.get("signals", {}) if isinstance(s.get("signals"), dict) else {}
        self.signals = {k: bool(signals.get(k, False)) for k in
                        ("rememberCue", "longUserText", "longAssistantText", "nonMnemonToolCall")}
        self.suppressed = bool(s.get("suppressed", False))

    def add_turn(self, turn: TurnActivity) -> None:
        """Add one ended turn (its counts, names and cues)."""
        text = turn.user_text or ""
        length = turn.user_text_length if turn.user_text_length is not None else len(text.strip())
        self.total_user_text_length = min(self.total_user_text_length + length, 10 * MAX_COUNT)
        self.turn_count += 1
        self.tool_call_count = min(self.tool_call_count + (turn.tool_call_count or 0), 10 * MAX_COUNT)
        for name in turn.tool_names or []:
            if name not in self.tool_names and len(self.tool_names) < MAX_TOOL_NAMES:
                self.tool_names.append(name)
        self.unique_tool_count = max(self.unique_tool_count, len(self.tool_names), turn.unique_tool_count or 0)
        if REMEMBER_CUE.search(text):
            self.signals["rememberCue"] = True
        if length >= LONG_USER_TEXT:
            self.signals["longUserText"] = True
        if (turn.assistant_text_length or 0) >= LONG_ASSISTANT_TEXT:
            self.signals["longAssistantText"] = True
        if any(not n.startswith("mnemon_") for n in turn.tool_names or []):
            self.signals["nonMnemonToolCall"] = True
        elif turn.tool_names is None and (turn.tool_call_count or 0) > 0:
            self.signals["nonMnemonToolCall"] = True  # counts without names: assume ordinary tools
        self.suppressed = bool(DONT_REMEMBER.search(text))  # the latest turn decides

    def evaluate(self) -> dict[str, Any]:
        """``{score, eligible, parts, admitted, reasons, signals, suppressed, activity}``: ``admitted`` is
        eligible, not suppressed, and at least one signal; ``reasons`` name what counted."""
        result = review_score(self.total_user_text_length, self.turn_count, self.tool_call_count,
                              self.unique_tool_count)
        reasons = [f"{k} +{v}" for k, v in result["parts"].items() if v]
        reasons += [f"signal {k}" for k, v in self.signals.items() if v]
        if self.suppressed:
            reasons.append("suppressed: the latest turn asks not to remember")
        admitted = result["eligible"] and not self.suppressed and any(self.signals.values())
        return {**result, "admitted": admitted, "reasons": reasons, "signals": dict(self.signals),
                "suppressed": self.suppressed, "activity": self.to_json()}

    def to_json(self) -> dict[str, Any]:
        """``{schemaVersion: 1, totalUserTextLength, turnCount, toolCallCount, uniqueToolCount, toolNames,
        signals, suppressed}``."""
        return {"schemaVersion": 1, "totalUserTextLength": self.total_user_text_length, "turnCount": self.turn_count,
                "toolCallCount": self.tool_call_count, "uniqueToolCount": self.unique_tool_count,
                "toolNames": list(self.tool_names), "signals": dict(self.signals), "suppressed": self.suppressed}


class ActivityStore:
    """The persisted :class:`ReviewActivity` of one workspace: ``path`` (JSON, 0600), lock ``<path>.lock``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def load(self) -> ReviewActivity:
        """The saved accumulation; a missing or unreadable file starts from zero (it is soft state)."""
        data = fsio.read_bytes_or_none(self.path)
        if not data:
            return ReviewActivity()
        try:
            state = json.loads(data)
            return ReviewActivity(state if isinstance(state, dict) else None)
        except (ValueError, TypeError):
            return ReviewActivity()

    def add_turn(self, turn: TurnActivity) -> ReviewActivity:
        """Add a turn under the lock (re-reading first, so two servers lose nothing) and save it."""
        with fsio.file_lock(self.lock_path):
            activity = self.load()
            activity.add_turn(turn)
            self._save(activity)
        return activity

    def reset(self) -> None:
        """Start a new accumulation (after a review was suggested)."""
        with fsio.file_lock(self.lock_path):
            self._save(ReviewActivity())

    def _save(self, activity: ReviewActivity) -> None:
        fsio.ensure_dir(self.path.parent)
        fsio.write_file_atomically(self.path, json.dumps(activity.to_json(), sort_keys=True).encode() + b"\n")
