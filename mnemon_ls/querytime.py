"""Time ranges named in a query (pure): "in April 2025", "last week", "yesterday", "in 2024", "上周", "2024年4月".

:func:`parse_range` finds the phrases of a query that name a span of time and returns their range relative to a
clock (``now``, an aware datetime; the range is in ``now``'s time zone): ``start`` inclusive, ``end`` exclusive,
and where the phrases are in the text, so a search can drop those words from its terms and use the range on the
items' times instead (:mod:`mnemon_ls.spaces.querysense`).

What it understands (English case-insensitive, weeks start on Monday):

=====================================  ==========================================================================
phrase                                 range
=====================================  ==========================================================================
today / yesterday / the day before     that day
yesterday; 今天 / 昨天 / 前天
this / last week; 本周 这周 / 上周     the calendar week (``the past week``: the 7 days up to today);
上个星期 上星期 上礼拜                 ``N weeks ago``, ``N周前`` (两周前): the week N back
this / last month; 本月 这个月 /       the calendar month; ``N months ago``, ``N个月前``
上个月 上月
this / last year; 今年 / 去年 / 前年   the calendar year; ``N years ago``, ``N年前``
this / last quarter                    the calendar quarter
N days ago; N天前                      that day
the last / past N days (weeks)         the N days (weeks) up to today, today included
in / during / of / since ... 2024;     the year (a bare number needs one of these words before it, so
2024年                                 ``port 2048`` is not a year)
April 2025, Apr 2025, April of 2025,   the month; a month without a year (``in April``, ``4月``) is the
2025-04, 2024年4月, 2024年四月         latest one that has begun; ``May`` alone only capitalised after
                                       ``in``/``during``/``since``/``last``/``this`` (``may`` is a verb)
April 5, 2025; 5 April 2025;           the day; without a year, the latest such day not after today
2025-04-05; 2025年4月5日 (号); 4月5日
Q3 2024, the third quarter of 2024,    the quarter; ``Q3`` alone, ``第三季度``: the latest that has begun
2024年第三季度, 2024年三季度
=====================================  ==========================================================================

Several phrases give the smallest range holding all of them. A range that begins after ``now`` is ignored
(memories are never from the future). Numbers may be digits, English words up to twelve (``two weeks ago``) or
Chinese numerals up to 十二 (``两周前``, ``四月``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Callable, Iterator

_MONTHS = {name: number for number, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
               "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1}
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUM = r"\d{1,2}|" + "|".join(_EN_NUMBERS)
_ZH_NUM = r"\d{1,2}|十[一二]?|[一二两三四五六七八九]"
_YEAR = r"(?:19|20)\d\d"
_B = r"(?<![\w.:-])"  # a word begins here (not inside a number, an identifier or a version)
_E = r"(?![\w-]|\.\d|:\d)"  # and ends here


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A span of time a query names: ``start`` (inclusive) and ``end`` (exclusive), aware datetimes in the
    clock's time zone; ``spans``: the ``(start, end)`` character offsets of the phrases in the query."""

    start: datetime
    end: datetime
    spans: tuple[tuple[int, int], ...]

    def holds(self, moment: datetime) -> bool:
        """Whether ``moment`` (aware) lies in ``[start, end)``."""
        return self.start <= moment < self.end

    def without(self, text: str) -> str:
        """``text`` with the phrases of the range replaced by spaces (the same length and offsets)."""
        out = list(text)
        for start, end in self.spans:
            out[start:end] = " " * (end - start)
        return "".join(out)


def _number(text: str) -> int:
    text = text.lower()
    if text.isdigit():
        return int(text)
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if text.startswith("十"):  # 十, 十一, 十二
        return 10 + (_ZH_DIGITS[text[1]] if len(text) > 1 else 0)
    return _ZH_DIGITS[text]


def _month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    return date(year, (month - 1) % 12 + 1, 1)


