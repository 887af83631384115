"""Pure text helpers of the spaces package: tokenizer (CJK bigrams, identifiers whole and split, stopwords),
entity extraction and causal cues used by the automatic edges."""

from __future__ import annotations

from mnemon_ls.spaces.graph import causal_cue, causal_sub_type, extract_entities, merge_entities, overlap
from mnemon_ls.spaces.tokenizer import coverage, document_terms, fts_match, query_terms, term_set


def test_document_terms() -> None:
    assert document_terms("Use getUserName in parse_config.py") == [
        "use", "getusername", "get", "user", "name", "parse_config.py", "parse", "config", "py"]
    assert document_terms("数据库迁移") == ["数据", "据库", "库迁", "迁移", "移"]
    assert document_terms("データ") == ["デー", "ータ", "タ"]
    assert document_terms("데이터") == ["데이", "이터", "터"]
    assert document_terms("The cache is warm") == ["cache", "warm"]
    assert document_terms("ＡＢＣ v1.2.3") == ["abc", "v1.2.3", "v1", "2", "3"]


def test_query_terms_group_compounds_and_mark_prefixes() -> None:
    terms = query_terms("parse_config 灰 a")
    assert [(t.text, t.prefix, t.group) for t in terms] == [
        ("parse_config", False, 0), ("parse", False, 0), ("config", False, 0), ("灰", True, 1)]
    assert fts_match(terms) == '"parse_config" OR "parse" OR "config" OR "灰"*'
    assert query_terms("the of") == []
    assert [t.text for t in query_terms("x")] == ["x"]


def test_coverage_counts_groups() -> None:
    doc = term_set("parse_config.py loads 灰度 settings")
    assert coverage(query_terms("parse_config settings"), doc) == 1.0
    assert coverage(query_terms("config missing"), doc) == 0.5
    assert coverage(query_terms("灰"), doc) == 1.0


def test_entity_extraction() -> None:
    text = ("Moved SessionStore to Redis; see src/cache/store.py and https://example.com/x. "
            "Ask @alice about 《发布手册》 and the API of gRPC, not IN or THE.")
    assert extract_entities(text) == ["SessionStore", "Redis", "src/cache/store.py", "https://example.com/x",
                                      "@alice", "发布手册", "API", "gRPC"]
    assert merge_entities(["Redis", "Custom"], "Redis and Docker") == ["Redis", "Custom", "Docker"]
    assert merge_entities(["Custom"], "Redis", "provided") == ["Custom"]
    assert merge_entities(["Custom"], "Redis", "auto") == ["Redis"]


def test_causal_cues() -> None:
    assert causal_cue("We chose it because it is fast") == "because"
    assert causal_cue("因为发布失败，所以回滚") == "因为"
    assert causal_cue("nothing causal here") is None
    assert causal_sub_type("added a lock so that writers never collide") == "enables"
    assert causal_sub_type("the firewall blocked the deploy because of a rule") == "prevents"
    assert causal_sub_type("it failed because of the disk") == "causes"
    assert overlap(frozenset("ab"), frozenset("bc")) == 0.5 and overlap(frozenset(), frozenset("a")) == 0.0
