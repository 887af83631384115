"""``mnemon-ls serve`` without the rest of the command line: its flags and the fast start path.

Editors start ``mnemon-ls serve`` and wait for ``initialize``; importing :mod:`mnemon_ls.cli.full` (settings,
stores, pydantic) first would delay that answer. :func:`main` parses only ``serve``'s flags (the same
:func:`add_serve_arguments` the full parser uses) and starts the server. Imports nothing heavy.
"""

from __future__ import annotations

import argparse
from typing import Sequence


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``serve``: ``--tcp HOST:PORT``, ``--log-file FILE``, ``-v``/``-vv``."""
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)")
    parser.add_argument("--log-file", metavar="FILE", help="write logs to FILE")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for protocol traffic)")


def main(argv: Sequence[str]) -> int:
    """Run ``mnemon-ls serve`` with ``argv`` (the arguments after ``serve``); returns the exit code."""
    parser = argparse.ArgumentParser(prog="mnemon-ls serve", description="run the language server (stdio by default)",
                                     allow_abbrev=False)
    add_serve_arguments(parser)
    args = parser.parse_args(list(argv))
    from .server import run

    return run(tcp=args.tcp, log_file=args.log_file, verbose=args.verbose)
