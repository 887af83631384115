"""What a recall query says beyond its words (pure): the time range it names, the words that only ask (not what
about), and the proper names in it. Used by the native provider's ranking (:mod:`.providers.native_recall`).

:func:`sense` returns a :class:`QuerySense`:

- ``when``: the :class:`~mnemon_ls.querytime.TimeRange` the query names ("in April 2025", "last week", "上周",
  "2024年4月"), relative to the recall's clock, or ``None``. Its phrases are not keyword terms: the range is
  one more thing the query asks for, held by an item created in it (the provider's score counts it as one
  more query group; a memory's time is when it was remembered).
- ``terms``: the keyword terms (:meth:`mnemon_ls.text.Tokenizer.query_terms` of the query without those
  phrases) less the words that only say what kind of answer is wanted: :data:`ASKING_WORDS` in English
  ("know", "tell", "anything", "remind", ...: the English stopwords already drop "what", "how", "about"), the
  second word of an English phrase in :data:`ASKING_PHRASES` ("how often", "how long", "how much": "often" says
  what kind of answer is wanted, not what about), and
  in Chinese every character pair holding one of :data:`ASKING_CHARS` (的 了 吗 呢 吧 啊 么 什 哪 谁 是 怎 于: "是干什么的",
  "有什么", "是多少" give only such pairs, and a pair across a name and 的, "王磊的" -> "磊的", says nothing) or
  being one of :data:`ASKING_PAIRS` (多少, 多久, 如何, 关于, 知道, 说说, 注意, ...). A Chinese question otherwise keeps every
  pair as a group and an item that names exactly what was asked covers a fifth of them
  ("parse_message_v3 是干什么的？"). When nothing would be left, the terms are kept as they were.
- ``names``: the query groups that are proper names: an English word written with a capital first letter and
  lower-case letters after it (``Priya``, ``Kubernetes``), not the first word of a sentence unless the next word
  is capitalised too (``Priya Raman owns ...``); a weekday or a month (``Friday``, ``Saturdays``, ``April``) is not
  a name.
- ``people``: the groups of ``names`` that are part of a person's full name: two or more names in a row
  (``Priya Raman``, ``Kenji Watanabe's``); a product is one word (``Kubernetes``).
- ``acronyms``: the query groups written in capitals, two letters or more (``VPN``, ``CDN``): names of things,
  for the rule on a name no item holds (:func:`weak_match`).
- ``maybe_names``: Chinese pairs that may be a person's name (nothing marks one): the first two pairs of a
  run, or of what follows a question character or pair, whose first character is a common surname
  (:data:`SURNAMES`: "王磊的生日" -> 王磊, 磊的 is dropped anyway). :func:`weak_match` counts one as a name when
  at most :data:`COMMON_TERM_ITEMS` items hold it (a name is rare; 周末 "weekend" or 程序 "program" are not).
- ``phrases``: the Chinese phrases of the query, each the groups of a run of its consecutive pairs, cut where a
  pair was dropped as asking ("代码镜像多久同步一次" -> 代码 码镜 镜像 像多 | 久同 同步 步一 一次; "持续集成里怎么跑安卓模拟器"
  -> 持续 续集 集成 成里 | 跑安 安卓 卓模 模拟 拟器): Chinese writes no spaces, so a phrase stands for the words of an
  English question. :func:`weak_match` takes a phrase no item holds any pair of for a word the space does not
  know (as a name no item holds in English), and the phrase the query opens with for its topic, for an item that
  holds less than half of the query: a phrase of two pairs may be one word and what a question word left of
  itself ("数据库是哪个版本？": 哪个 asks, 个版 版本 is 版本, "version"), and "数据库使用 PostgreSQL 15", holding the
  other half, answers it (as "database" answers "Which version is the database?" in English).

The ranking uses ``names``, ``people``, ``acronyms``, ``maybe_names`` and ``phrases`` for the label rule of issue 27
item 8c (:func:`weak_match`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

import regex

from ..querytime import TimeRange, parse_range
from ..text import QueryTerm, Tokenizer, normalize

#: English words that ask for an answer without naming its subject ("What do we know about X?", "Tell me about
#: X", "Anything to know about X?", "Remind me how X behaves"). Query side only: items keep them.
ASKING_WORDS = frozenset("""
know tell anything something remind please info information details explain describe
""".split())
#: English phrases that ask for a frequency, a duration or an amount ("How often does the cache refresh?"): "how" is
#: a stopword already, the word after it is dropped here (query side only). Case-insensitive, whole words. Not
#: "how many": on bench/retrieval_quality.py it moved the answer to "How many instances of the receipt minter
#: exist?" from 4th to 7th in hybrid recall (four items then tie at the medium cap), the one change it made.
ASKING_PHRASES = regex.compile(r"\bhow\s+(?:often|long|much)\b", regex.IGNORECASE)
#: Chinese characters of a question's grammar (particles, question words, the copula): a query pair holding
#: one says what is asked, not what about.
ASKING_CHARS = frozenset("的了吗呢吧啊么什哪谁是怎于")
#: Chinese pairs that only ask.
#: 多久 ("how long", "how often") is the Chinese of :data:`ASKING_PHRASES`.
ASKING_PAIRS = frozenset("多少 几个 多久 如何 关于 知道 要知 说说 请问 一下 有没 为何 干啥 注意 要注".split())
#: Common Chinese surnames (one character): the first character of a pair :attr:`QuerySense.maybe_names` holds.
SURNAMES = frozenset("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
                     "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
#: Items a held term may be held by before a match on it alone is *common* (:func:`weak_match`): the default
#: number of recall results; a word more items share cannot tell them apart within one answer.
COMMON_TERM_ITEMS = 10
#: A match on one group of a query whose other groups, at least this many, no item of the space holds is weak
#: (:func:`weak_match`): "history" of "history of the Byzantine empire" in a store that knows nothing Byzantine.
#: One absent group alone may be a typo of a word the store holds, so it takes two.
ABSENT_OTHERS = 2
#: Words written capitalised in English that are not names: weekdays and months (also in the plural, ``Fridays``).
CALENDAR_WORDS = frozenset("""
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
""".split())
#: A weak match's keyword score is multiplied by this and kept under :data:`WEAK_MATCH_CAP`: *low* under the
#: default low threshold (0.25), in the order it had.
WEAK_MATCH_FACTOR = 0.4
WEAK_MATCH_CAP = 0.24
#: A query is answered on another branch when an item the branch filter drops holds at least this many more of
#: its groups than any item it keeps (:func:`answered_elsewhere`).
ELSEWHERE_MARGIN = 2
#: What a recall says when :func:`answered_elsewhere` weakened its matches.
ELSEWHERE_NOTICE = ("a memory of another branch holds more of the query than any memory of this branch: this "
                    "branch's matches are scored low (branchRecall: label lists the other branches' memories)")

_CJK_RUN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+")
_CJK_PAIR = regex.compile(r"^[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]{2}$")
_WORD = regex.compile(r"[\p{L}\p{N}_]+(?:['’][\p{L}]+)?")
_NAME = regex.compile(r"\p{Lu}\p{Ll}+")
_ACRONYM = regex.compile(r"\p{Lu}{2,}")
_SENTENCE_END = regex.compile(r"[.!?。！？]\s*$")


@dataclass(frozen=True, slots=True)
class QuerySense:
    """What :func:`sense` found: ``terms`` (keyword terms, their groups numbered ``0 .. groups - 1`` in order, as
    :func:`mnemon_ls.text.grouped` lists them), ``names`` (groups of ``terms`` that are proper names), ``when``
    (the time range named, or ``None``), ``groups`` (the number of term groups), ``maybe_names`` (groups of
    ``terms`` that may be a Chinese name), ``people`` (the groups of ``names`` in a person's full name),
    ``acronyms`` (groups written in capitals) and ``phrases`` (the groups of each Chinese phrase, in order):
    module doc."""

    terms: list[QueryTerm]
    names: frozenset[int]
    when: TimeRange | None
    groups: int
    maybe_names: frozenset[int] = frozenset()
    people: frozenset[int] = frozenset()
    acronyms: frozenset[int] = frozenset()
    phrases: tuple[tuple[int, ...], ...] = ()


def _asking(term: QueryTerm) -> bool:
    if term.text in ASKING_WORDS or term.text in ASKING_PAIRS:
        return True
    return bool(_CJK_PAIR.match(term.text)) and any(ch in ASKING_CHARS for ch in term.text)


def _names(text: str) -> tuple[set[str], set[str], set[str]]:
    """The folded proper names of ``text``, those of them in a person's full name, and its acronyms (module doc:
    ``names``, ``people``, ``acronyms``), in one pass over its words."""
    words = list(_WORD.finditer(text))
    found: set[str] = set()
    people: set[str] = set()
    capitals: set[str] = set()
    previous = -2  # the index of the last name found
    for index, match in enumerate(words):
        if _ACRONYM.fullmatch(match.group(0)):
            capitals.add(normalize(match.group(0)))
        word = _bare(match.group(0))
        if not _is_name(word):
            continue
        start = index == 0 or bool(_SENTENCE_END.search(text[:match.start()]))
        if start and not _is_name(_bare(words[index + 1].group(0)) if index + 1 < len(words) else ""):
            continue
        found.add(normalize(word))
        if previous == index - 1 and text[words[previous].end():match.start()].isspace():
            people.update((normalize(_bare(words[previous].group(0))), normalize(word)))
        previous = index
    return found, people, capitals


def _bare(word: str) -> str:
    """``word`` without an English possessive or contraction (``Watanabe's`` -> ``Watanabe``)."""
    return word.split("'")[0].split("’")[0]


def _is_name(word: str) -> bool:
    """Whether ``word`` is written as a proper name (a capital, then lower case) and is no weekday or month."""
    if not _NAME.fullmatch(word):
        return False
    folded = normalize(word)
    return folded not in CALENDAR_WORDS and not (folded.endswith("s") and folded[:-1] in CALENDAR_WORDS)


def _chinese_names(text: str) -> set[str]:
    """The Chinese pairs of ``text`` that may be a name (module doc)."""
    found: set[str] = set()
    for run in _CJK_RUN.findall(normalize(text)):
        for i, ch in enumerate(run[:-1]):
            if ch in SURNAMES and (i == 0 or run[i - 1] in ASKING_CHARS or run[max(0, i - 2):i] in ASKING_PAIRS):
                found.add(run[i:i + 2])
                if i + 2 < len(run):
                    found.add(run[i + 1:i + 3])
    return found


def _phrases(text: str, terms: Sequence[QueryTerm]) -> tuple[tuple[int, ...], ...]:
    """The Chinese phrases of ``text`` as groups of ``terms`` (module doc: ``phrases``), in the order written."""
    group: dict[str, int] = {}
    for term in terms:
        if not term.prefix:
            group.setdefault(term.text, term.group)
    found: list[tuple[int, ...]] = []
    for run in _CJK_RUN.findall(normalize(text)):
        phrase: list[int] = []
        for i in range(len(run) - 1):
            g = group.get(run[i:i + 2])
            if g is None and phrase:
                found.append(tuple(phrase))
                phrase = []
            elif g is not None:
                phrase.append(g)
        if phrase:
            found.append(tuple(phrase))
    return tuple(found)


def sense(query: str, tokenizer: Tokenizer, now: datetime | None) -> QuerySense:
    """What ``query`` says (module doc), with ``tokenizer`` the space's and ``now`` the recall's clock (``None``:
    no time range is read). Never raises for any string."""
    when = parse_range(query, now) if now is not None else None
    text = when.without(query) if when is not None else query
    terms = tokenizer.query_terms(text)
    asked = ASKING_PHRASES.sub(" how ", text)
    kept = [t for t in (tokenizer.query_terms(asked) if asked != text else terms) if not _asking(t)]
    if kept:
        terms = kept
    names, people, capitals = _names(text)
    number: dict[int, int] = {}  # groups renumbered 0, 1, ... in order (some were dropped)
    terms = [QueryTerm(t.text, t.prefix, number.setdefault(t.group, len(number))) for t in terms]
    firsts: dict[int, QueryTerm] = {}
    for term in terms:
        firsts.setdefault(term.group, term)
    named = frozenset(g for g, first in firsts.items() if first.text in names and not first.prefix)
    chinese = _chinese_names(text)
    maybe = frozenset(g for g, first in firsts.items() if first.text in chinese and not first.prefix)
    persons = frozenset(g for g in named if firsts[g].text in people)
    acronyms = frozenset(g for g, first in firsts.items() if first.text in capitals and not first.prefix)
    return QuerySense(terms, named, when, len(firsts), maybe, persons, acronyms, _phrases(text, terms))


def weak_match(held: Sequence[int], exact: bool, sense_of: QuerySense, frequency: dict[int, int]) -> bool:
    """Whether an item's match is only a name or one common term (issue 27 item 8c), so it is labelled *low*:
    ``held`` the query groups the item holds, ``exact`` whether it holds them by their whole terms,
    ``frequency`` the items holding each group's whole term. True for a query of one identifier (``OPS-105``,
    ``retry_backoff``) an item holds by a part only (``OPS-100``, ``retry_backoff_ms``) while some item holds it
    whole: a near miss of what is stored. Otherwise true when the query has a group the item lacks and
    either every group the item holds is a proper name (:attr:`QuerySense.names`, and the
    :attr:`QuerySense.maybe_names` at most :data:`COMMON_TERM_ITEMS` items hold), or it holds one group,
    by a part of an identifier only, by a term more than :data:`COMMON_TERM_ITEMS` items hold, or while the
    query's other groups (at least :data:`ABSENT_OTHERS`) are held by no item at all, or while the query names a
    person (:attr:`QuerySense.people`, a rare :attr:`QuerySense.maybe_names`) and that group is none of the person's
    names ("Where does Priya Raman live?" and "the go-live checklist"). Also true when the item holds at most half
    of the query's groups, lacks at least :data:`ABSENT_OTHERS` and one of them is a proper name or an acronym no
    item holds: the question is about something this space does not know ("预发环境的 Kubernetes Ingress
    怎么配置？" when no item names Kubernetes, "VPN 密码多久轮换一次？" when none names a VPN); an item that lacks
    only that name is not weak (the name may be a typo). ``frequency`` 0 is "held by no item"; a group
    ``frequency`` does not count is not taken as absent. In Chinese the same holds, on the same two conditions but
    with less than half held (at least :data:`ABSENT_OTHERS` lacked), when the item holds nothing of a
    :attr:`QuerySense.phrases` of at least :data:`ABSENT_OTHERS` pairs that no item holds any pair of ("持续集成里怎么跑
    安卓模拟器？": 安卓模拟器 is written nowhere, an item on 持续集成 alone is weak) or of the phrase the query opens with
    (its topic) when a pair of it is held by no item ("代码镜像多久同步一次？": no item writes 代码镜像, 码镜 is held by
    none, and an item on 同步一次 alone is weak; "搜索模块的单行长度上限是多少？" answered by an item on 搜索模块 that
    words the limit otherwise is not)."""
    if not held:
        return False
    if len(held) >= sense_of.groups:  # all of the query: weak only as a near miss of a stored identifier
        return sense_of.groups == 1 and not exact and frequency.get(held[0], 0) > 0
    rare = {g for g in sense_of.maybe_names if frequency.get(g, 0) <= COMMON_TERM_ITEMS}
    names = sense_of.names | rare
    if all(g in names for g in held) and any(g not in names for g in range(sense_of.groups)):
        return True
    lacked = [g for g in range(sense_of.groups) if g not in held]
    unknown = sense_of.names | sense_of.acronyms
    if len(lacked) >= ABSENT_OTHERS and 2 * len(held) <= sense_of.groups:
        if any(g in unknown and frequency.get(g, -1) == 0 for g in lacked):
            return True
        if 2 * len(held) < sense_of.groups and _unknown_phrase(set(held), sense_of, frequency):
            return True  # less than half: an item holding half may answer ("数据库是哪个版本？", module doc)
    persons = sense_of.people | rare
    if len(held) == 1 and persons and held[0] not in persons:
        return True
    if len(held) == 1:  # the other groups are the lacked ones
        if len(lacked) >= ABSENT_OTHERS and all(frequency.get(g, -1) == 0 for g in lacked):
            return True  # the rest of the question names what no item holds: it is about something not stored
        return not exact or frequency.get(held[0], 0) > COMMON_TERM_ITEMS
    return False


def _unknown_phrase(held: set[int], sense_of: QuerySense, frequency: dict[int, int]) -> bool:
    """Whether the item (``held``: the query groups it holds) holds nothing of a Chinese phrase of the query of at
    least :data:`ABSENT_OTHERS` pairs that names what the space does not know: every pair of it is held by no item
    (a word no item writes, "安卓模拟器"), or it opens the query (its topic) and a pair of it is held by no item
    (the topic as a whole is written nowhere, "代码镜像": 码镜)."""
    for index, phrase in enumerate(sense_of.phrases):
        if len(phrase) < ABSENT_OTHERS or held.intersection(phrase):
            continue
        absent = [frequency.get(g, -1) == 0 for g in phrase]
        if all(absent) or (index == 0 and phrase[0] == 0 and any(absent)):
            return True
    return False


def weak_matcher(sense_of: QuerySense, frequency: dict[int, int]) -> Callable[[int, bool], bool]:
    """:func:`weak_match` of one query as a function ``(held, exact) -> bool`` of a candidate's bitmask of held
    query groups (bit ``g``: group ``g``) and whether it holds them by their whole terms, answered once per
    distinct pair (a query's candidates share a handful of them), for every candidate a provider scores."""
    known: dict[tuple[int, bool], bool] = {}

    def is_weak(held: int, exact: bool) -> bool:
        found = known.get((held, exact))
        if found is None:
            found = known[(held, exact)] = weak_match([g for g in range(sense_of.groups) if held >> g & 1], exact,
                                                      sense_of, frequency)
        return found

    return is_weak


def answered_elsewhere(elsewhere: int, here: int) -> bool:
    """Whether a query is answered on another branch, so that every match the branch keeps is weak: ``elsewhere``
    the most query groups held by one item the branch filter dropped, ``here`` by one item it kept, and the first
    exceeds the second by at least :data:`ELSEWHERE_MARGIN` ("On which port does the search service call the
    ranking sidecar?" on ``main``, when only a feature branch knows the sidecar: ``main`` holds the service and
    nothing else of the question)."""
    return elsewhere >= here + ELSEWHERE_MARGIN
