"""mnemon_ls.runtime.model: normalization, byte accounting, validation and the on-disk formats.

Behaviour spec: shared/reference/dsh-mnemon.md sections 3.1-3.3 and 3.7. Oracles are written here
independently of the code under test (JS whitespace from the Unicode ``Zs`` category plus the
ECMAScript line terminators; JSON by hand or by ``json.dumps`` with the reference's settings).
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemon_ls.errors import InvalidInput
from mnemon_ls.runtime import model
from mnemon_ls.runtime.model import (
    Entry,
    branch_name_problem,
    entry_from_json,
    joined_bytes,
    normalize_text,
    now_iso,
    parse_store,
    parse_timestamp_ms,
    projection_bytes,
    revision_of,
    salvage_store,
    serialize_store,
    used_bytes,
    utf8_len,
    validate_branches,
    validate_content,
)

# ECMAScript WhiteSpace (TAB, VT, FF, ZWNBSP, every Zs) + LineTerminator (LF, CR, LS, PS).
JS_WHITESPACE = frozenset(
    {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    | {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"}
)
# Characters Python's str.isspace()/re \s treat as space but JavaScript does not: they must survive.
NOT_JS_WHITESPACE = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u180e", "\u200b"]
ASCII = list("abcXYZ019 -_.,;:!?'\"\\/<>{}")
CJK = list("语第一条测试中文数据库")
EMOJI = ["\U0001f600", "\U0001f680", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467"]
COMBINING = ["\u0301", "\u0308", "\u0323", "\u030a"]
PRECOMPOSED = ["\u00e9", "\u00f1", "\u00c5", "\u1e0d", "\uac00"]  # é ñ Å ḍ 가

ALPHABET = ASCII + CJK + EMOJI + COMBINING + PRECOMPOSED + sorted(JS_WHITESPACE) + NOT_JS_WHITESPACE
mixed_text = st.one_of(
    st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join),
    st.text(max_size=40),
)

HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def js_normalize(text: str) -> str:
    """Independent oracle: split on JS whitespace, drop empty pieces, join with one space."""
    words, current = [], []
    for ch in text:
        if ch in JS_WHITESPACE:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return " ".join(words)


# ---------------------------------------------------------------- normalization (property tests)


@HYPOTHESIS
@given(mixed_text)
def test_normalize_matches_js_semantics_and_is_idempotent(text):
    once = normalize_text(text)
    assert once == js_normalize(text)
    assert normalize_text(once) == once
    if once:
        assert once[0] not in JS_WHITESPACE and once[-1] not in JS_WHITESPACE
    assert "  " not in once
    assert not any(ch in JS_WHITESPACE and ch != " " for ch in once)


@HYPOTHESIS
@given(st.lists(st.sampled_from(NOT_JS_WHITESPACE + CJK), min_size=1, max_size=20).map("".join))
def test_characters_python_but_not_javascript_calls_space_are_kept(text):
    assert normalize_text(f"  {text}\n") == text


@HYPOTHESIS
@given(mixed_text)
def test_utf8_len_is_encoded_length(text):
    assert utf8_len(text) == len(text.encode("utf-8"))


@HYPOTHESIS
@given(st.lists(mixed_text, max_size=8))
def test_joined_bytes_is_sum_plus_four_per_gap(contents):
    expected = sum(len(c.encode("utf-8")) for c in contents) + 4 * max(0, len(contents) - 1)
    assert joined_bytes(contents) == expected
    assert joined_bytes(iter(contents)) == expected
    if contents:
        assert joined_bytes(contents) == len("\n\u00a7\n".join(contents).encode("utf-8"))


def test_joined_bytes_examples():
    assert joined_bytes([]) == 0
    assert joined_bytes(["a"]) == 1
    assert joined_bytes(["a" * 8000, "b" * 8000]) == 16004
    assert joined_bytes(["语", "\U0001f600"]) == 3 + 4 + 4


def test_normalize_examples():
    assert normalize_text("第一条\n  测试") == "第一条 测试"
    assert normalize_text(" \nX\t ") == "X"
    assert normalize_text("\ufeff a\u3000\u3000b \u2028") == "a b"
    assert normalize_text("a\x85b") == "a\x85b"
    assert normalize_text("\t\n \u00a0") == ""


# ---------------------------------------------------------------- content validation


def test_validate_content_returns_normalized_text():
    assert validate_content("  line one\n\tline two  ") == "line one line two"


@pytest.mark.parametrize("value", ["", "   ", "\n\t\u3000\u2029"])
def test_empty_content_is_required(value):
    with pytest.raises(InvalidInput) as info:
        validate_content(value)
    assert info.value.field == "content"
    assert "required" in info.value.rule


@pytest.mark.parametrize("value", ["\u00a7", "a \u00a7 b", "\u00a7start", "end\u00a7"])
def test_section_sign_is_reserved_anywhere(value):
    with pytest.raises(InvalidInput) as info:
        validate_content(value)
    assert info.value.field == "content"
    assert "\u00a7" in info.value.rule and "delimiter" in info.value.rule


@pytest.mark.parametrize(
    "text, size",
    [("x" * 8192, 8192), ("\u8bed" * 2730 + "xx", 8192), ("\U0001f600" * 2048, 8192), ("\u00e9" * 4096, 8192)],
)
def test_exactly_8192_bytes_is_accepted(text, size):
    assert utf8_len(text) == size
    assert validate_content(text) == text


@pytest.mark.parametrize(
    "text",
    ["x" * 8193, "\u8bed" * 2731, "\U0001f600" * 2048 + "x", "\u00e9" * 4096 + "x"],
    ids=["ascii", "cjk-2731", "emoji", "latin1"],
)
def test_8193_bytes_is_too_large_even_when_few_characters(text):
    assert utf8_len(text) == 8193
    with pytest.raises(InvalidInput) as info:
        validate_content(text)
    assert info.value.field == "content"
    assert info.value.data["bytes"] == 8193
    assert "8193" in info.value.message and "8192" in info.value.message


def test_size_is_measured_after_normalization():
    text = "x" * 8190 + "\n\n\n\n\n\n" + "y"
    assert validate_content(text) == "x" * 8190 + " y"


def test_lone_surrogate_and_non_string_are_rejected():
    with pytest.raises(InvalidInput) as info:
        validate_content("abc\ud800")
    assert info.value.field == "content"
    with pytest.raises(InvalidInput) as info:
        validate_content(42, "candidates[0].content")
    assert info.value.field == "candidates[0].content"


# ---------------------------------------------------------------- branch names (reference 3.7, case 26)

CASE_26_NAMES = [
    "has space", "dot..dot", "/leading-slash", "trailing/", "trailing.", "x" * 129, "bad*name",
    "a@{b", "a^b", "a:b", "a~b",
]
MORE_BAD_NAMES = ["-", "-x", "a..b", "x/", "a//b", "", "   ", "feature/\u00e9"]


@pytest.mark.parametrize("name", CASE_26_NAMES + MORE_BAD_NAMES)
def test_invalid_branch_names(name):
    with pytest.raises(InvalidInput) as info:
        validate_branches(["main", name], "memory")
    assert info.value.field == "branches[1]"
    assert repr(name) in info.value.message


@pytest.mark.parametrize("name", ["main", "feature/deep", "release-1.2", "a_b", "x" * 128, "v1.0.x", "A/B/C"])
def test_valid_branch_names(name):
    assert branch_name_problem(name) is None
    assert validate_branches([name], "memory") == (name,)


def test_branch_list_keeps_order_and_trims():
    assert validate_branches(["main", " feature/deep\t"], "memory") == ("main", "feature/deep")
    assert validate_branches([], "memory") == ()
    assert validate_branches(None, "memory") == ()


def test_branch_list_rejects_repeats_and_more_than_16():
    with pytest.raises(InvalidInput) as info:
        validate_branches(["a", "b", "a"], "memory")
    assert info.value.field == "branches[2]"
    assert "repeats" in info.value.rule
    with pytest.raises(InvalidInput) as info:
        validate_branches(["main", " main"], "memory")
    assert info.value.field == "branches[1]"
    assert validate_branches([f"b{i}" for i in range(16)], "memory") == tuple(f"b{i}" for i in range(16))
    with pytest.raises(InvalidInput) as info:
        validate_branches([f"b{i}" for i in range(17)], "memory")
    assert info.value.field == "branches"
    assert "at most 16" in info.value.rule


def test_branch_list_on_user_target_and_wrong_types():
    with pytest.raises(InvalidInput) as info:
        validate_branches(["main"], "user")
    assert info.value.field == "branches"
    assert info.value.rule == "applies to target=memory only"
    with pytest.raises(InvalidInput) as info:
        validate_branches("main", "memory")
    assert info.value.field == "branches"
    with pytest.raises(InvalidInput) as info:
        validate_branches(["main", 7], "memory")
    assert info.value.field == "branches[1]"


# ---------------------------------------------------------------- timestamps


def test_now_iso_is_javascript_to_iso_string():
    from datetime import datetime, timedelta, timezone

    moment = datetime(2026, 9, 1, 8, 0, 0, 123999, tzinfo=timezone.utc)
    assert now_iso(moment) == "2026-09-01T08:00:00.123Z"
    plus_two = datetime(2026, 9, 1, 10, 0, 0, tzinfo=timezone(timedelta(hours=2)))
    assert now_iso(plus_two) == "2026-09-01T08:00:00.000Z"


@pytest.mark.parametrize(
    "text, ms",
    [
        ("1970-01-01T00:00:00.000Z", 0),
        ("2026-09-01T08:00:00.000Z", 1788249600000),
        ("2026-09-01T08:00:00.001Z", 1788249600001),
        ("2026-08-12T10:00:00+02:00", 1786521600000),
        ("2026-08-12T08:00:00", 1786521600000),
    ],
)
def test_parse_timestamp_ms(text, ms):
    assert parse_timestamp_ms(text) == ms


@pytest.mark.parametrize("text", ["invalid-timestamp", "", "   ", "2026-13-01T00:00:00Z", None, 5])
def test_unparseable_timestamps(text):
    assert parse_timestamp_ms(text) is None


# ---------------------------------------------------------------- formats


def e(content, target="memory", importance="normal", branches=(), at="2026-09-01T08:00:00.000Z"):
    return Entry(content, at, at, target, importance, tuple(branches))


def test_serialized_store_is_exact_plugin_format():
    entries = [
        e("用户偏好简体中文", "user", "critical"),
        e('say "hi" C:\\dir \U0001f680', "memory", "low", ["main", "feature/deep"]),
    ]
    expected = (
        "{\n"
        '  "version": 1,\n'
        '  "entries": [\n'
        "    {\n"
        '      "content": "用户偏好简体中文",\n'
        '      "created_at": "2026-09-01T08:00:00.000Z",\n'
        '      "updated_at": "2026-09-01T08:00:00.000Z",\n'
        '      "target": "user",\n'
        '      "importance": "critical"\n'
        "    },\n"
        "    {\n"
        '      "content": "say \\"hi\\" C:\\\\dir \U0001f680",\n'
        '      "created_at": "2026-09-01T08:00:00.000Z",\n'
        '      "updated_at": "2026-09-01T08:00:00.000Z",\n'
        '      "target": "memory",\n'
        '      "importance": "low",\n'
        '      "branches": [\n'
        '        "main",\n'
        '        "feature/deep"\n'
        "      ]\n"
        "    }\n"
        "  ]\n"
        "}\n"
    ).encode("utf-8")
    assert serialize_store(entries) == expected
    assert serialize_store([]) == b'{\n  "version": 1,\n  "entries": []\n}\n'


def test_user_entry_never_serializes_branches():
    entry = Entry("u", "t", "t", "user", "normal", ("main",))
    assert list(entry.to_json()) == ["content", "created_at", "updated_at", "target", "importance"]


def test_revision_is_sha256_of_compact_json():
    entries = [e("第一条 测试"), e("b", "user", "low"), e("c", branches=["main"])]
    compact = (
        '{"version":1,"entries":['
        '{"content":"第一条 测试","created_at":"2026-09-01T08:00:00.000Z","updated_at":"2026-09-01T08:00:00.000Z",'
        '"target":"memory","importance":"normal"},'
        '{"content":"b","created_at":"2026-09-01T08:00:00.000Z","updated_at":"2026-09-01T08:00:00.000Z",'
        '"target":"user","importance":"low"},'
        '{"content":"c","created_at":"2026-09-01T08:00:00.000Z","updated_at":"2026-09-01T08:00:00.000Z",'
        '"target":"memory","importance":"normal","branches":["main"]}]}'
    )
    assert revision_of(entries) == hashlib.sha256(compact.encode("utf-8")).hexdigest()
    assert revision_of([]) == hashlib.sha256(b'{"version":1,"entries":[]}').hexdigest()


def test_projection_bytes_case_2():
    entries = [e("A"), e("u", "user"), e("B")]
    assert projection_bytes(entries, "memory") == b"A\n\xc2\xa7\nB\n"
    assert projection_bytes(entries, "user") == b"u\n"
    assert projection_bytes([e("A")], "user") == b""
    assert used_bytes(entries, "memory") == 6
    assert used_bytes([], "user") == 0


# ---------------------------------------------------------------- parsing (fail closed)


def doc(*entries, version=1):
    return json.dumps({"version": version, "entries": list(entries)}, ensure_ascii=False).encode("utf-8")


def raw(content="c", target="memory", importance="normal", **extra):
    return {"content": content, "created_at": "2026-09-01T08:00:00.000Z",
            "updated_at": "2026-09-01T08:00:00.000Z", "target": target, "importance": importance, **extra}


def test_parse_store_renormalizes_and_keeps_timestamps_verbatim():
    entries = parse_store(doc(raw("  a\n\n b "), {**raw("x"), "created_at": "whenever"}))
    assert [x.content for x in entries] == ["a b", "x"]
    assert entries[1].created_at == "whenever"


def test_parse_store_keeps_unknown_keys_for_rewrite():
    entries = parse_store(doc(raw("a", branches=["main"], source="plugin-9")))
    assert entries[0].to_json() == {**raw("a"), "branches": ["main"], "source": "plugin-9"}


def test_parse_store_accepts_utf8_bom_and_missing_branches():
    entries = parse_store(b"\xef\xbb\xbf" + doc(raw("legacy")))
    assert entries == [Entry("legacy", "2026-09-01T08:00:00.000Z", "2026-09-01T08:00:00.000Z", "memory")]


@pytest.mark.parametrize(
    "data, field",
    [
        (doc(raw("a"), version=2), "version"),
        (doc(raw("a"), version=True), "version"),
        (b'{"version": 1}', "entries"),
        (b"[]", "memories.json"),
        (b'{"version": 1, "entries": [', "memories.json"),
        (doc(raw("a"), raw("b", importance="urgent")), "entries[1].importance"),
        (doc(raw("a", target="project")), "entries[0].target"),
        (doc(raw("  \n ")), "entries[0].content"),
        (doc(raw("a \u00a7 b")), "entries[0].content"),
        (doc({**raw("a"), "updated_at": 5}), "entries[0].updated_at"),
        (doc(raw("u", target="user", branches=[])), "entries[0].branches"),
        (doc(raw("u", target="user", branches=["main"])), "entries[0].branches"),
        (doc(raw("m", branches="main")), "entries[0].branches"),
        (doc(raw("m", branches=["ok", "bad name"])), "entries[0].branches[1]"),
        (doc(raw("m", branches=[""])), "entries[0].branches[0]"),
        (doc("not an object"), "entries[0]"),
        (json.dumps({"version": 1, "entries": [raw("a")]}).encode("utf-16"), "memories.json"),
    ],
)
def test_parse_store_fails_closed_naming_the_field(data, field):
    with pytest.raises(InvalidInput) as info:
        parse_store(data)
    assert info.value.field == field


def test_parse_store_says_utf16():
    data = json.dumps({"version": 1, "entries": [raw("a")]}).encode("utf-16")
    with pytest.raises(InvalidInput) as info:
        parse_store(data)
    assert "UTF-16" in info.value.rule


# ---------------------------------------------------------------- salvage


FIVE = [raw(f"entry number {i} 第{i}条", "memory" if i % 2 else "user") for i in range(1, 6)]


def test_salvage_truncated_file_keeps_entries_before_the_cut():
    body = serialize_store([entry_from_json(r, i) for i, r in enumerate(FIVE)])
    cut = body.index("entry number 3".encode()) + 5
    entries, damaged = salvage_store(body[:cut])
    assert [x.content for x in entries] == ["entry number 1 第1条", "entry number 2 第2条"]
    assert damaged == 0


def test_salvage_utf16_file_recovers_every_entry():
    text = json.dumps({"version": 1, "entries": FIVE}, ensure_ascii=False, indent=2)
    for data in (text.encode("utf-16"), ("\ufeff" + text).encode("utf-16-be")):
        entries, damaged = salvage_store(data)
        assert [x.content for x in entries] == [r["content"] for r in FIVE]
        assert damaged == 0


def test_salvage_skips_bad_entries_and_counts_them():
    entries, damaged = salvage_store(doc(raw("good"), raw("bad", importance="x"), raw("also good")))
    assert [x.content for x in entries] == ["good", "also good"]
    assert damaged == 1
    assert salvage_store(b"\x00\xff garbage") == ([], 0)


def test_module_constants():
    assert model.DELIMITER.encode("utf-8") == b"\n\xc2\xa7\n"
    assert model.DELIMITER_BYTES == 4
    assert model.MAX_ENTRY_BYTES == 8192


# ---------------------------------------------------------------- JSON text identical to the plugin's

_JS_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def js_quote(value: str) -> str:
    """ECMAScript QuoteJSONString (what JSON.stringify emits for a string), written from the spec."""
    out = ['"']
    for ch in value:
        if ch in _JS_SHORT_ESCAPES:
            out.append(_JS_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def js_compact(entries: list[Entry]) -> str:
    """JSON.stringify({version: 1, entries}) for entries in the plugin's key order."""
    parts = []
    for x in entries:
        fields = [f'"content":{js_quote(x.content)}', f'"created_at":{js_quote(x.created_at)}',
                  f'"updated_at":{js_quote(x.updated_at)}', f'"target":{js_quote(x.target)}',
                  f'"importance":{js_quote(x.importance)}']
        if x.target == "memory" and x.branches:
            fields.append('"branches":[' + ",".join(js_quote(b) for b in x.branches) + "]")
        parts.append("{" + ",".join(fields) + "}")
    return '{"version":1,"entries":[' + ",".join(parts) + "]}"


