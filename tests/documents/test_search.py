"""Documents search: every script, identifiers, ranking, excerpts, limits, and search while another
process writes (reference section 5.5, issue 4)."""

from __future__ import annotations

import subprocess
import time

import pytest

from mnemon_ls.documents import DocumentStore
from mnemon_ls.errors import InvalidInput

from tests.documents.test_support import PYTHON, child_env, make_store


@pytest.fixture
def store(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    yield store
    store.close()


def ids(result) -> list[str]:
    return [hit.record.id for hit in result.results]


def titles(result) -> list[str]:
    return [hit.record.title for hit in result.results]


# ================================================================================ the issue's queries


@pytest.fixture
def multilingual(store):
    docs = {
        "zh": store.create("周末", "今天玩成语接龙游戏").document.record.id,
        "ja": store.create("日記", "今日は成語しりとりをした").document.record.id,
        "ko": store.create("일기", "오늘 끝말잇기 게임을 했다").document.record.id,
        "mixed": store.create("修复记录", "步2 重跑gen-itgc后50条悬空引用清零").document.record.id,
        "en": store.create("Release runbook", "Deploy the WebUI after the E2E suite passes.").document.record.id,
    }
    return store, docs


@pytest.mark.parametrize("query,expected", [
    ("成语接龙", "zh"), ("接龙", "zh"), ("しりとり", "ja"), ("끝말잇기", "ko"), ("悬空", "mixed"), ("itgc", "mixed"),
    ("gen-itgc", "mixed"), ("GEN-ITGC", "mixed"), ("gen_itgc", "mixed"), ("清零", "mixed"), ("步", "mixed"),
    ("끝말", "ko"), ("게임", "ko"), ("しり", "ja"), ("WebUI E2E", "en"), ("ｗｅｂｕｉ", "en"),
])
def test_issue_queries_find_their_document(multilingual, query, expected):
    store, docs = multilingual
    assert ids(store.search.find(query)) == [docs[expected]]


def test_single_characters_match_anywhere_in_a_run(multilingual):
    store, docs = multilingual
    assert ids(store.search.find("龙")) == [docs["zh"]]  # the last character of 接龙 inside a longer run
    assert ids(store.search.find("语")) == [docs["zh"]]
    assert set(ids(store.search.find("今"))) == {docs["zh"], docs["ja"]}
    assert ids(store.search.find("잇")) == [docs["ko"]]


def test_identifiers_are_whole_and_split(store):
    a = store.create("Config", "set max_body_bytes in settings; bump to v1.2.3 and call snake_case helpers").document.record.id
    b = store.create("Other", "the body of the maximum bytes story").document.record.id
    assert ids(store.search.find("max_body_bytes"))[0] == a
    assert ids(store.search.find("v1.2.3")) == [a]
    assert a in ids(store.search.find("snake")) and ids(store.search.find("snake_case")) == [a]
    assert ids(store.search.find("v1.2")) == [a]
    assert set(ids(store.search.find("body"))) == {a, b}  # the part "body" of max_body_bytes, and the word


def test_case_46_only_the_matching_document(store):
    match = store.create("WebUI E2E checklist", "run the suite").document.record
    store.create("Database notes", "vacuum weekly").document.record
    result = store.search.find("WebUI E2E")
    assert ids(result) == [match.id]
    hit = result.results[0]
    assert hit.record.status == "active" and isinstance(hit.score, float) and hit.score > 0
    assert hit.to_dict()["score"] == round(hit.score, 4)


def test_case_47_long_cjk_query_needs_enough_bigrams(store):
    runbook = store.create("发布手册", "数据库迁移后灰度阶段顺序：先迁移再灰度。自动回滚阈值为错误率百分之二。").document.record.id
    store.create("事故记录", "昨天数据库变慢，手册没有更新。").document.record.id  # 3 of the 19 bigrams
    result = store.search.find("数据库迁移后灰度阶段顺序 自动回滚阈值 发布手册")
    assert ids(result) == [runbook]


def test_a_title_phrase_beats_body_hits(store):
    body_heavy = store.create("Weekly notes", "deployment checklist " * 30).document.record.id
    title_hit = store.create("Deployment checklist", "what to verify before shipping").document.record.id
    result = store.search.find("deployment checklist")
    assert ids(result) == [title_hit, body_heavy]
    assert [h.matched for h in result.results] == ["title", "terms"]


def test_a_description_phrase_ranks_between_title_and_body(store):
    body = store.create("One", "cache invalidation " * 10).document.record.id
    desc = store.create("Two", "unrelated words", description="How cache invalidation works").document.record.id
    title = store.create("Cache invalidation", "short").document.record.id
    assert ids(store.search.find("cache invalidation")) == [title, desc, body]


def test_a_phrase_inside_a_longer_word_is_not_a_title_phrase(store):
    a = store.create("Running costs", "notes about running").document.record.id
    b = store.create("Run book", "run it weekly").document.record.id
    result = store.search.find("run")
    assert ids(result)[0] == b and result.results[0].matched == "title"
    assert a not in ids(result)  # no stemming: "running" is another word


def test_rare_terms_outrank_common_ones(store):
    for i in range(6):
        store.create(f"Filler {i}", "common words appear here")
    rare = store.create("Doc A", "common words and zymurgy").document.record.id
    common = store.create("Doc B", "common words common words common").document.record.id
    order = ids(store.search.find("common zymurgy"))
    assert order[0] == rare and common in order


def test_excerpt_is_around_the_best_match(store):
    body = "Intro paragraph. " * 40 + "The rollback threshold is two percent of errors." + " Trailing text." * 40
    store.create("Runbook", body)
    hit = store.search.find("rollback threshold").results[0]
    assert "The rollback threshold is two percent of errors." in hit.excerpt
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
    assert len(hit.excerpt) <= 222
    short = store.create("Short", "tiny body").document.record.id
    assert store.search.find("tiny").results[0].excerpt == "tiny body"
    assert short


def test_excerpt_matches_case_insensitively_and_across_line_breaks(store):
    store.create("Doc", "x " * 300 + "Straße\n\nGATE closed" + " y" * 300)
    hit = store.search.find("strasse gate").results[0]
    assert "Straße GATE closed" in hit.excerpt


def test_include_archived_limit_and_content(store):
    created = [store.create(f"Note {i}", f"shared token {i}").document.record.id for i in range(5)]
    store.moves.archive(created[0], 1)
    assert len(store.search.find("shared").results) == 4
    assert len(store.search.find("shared", include_archived=True).results) == 5
    limited = store.search.find("shared", limit=2)
    assert len(limited.results) == 2 and limited.matches == 4
    assert store.search.find("shared", limit=1, include_content=True).results[0].content.startswith("shared token")
    assert store.search.find("shared", limit=1).results[0].content is None


@pytest.mark.parametrize("kwargs,field", [
    (dict(limit=0), "limit"), (dict(limit=51), "limit"), (dict(limit=True), "limit"), (dict(limit="5"), "limit"),
    (dict(include_archived="yes"), "includeArchived"),
])
def test_bad_search_arguments(store, kwargs, field):
    with pytest.raises(InvalidInput) as info:
        store.search.find("x", **kwargs)
    assert info.value.field == field


def test_query_length_and_type(store):
    store.create("Doc", "x")
    assert store.search.find("x" * 2000).results == ()
    with pytest.raises(InvalidInput) as info:
        store.search.find("x" * 2001)
    assert info.value.rule == "must be at most 2000 characters (Unicode code points; got 2001)"
    with pytest.raises(InvalidInput):
        store.search.find(None)


def test_punctuation_only_query_matches_only_phrases(store):
    a = store.create("C++ notes", "templates").document.record.id
    store.create("Other", "nothing")
    assert ids(store.search.find("++")) == [a]


def test_search_reflects_an_edit_made_outside(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    rec = store.create("Doc", "original phrase").document.record
    path = root / rec.relative_path
    path.write_text(path.read_text().replace("original phrase", "replacement wording"))
    assert ids(store.search.find("replacement")) == [rec.id]  # freshness_seconds=0: checked on every read
    assert store.search.find("original").results == ()


def test_search_index_file_is_rebuilt_when_deleted_or_corrupt(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    rec = store.create("Doc", "persistent words").document.record
    assert ids(store.search.find("persistent")) == [rec.id]
    store.close()
    db = root / "documents" / ".search.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    other = DocumentStore(root, workspace, freshness_seconds=0)
    assert ids(other.search.find("persistent")) == [rec.id]
    other.close()
    db.unlink()
    third = DocumentStore(root, workspace, search_index=False)
    assert ids(third.search.find("persistent")) == [rec.id]
    third.close()
    assert not db.exists()


# ================================================================================ another process writes


WRITER = r"""
import sys, time
from mnemon_ls.documents import DocumentStore
root, count = sys.argv[1], int(sys.argv[2])
store = DocumentStore(root, None)
print("READY", flush=True)
sys.stdin.readline()
made = []
for i in range(count):
    rec = store.create(f"Writer note {i}", f"concurrent marker body {i} " + "filler " * 50).document.record
    made.append(rec)
    if i % 3 == 1:
        store.update(rec.id, content=f"concurrent marker updated {i}")
    if i % 4 == 2:
        store.moves.archive(made[i - 1].id, None)
print("DONE", flush=True)
"""


def test_search_while_another_process_writes(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    for i in range(5):
        store.create(f"Local note {i}", "concurrent marker local")
    count = 40
    proc = subprocess.Popen([PYTHON, "-c", WRITER, str(root), str(count)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(), text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        searches, seen = 0, set()
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            result = store.search.find("concurrent marker", limit=50)
            searches += 1
            assert result.notices == ()
            state = {r.id for r in store.read().records}
            for hit in result.results:
                assert hit.excerpt.startswith(("concurrent marker", "…"))
                assert hit.record.id in state
                seen.add(hit.record.id)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert out.strip().endswith("DONE")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    final = store.search.find("concurrent marker", limit=50, include_archived=True)
    assert final.matches == count + 5 and final.notices == ()
    writer_titles = {t for t in titles(final) if t.startswith("Writer note")}
    assert len(writer_titles) == count
    assert searches > 0 and seen
    assert store.read().problem is None


def test_search_falls_back_to_memory_when_the_side_index_cannot_be_written(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    rec = store.create("Doc", "fallback words").document.record
    (root / "documents" / ".search.sqlite3").mkdir()  # neither a database nor replaceable
    assert ids(store.search.find("fallback")) == [rec.id]
    assert (root / "documents" / ".search.sqlite3").is_dir()
