"""Replay the behaviour corpus (:mod:`tests.ops.corpus`) of each surface and compare every answer with the
recorded one; ``MNEMON_RECORD_CORPUS=1`` records instead (rewrites ``tests/ops/corpus/<surface>.json``)."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.ops import corpus

RECORDING = os.environ.get("MNEMON_RECORD_CORPUS") == "1"
#: Most differing cases shown in one failure (the rest are counted).
MAX_SHOWN = 40
#: Most diff lines shown for one case.
MAX_DIFF_LINES = 80


def _pretty(value: Any) -> list[str]:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False).split("\n")


def _is_help(entry: dict[str, Any]) -> bool:
    request = entry.get("request")
    return isinstance(request, dict) and any(a in ("--help", "-h") for a in request.get("argv", []))


def compare(surface: str, recorded: dict[str, Any], replayed: list[dict[str, Any]]) -> list[str]:
    """The problems found, one readable paragraph per differing case."""
    problems: list[str] = []
    same_python = recorded.get("python") == corpus.python_version()
    old = {e["case"]: e for e in recorded["cases"]}
    new = {e["case"]: e for e in replayed}
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    if added:
        problems.append(f"cases not recorded yet (re-record with MNEMON_RECORD_CORPUS=1): {added}")
    if removed:
        problems.append(f"recorded cases no longer in the corpus (re-record): {removed}")
    for index, (name, entry) in enumerate(new.items()):
        before = old.get(name)
        if before is None or (not same_python and _is_help(entry)):
            continue
        if before == entry:
            continue
        diff = list(difflib.unified_diff(_pretty(before), _pretty(entry), "recorded", "replayed", lineterm="", n=3))
        if len(diff) > MAX_DIFF_LINES:
            diff = diff[:MAX_DIFF_LINES] + [f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
        problems.append(f"[{surface} #{index + 1}] case {name!r} answers differently:\n" + "\n".join(diff))
    return problems


@pytest.mark.parametrize("surface", corpus.SURFACES)
def test_behaviour_corpus(surface: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp(f"corpus-{surface}") / "sandbox"
    replayed = corpus.record_surface(surface, base)
    if RECORDING:
        corpus.save(surface, replayed)
        return
    path = corpus.corpus_file(surface)
    assert path.exists(), f"{path} is missing: record it with MNEMON_RECORD_CORPUS=1"
    problems = compare(surface, corpus.load(surface), replayed)
    if problems:
        shown = problems[:MAX_SHOWN]
        more = len(problems) - len(shown)
        pytest.fail(f"{len(problems)} difference(s) in the {surface} corpus ({Path(path).name}):\n\n"
                    + "\n\n".join(shown) + (f"\n\n... and {more} more" if more else ""), pytrace=False)
