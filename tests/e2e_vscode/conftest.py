"""Fixtures of the VS Code end-to-end tests: the extension packaged as a ``.vsix`` from this tree, installed
into a private code-server (its own HOME, user-data-dir and extensions-dir per test session) serving a real
git repository, and one Chromium page (fresh profile) showing it.

The tests of a session share that one window, in file order, the way a person keeps one window open;
each test uses its own texts and files so that it does not depend on what an earlier one wrote.
A failing test leaves a screenshot (and the code-server log) in the artifacts directory, named in its report.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from filelock import FileLock

from tests.e2e_vscode.codeserver import EXTENSION_ID, CodeServer
from tests.e2e_vscode.tools import ARTIFACTS, REQUIRED, Tools, find_tools
from tests.gitrepo import commit_files, create_branch, init_repo

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
#: Branch the window starts on, and the one the branch tests switch to from outside.
MAIN, FEATURE = "main", "feature"
#: Chromium flags: no sandbox (root in a container), no GPU, nothing that phones home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Files of the workspace repository (committed on main, so a checkout from outside is clean).
WORKSPACE_FILES = {
    "notes.txt": "Run the end-to-end tests with pytest -m e2e_vscode\n",
    "branch-note.txt": "On this branch the OTTER flag is on\n",
    "docs/ADR-7.md": "# ADR-7: Search with SQLite FTS5\n\nThe side index of Documents lives in SQLite FTS5.\n",
    "src/app.py": "print('hello')\n",
    "view-note.txt": "The view shows this entry\n",
    "scoped-note.txt": "Only on main: the PELICAN migration is half done\n",
    "decision.txt": "We chose the HERON queue for background jobs\n",
    # Comments: Remember Selection keeps their words, not their markers (test_view_usability.py).
    "deploy-note.py": "# Deploy with: make release\n# (it needs the VPN)\nrelease()\n",
    "schema-note.sql": "-- orders are never deleted, only closed\nSELECT 1;\n",
    "team-note.txt": "The team reviews every migration on Tuesdays\n",
    # Three entries of 4,850 bytes: two fill MEMORY.md (10,240 bytes by default) past 90%, the third overflows it.
    **{f"filler-{n}.txt": f"Filler {n}: " + " ".join([f"capacity-{n}"] * 440) + "\n" for n in "abc"},
}


def _npm_lock() -> FileLock:
    """The lock tests/editors/test_vscode.py holds around npm ci / tsc in editors/vscode (same path)."""
    digest = hashlib.sha256(str(EXTENSION).encode()).hexdigest()[:16]
    return FileLock(Path(tempfile.gettempdir()) / f"mnemon-vscode-{digest}.lock", timeout=900)


def _run(step: str, args: list[str], cwd: Path, timeout: float) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "CI": "1", "NO_COLOR": "1"})
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"{step} exited with {proc.returncode}:\n{output[-4000:]}")
    return output


@pytest.fixture(scope="session")
def e2e_tools() -> Tools:
    """code-server, Chromium and Playwright; skips (fails under .ci/run) when one is missing."""
    tools, reason = find_tools()
    if tools is None:
        if REQUIRED:
            pytest.fail(f"{reason} (MNEMON_CODE_SERVER is set, so they must run)")
        pytest.skip(reason)
    return tools


@pytest.fixture(scope="session")
def e2e_artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots and logs go: ``$MNEMON_E2E_ARTIFACTS``, else a new directory under
    ``<temp>/mnemon-e2e-vscode-artifacts/`` (not under pytest's base temp, which later runs prune)."""
    if ARTIFACTS:
        path = Path(ARTIFACTS)
    else:
        parent = Path(tempfile.gettempdir()) / "mnemon-e2e-vscode-artifacts"
        parent.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-"), dir=parent))
    path.mkdir(parents=True, exist_ok=True)
    print(f"\nVS Code end-to-end artifacts (screenshots, logs): {path}", file=sys.stderr)
    return path


