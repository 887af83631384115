"""``python -m mnemon_ls_provider_postgres try``: the same as ``mnemon-ls-postgres try`` (:mod:`.trial`)."""

import sys

from .trial import main

sys.exit(main())
