"""What the wake's citation and review marks (issue 24 items 4 and 6) cost a long-lived host's wake: 60 MEMORY.md
entries, none cited, against the same 60 entries each citing 3 lines of one of 20 files, interleaved in one run,
as ratios of the medians (process CPU time per wake). Three cited cases: files unchanged (the freshness cache
answers after one ``stat`` per citation), every file touched before each wake (each file read and hashed again),
and a quarter of the files changed (the wake shows marks and the count line).

Run from the repository root with the project's Python: ``python bench/wake_marks.py [--rounds N]``. Everything
lives in a throw-away temp directory. Writes ``bench/results/wake_marks.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from mnemon_ls.citations import freshness
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.settings import load_settings

FILES = 20
ENTRIES = 60


def _host(base: Path, name: str, cite: bool) -> WorkspaceHost:
    workspace = base / name
    (workspace / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    for n in range(FILES):
        (workspace / "src" / f"m{n}.py").write_text("".join(f"value_{n}_{i} = {i}\n" for i in range(200)))
    host = WorkspaceHost(workspace, load_settings({"storageScope": "custom", "dataDir": str(base / f"{name}-root"),
                                                   "runtimeUserScope": "storage"}))
    for i in range(ENTRIES):
        content = f"module {i % FILES} keeps value {i} near line {10 + i}"
        host.mutate_runtime(validate_request("add", "memory", content))
        if cite:
            from mnemon_ls.citations.store import runtime_key

            cites = host.citations.resolve([{"path": f"src/m{i % FILES}.py", "startLine": 10 + i,
                                              "endLine": 12 + i}])
            host.citations.put("runtime", {runtime_key(content): cites})
    return host


def _cpu(call) -> float:  # noqa: ANN001
    start = time.process_time()
    call()
    return (time.process_time() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        plain, cited = _host(base, "plain", False), _host(base, "cited", True)
        files = sorted((cited.workspace / "src").iterdir())  # type: ignore[operator]

        def touch() -> None:
            for f in files:
                os.utime(f, ns=(time.time_ns(), time.time_ns()))
            freshness.clear()

        samples: dict[str, list[float]] = {"none cited": [], "cited, files unchanged": [],
                                           "cited, every file re-read": []}
        for _ in range(args.rounds):
            samples["none cited"].append(_cpu(lambda: plain.wake()))
            samples["cited, files unchanged"].append(_cpu(lambda: cited.wake()))
            touch()
            samples["cited, every file re-read"].append(_cpu(lambda: cited.wake()))
        for f in files[:FILES // 4]:
            f.write_text("# changed\n" + f.read_text().replace(" = 3", " = 33"))
        marked = cited.wake()[0].text
        samples["cited, a quarter changed"] = [_cpu(lambda: cited.wake()) for _ in range(args.rounds)]
    base_median = statistics.median(samples["none cited"])
    lines = ["# Wake marks (issue 24 items 4 and 6)", "",
             f"`python bench/wake_marks.py --rounds {args.rounds}`: {ENTRIES} MEMORY.md entries, {FILES} files, "
             "one long-lived host per case, process CPU per wake, cases interleaved.", "",
             "| case | median CPU ms | ratio to none cited |", "|---|---|---|"]
    for name, values in samples.items():
        lines.append(f"| {name} | {statistics.median(values):.3f} | {statistics.median(values) / base_median:.2f}x |")
    count = [line for line in marked.splitlines() if line.startswith("Citations:")]
    lines += ["", f"With a quarter of the files changed the wake says: `{count[0][:90]}...`" if count else ""]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(__file__).parent / "results" / "wake_marks.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