@pytest.fixture(scope="session")
def vsix(e2e_tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``npx vsce package`` in editors/vscode, as docs/editors.md says (``vscode:prepublish`` compiles first)."""
    npm, npx = shutil.which("npm"), shutil.which("npx")
    if not npm or not npx:
        pytest.fail("npm/npx are not on PATH (the extension is packaged with npx vsce package)")
    out = tmp_path_factory.mktemp("vsix") / "mnemon-ls.vsix"
    with _npm_lock():
        marker, lock = EXTENSION / "node_modules" / ".package-lock.json", EXTENSION / "package-lock.json"
        if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
            _run("npm ci", [npm, "ci", "--no-audit", "--no-fund"], EXTENSION, timeout=600)
        _run("npx vsce package", [npx, "vsce", "package", "--allow-missing-repository", "-o", str(out)], EXTENSION,
             timeout=300)
    assert out.is_file(), f"vsce package wrote no {out}"
    return out


@pytest.fixture(scope="session")
def e2e_repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    """The workspace: a git repository on ``main`` with :data:`WORKSPACE_FILES` committed and a ``feature``
    branch at the same commit."""
    repo = init_repo(tmp_path_factory.mktemp("workspace") / "project", MAIN)
    commit_files(repo, WORKSPACE_FILES, "initial")
    create_branch(repo, FEATURE)
    return repo


@pytest.fixture(scope="session")
def code_server(e2e_tools: Tools, vsix: Path, e2e_repo: pygit2.Repository, e2e_artifacts: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    """A private code-server with the ``.vsix`` installed (``install_output`` keeps what the install printed),
    serving the workspace repository."""
    server = CodeServer(e2e_tools.code_server, tmp_path_factory.mktemp("code-server"),
                        # The capacity actions are what a refused overflow offers: MEMORY.md refuses
                        # instead of archiving into the local archive (issue 9's default).
                        settings={"mnemon.interpreter": [sys.executable],
                                  "mnemon.runtimeMemory.maintenance": "reject"})
    installed = server.cli("--install-extension", str(vsix))
    if installed.returncode != 0:
        pytest.fail(f"code-server --install-extension exited with {installed.returncode}:\n"
                    f"{installed.stdout}\n{installed.stderr}")
    server.install_output = installed.stdout + installed.stderr  # type: ignore[attr-defined]
    server.start(Path(e2e_repo.workdir))
    yield server
    server.stop()
    shutil.copy(server.log_path, e2e_artifacts / "code-server.log")


@pytest.fixture(scope="session")
def browser_page(e2e_tools: Tools, code_server: CodeServer, e2e_repo: pygit2.Repository,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A Chromium page (fresh --user-data-dir) on the code-server window of the workspace, once the
    workbench is up and the Mnemon status bar item shows the branch (the server answered)."""
    from playwright.sync_api import expect, sync_playwright

    from tests.e2e_vscode.workbench import STATUS_ITEM_ID

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(e2e_tools.chromium), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 900}, env=code_server.env)
        context.set_default_timeout(30_000)
        foreign: list[str] = []
        context.on("request", lambda request: None if request.url.startswith((code_server.url or "", "data:", "blob:"))
                   else foreign.append(request.url))
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(f"{code_server.url}/?folder={e2e_repo.workdir.rstrip('/')}")
        expect(page.locator(".monaco-workbench")).to_be_visible(timeout=90_000)
        expect(page.locator(f'[id="{STATUS_ITEM_ID}"]')).to_contain_text(MAIN, timeout=90_000)
        page.foreign_requests = foreign  # type: ignore[attr-defined]
        yield page
        context.close()


@pytest.fixture
def vscode(browser_page: object, e2e_repo: pygit2.Repository) -> Iterator[object]:
    """The shared window as a :class:`~tests.e2e_vscode.workbench.Workbench`, with no toast and no quick
    input left over from the previous test; the panes a test collapsed to see one view whole
    (:meth:`~tests.e2e_vscode.workbench.Workbench.only`) are expanded again after it."""
    from tests.e2e_vscode.workbench import Workbench

    bench = Workbench(browser_page, Path(e2e_repo.workdir))  # type: ignore[arg-type]
    browser_page.keyboard.press("Escape")  # type: ignore[attr-defined]
    bench.clear_notifications()
    yield bench
    bench.restore_panes()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On a failed setup or call: a screenshot of the window into the artifacts directory, named in the report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed or report.when not in ("setup", "call"):
        return
    funcargs = getattr(item, "funcargs", {})
    page, artifacts = funcargs.get("browser_page"), funcargs.get("e2e_artifacts")
    if page is None or artifacts is None:
        return
    shot = Path(artifacts) / f"{item.name}-{report.when}.png"
    try:
        page.screenshot(path=str(shot))  # type: ignore[attr-defined]
        report.sections.append(("VS Code end-to-end", f"screenshot: {shot}\nartifacts: {artifacts}"))
    except Exception as exc:  # the browser may be what failed
        report.sections.append(("VS Code end-to-end", f"no screenshot ({exc}); artifacts: {artifacts}"))

