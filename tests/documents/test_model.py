"""Documents model, formats and tokenizer (pure code; reference sections 5.1-5.5).

Formats are checked byte for byte against files in the TypeScript plugin's format
(``test_documents_support.TS_FILES``) and, when ``node`` is installed, against the JavaScript engine's
own ``JSON.stringify`` for awkward strings.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemon_ls.documents import changes, indexformat
from mnemon_ls.documents import model
from mnemon_ls.documents.cover import render_cover
from mnemon_ls.documents.indexformat import IndexCodec, IndexProblem
from mnemon_ls.documents.model import DocumentRecord
from mnemon_ls.documents.search_index import TOKENIZER
from mnemon_ls.errors import InvalidInput
from mnemon_ls.text import normalize, required_matches

from tests.documents.test_support import NODE_RENDER, TS_FILES, TS_REVISION

document_terms, query_terms = TOKENIZER.document_terms, TOKENIZER.query_terms


def record(**changes) -> DocumentRecord:
    base = DocumentRecord(
        id="3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70", title="Title", description="", status="active",
        filename="title-3f1c2a9e.md", relative_path="documents/active/title-3f1c2a9e.md", source_paths=(),
        session_ids=(), created_at="2026-09-01T08:00:00.000Z", updated_at="2026-09-01T08:00:00.000Z",
        last_accessed_at="2026-09-01T08:00:00.000Z", revision=1, content_hash="0" * 64, size_bytes=0)
    return base.with_changes(**changes)


# ------------------------------------------------------------------------------------------ field rules


def test_title_is_trimmed_and_whitespace_collapsed():
    assert model.validate_title("  Release \n\t runbook\u3000 v2  ") == "Release runbook v2"


@pytest.mark.parametrize("value", ["", "   ", "\n\t\u3000"])
def test_empty_title_is_rejected(value):
    with pytest.raises(InvalidInput) as info:
        model.validate_title(value)
    assert info.value.field == "title"
    assert info.value.rule == "is required (empty or only whitespace)"


def test_title_length_counts_javascript_characters():
    assert model.validate_title("a" * 160) == "a" * 160
    with pytest.raises(InvalidInput) as info:
        model.validate_title("a" * 161)
    assert info.value.rule == "is 161 characters; at most 160"
    assert model.validate_title("🚀" * 80) == "🚀" * 80  # 80 astral characters are 160 UTF-16 units
    with pytest.raises(InvalidInput) as info:
        model.validate_title("🚀" * 80 + "a")
    assert info.value.rule == "is 161 characters; at most 160"


@pytest.mark.parametrize("value,rule", [
    ("a\x00b", "must not contain control characters (U+0000-U+001F other than whitespace, U+007F)"),
    ("a\x7fb", "must not contain control characters (U+0000-U+001F other than whitespace, U+007F)"),
    ("a\ud800", "must be valid Unicode (it holds a lone surrogate)"),
    (5, "must be a string, not an integer (got 5)"),
])
def test_title_rejects_control_characters_surrogates_and_non_strings(value, rule):
    with pytest.raises(InvalidInput) as info:
        model.validate_title(value)
    assert (info.value.field, info.value.rule) == ("title", rule)


def test_description_is_optional_and_bounded():
    assert model.validate_description(None) == ""
    assert model.validate_description("  two \n lines ") == "two lines"
    assert model.validate_description("d" * 600) == "d" * 600
    with pytest.raises(InvalidInput) as info:
        model.validate_description("d" * 601)
    assert (info.value.field, info.value.rule) == ("description", "is 601 characters; at most 600")


def test_content_removes_nul_and_trims_but_keeps_lines():
    assert model.validate_content("\n\n  # Head\x00line\n\n  body  \n\x00", 100) == "# Headline\n\n  body"


@pytest.mark.parametrize("value", ["", "  \n\t ", "\x00", "\x00\x00 \x00"])
def test_empty_or_nul_only_content_is_rejected(value):
    with pytest.raises(InvalidInput) as info:
        model.validate_content(value, 100)
    assert (info.value.field, info.value.rule) == ("content", "is required (empty, only whitespace or only NUL characters)")


def test_content_limit_is_utf8_bytes():
    limit = 2 * 1024 * 1024
    assert len(model.validate_content("a" * limit, limit)) == limit
    with pytest.raises(InvalidInput) as info:
        model.validate_content("a" * limit + "b", limit)
    assert info.value.rule == "is 2097153 UTF-8 bytes; a document body is at most 2097152 bytes"
    assert info.value.data["bytes"] == 2097153 and info.value.data["limit"] == limit
    with pytest.raises(InvalidInput):
        model.validate_content("语" * 34, 100)  # 102 bytes
    assert model.validate_content("语" * 33 + "a", 100) == "语" * 33 + "a"


def test_summary_defaults_and_bounds():
    assert model.validate_summary(None) == "Archived locally by the user."
    assert model.validate_summary(" cold \n copy ") == "cold copy"
    with pytest.raises(InvalidInput) as info:
        model.validate_summary(" ")
    assert info.value.field == "summary"
    with pytest.raises(InvalidInput) as info:
        model.validate_summary("s" * 1001)
    assert info.value.rule == "is 1001 characters; at most 1000"


def test_id_lists_trim_dedupe_and_refuse_more_than_twenty():
    assert model.validate_id_list([" a ", "b", "", "a", "  "], "sessionIds", 20) == ("a", "b")
    assert model.validate_id_list(None, "sessionIds", 20) == ()
    with pytest.raises(InvalidInput) as info:
        model.validate_id_list([f"s{i}" for i in range(21)], "sessionIds", 20)
    assert (info.value.field, info.value.rule) == ("sessionIds", "has 21 distinct ids; at most 20")
    with pytest.raises(InvalidInput) as info:
        model.validate_id_list(["a", 3], "memoryBodyIds", 20)
    assert info.value.field == "memoryBodyIds[1]"
    with pytest.raises(InvalidInput) as info:
        model.validate_id_list("abc", "sessionIds", 20)
    assert info.value.rule == "must be a list of strings, not a string (got 'abc')"


def test_session_ids_merge_keeps_the_latest_twenty():
    current = tuple(f"s{i}" for i in range(20))
    assert model.merge_session_ids(current, ("s5", "new")) == (*[f"s{i}" for i in range(1, 20) if i != 5], "s5", "new")
    assert model.merge_session_ids(("a",), ("b",)) == ("a", "b")


# ------------------------------------------------------------------------------------------ filenames


@pytest.mark.parametrize("title,expected", [
    ("Release Runbook v2!", "release-runbook-v2"),
    ("  --Hello--World--  ", "hello-world"),
    ("Café Ünïcode ﬁle", "cafe-u-ni-code-file"),  # NFKD marks become "-", as in the plugin
    ("今天玩成语接龙游戏", "document"),
    ("오늘 끝말잇기", "document"),
    ("!!!", "document"),
    ("a" * 47 + " bc", "a" * 47 + "-"),  # cut after the 48th character, as the plugin does
    ("x" * 60, "x" * 48),
])
def test_slug_rule(title, expected):
    assert model.slug(title) == expected


def test_filename_is_slug_and_first_eight_id_characters():
    assert model.filename_for("今天玩成语接龙游戏", "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d") == "document-8a7b6c5d.md"
    assert model.filename_for("Release runbook", "3f1c2a9e-5b7d") == "release-runbook-3f1c2a9e.md"


# ------------------------------------------------------------------------------------------ Markdown


def ts_records() -> list[DocumentRecord]:
    return list(indexformat.parse_index(TS_FILES["documents/index.json"].encode()).records)


def test_render_markdown_matches_the_plugin_byte_for_byte():
    active, archived = ts_records()
    body = model.document_body(TS_FILES["documents/active/release-runbook-v2-3f1c2a9e.md"])
    assert model.render_markdown(active, body) == TS_FILES["documents/active/release-runbook-v2-3f1c2a9e.md"]
    body = model.document_body(TS_FILES["documents/archived/document-8a7b6c5d.md"])
    assert model.render_markdown(archived, body) == TS_FILES["documents/archived/document-8a7b6c5d.md"]
    assert model.rendered_size(active, model.document_body(TS_FILES[active.relative_path])) == active.size_bytes == 525
    assert model.sha256_hex(body) == archived.content_hash


def test_body_extraction_rules():
    assert model.split_markdown("---\nid: \"x\"\n---\n\n  body\n") == ('id: "x"', "body")
    assert model.split_markdown("no frontmatter\n") == (None, "no frontmatter")
    assert model.split_markdown("---\nunterminated\n") == (None, "---\nunterminated")
    assert model.split_markdown("---\n---\nbody") == (None, "---\n---\nbody")  # the closing marker is searched from offset 4
    assert model.split_markdown("---\na\n---\nx\n---\ny") == ("a", "x\n---\ny")


def test_frontmatter_parses_back_what_render_wrote():
    active, _ = ts_records()
    front, body = model.split_markdown(TS_FILES[active.relative_path])
    parsed = model.parse_frontmatter(front)
    assert parsed == {
        "id": active.id, "title": 'Release runbook "v2" — 发布手册 🚀', "description": "Steps\tand checks; line\u2028separator",
        "status": "active", "created_at": "2026-09-01T08:00:00.000Z", "updated_at": "2026-09-13T08:00:00.000Z",
        "content_hash": active.content_hash, "source_paths": ["docs/RELEASE.md", "."], "session_ids": ["s-1", "s-2"],
        "memory_body_ids": [],
    }


# ------------------------------------------------------------------------------------------ index


def test_ts_index_parses_and_encodes_back_byte_exact_with_the_same_revision():
    data = TS_FILES["documents/index.json"].encode()
    parsed = indexformat.parse_index(data)
    assert [r.id for r in parsed.records] == ["3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70", "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"]
    encoded, revision = IndexCodec().encode(parsed.records, parsed.extra)
    assert encoded == data
    assert revision == TS_REVISION == indexformat.index_revision(parsed.records)
    assert indexformat.serialize_index(parsed.records) == data


def test_empty_index_bytes():
    assert indexformat.EMPTY_INDEX_BYTES == b'{\n  "version": 1,\n  "documents": []\n}\n'
    assert IndexCodec().encode(())[0] == indexformat.EMPTY_INDEX_BYTES


def test_unknown_keys_are_kept_after_memory_body_ids_but_not_in_the_revision():
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"][0]["futureKey"] = {"nested": [1, 2]}
    document["generator"] = "newer"
    data = (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode()
    parsed = indexformat.parse_index(data)
    assert parsed.records[0].extra == (("futureKey", {"nested": [1, 2]}),)
    assert parsed.extra == (("generator", "newer"),)
    assert IndexCodec().encode(parsed.records, parsed.extra)[0] == data
    assert indexformat.index_revision(parsed.records) == TS_REVISION


def test_legacy_relative_path_is_accepted():
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"][0]["relativePath"] = ".mnemon/documents/active/release-runbook-v2-3f1c2a9e.md"
    parsed = indexformat.parse_index(json.dumps(document).encode())
    assert parsed.records[0].relative_path == ".mnemon/documents/active/release-runbook-v2-3f1c2a9e.md"
    assert indexformat.managed_relative(parsed.records[0].relative_path) == "documents/active/release-runbook-v2-3f1c2a9e.md"


def test_non_string_array_members_are_dropped_and_counted():
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"][0]["sessionIds"] = ["s-1", 7, None]
    parsed = indexformat.parse_index(json.dumps(document).encode())
    assert parsed.records[0].session_ids == ("s-1",)
    assert parsed.dropped == 2


REQUIRED = ["id", "title", "description", "status", "filename", "relativePath", "sourcePaths", "sessionIds",
            "createdAt", "updatedAt", "lastAccessedAt", "revision", "contentHash", "sizeBytes", "memoryBodyIds"]


@pytest.mark.parametrize("key", REQUIRED)
def test_a_record_missing_a_required_field_makes_the_index_invalid(key):
    document = json.loads(TS_FILES["documents/index.json"])
    del document["documents"][1][key]
    with pytest.raises(IndexProblem) as info:
        indexformat.parse_index(json.dumps(document).encode())
    assert info.value.record == 1
    assert info.value.field == f"documents[1].{key}"
    assert info.value.rule == "is missing"


@pytest.mark.parametrize("key,value,rule", [
    ("status", "deleted", "must be active or archived (got 'deleted')"),
    ("revision", 0, "must be an integer >= 1 (got 0)"),
    ("revision", "2", "must be an integer >= 1 (got '2')"),
    ("revision", True, "must be an integer >= 1 (got True)"),
    ("sizeBytes", -1, "must be an integer >= 0 (got -1)"),
    ("contentHash", "ABC", "must be 64 lowercase hex characters (sha256)"),
    ("filename", "../x.md", "must be a plain file name (got '../x.md')"),
    ("relativePath", "documents/active/../../x.md", "must be documents/active/release-runbook-v2-3f1c2a9e.md "
                                                   "(got 'documents/active/../../x.md')"),
    ("relativePath", "documents/archived/release-runbook-v2-3f1c2a9e.md",
     "must be documents/active/release-runbook-v2-3f1c2a9e.md (got 'documents/archived/release-runbook-v2-3f1c2a9e.md')"),
    ("title", 5, "must be a string, not an integer (got 5)"),
    ("sourcePaths", "a", "must be an array, not a string (got 'a')"),
])
def test_bad_record_values_name_the_record_and_field(key, value, rule):
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"][0][key] = value
    with pytest.raises(IndexProblem) as info:
        indexformat.parse_index(json.dumps(document).encode())
    assert (info.value.record, info.value.field, info.value.rule) == (0, f"documents[0].{key}", rule)


def test_float_integral_revision_is_read_as_an_integer():
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"][0]["revision"] = 3.0
    assert indexformat.parse_index(json.dumps(document).encode()).records[0].revision == 3


@pytest.mark.parametrize("data,field,rule", [
    (TS_FILES["documents/index.json"].encode()[:700], "index.json",
     "is not valid JSON (the file looks truncated): Unterminated string starting at at line 23 column 22"),
    (b'{"version": 2, "documents": []}', "version", "must be 1 (got 2)"),
    (b'{"version": 1}', "documents", "must be an array"),
    (b'[]', "index.json", "must hold a JSON object"),
    (b'\xff\xfe{', "index.json", "is not UTF-8 (byte 0)"),
])
def test_whole_file_problems(data, field, rule):
    with pytest.raises(IndexProblem) as info:
        indexformat.parse_index(data)
    assert (info.value.field, info.value.rule, info.value.record) == (field, rule, None)


def test_repeated_ids_and_paths_are_bad_records():
    document = json.loads(TS_FILES["documents/index.json"])
    document["documents"].append(dict(document["documents"][0]))
    with pytest.raises(IndexProblem) as info:
        indexformat.parse_index(json.dumps(document).encode())
    assert (info.value.record, info.value.field) == (2, "documents[2].id")
    document["documents"][2]["id"] = "other"
    with pytest.raises(IndexProblem) as info:
        indexformat.parse_index(json.dumps(document).encode())
    assert (info.value.record, info.value.field) == (2, "documents[2].relativePath")


def test_salvage_keeps_every_record_before_a_truncation():
    data = TS_FILES["documents/index.json"].encode()
    cut = data[: data.index(b'"id": "8a7b6c5d') + 30]
    records, damaged = indexformat.salvage_index(cut)
    assert [r.id for r in records] == ["3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70"]
    assert damaged == 0
    document = json.loads(data)
    document["documents"][1]["status"] = "gone"
    records, damaged = indexformat.salvage_index(json.dumps(document).encode())
    assert ([r.id for r in records], damaged) == (["3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70"], 1)


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_records = st.builds(
    lambda i, title, desc, paths, archived, extra, rev: record(
        id=f"id-{i}", title=title, description=desc, filename=f"f{i}.md",
        status="archived" if archived else "active",
        relative_path=f"documents/{'archived' if archived else 'active'}/f{i}.md", source_paths=tuple(paths),
        archived_at="2026-01-01T00:00:00.000Z" if archived else None, archive_summary=desc if archived else None,
        revision=rev, extra=(("x", extra),) if extra is not None else ()),
    st.integers(0, 10**6), _text, _text, st.lists(_text, max_size=3), st.booleans(),
    st.none() | st.dictionaries(_text, st.integers() | _text | st.lists(st.integers(), max_size=2), max_size=2),
    st.integers(1, 10**9))


@settings(max_examples=150, deadline=None)
@given(st.lists(_records, max_size=4, unique_by=lambda r: r.id))
def test_codec_matches_json_dumps_for_any_records(records):
    codec = IndexCodec()
    data, revision = codec.encode(records)
    assert data == indexformat.serialize_index(records)
    assert revision == indexformat.index_revision(records)
    assert codec.encode(records) == (data, revision)  # cached path


AWKWARD = ["quote \" backslash \\ slash /", "tab\tnewline\ncr\r", "\x01\x1f\x7f", "\u2028\u2029", "é 漢字 🚀 \ufeff",
           "<script>&amp;", "\u00a0nbsp", "😀" * 3]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_render_and_index_match_javascript_json_stringify(tmp_path):
    rng = random.Random(3)
    docs = []
    for i, text in enumerate(AWKWARD):
        docs.append({"id": f"{i:08d}-0000-4000-8000-000000000000", "title": text, "description": AWKWARD[-1 - i],
                     "status": "active" if i % 2 else "archived", "filename": f"doc-{i}.md",
                     "sourcePaths": [text, "a/b"] if i % 3 else [], "sessionIds": [f"s{rng.randint(0, 9)}"],
                     "createdAt": "2026-09-01T08:00:00.000Z", "updatedAt": "2026-09-02T08:00:00.000Z",
                     "lastAccessedAt": "2026-09-03T08:00:00.000Z", "revision": i + 1, "memoryBodyIds": [text],
                     "archivedAt": None if i % 2 else "2026-09-04T08:00:00.000Z",
                     "archiveSummary": None if i % 2 else text, "content": f"\n {text} body {i}\x00\n"})
    script = tmp_path / "render.mjs"
    script.write_text(NODE_RENDER)
    out = json.loads(subprocess.run(["node", str(script), json.dumps(docs)], capture_output=True, check=True,
                                    timeout=60).stdout)
    records = list(indexformat.parse_index(out["files"]["documents/index.json"].encode()).records)
    for rec, doc in zip(records, docs):
        # the plugin's body (trimmed); validate_content gives the same or refuses a top line indented 4+ columns
        body = model.js_trim(doc["content"].replace("\x00", ""))
        assert model.render_markdown(rec, body) == out["files"][rec.relative_path]
        assert model.sha256_hex(body) == rec.content_hash
    assert IndexCodec().encode(records)[0] == out["files"]["documents/index.json"].encode()
    assert indexformat.index_revision(records) == out["revision"]


# ------------------------------------------------------------------------------------------ tokens


def test_normalize_is_nfkc_then_casefold():
    assert normalize("ＡＢＣ Straße ﬁ Ⅻ") == "abc strasse fi xii"


def test_document_terms_cover_every_script():
    text = normalize("步2 重跑gen-itgc后50条悬空引用清零 v1.2.3 snake_case 오늘 끝말잇기 しりとり")
    assert document_terms(text) == [
        "步", "2", "重跑", "跑", "gen-itgc", "gen", "itgc", "后", "50", "条悬", "悬空", "空引", "引用", "用清", "清零", "零",
        "v1.2.3", "v1", "2", "3", "snake_case", "snake", "case", "오늘", "늘", "끝말", "말잇", "잇기", "기",
        "しり", "りと", "とり", "り"]


@pytest.mark.parametrize("query,expected", [
    ("成语接龙", [("成语", False, 0), ("语接", False, 1), ("接龙", False, 2)]),
    ("接龙", [("接龙", False, 0)]),
    ("龙", [("龙", True, 0)]),
    ("しりとり", [("しり", False, 0), ("りと", False, 1), ("とり", False, 2)]),
    ("끝말잇기", [("끝말", False, 0), ("말잇", False, 1), ("잇기", False, 2)]),
    ("gen-itgc", [("gen-itgc", False, 0), ("gen", False, 0), ("itgc", False, 0)]),
    ("v1.2.3", [("v1.2.3", False, 0), ("v1", False, 0)]),
    ("a WebUI E2E", [("webui", False, 1), ("e2e", False, 2)]),
    ("a", [("a", False, 0)]),
    ("!!!", []),
])
def test_query_terms(query, expected):
    assert [(t.text, t.prefix, t.group) for t in query_terms(normalize(query))] == expected


def test_query_terms_are_capped_at_64():
    assert len(query_terms(normalize(" ".join(f"w{i}" for i in range(100))))) == 64


@pytest.mark.parametrize("groups,required", [(0, 0), (1, 1), (3, 1), (4, 2), (8, 2), (9, 3), (19, 5), (64, 16)])
def test_required_matches(groups, required):
    assert required_matches(groups) == required


# ------------------------------------------------------------------------------------------ capacity, cover


def test_capacity_plan_orders_candidates_least_recently_accessed_first():
    a = record(id="a", size_bytes=100, last_accessed_at="2026-09-01T00:00:00.000Z", updated_at="2026-09-05T00:00:00.000Z")
    b = record(id="b", size_bytes=200, last_accessed_at="2026-09-01T00:00:00.000Z", updated_at="2026-09-02T00:00:00.000Z")
    c = record(id="c", size_bytes=300, last_accessed_at="2026-08-01T00:00:00.000Z")
    d = record(id="d", size_bytes=999, status="archived")
    plan = changes.plan_capacity([a, b, c, d], 500, 1000)
    assert (plan.used, plan.projected, plan.fits) == (600, 1100, False)
    assert [r.id for r in plan.candidates] == ["c", "b", "a"]
    later = {"c": "2026-09-10T00:00:00.000Z"}
    assert [r.id for r in changes.plan_capacity([a, b, c, d], 500, 1000, last_accessed=later).candidates] == ["b", "a", "c"]
    replace = changes.plan_capacity([a, b, c, d], 150, 1000, replacing="b")
    assert (replace.projected, replace.fits, [r.id for r in replace.candidates]) == (550, True, ["c", "a"])


def test_cover_lists_recent_documents_within_the_budget():
    docs = [record(id=f"d{i}", title=f"Doc {i}", description=("about " + str(i)) if i % 2 else "", size_bytes=100,
                   last_accessed_at=f"2026-09-0{i + 1}T00:00:00.000Z") for i in range(5)]
    docs.append(record(id="x", title="Old", status="archived", size_bytes=50))
    cover = render_cover(docs, {"d0": "2026-09-30T00:00:00.000Z"}, limit_bytes=1000, budget_chars=10_000, revision="r")
    assert cover.text.splitlines() == [
        "MNEMON PROJECT DOCUMENTS",
        "Active: 5 documents, 500 of 1000 UTF-8 bytes; archived: 1",
        "Search before reading: these are titles only. Search the project Documents with words from a title (or "
        "the topic) and read a document only when a search points to it.",
        "Recently accessed:",
        "- Doc 0",
        "- Doc 4",
        "- Doc 3 — about 3",
        "- Doc 2",
        "- Doc 1 — about 1",
    ]
    assert (cover.listed, cover.omitted, cover.chars) == (5, 0, len(cover.text))
    head = cover.text[: cover.text.index("- Doc 0")]
    shown = "- Doc 4\n- Doc 3 — about 3\n(3 more active documents not listed; search finds them)\n"
    small = render_cover(docs, {}, limit_bytes=1000, budget_chars=len(head) + len(shown), revision="r")
    assert small.text == head + shown
    assert (small.listed, small.omitted, small.chars) == (2, 3, len(head) + len(shown))
    smaller = render_cover(docs, {}, limit_bytes=1000, budget_chars=len(head) + len(shown) - 1, revision="r")
    assert smaller.text == head + "- Doc 4\n(4 more active documents not listed; search finds them)\n"
    bare_text = head.replace("Recently accessed:\n", "") + "(5 more active documents not listed; search finds them)\n"
    bare = render_cover(docs, {}, limit_bytes=1000, budget_chars=len(bare_text), revision="r")
    assert (bare.text, bare.listed, bare.omitted) == (bare_text, 0, 5)
    tiny = render_cover(docs, {}, limit_bytes=1000, budget_chars=40, revision="r")
    assert tiny.chars == 40 and tiny.text.endswith("…")
    empty = render_cover([], {}, limit_bytes=1000, budget_chars=1000, revision="r")
    assert empty.text == ("MNEMON PROJECT DOCUMENTS\nActive: 0 documents, 0 of 1000 UTF-8 bytes; archived: 0\n"
                          + cover.text.splitlines()[2] + "\n")


@pytest.mark.parametrize("value, indent", [("    code", 4), ("\n\n\tcode\nmore", 1), ("  \tcode", 3), ("\n \n     x", 5)])
def test_content_starting_with_an_indented_code_block_is_refused_not_trimmed(value, indent):
    """The trim is the format's (reference 5.3), but 4 columns of indentation at the top are a Markdown code
    block: trimming them lost what was written, so the body is refused, saying why."""
    with pytest.raises(InvalidInput) as info:
        model.validate_content(value, 100)
    assert info.value.field == "content" and info.value.rule.startswith("starts with an indented line (")
    assert info.value.data["indent"] == indent


@pytest.mark.parametrize("value", ["   # Head", "\ufeff# Head", "\n\n  # Head\n    code"])
def test_indentation_that_carries_nothing_is_trimmed_as_the_format_says(value):
    assert model.validate_content(value, 100).lstrip("#") in (" Head", " Head\n    code")
