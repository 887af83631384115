"""Cost of the safe managed-file read (``read_regular_file``: ``O_NONBLOCK`` open + ``fstat`` + bounded read)
against a plain ``open(path, "rb").read()`` of the same file, interleaved in one run (issue 15, defect 3).

Run::

    python bench/bench_documents_read.py            # 10 KiB and 1 MiB files, prints medians and the ratio

Each round times 2,000 reads of each variant (best of 3), seven rounds alternating; the figures are
the medians of the rounds in microseconds per read. The ratio is safe / plain (1.0 = parity).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import timeit

from mnemon_ls.documents.files import read_regular_file


def main() -> None:
    """Print ``size: plain us, safe us, ratio`` for each file size."""
    with tempfile.TemporaryDirectory() as directory:
        for size in (10 * 1024, 1024 * 1024):
            path = os.path.join(directory, f"{size}.md")
            with open(path, "wb") as handle:
                handle.write(os.urandom(size))

            def plain() -> bytes:
                with open(path, "rb") as handle:
                    return handle.read()

            number = 2000 if size < 100_000 else 200
            rounds: dict[str, list[float]] = {"plain": [], "safe": []}
            for _ in range(7):
                for name, call in (("plain", plain), ("safe", lambda: read_regular_file(path))):
                    rounds[name].append(min(timeit.repeat(call, number=number, repeat=3)) / number * 1e6)
            plain_us, safe_us = statistics.median(rounds["plain"]), statistics.median(rounds["safe"])
            print(f"{size} bytes: plain {plain_us:.2f} us, read_regular_file {safe_us:.2f} us, "
                  f"ratio {safe_us / plain_us:.2f}")


if __name__ == "__main__":
    main()
