"""``python -m mnemon_ls``: the command line (:func:`mnemon_ls.cli.main`, also the ``mnemon-ls`` console script)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
