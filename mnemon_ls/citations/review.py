"""Review instead of expiry (issue 24 item 6): the one rule that says a memory is due for review.

A memory neither updated nor recalled for ``reviewAfterDays`` (a setting, 24-hour days, default 90, 0 turns the
marking off) is *marked* for review: ``review: "due"`` in reads, ``review due`` on its wake entry with one count
line. Nothing is ever deleted by age. Which times count, per kind of memory:

- a runtime entry (USER.md/MEMORY.md): its ``updated_at`` (it is in every wake, so "recalled" does not apply);
- a Memory Space item: the later of its ``updated_at`` and its last access (recall);
- a Document and a workspace record: their ``updatedAt``;
- for each, also when a person last confirmed it still true ("Still true" in the review views,
  ``citations.reanchor``; :mod:`.reviewed`), so a confirmed memory is due again only ``reviewAfterDays`` later.

Base layer: imports nothing of the package.
"""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import Any

#: One day in milliseconds (24 hours; the wake's ages use the same day).
DAY_MS = 86_400_000
#: The value a read answers as ``review`` for a memory due for review.
DUE = "due"


def to_ms(value: Any) -> int | None:
    """Epoch milliseconds of ``value``: an ``int``/``float`` (epoch ms), a :class:`datetime` (naive means UTC)
    or an ISO-8601 string (``Z`` allowed); ``None`` for ``None``, ``""`` or what cannot be read."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        return _iso_ms(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp() * 1000)
    return None


@functools.lru_cache(maxsize=4096)
def _iso_ms(value: str) -> int | None:
    """:func:`to_ms` of an ISO-8601 string (a wake reads the same entries' times again and again)."""
    text = value.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def review_due(updated_at: Any, recalled_at: Any, now: Any, days: int, reviewed_at: Any = None) -> bool:
    """Whether a memory is due for review: ``days`` > 0 and at least ``days`` whole 24-hour days
    (``days * 86_400_000`` ms) have passed from the latest of ``updated_at``, ``recalled_at`` and ``reviewed_at``
    (when a person last confirmed it still true, :mod:`.reviewed`; ignored when later than ``now``) to ``now``.

    Each time is what :func:`to_ms` reads (epoch ms, a datetime or an ISO-8601 string; ``recalled_at`` ``None``
    when never recalled or not applicable). A memory with neither time readable, or ``now`` unreadable, is never
    due (unknown age is not old age). ``days`` 0 turns review off (always ``False``). Raises nothing."""
    if not days or days < 0:
        return False
    moment = to_ms(now)
    return moment is not None and due_since(last_touched(updated_at, recalled_at, moment, reviewed_at), moment, days)


def due_since(latest: int | None, now_ms: int, days: int) -> bool:
    """The rule of :func:`review_due` on times already read: ``latest`` (epoch ms, :func:`last_touched`; ``None``:
    unknown, never due) at least ``days`` whole days (> 0) before ``now_ms``. For a caller that reads the same
    kind of time for many memories at one ``now`` (the wake's marks)."""
    return latest is not None and days > 0 and now_ms - latest >= days * DAY_MS


def last_touched(updated_at: Any, recalled_at: Any, now: Any, reviewed_at: Any = None) -> int | None:
    """The latest of ``updated_at``, ``recalled_at`` and ``reviewed_at`` (epoch ms, :func:`to_ms`), or ``None``
    when none is readable. A confirmation later than ``now`` (a hand edit, a clock set wrong) is ignored: it
    would hide the memory from review until then."""
    confirmed = to_ms(reviewed_at)
    if confirmed is not None:  # ``now`` matters only to a confirmation (a wake asks this of every entry)
        moment = to_ms(now)
        if moment is None or confirmed > moment:
            confirmed = None
    latest = to_ms(updated_at)
    for other in (to_ms(recalled_at), confirmed):
        if other is not None and (latest is None or other > latest):
            latest = other
    return latest


def mark(data: dict[str, Any], updated_at: Any, recalled_at: Any, now: Any, days: int,
         reviewed_at: Any = None) -> dict[str, Any]:
    """``data`` with ``review: "due"`` added when :func:`review_due` (unchanged otherwise); returns ``data``."""
    if review_due(updated_at, recalled_at, now, days, reviewed_at):
        data["review"] = DUE
    return data
