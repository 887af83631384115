"""Pure text helpers of the spaces package: tokenizer (CJK bigrams, identifiers whole and split, stopwords),
entity extraction and causal cues used by the automatic edges."""

from __future__ import annotations

from mnemon_ls.spaces.graph import causal_cue, causal_sub_type, extract_entities, merge_entities, overlap
from mnemon_ls.spaces.index import TOKENIZER
from mnemon_ls.text import coverage, fts_match

document_terms, query_terms, term_set = TOKENIZER.document_terms, TOKENIZER.query_terms, TOKENIZER.term_set


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


def test_one_tokenizer_for_both_sources_differs_only_by_its_parameters() -> None:
    import importlib.util

    from mnemon_ls.documents.search_index import TOKENIZER as DOCUMENTS
    from mnemon_ls.text import Tokenizer

    assert importlib.util.find_spec("mnemon_ls.documents.tokens") is None
    assert importlib.util.find_spec("mnemon_ls.spaces.tokenizer") is None
    assert type(DOCUMENTS) is type(TOKENIZER) is Tokenizer
    text = "The getUserName of parse_config.py 数据库"
    assert DOCUMENTS.document_terms(text) == [
        "the", "getusername", "of", "parse_config.py", "parse", "config", "py", "数据", "据库", "库"]
    assert TOKENIZER.document_terms(text) == [
        "getusername", "get", "user", "name", "parse_config.py", "parse", "config", "py", "数据", "据库", "库"]
    many = " ".join(f"w{i}" for i in range(100))
    assert (len(DOCUMENTS.query_terms(many)), len(TOKENIZER.query_terms(many))) == (64, 32)
    # already-normalized text gives the same terms as raw text (the Documents store passes normalized text)
    assert DOCUMENTS.document_terms("ＡＢＣ Straße") == DOCUMENTS.document_terms("abc strasse") == ["abc", "strasse"]
