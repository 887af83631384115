"""A watch that failed and came back announces what changed while it was down (mnemon_ls.lsp.watch.Watcher).

The failure is the real one seen on a loaded machine: the user's inotify instances run out
(``fs.inotify.max_user_instances``, 128 here), so watchfiles cannot arm a watch ("Too many open files"). It is
made in a process of its own running as the unprivileged user ``nobody``, whose instances are counted apart
from this user's, so no other test's watches are touched: the process uses up its user's instances, a Watcher
fails to arm, a file is written in the watched folder, the instances are released, and the Watcher, armed
again, must call back (without its catch-up after a failure, the change made while it was down is never
announced: seen as a view that missed ``mnemon/memoryChanged``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SCRIPT = r'''
import asyncio, ctypes, logging, sys
from pathlib import Path
from mnemon_ls.lsp.watch import Watcher

logging.disable(logging.CRITICAL)
folder = Path(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)


async def main() -> None:
    taken = []
    while True:  # every inotify instance this user may have
        fd = libc.inotify_init1(0)
        if fd < 0:
            break
        taken.append(fd)
    print("taken", len(taken), flush=True)
    called = asyncio.Event()

    async def callback(paths):
        called.set()

    watcher = Watcher("recovery", [folder], lambda path: True, callback, recursive=False)
    watcher.start()
    await asyncio.sleep(0.3)  # the watcher's first attempt runs (and fails: no instance left)
    (folder / "changed.txt").write_text("while the watch was down")
    for fd in taken:
        libc.close(fd)
    try:
        await asyncio.wait_for(called.wait(), timeout=30)
        print("announced", flush=True)
    except asyncio.TimeoutError:
        print("missed", flush=True)
    await watcher.stop()


asyncio.run(main())
'''


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run the watcher as the user nobody (whose inotify instances "
                           "are its own)")
def test_a_watch_that_failed_announces_what_changed_while_it_was_down() -> None:
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    folder = Path(tempfile.mkdtemp(prefix="mnemon-watch-"))  # under /tmp, which nobody may enter (pytest's may not)
    try:
        folder.chmod(0o777)
        # this Python run by another user may not read its own site-packages (a prefix under a private home, as
        # CI's is, and its checkout may be too): the watcher and its libraries are copied where that user can read
        # them
        import importlib

        packages = folder / "site"
        for name in ("mnemon_ls", "watchfiles", "anyio", "idna", "typing_extensions"):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            source = Path(module.__file__).resolve()
            if source.name == "__init__.py":
                shutil.copytree(source.parent, packages / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                packages.mkdir(exist_ok=True)
                shutil.copy2(source, packages / source.name)
        for path in [packages, *packages.rglob("*")]:
            path.chmod(0o755)
        env = {**os.environ, "PYTHONPATH": str(packages), "HOME": str(folder)}
        probe = subprocess.run([*as_nobody, "-c", "import mnemon_ls.lsp.watch, watchfiles"], capture_output=True,
                               text=True, timeout=60, cwd=folder, env=env)
        if probe.returncode != 0:
            pytest.skip(f"the user nobody cannot run this Python with mnemon_ls: {probe.stderr.strip()[-200:]}")
        done = subprocess.run([*as_nobody, "-c", SCRIPT, str(folder)], capture_output=True, text=True, timeout=120,
                              cwd=folder, env=env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[:1] == ["taken"] and int(lines[1]) > 0, done.stdout  # the user's instances were used up
    assert lines[-1] == "announced", done.stdout + done.stderr
