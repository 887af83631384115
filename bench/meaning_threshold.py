"""Can the assistant be sent what meaning alone found without sending anything for a question nothing answers?
(issue 27 items 7 and 8b).

Reads a store that ``python bench/retrieval_quality.py --workdir DIR`` loaded and embedded, and that run's JSON
(``--run``, default bench/results/retrieval_quality.json). For every query: the query's cosines over every item
(the bundled model, exact), their mean and standard deviation over the space (``VectorStore.spread``, as
recall judges a vector-only candidate: :mod:`mnemon_ls.semantic.fusion`), and ``z`` of

- the queries of item 8b that run counted *lost*: a relevant memory in vector-only search's top 10 and none in
  what hybrid recall sent the assistant: ``z`` and cosine of that relevant memory;
- the queries nothing answers (categories ``no-answer`` and ``one-term``): ``z`` and cosine of the best match.

For bars ``z >= Z`` (with the cosine over the model's medium floor for the query's script, as recall asks), per
language: how many lost queries the bar would have sent their answer, and how many queries nothing answers would
have been sent something. A bar that sends the first without the second would let recall send more; none does
with this model (results: bench/results/meaning_threshold.md).

``python bench/meaning_threshold.py --workdir DIR [--run FILE]``; needs the semantic (or test) extra.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import retrieval_set as rset  # noqa: E402
from retrieval_quality import Bench  # noqa: E402

BARS = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.37)
UNANSWERED = ("no-answer", "one-term")


def measure(workdir: Path, run: dict) -> dict:
    """``{"lang": {"lost": n, "unanswered": n, "bars": [[Z, lost sent, unanswered sent]], "lostZ": [...],
    "unansweredTopZ": [...]}}`` (module doc)."""
    from mnemon_ls.semantic.backends import E5_SCALE
    from mnemon_ls.semantic.vectors import VECTOR_FILE, VectorStore

    _memories, queries = rset.load()
    space, items = json.loads((workdir / "loaded.json").read_text("utf-8"))
    bench = Bench(workdir, {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")})
    engine = bench.hosts["hybrid"].semantic
    embedder = engine.embedder()
    store = VectorStore(bench.root / "data" / space / VECTOR_FILE, embedder.model_id, embedder.dim)
    store.sync()
    lost = set(run["item8"]["vectorOnly"]["hybrid"])
    out: dict = {}
    for query in queries:
        if query["id"] not in lost and query["category"] not in UNANSWERED:
            continue
        vector = embedder.embed_query(query["text"])
        _rows, mean, std = store.spread(vector)
        found = [(items[key], cosine, (cosine - mean) / std) for key, cosine in store.search(vector, 10, exact=True)]
        floor = E5_SCALE.medium_floor(query["text"])
        if query["id"] in lost:
            chosen = next(row for row in found if row[0] in set(query["relevant"]))
            kind = "lost"
        else:
            chosen, kind = found[0], "unanswered"
        cell = out.setdefault(query["lang"], {"lost": [], "unanswered": []})
        cell[kind].append([round(chosen[1], 4), round(chosen[2], 3), floor])
    store.close()
    bench.close()
    engine.stop()
    for cell in out.values():
        cell["bars"] = [[bar, sum(1 for c, z, f in cell["lost"] if z >= bar and c >= f),
                         sum(1 for c, z, f in cell["unanswered"] if z >= bar and c >= f)] for bar in BARS]
    return out


def markdown(result: dict, meta: dict) -> str:
    lines = ["# Meaning-only answers against questions nothing answers (issue 27 items 7 and 8b)", "",
             f"`{meta['command']}` at commit {meta['commit']}, {meta['at']}; load {meta['load']}. Store and lost "
             f"queries of the run of {meta['run']} (bench/results/retrieval_quality.md). Module doc for the method.",
             "", "| language | bar: z >= | lost queries whose answer it would send | queries nothing answers that "
             "it would send something |", "|---|---:|---:|---:|"]
    for lang, cell in sorted(result.items()):
        for bar, sent, noise in cell["bars"]:
            lines.append(f"| {lang} | {bar} | {sent} of {len(cell['lost'])} | {noise} of {len(cell['unanswered'])} |")
    lines += ["", "z of the lost answers / of the best match of each query nothing answers (highest first):", ""]
    for lang, cell in sorted(result.items()):
        lost = sorted((z for _c, z, _f in cell["lost"]), reverse=True)
        noise = sorted((z for _c, z, _f in cell["unanswered"]), reverse=True)
        lines.append(f"- {lang}: lost {', '.join(f'{z:.2f}' for z in lost)}; nothing answers "
                     f"{', '.join(f'{z:.2f}' for z in noise[:12])}{' ...' if len(noise) > 12 else ''}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True, help="the --workdir of a retrieval_quality.py run")
    parser.add_argument("--run", type=Path, default=HERE / "results" / "retrieval_quality.json")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "meaning_threshold.md")
    args = parser.parse_args()
    run = json.loads(args.run.read_text("utf-8"))
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    result = measure(args.workdir, run)
    import subprocess

    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"command": " ".join(["python bench/meaning_threshold.py", *sys.argv[1:]]), "commit": commit,
            "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": load, "run": run.get("at")}
    text = markdown(result, meta)
    args.out.write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
