"""``python -m mnemon_ls`` and the ``mnemon-ls`` console script.

``serve`` goes straight to the language server (:mod:`mnemon_ls.lsp.launch`) so that editors get the
``initialize`` answer without the command line's imports; every other command is :mod:`mnemon_ls.cli`.
"""

import sys


def main() -> int:
    """Entry point; returns the exit code."""
    if sys.argv[1:2] == ["serve"]:
        from .lsp.launch import main as serve

        return serve(sys.argv[2:])
    from .cli import main as cli

    return cli()


if __name__ == "__main__":
    sys.exit(main())
