"""Redaction pass (mnemon_ls.redact) versus the detect-secrets library (PyPI), on the same texts.

Measures, per call, on 10 KiB texts: (a) plain prose, (b) prose dense with the words secret/token/
password/key (every rule's pre-check fires), (c) a text holding every sample credential; on 1 MiB of the
pack benchmark's corpus (English and CJK words, "token" among them: what a pack import scans); and counts
coverage of ``tests/redact_samples.py`` (each kind found, value gone) and false positives on its
prose list. detect-secrets is optional (``pip install detect-secrets==1.5.0`` into a scratch venv);
without it only our side is printed. Run: ``python bench/bench_redact.py [--calls N]``.
Medians and nearest-rank p95 in milliseconds (time.perf_counter_ns), 5 warm-up calls excluded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from redact_samples import PROSE, SAMPLES  # noqa: E402

from mnemon_ls.redact import find_secrets, redact_text  # noqa: E402


def _texts() -> dict[str, str]:
    prose = ("Runtime memory keeps the decisions of this repository. We chose SQLite FTS5 for the side index, "
             "and the wake snapshot stays under budget. ")
    dense = ("No API key is needed; set the token in your env; the password policy says 12 characters; a secret "
             "manager holds the private key; session cookies expire. ")
    creds = "\n".join(text for _, text, _ in SAMPLES) + "\n"

    def fill(seed: str) -> str:
        return (seed * (10240 // len(seed) + 1))[:10240]

    return {"prose 10 KiB": fill(prose), "secret-words prose 10 KiB": fill(dense),
            "every credential, 10 KiB": fill(creds)}


def _pack_corpus() -> str:
    """1 MiB of the pack benchmark's document text (bench/packs.py: English with "token", CJK words)."""
    import random

    words = ("rollback threshold staging deploy canary metric latency budget index sqlite fts5 bigram token "
             "gen-itgc v1.2.3 snake_case 数据库 迁移 灰度 阶段 顺序 自动 回滚 阈值 发布 手册").split()
    rng = random.Random(13)
    out, length = [], 0
    while length < 1024 * 1024:
        word = rng.choice(words)
        out.append(word)
        length += len(word.encode()) + 1
    return " ".join(out)


def _time(fn, text: str, calls: int) -> tuple[float, float]:
    for _ in range(5):
        fn(text)
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        fn(text)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95 + 0.5) - 1)]


def _detect_secrets(entropy: bool = True):
    """detect-secrets' ad-hoc line scan with its default plugins (``entropy=False``: without the two
    high-entropy-string plugins, which in ad-hoc mode report every word)."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings, get_settings, transient_settings
    except ImportError:
        return None
    with default_settings():
        plugins = [{"name": name} for name in get_settings().plugins
                   if entropy or "HighEntropy" not in name]

    def scan(text: str) -> list:
        with transient_settings({"plugins_used": plugins}):
            return [s for line in text.splitlines() for s in scan_line(line)]

    return scan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    detect = _detect_secrets()
    print("| text | mnemon_ls.redact median / p95 ms | detect-secrets median / p95 ms | ratio (median) |")
    print("|---|---|---|---|")
    for name, text in _texts().items():
        ours = _time(find_secrets, text, args.calls)
        if detect is not None:
            theirs = _time(detect, text, max(10, args.calls // 10))
            print(f"| {name} | {ours[0]:.3f} / {ours[1]:.3f} | {theirs[0]:.2f} / {theirs[1]:.2f} | "
                  f"{theirs[0] / ours[0]:.0f}x |")
        else:
            print(f"| {name} | {ours[0]:.3f} / {ours[1]:.3f} | (not installed) | |")
    corpus = _pack_corpus()
    median, p95 = _time(find_secrets, corpus, max(5, args.calls // 20))
    print(f"| pack corpus (English + CJK, 'token'), 1 MiB | {median:.1f} / {p95:.1f} | | |")
    found = sum(1 for kind, text, secret in SAMPLES
                if secret not in redact_text(text)[0] and any(m.kind == kind for m in find_secrets(text)))
    false = [p for p in PROSE if find_secrets(p)]
    print(f"\nmnemon_ls.redact: {found}/{len(SAMPLES)} samples found and removed; "
          f"{len(false)}/{len(PROSE)} prose texts flagged")
    for label, scan in (("detect-secrets 1.5 (default plugins)", detect),
                        ("detect-secrets 1.5 (without high-entropy plugins)", _detect_secrets(False))):
        if scan is None:
            continue
        missed = []
        for kind, text, secret in SAMPLES:
            values = {s.secret_value for s in scan(text)}
            # detect-secrets reports values, not positions: count a sample as covered when a reported value
            # contains the secret (so replacing it would remove the secret)
            if not any(v and secret in v for v in values):
                missed.append(kind)
        flagged = [p for p in PROSE if scan(p)]
        print(f"{label}: {len(SAMPLES) - len(missed)}/{len(SAMPLES)} samples whose value it reports; "
              f"missed: {', '.join(sorted(set(missed)))}; {len(flagged)}/{len(PROSE)} prose texts flagged: "
              f"{flagged[:3]}{' ...' if len(flagged) > 3 else ''}")


if __name__ == "__main__":
    main()
