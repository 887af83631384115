"""``python -m mnemon_ls`` runs the command line (see :mod:`mnemon_ls.cli`)."""

import sys

from .cli import main

sys.exit(main())
