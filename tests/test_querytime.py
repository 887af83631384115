"""The time ranges a query names (mnemon_ls.querytime), on a fixed clock: Monday 2025-06-16 09:00 UTC."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mnemon_ls.querytime import parse_range

NOW = datetime(2025, 6, 16, 9, 0, tzinfo=timezone.utc)


def day(text: str, zone: timezone = timezone.utc) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=zone)


def got(text: str, now: datetime = NOW) -> tuple[str, str] | None:
    found = parse_range(text, now)
    if found is None:
        return None
    return found.start.strftime("%Y-%m-%d"), found.end.strftime("%Y-%m-%d")


@pytest.mark.parametrize("text,expected", [
    # absolute months, years, quarters, days
    ("What was the status of the payments migration in April 2025?", ("2025-04-01", "2025-05-01")),
    ("Apr 2025 status", ("2025-04-01", "2025-05-01")),
    ("april of 2024", ("2024-04-01", "2024-05-01")),
    ("the December 2024 retro", ("2024-12-01", "2025-01-01")),
    ("What happened with the search rewrite in 2024?", ("2024-01-01", "2025-01-01")),
    ("during 2023", ("2023-01-01", "2024-01-01")),
    ("the third quarter of 2024", ("2024-07-01", "2024-10-01")),
    ("Q4 2024 incidents", ("2024-10-01", "2025-01-01")),
    ("2025 Q1", ("2025-01-01", "2025-04-01")),
    ("in Q1", ("2025-01-01", "2025-04-01")),
    ("Q3 results", ("2024-07-01", "2024-10-01")),  # the latest third quarter that has begun
    ("2025-04-05", ("2025-04-05", "2025-04-06")),
    ("the 2025-04 notes", ("2025-04-01", "2025-05-01")),
    ("April 5, 2025", ("2025-04-05", "2025-04-06")),
    ("5 April 2025", ("2025-04-05", "2025-04-06")),
    ("on April 5th", ("2025-04-05", "2025-04-06")),
    ("on July 4", ("2024-07-04", "2024-07-05")),  # no year: the latest such day not after today
    ("in April", ("2025-04-01", "2025-05-01")),
    ("in July", ("2024-07-01", "2024-08-01")),  # July 2025 has not begun
    ("since March", ("2025-03-01", "2025-04-01")),
    ("in May", ("2025-05-01", "2025-06-01")),
    ("in April or May 2025", ("2025-04-01", "2025-06-01")),  # two phrases: the range holding both
    # relative
    ("How did the mobile relaunch stand yesterday?", ("2025-06-15", "2025-06-16")),
    ("the day before yesterday", ("2025-06-14", "2025-06-15")),
    ("today", ("2025-06-16", "2025-06-17")),
    ("What was noted last week?", ("2025-06-09", "2025-06-16")),
    ("this week", ("2025-06-16", "2025-06-23")),
    ("the week before last", ("2025-06-02", "2025-06-09")),
    ("two weeks ago", ("2025-06-02", "2025-06-09")),
    ("3 weeks ago", ("2025-05-26", "2025-06-02")),
    ("in the past week", ("2025-06-10", "2025-06-17")),
    ("the last 3 days", ("2025-06-14", "2025-06-17")),
    ("past 2 weeks", ("2025-06-03", "2025-06-17")),
    ("4 days ago", ("2025-06-12", "2025-06-13")),
    ("last month", ("2025-05-01", "2025-06-01")),
    ("this month", ("2025-06-01", "2025-07-01")),
    ("six months ago", ("2024-12-01", "2025-01-01")),
    ("last quarter", ("2025-01-01", "2025-04-01")),
    ("this quarter", ("2025-04-01", "2025-07-01")),
    ("last year", ("2024-01-01", "2025-01-01")),
    ("this year", ("2025-01-01", "2026-01-01")),
    ("two years ago", ("2023-01-01", "2024-01-01")),
    # Chinese
    ("上周的架构评审决定了什么？", ("2025-06-09", "2025-06-16")),
    ("上个星期", ("2025-06-09", "2025-06-16")),
    ("这周", ("2025-06-16", "2025-06-23")),
    ("两周前的故障复盘查出了什么原因？", ("2025-06-02", "2025-06-09")),
    ("3周前", ("2025-05-26", "2025-06-02")),
    ("昨天支付迁移的状态怎么样？", ("2025-06-15", "2025-06-16")),
    ("前天", ("2025-06-14", "2025-06-15")),
    ("今天", ("2025-06-16", "2025-06-17")),
    ("五天前", ("2025-06-11", "2025-06-12")),
    ("2024年4月的故障复盘", ("2024-04-01", "2024-05-01")),
    ("2024年四月", ("2024-04-01", "2024-05-01")),
    ("2024年12月份", ("2024-12-01", "2025-01-01")),
    ("2024年第三季度", ("2024-07-01", "2024-10-01")),
    ("2024年三季度", ("2024-07-01", "2024-10-01")),
    ("2024年Q2", ("2024-04-01", "2024-07-01")),
    ("第一季度", ("2025-01-01", "2025-04-01")),
    ("2024年有哪些状态？", ("2024-01-01", "2025-01-01")),
    ("2025年4月5日", ("2025-04-05", "2025-04-06")),
    ("2025年4月5号", ("2025-04-05", "2025-04-06")),
    ("4月的发布", ("2025-04-01", "2025-05-01")),
    ("七月", ("2024-07-01", "2024-08-01")),
    ("十二月", ("2024-12-01", "2025-01-01")),
    ("4月5日", ("2025-04-05", "2025-04-06")),
    ("这个月的客户升级是什么问题？", ("2025-06-01", "2025-07-01")),
    ("上个月", ("2025-05-01", "2025-06-01")),
    ("两个月前", ("2025-04-01", "2025-05-01")),
    ("去年", ("2024-01-01", "2025-01-01")),
    ("今年", ("2025-01-01", "2026-01-01")),
    ("前年", ("2023-01-01", "2024-01-01")),
])
def test_named_ranges(text: str, expected: tuple[str, str]) -> None:
    assert got(text) == expected


@pytest.mark.parametrize("text", [
    "Which port does the search service listen on? 2048",  # a bare number is not a year
    "Which service listens on port 2024?",
    "The service runs on Python 3.11",
    "Ubuntu 22.04 base image",
    "released in 2024.1",  # a version, not a year
    "May I ask who owns the billing migration?",  # "May" at the start is not the month
    "we may deploy in may",  # lowercase "may" alone is the verb
    "What does MAX_TOKEN_RETRY_DELAY_MS do?",
    "fetchAccountsByIds",
    "in 2026",  # the future: memories are never from there
    "next week",  # not understood: no range rather than a wrong one
    "每月第一天发布",  # "every month", not a month
    "月底结账",
    "",
])
def test_no_range(text: str) -> None:
    assert parse_range(text, NOW) is None


def test_spans_name_the_phrases_and_without_blanks_them() -> None:
    text = "What was the status of the payments migration in April 2025?"
    found = parse_range(text, NOW)
    assert [text[a:b] for a, b in found.spans] == ["April 2025"]
    assert found.without(text) == text.replace("April 2025", " " * len("April 2025"))
    text = "上周和昨天的进展"
    found = parse_range(text, NOW)
    assert [text[a:b] for a, b in found.spans] == ["上周", "昨天"]
    assert (found.start, found.end) == (day("2025-06-09"), day("2025-06-16"))


def test_the_longest_phrase_wins_an_overlap() -> None:
    text = "in April 5, 2025"
    found = parse_range(text, NOW)
    assert [text[a:b] for a, b in found.spans] == ["April 5, 2025"]
    assert (found.start, found.end) == (day("2025-04-05"), day("2025-04-06"))


def test_holds_is_start_inclusive_end_exclusive() -> None:
    found = parse_range("yesterday", NOW)
    assert found.holds(day("2025-06-15"))
    assert found.holds(day("2025-06-16") - timedelta(microseconds=1))
    assert not found.holds(day("2025-06-16"))
    assert not found.holds(day("2025-06-15") - timedelta(microseconds=1))


def test_ranges_are_in_the_clock_time_zone() -> None:
    east = timezone(timedelta(hours=8))
    now = datetime(2025, 6, 16, 1, 0, tzinfo=east)  # Monday 01:00 in UTC+8 is Sunday in UTC
    found = parse_range("yesterday", now)
    assert (found.start, found.end) == (day("2025-06-15", east), day("2025-06-16", east))
    assert found.start.utcoffset() == timedelta(hours=8)
    assert got("last week", now) == ("2025-06-09", "2025-06-16")


def test_year_boundaries() -> None:
    january = datetime(2025, 1, 8, 12, 0, tzinfo=timezone.utc)  # a Wednesday
    assert got("last month", january) == ("2024-12-01", "2025-01-01")
    assert got("last week", january) == ("2024-12-30", "2025-01-06")
    assert got("last quarter", january) == ("2024-10-01", "2025-01-01")
    assert got("in December", january) == ("2024-12-01", "2025-01-01")
    assert got("上个月", january) == ("2024-12-01", "2025-01-01")
    assert got("on February 29", datetime(2025, 3, 1, tzinfo=timezone.utc)) == ("2024-02-29", "2024-03-01")


def test_a_naive_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        parse_range("yesterday", datetime(2025, 6, 16, 9, 0))