class _Span:
    """Day arithmetic around ``today`` (the clock's date)."""

    def __init__(self, today: date) -> None:
        self.today = today

    def days(self, first: date, count: int = 1) -> tuple[date, date]:
        return first, first + timedelta(days=count)

    def week(self, back: int) -> tuple[date, date]:
        monday = self.today - timedelta(days=self.today.weekday() + 7 * back)
        return monday, monday + timedelta(days=7)

    def month(self, year: int, month: int) -> tuple[date, date]:
        return _month_start(year, month), _month_start(year, month + 1)

    def months_back(self, back: int) -> tuple[date, date]:
        return self.month(self.today.year, self.today.month - back)

    def year(self, year: int) -> tuple[date, date]:
        return date(year, 1, 1), date(year + 1, 1, 1)

    def quarter(self, year: int, quarter: int) -> tuple[date, date]:
        return self.month(year, 3 * quarter - 2)[0], _month_start(year, 3 * quarter + 1)

    def latest_month(self, month: int) -> tuple[date, date]:
        year = self.today.year if month <= self.today.month else self.today.year - 1
        return self.month(year, month)

    def latest_day(self, month: int, day: int) -> tuple[date, date] | None:
        for year in range(self.today.year, self.today.year - 5, -1):  # February 29 comes back within four
            try:
                moment = date(year, month, day)
            except ValueError:
                continue
            if moment <= self.today:
                return self.days(moment)
        return None

    def latest_quarter(self, quarter: int) -> tuple[date, date]:
        current = (self.today.month - 1) // 3 + 1
        return self.quarter(self.today.year if quarter <= current else self.today.year - 1, quarter)

    def day(self, year: int, month: int, day: int) -> tuple[date, date] | None:
        try:
            return self.days(date(year, month, day))
        except ValueError:
            return None


Rule = Callable[["re.Match[str]", _Span], "tuple[date, date] | None"]