json_hostile = st.lists(
    st.sampled_from(ASCII + CJK + EMOJI + COMBINING + [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028",
                                                                                       "\u2029", "\ufeff"]),
    min_size=1, max_size=30,
).map("".join)
entry_strategy = st.builds(
    Entry,
    content=json_hostile,
    created_at=st.sampled_from(["2026-09-01T08:00:00.000Z", "weird \"time\"\n"]),
    updated_at=st.just("2026-09-02T08:00:00.000Z"),
    target=st.sampled_from(["user", "memory"]),
    importance=st.sampled_from(["critical", "normal", "low"]),
    branches=st.lists(st.sampled_from(["main", "feature/deep", "x.y"]), max_size=3, unique=True).map(tuple),
)


@HYPOTHESIS
@given(st.lists(entry_strategy, max_size=4))
def test_revision_equals_sha256_of_javascript_json(entries):
    assert revision_of(entries) == hashlib.sha256(js_compact(entries).encode("utf-8")).hexdigest()


@HYPOTHESIS
@given(st.lists(mixed_text, min_size=1, max_size=5), st.sampled_from(["user", "memory"]))
def test_serialize_parse_round_trip(texts, target):
    entries = []
    for text in texts:
        content = normalize_text(text)
        if not content or "\u00a7" in content:
            continue
        branches = ("main",) if target == "memory" else ()
        entries.append(Entry(content, "2026-09-01T08:00:00.000Z", "2026-09-01T08:00:00.000Z", target, "low", branches))
    assert parse_store(serialize_store(entries)) == entries
    assert serialize_store(parse_store(serialize_store(entries))) == serialize_store(entries)


