"""Relevance of vector-only hits (issue 11): true paraphrase pairs vs queries about nothing stored.

Embeds the 100 facts of tests/fixtures/semantic_paraphrases.json (``passage:``), their paraphrases (``query:``),
a small realistic project space (:data:`PROJECT`, 15 items about this project's decisions) and
:data:`OFF_TOPIC` queries about nothing in either, with the bundled model, and prints:

1. per script group of :func:`mnemon_ls.semantic.backends.query_script` (latin = English + code identifiers,
   zh, ja, ko): the cosine of true pairs vs unrelated pairs and the absolute floors in use (``E5_SCALE``);
2. per space (the facts; the facts + the project items; the project items alone): the true pairs' ``z``
   (cosine in standard deviations above the query's mean cosine over the space) and the best ``z`` and
   cosine of each off-topic query;
3. the decision rule (:func:`mnemon_ls.semantic.fusion.vector_only_score`) swept over ``z_medium``: the
   share of true pairs labelled medium and the off-topic queries that get any medium hit;
4. end to end through ``SpacesService.recall`` on the facts + project space, the rule before (absolute
   floor alone: ``z_medium`` -inf) and after (the scale in use), same run: off-topic queries' strict-v1
   results, paraphrase hit@5 in strict-v1 and balanced-v1, the README's examples;
5. partial keyword matches (:data:`PARTIAL`: queries sharing one common word or kana pair with unrelated
   items, and queries whose answer shares some of their words), the vectors' rules on them off
   (``PARTIAL_LIFT_CAP`` 1.0, ``WEAK_KEYWORD_SCORE`` 0) and on, same run, with keyword-only recall as the
   peer: how many results are high / medium / low, and the rank and tier of the answer where one exists.

    python bench/semantic_floor.py        # needs the semantic extra; about 30 s of CPU
    python bench/semantic_floor.py --vector-pool-factors 2,6   # the end-to-end part per vector pool, same run
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemon_ls.semantic import SemanticConfig, SemanticEngine  # noqa: E402
from mnemon_ls.semantic.backends import E5_SCALE, query_script  # noqa: E402
from mnemon_ls.semantic import fusion  # noqa: E402
from mnemon_ls.semantic.fusion import Spread, vector_only_score  # noqa: E402
from mnemon_ls.spaces import RecallQuality, SpacesService  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "semantic_paraphrases.json"
GROUPS = {"latin": ("en", "code"), "zh": ("zh",), "ja": ("ja",), "ko": ("ko",)}
#: A realistic small space: decisions and preferences of a software project.
PROJECT = [
    "We chose SQLite FTS5 with the trigram tokenizer for the keyword side index",
    "The language server is built on pygls 2 and lsprotocol",
    "Always run the test suite with -n 2 on the shared machine",
    "Branch-scoped memories are tagged branch:<name>",
    "User prefers short commit messages in the imperative mood",
    "The Documents store keeps each body in its own markdown file",
    "Runtime memory is capped at 2200 characters for MEMORY.md",
    "Recall results carry a tier: high, medium or low",
    "Use filelock for cross-process locks, never fcntl directly",
    "The wake snapshot is limited to 1200 characters for spaces",
    "Neovim 0.7.2 comes from Debian, 0.11 from the test extra",
    "The vector side index lives next to mnemon.db and is derived data",
    "Holographic provider stores facts with a trust score",
    "Do not mock git: tests use real repositories through pygit2",
    "Settings are pydantic models read from settings.json",
]
#: Queries about nothing in the labelled set or the project space.
OFF_TOPIC = ["kubernetes pod eviction", "quantum chromodynamics of penguins", "recipe for banana bread with walnuts",
             "banana bread recipe", "who won the football match yesterday", "how to tune a guitar",
             "best hiking trails in Norway", "stock market crash 1929", "the mating habits of octopuses",
             "明天的天气怎么样", "我喜欢吃饺子", "熊猫住在四川的山里", "週末に富士山に登る予定", "桜の花が咲きました",
             "고양이 사료는 어디서 사나요", "주말에 등산 갈까요", "김치찌개 만드는 법"]
#: Items for the partial-keyword part, added to the facts + project space, and its queries: (query, the
#: answer or None when nothing stored answers it).
PARTIAL_ITEMS = ["Always run the migration scripts before a release", "render_markdown escapes raw HTML before converting",
                 "The build uses make before deploy", "オレンジジュースを毎朝飲む", "会議は毎週月曜日の朝に行う",
                 "The cache is cleared after every deploy"]
PARTIAL = [("what did I eat before lunch", None), ("ジュースが好き", "オレンジジュースを毎朝飲む"),
           ("what do we do before a release", "Always run the migration scripts before a release"),
           ("deploy on friday afternoon", None), ("月曜日は雨でした", None), ("clear the cache", "The cache is cleared after every deploy"),
           ("escape html", "render_markdown escapes raw HTML before converting"), ("every morning coffee", None)]
#: The README's and the issue's examples (query, fact).
EXAMPLES = [("数据库升级", "发布前必须运行迁移脚本"), ("how do we ship to production",
                                               "Deploys go through the blue-green switch on Fridays"),
            ("where does our pet nap after lunch", "The dog sleeps on the sofa every afternoon")]


def _floor(scale, query: str, item: str) -> float:
    return max(scale.medium_floor(query), scale.medium_floor(item))


def _tiers(service: SpacesService, query: str, quality=None) -> list[dict]:
    return service.recall(query, limit=5, quality=quality).to_dict()["results"]


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vector-pool-factors", default="2",
                        help="run the end-to-end part once per factor: a recall reads max(64, factor x 15) vector "
                             "candidates at limit 5 (6: the keyword pool, the size before 2026-12-01; 2: the default)")
    factors = [int(x) for x in parser.parse_args().vector_pool_factors.split(",") if x]
    facts = json.loads(FIXTURE.read_text("utf-8"))
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    model = engine.embedder()
    passages = model.embed_passages([f["text"] for f in facts])
    project = model.embed_passages(PROJECT)
    queries = np.stack([model.embed_query(f["paraphrase"]) for f in facts])
    off = np.stack([model.embed_query(q) for q in OFF_TOPIC])
    sims = queries @ passages.T
    floors = dict(E5_SCALE.medium)
    print(f"model {model.model_id}, {len(facts)} facts, {len(PROJECT)} project items, {len(OFF_TOPIC)} off-topic "
          f"queries; scale z_medium {E5_SCALE.z_medium}, min_spread_rows {E5_SCALE.min_spread_rows}, "
          f"small_margin {E5_SCALE.small_margin}\n")
    print("| script | true pairs | unrelated pairs | true cosine min / p10 / median | unrelated cosine median / p95 / "
          "p99 / max | floor in use | true above it | unrelated above it |")
    print("|---|---|---|---|---|---|---|---|")
    pc = np.percentile
    for group, langs in GROUPS.items():
        idx = [i for i, f in enumerate(facts) if f["lang"] in langs]
        pos = np.array([sims[i, i] for i in idx])
        neg = np.array([sims[i, j] for i in idx for j in idx if j != i])
        used = floors[group]
        print(f"| {group} | {len(pos)} | {len(neg)} | {pos.min():.3f} / {pc(pos, 10):.3f} / {pc(pos, 50):.3f} | "
              f"{pc(neg, 50):.3f} / {pc(neg, 95):.3f} / {pc(neg, 99):.3f} / {neg.max():.3f} | {used} | "
              f"{np.mean(pos >= used):.1%} | {np.mean(neg >= used):.1%} |")

    texts = [f["text"] for f in facts] + PROJECT
    spaces = {"facts": (passages, list(range(len(facts)))), "facts+project": (np.vstack([passages, project]),
                                                                                list(range(len(facts)))),
              "project": (project, [])}
    print("\n| space | items | true pair z min / p10 / median / p90 | true pair is the best cosine | off-topic best z "
          "median / max | off-topic best cosine over its floor, max |")
    print("|---|---|---|---|---|---|")
    sweep_data = {}
    for name, (matrix, truth) in spaces.items():
        names = texts[:len(facts)] + PROJECT if name != "project" else PROJECT
        true_rows = []
        for i in truth:
            s = matrix @ queries[i]
            true_rows.append((s[i], Spread(len(s), float(s.mean()), float(s.std())), _floor(E5_SCALE, facts[i]["paraphrase"],
                                                                                      facts[i]["text"]),
                              int(np.argmax(s)) == i))
        off_rows = []
        for j, query in enumerate(OFF_TOPIC):
            s = matrix @ off[j]
            spread = Spread(len(s), float(s.mean()), float(s.std()))
            off_rows.append([(float(c), spread, _floor(E5_SCALE, query, names[k])) for k, c in enumerate(s)])
        sweep_data[name] = (true_rows, off_rows)
        tz = np.array([(c - sp.mean) / sp.std for c, sp, _f, _b in true_rows]) if true_rows else np.zeros(0)
        oz = np.array([max((c - sp.mean) / sp.std for c, sp, _f in rows) for rows in off_rows])
        over = max(max(c - f for c, _sp, f in rows) for rows in off_rows)
        true_cell = (f"{tz.min():.2f} / {pc(tz, 10):.2f} / {pc(tz, 50):.2f} / {pc(tz, 90):.2f}" if len(tz) else "-")
        best_cell = f"{sum(b for *_x, b in true_rows)} / {len(true_rows)}" if true_rows else "-"
        print(f"| {name} | {len(matrix)} | {true_cell} | {best_cell} | {pc(oz, 50):.2f} / {oz.max():.2f} | {over:+.3f} |")

    print("\n| z_medium | facts: true pairs medium | facts: off-topic queries with a medium hit | facts+project: true "
          "medium | facts+project: off-topic with a medium | project (15 items, floor + small_margin): off-topic "
          "with a medium |")
    print("|---|---|---|---|---|---|")
    for z_medium in (float("-inf"), 2.0, 2.5, 3.0, 3.25, 3.5, 4.0):
        scale = dataclasses.replace(E5_SCALE, z_medium=z_medium)
        cells = []
        for name in ("facts", "facts+project", "project"):
            true_rows, off_rows = sweep_data[name]
            medium = sum(vector_only_score(c, f, sp, scale)[0] >= 0.25 for c, sp, f, _b in true_rows)
            leaks = sum(any(vector_only_score(c, f, sp, scale)[0] >= 0.25 for c, sp, f in rows) for rows in off_rows)
            cells += ([f"{medium} / {len(true_rows)}"] if name != "project" else []) + [f"{leaks} / {len(off_rows)}"]
        label = "-inf (absolute floor only)" if z_medium == float("-inf") else f"{z_medium}"
        print(f"| {label} | " + " | ".join(cells) + " |")

    balanced = RecallQuality.from_dict({"policy": "balanced-v1"})
    with tempfile.TemporaryDirectory() as tmp:
        service = SpacesService(Path(tmp), semantic=engine)
        space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
        for text in texts:
            service.remember(text, space_id=space_id)
        engine.wait_idle(600)
        rules = {"before (absolute floor only)": dataclasses.replace(E5_SCALE, z_medium=float("-inf"),
                                                                      min_spread_rows=0, small_margin=0.0),
                 "after (floor and z)": E5_SCALE}
        report: dict[str, dict] = {}
        from mnemon_ls.spaces.providers import hybrid

        held = hybrid.VECTOR_POOL_FACTOR
        runs = [(f"{label}" + (f", vector pool {max(hybrid.VECTOR_POOL_MIN, factor * 15)}" if len(factors) > 1 else ""),
                 scale, factor) for label, scale in rules.items() for factor in factors]
        for label, scale, factor in runs:
            model.scale = scale
            hybrid.VECTOR_POOL_FACTOR = factor  # limit 5: the provider is asked for 15 candidates
            cell = report.setdefault(label, {})
            cell["off"] = {q: _tiers(service, q) for q in OFF_TOPIC}
            cell["off-balanced"] = {q: _tiers(service, q, balanced) for q in OFF_TOPIC}
            for policy, quality in (("strict-v1", None), ("balanced-v1", balanced)):
                hits = 0
                for fact in facts:
                    results = _tiers(service, fact["paraphrase"], quality)
                    hits += any(r["content"] == fact["text"] for r in results)
                cell[policy] = hits
            cell["examples"] = {}
            for query, fact in EXAMPLES:
                results = service.recall(query, limit=5, quality=balanced).to_dict()["results"]
                rank = next((i for i, r in enumerate(results) if r["content"] == fact), None)
                cell["examples"][query] = ("not in top 5" if rank is None else
                                           f"#{rank + 1} {results[rank]['tier']} {results[rank]['score']} "
                                           f"{results[rank].get('similarity')}")
        model.scale = E5_SCALE
        hybrid.VECTOR_POOL_FACTOR = held
        print("\nEnd to end (SpacesService.recall, facts + project space, 115 items, limit 5):\n")
        print("| rule | off-topic queries with any strict-v1 result | strict-v1 results of them in total | "
              "paraphrase hit@5 strict-v1 | paraphrase hit@5 balanced-v1 |")
        print("|---|---|---|---|---|")
        for label, cell in report.items():
            print(f"| {label} | {sum(bool(v) for v in cell['off'].values())} / {len(OFF_TOPIC)} | "
                  f"{sum(len(v) for v in cell['off'].values())} | {cell['strict-v1']} / {len(facts)} | "
                  f"{cell['balanced-v1']} / {len(facts)} |")
        for label, cell in report.items():
            tiers = [r["tier"] for v in cell["off-balanced"].values() for r in v]
            print(f"{label}, balanced-v1 (recallPolicy auto with semantic recall on): off-topic queries with any "
                  f"result {sum(bool(v) for v in cell['off-balanced'].values())} / {len(OFF_TOPIC)}, results "
                  + ", ".join(f"{t} {tiers.count(t)}" for t in ("high", "medium", "low")))
        for label, cell in report.items():
            print(f"\n{label}: strict-v1 results of the off-topic queries")
            for query, results in cell["off"].items():
                if results:
                    print(f"- {query}: " + ", ".join(f"{r['tier']} {r['matchedVia']} {r['score']}" for r in results))
            print(f"{label}: the examples in balanced-v1 (rank, tier, score, similarity)")
            for query, text in cell["examples"].items():
                print(f"- {query}: {text}")
        for text in PARTIAL_ITEMS:
            service.remember(text, space_id=space_id)
        engine.wait_idle(600)
        exhaustive = RecallQuality.from_dict({"policy": "exhaustive-v1"})
        saved = (fusion.PARTIAL_LIFT_CAP, fusion.WEAK_KEYWORD_SCORE)
        runs = {"keyword-only": ("keyword", saved), "hybrid, partial-keyword rules off": ("smart", (1.0, 0.0)),
                "hybrid, rules on": ("smart", saved)}
        print("\nPartial keyword matches (exhaustive-v1, limit 5; the space above plus "
              f"{len(PARTIAL_ITEMS)} items; answer: rank tier):\n")
        print("| query | " + " | ".join(runs) + " |")
        print("|---|" + "---|" * len(runs))
        totals = {label: {"high": 0, "medium": 0, "low": 0} for label in runs}
        for query, answer in PARTIAL:
            cells = []
            for label, (mode, (lift, weak)) in runs.items():
                fusion.PARTIAL_LIFT_CAP, fusion.WEAK_KEYWORD_SCORE = lift, weak
                results = [r for r in service.recall(query, limit=5, mode=mode, quality=exhaustive).to_dict()["results"]
                           if r["matchedVia"] != "vector"]  # the keyword-found ones: meaning-only hits are part 4
                for r in results:
                    totals[label][r["tier"]] = totals[label].get(r["tier"], 0) + 1
                tiers = "/".join(str(sum(r["tier"] == t for r in results)) for t in ("high", "medium", "low"))
                rank = next((i for i, r in enumerate(results) if r["content"] == answer), None) if answer else None
                where = "-" if rank is None else f"#{rank + 1} " + results[rank]["tier"]
                cells.append(f"h/m/l {tiers}" + ("" if answer is None else f"; answer {where}"))
            fusion.PARTIAL_LIFT_CAP, fusion.WEAK_KEYWORD_SCORE = saved
            print(f"| {query} {'(no answer)' if answer is None else ''} | " + " | ".join(cells) + " |")
        print("| total high / medium / low | " + " | ".join(
            f"{t['high']} / {t['medium']} / {t['low']}" for t in totals.values()) + " |")
        service.close()
    engine.stop()


if __name__ == "__main__":
    main()