def _rules() -> list[tuple[re.Pattern[str], Rule]]:
    i = re.IGNORECASE
    month = lambda m, g="month": _MONTHS[m.group(g).lower()]  # noqa: E731
    q = lambda word: _ORDINALS.get(word.lower()) or int(word)  # noqa: E731
    zq = lambda word: _number(word) if not word.isdigit() else int(word)  # noqa: E731
    return [
        # days
        (re.compile(_B + r"(?:the\s+)?day\s+before\s+yesterday" + _E, i), lambda m, s: s.days(s.today - timedelta(2))),
        (re.compile(_B + r"yesterday" + _E, i), lambda m, s: s.days(s.today - timedelta(1))),
        (re.compile(_B + r"today" + _E, i), lambda m, s: s.days(s.today)),
        (re.compile(r"前天"), lambda m, s: s.days(s.today - timedelta(2))),
        (re.compile(r"昨天|昨日"), lambda m, s: s.days(s.today - timedelta(1))),
        (re.compile(r"今天|今日"), lambda m, s: s.days(s.today)),
        (re.compile(_B + rf"(?P<n>{_NUM})\s+days?\s+ago" + _E, i),
         lambda m, s: s.days(s.today - timedelta(_number(m.group("n"))))),
        (re.compile(rf"(?P<n>{_ZH_NUM})天前"), lambda m, s: s.days(s.today - timedelta(_number(m.group("n"))))),
        (re.compile(_B + rf"(?:the\s+)?(?:last|past)\s+(?P<n>{_NUM})\s+(?P<unit>days|weeks)" + _E, i),
         lambda m, s: (s.today - timedelta(_number(m.group("n")) * (7 if m.group("unit").lower() == "weeks" else 1)
                                           - 1), s.today + timedelta(1))),
        # weeks
        (re.compile(_B + r"(?:the\s+)?week\s+before\s+last" + _E, i), lambda m, s: s.week(2)),
        (re.compile(_B + r"(?:this|current)\s+week" + _E, i), lambda m, s: s.week(0)),
        (re.compile(_B + r"(?:last|previous)\s+week" + _E, i), lambda m, s: s.week(1)),
        (re.compile(_B + r"(?:the\s+)?past\s+week" + _E, i),
         lambda m, s: (s.today - timedelta(6), s.today + timedelta(1))),
        (re.compile(_B + rf"(?P<n>{_NUM})\s+weeks?\s+ago" + _E, i), lambda m, s: s.week(_number(m.group("n")))),
        (re.compile(r"本周|这周|这个星期|这星期|本星期|这个礼拜"), lambda m, s: s.week(0)),
        (re.compile(r"上周|上个星期|上星期|上礼拜|上个礼拜"), lambda m, s: s.week(1)),
        (re.compile(rf"(?P<n>{_ZH_NUM})(?:周|个星期|个礼拜)前"), lambda m, s: s.week(_number(m.group("n")))),
        # months
        (re.compile(_B + r"(?:this|current)\s+month" + _E, i), lambda m, s: s.months_back(0)),
        (re.compile(_B + r"(?:last|past|previous)\s+month" + _E, i), lambda m, s: s.months_back(1)),
        (re.compile(_B + rf"(?P<n>{_NUM})\s+months?\s+ago" + _E, i),
         lambda m, s: s.months_back(_number(m.group("n")))),
        (re.compile(r"本月|这个月|这月"), lambda m, s: s.months_back(0)),
        (re.compile(r"上个月|上月"), lambda m, s: s.months_back(1)),
        (re.compile(rf"(?P<n>{_ZH_NUM})个月前"), lambda m, s: s.months_back(_number(m.group("n")))),
        # quarters
        (re.compile(_B + r"(?:this|current)\s+quarter" + _E, i),
         lambda m, s: s.latest_quarter((s.today.month - 1) // 3 + 1)),
        (re.compile(_B + r"(?:last|previous)\s+quarter" + _E, i),
         lambda m, s: s.quarter(*((s.today.year, (s.today.month - 1) // 3) if s.today.month > 3 else
                                  (s.today.year - 1, 4)))),
        (re.compile(_B + rf"(?:the\s+)?(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?"
                    rf"(?P<year>{_YEAR})" + _E, i), lambda m, s: s.quarter(int(m.group("year")), q(m.group("q")))),
        (re.compile(_B + rf"Q(?P<q>[1-4])\s*(?:of\s+)?(?P<year>{_YEAR})" + _E, i),
         lambda m, s: s.quarter(int(m.group("year")), int(m.group("q")))),
        (re.compile(_B + rf"(?P<year>{_YEAR})[\s-]*Q(?P<q>[1-4])" + _E, i),
         lambda m, s: s.quarter(int(m.group("year")), int(m.group("q")))),
        (re.compile(_B + r"Q(?P<q>[1-4])" + _E), lambda m, s: s.latest_quarter(int(m.group("q")))),
        (re.compile(rf"(?P<year>{_YEAR})\s*年\s*(?:第\s*)?(?P<q>[1-4一二三四])\s*季度"),
         lambda m, s: s.quarter(int(m.group("year")), zq(m.group("q")))),
        (re.compile(rf"(?P<year>{_YEAR})\s*年\s*Q(?P<q>[1-4])", i),
         lambda m, s: s.quarter(int(m.group("year")), int(m.group("q")))),
        (re.compile(r"第\s*(?P<q>[1-4一二三四])\s*季度"), lambda m, s: s.latest_quarter(zq(m.group("q")))),
        # years
        (re.compile(_B + r"(?:this|current)\s+year" + _E, i), lambda m, s: s.year(s.today.year)),
        (re.compile(_B + r"last\s+year" + _E, i), lambda m, s: s.year(s.today.year - 1)),
        (re.compile(_B + rf"(?P<n>{_NUM})\s+years?\s+ago" + _E, i),
         lambda m, s: s.year(s.today.year - _number(m.group("n")))),
        (re.compile(r"今年"), lambda m, s: s.year(s.today.year)),
        (re.compile(r"去年"), lambda m, s: s.year(s.today.year - 1)),
        (re.compile(r"前年"), lambda m, s: s.year(s.today.year - 2)),
        (re.compile(rf"(?P<n>{_ZH_NUM})年前"), lambda m, s: s.year(s.today.year - _number(m.group("n")))),
        # days and months with a year
        (re.compile(_B + rf"(?P<year>{_YEAR})-(?P<month>\d\d)-(?P<day>\d\d)" + _E),
         lambda m, s: s.day(int(m.group("year")), int(m.group("month")), int(m.group("day")))),
        (re.compile(_B + rf"(?P<year>{_YEAR})-(?P<month>\d\d)" + _E),
         lambda m, s: s.month(int(m.group("year")), int(m.group("month")))
         if 1 <= int(m.group("month")) <= 12 else None),
        (re.compile(_B + rf"(?P<month>{_MONTH})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>{_YEAR})" + _E, i),
         lambda m, s: s.day(int(m.group("year")), month(m), int(m.group("day")))),
        (re.compile(_B + rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH})\.?,?\s+(?P<year>{_YEAR})"
                    + _E, i), lambda m, s: s.day(int(m.group("year")), month(m), int(m.group("day")))),
        (re.compile(_B + rf"(?P<month>{_MONTH})\.?,?\s+(?:of\s+)?(?P<year>{_YEAR})" + _E, i),
         lambda m, s: s.month(int(m.group("year")), month(m))),
        (re.compile(rf"(?P<year>{_YEAR})\s*年\s*(?P<month>{_ZH_NUM})\s*月\s*(?P<day>\d{{1,2}})\s*[日号]"),
         lambda m, s: s.day(int(m.group("year")), _number(m.group("month")), int(m.group("day")))),
        (re.compile(rf"(?P<year>{_YEAR})\s*年\s*(?P<month>{_ZH_NUM})\s*(?:月份|月)"),
         lambda m, s: s.month(int(m.group("year")), _number(m.group("month")))
         if 1 <= _number(m.group("month")) <= 12 else None),
        (re.compile(rf"(?P<year>{_YEAR})\s*年"), lambda m, s: s.year(int(m.group("year")))),
        (re.compile(_B + rf"(?:in|during|of|from|since|throughout|for)\s+(?:the\s+year\s+)?(?P<year>{_YEAR})" + _E, i),
         lambda m, s: s.year(int(m.group("year")))),
        # days and months without a year: the latest that has begun
        (re.compile(_B + rf"(?P<month>{_MONTH})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?" + _E, i),
         lambda m, s: s.latest_day(month(m), int(m.group("day"))) if m.group("month").lower() != "may"
         or m.group("month") == "May" else None),
        (re.compile(_B + rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH})" + _E, i),
         lambda m, s: s.latest_day(month(m), int(m.group("day"))) if m.group("month").lower() != "may"
         or m.group("month") == "May" else None),
        (re.compile(_B + rf"(?:in|during|since|last|this|of)\s+(?P<month>{_MONTH})" + _E, i),
         lambda m, s: s.latest_month(month(m)) if m.group("month").lower() != "may" or m.group("month") == "May"
         else None),
        (re.compile(rf"(?<![\d年])(?P<month>{_ZH_NUM})\s*月\s*(?P<day>\d{{1,2}})\s*[日号]"),
         lambda m, s: s.latest_day(_number(m.group("month")), int(m.group("day")))),
        (re.compile(rf"(?<![\d年个])(?P<month>{_ZH_NUM})\s*(?:月份|月)(?![前底初中])"),
         lambda m, s: s.latest_month(_number(m.group("month"))) if 1 <= _number(m.group("month")) <= 12 else None),
    ]