@pytest.mark.parametrize("name", ["-x", "release/", "/x", "a..b", "x.", "a//b"])
def test_stored_branch_names_follow_the_load_rule(name):
    entries = parse_store(doc(raw("scoped", branches=[name])))
    assert entries[0].branches == (name,)


@HYPOTHESIS
@given(st.lists(entry_strategy, max_size=6), st.booleans())
def test_serialized_with_revision_is_serialize_store_and_revision_of(entries, kept_as_loaded):
    """The commit's one-pass encoder (cached fragments looked up by identity) equals the two reference encoders,
    also when an entry has extra keys or is kept as loaded (both fall back to json.dumps), and twice in a row
    (the second call is served from the cache)."""
    if kept_as_loaded and entries:
        loaded = parse_store(doc(raw("extra", extra_key={"n": 1}), raw("bad\x01control")))
        assert loaded[0].extra and loaded[1].raw is not None
        entries = [*entries, *loaded]
    for _ in range(2):
        assert model.serialized_with_revision(tuple(entries)) == (serialize_store(entries), revision_of(entries))


@HYPOTHESIS
@given(st.lists(entry_strategy, max_size=6), st.sampled_from(["user", "memory"]))
def test_used_bytes_is_the_joined_size_of_the_projected_contents(entries, target):
    """used_bytes is now read off the (remembered) projection: the same number as joining the target's valid
    contents, for a tuple (remembered) and a list (not)."""
    expected = joined_bytes(e.content for e in entries if e.target == target and e.problem is None)
    assert used_bytes(list(entries), target) == expected
    frozen = tuple(entries)
    assert used_bytes(frozen, target) == used_bytes(frozen, target) == expected
    assert projection_bytes(frozen, target) == projection_bytes(list(entries), target)
