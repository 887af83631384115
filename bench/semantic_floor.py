"""Absolute floor of vector-only hits (issue 11): cosine of true paraphrase pairs vs unrelated pairs.

Embeds the 100 facts of tests/fixtures/semantic_paraphrases.json (``passage:``) and their paraphrases
(``query:``) with the bundled model and prints, per script group of :func:`mnemon_ls.semantic.backends.query_script`
(latin = English + code identifiers, zh, ja, ko), the cosine distribution of true pairs (a paraphrase and
its fact) and of unrelated pairs (a paraphrase and another fact of the same script), the cosine that
maximises true share minus unrelated share above it (Youden's J, 0.005 steps), and the floors in use
(``E5_SCALE``) with the shares above them. Then it recalls queries about nothing in the set through
``SpacesService`` (strict-v1 and exhaustive-v1) and prints the tier of what comes back.

    python bench/semantic_floor.py        # needs the semantic extra; about 10 s of CPU
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemon_ls.semantic import SemanticConfig, SemanticEngine  # noqa: E402
from mnemon_ls.semantic.backends import E5_SCALE  # noqa: E402
from mnemon_ls.spaces import RecallQuality, SpacesService  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "semantic_paraphrases.json"
GROUPS = {"latin": ("en", "code"), "zh": ("zh",), "ja": ("ja",), "ko": ("ko",)}
#: Queries about nothing in the labelled set.
OFF_TOPIC = ["recipe for banana bread with walnuts", "who won the football match yesterday",
             "明天的天气怎么样", "我喜欢吃饺子", "熊猫住在四川的山里", "週末に富士山に登る予定", "桜の花が咲きました",
             "고양이 사료는 어디서 사나요", "주말에 등산 갈까요", "김치찌개 만드는 법"]


def main() -> None:
    facts = json.loads(FIXTURE.read_text("utf-8"))
    engine = SemanticEngine(SemanticConfig(enabled=True), env={})
    model = engine.embedder()
    passages = model.embed_passages([f["text"] for f in facts])
    queries = np.stack([model.embed_query(f["paraphrase"]) for f in facts])
    sims = queries @ passages.T
    floors = dict(E5_SCALE.medium)
    print(f"model {model.model_id}, {len(facts)} facts\n")
    print("| script | true pairs | unrelated pairs | true cosine min / p10 / median | unrelated cosine median / p95 / "
          "p99 / max | Youden's J best cosine (true / unrelated above) | floor in use | true above it | "
          "unrelated above it |")
    print("|---|---|---|---|---|---|---|---|---|")
    for group, langs in GROUPS.items():
        idx = [i for i, f in enumerate(facts) if f["lang"] in langs]
        pos = np.array([sims[i, i] for i in idx])
        neg = np.array([sims[i, j] for i in idx for j in idx if j != i])
        best = max(((np.mean(pos >= t) - np.mean(neg >= t), t) for t in np.arange(0.75, 0.90, 0.005)),
                   key=lambda x: (round(x[0], 9), -x[1]))
        t = best[1]
        used = floors[group]
        pc = np.percentile
        print(f"| {group} | {len(pos)} | {len(neg)} | {pos.min():.3f} / {pc(pos, 10):.3f} / {pc(pos, 50):.3f} | "
              f"{pc(neg, 50):.3f} / {pc(neg, 95):.3f} / {pc(neg, 99):.3f} / {neg.max():.3f} | {t:.3f} "
              f"({np.mean(pos >= t):.1%} / {np.mean(neg >= t):.1%}) | {used} | {np.mean(pos >= used):.1%} | "
              f"{np.mean(neg >= used):.1%} |")
    with tempfile.TemporaryDirectory() as tmp:
        service = SpacesService(Path(tmp), semantic=engine)
        space_id = service.create_space("facts", "labelled facts", active=True).to_dict()["id"]
        for fact in facts:
            service.remember(fact["text"], space_id=space_id)
        engine.wait_idle(600)
        exhaustive = RecallQuality.from_dict({"policy": "exhaustive-v1"})
        print("\n| query about nothing in the set | best cosine | strict-v1 results (tier, via) | "
              "exhaustive-v1 first result (tier, score) |")
        print("|---|---|---|---|")
        for query in OFF_TOPIC:
            cosine = float((passages @ model.embed_query(query)).max())
            strict = service.recall(query, limit=5).to_dict()["results"]
            first = service.recall(query, limit=1, quality=exhaustive).to_dict()["results"]
            shown = ", ".join(f"{r['tier']} {r['matchedVia']}" for r in strict) or "none"
            top = f"{first[0]['tier']} {first[0]['score']}" if first else "none"
            print(f"| {query} | {cosine:.3f} | {shown} | {top} |")
        hits: dict[str, list[bool]] = {}
        for fact in facts:
            results = service.recall(fact["paraphrase"], limit=10).to_dict()["results"]
            rank = next((i for i, r in enumerate(results) if r["content"] == fact["text"]), None)
            hits.setdefault(fact["lang"], []).append(rank is not None and rank < 5)
        print("\nstrict-v1 paraphrase hit@5 over the 100 facts alone: " + ", ".join(
            f"{lang} {sum(v)}/{len(v)}" for lang, v in hits.items()) + f"; all {sum(sum(v) for v in hits.values())}/100")
        service.close()
    engine.stop()


if __name__ == "__main__":
    main()