_RULES = _rules()
#: Something every rule of :data:`_RULES` needs in the text (case ignored as they ignore it): a digit, one of the
#: English unit words (``day`` also in ``today``, ``yesterday``), a month's name, or a Chinese character of a day,
#: week, month, year or quarter (天 日 周 期 拜 月 年 季). A text without any names no time (most queries): the
#: ~50 rules are not tried on it.
_ANY_RULE = re.compile(r"\d|day|week|month|quarter|year|" + _MONTH + r"|[天日周期拜月年季]", re.IGNORECASE)


def _found(text: str, span: _Span) -> Iterator[tuple[int, int, date, date]]:
    for pattern, rule in _RULES:
        for match in pattern.finditer(text):
            got = rule(match, span)
            if got is not None:
                yield match.start(), match.end(), got[0], got[1]


def parse_range(text: str, now: datetime) -> TimeRange | None:
    """The time range ``text`` names (module doc) relative to ``now`` (an aware datetime), or ``None`` when it
    names none. Overlapping phrases: the longest wins (``April 5, 2025`` over ``April``); several phrases: the
    smallest range holding them all. Raises ``ValueError`` when ``now`` is naive."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    if _ANY_RULE.search(text) is None:
        return None
    span = _Span(now.date())
    chosen: list[tuple[int, int, date, date]] = []
    for found in sorted(_found(text, span), key=lambda f: (-(f[1] - f[0]), f[0])):
        if all(found[1] <= start or found[0] >= end for start, end, *_ in chosen):
            chosen.append(found)
    zone = now.tzinfo
    moments = [(datetime(s.year, s.month, s.day, tzinfo=zone), datetime(e.year, e.month, e.day, tzinfo=zone))
               for _a, _b, s, e in chosen]
    moments = [(s, e) for s, e in moments if s <= now]
    if not moments:
        return None
    spans = tuple(sorted((a, b) for a, b, s, _e in chosen
                         if datetime(s.year, s.month, s.day, tzinfo=zone) <= now))
    return TimeRange(min(s for s, _e in moments), max(e for _s, e in moments), spans)
