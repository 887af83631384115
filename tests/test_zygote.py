"""The suite's fork server (tests/helpers/zygote.py) runs the real ``python -m mnemon_ls``: same answers, same
exit codes, the launcher's directory, environment, umask and limits, and the server dies with the process a
test started. Every check compares against the plain command run the same way."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.procs import child_env
from tests.helpers.zygote import SAME_AT_STARTUP
from tests.helpers.zygote import mnemon_command

PLAIN = [sys.executable, "-m", "mnemon_ls"]


def both(argv: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, ...]:
    """The same command, forked and plain, each in its own fresh data directory."""
    done = []
    for name, command in (("forked", mnemon_command(*argv)), ("plain", [*PLAIN, *argv])):
        data = tmp_path / name
        done.append(subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120,
                                   env=child_env(MNEMON_DATA_DIR=str(data), HOME=str(tmp_path), **env)))
    return tuple(done)


@pytest.mark.parametrize("argv", [
    ["runtime", "add", "--content", "the build uses make", "--scope", "global"],
    ["runtime", "list", "--scope", "global", "--json"],
    ["runtime", "frobnicate"],
    ["--version"],
    ["recall", "--limit", "99", "x", "--scope", "global"],
])
def test_a_forked_command_answers_exactly_like_the_plain_one(argv, tmp_path):
    forked, plain = both(argv, tmp_path)
    assert [(p.returncode, mask(p.stdout), p.stderr) for p in (forked, plain)] == [
        (plain.returncode, mask(plain.stdout), plain.stderr)] * 2
    assert plain.returncode in (0, 2) and (plain.stdout or plain.stderr)


def mask(text: str) -> str:
    """A revision is a hash over content and times: the two runs' differ."""
    return re.sub(r"revision [0-9a-f]{12}", "revision <hash>", text)


def test_the_launchers_umask_reaches_the_server(tmp_path):
    old = os.umask(0o077)
    try:
        forked, plain = both(["runtime", "add", "--content", "x", "--scope", "global"], tmp_path)
    finally:
        os.umask(old)
    assert forked.returncode == plain.returncode == 0
    modes = {name: (tmp_path / name / "runtime").stat().st_mode & 0o777 for name in ("forked", "plain")}
    assert modes["forked"] == modes["plain"]


def test_a_pythonpath_makes_the_launch_a_plain_interpreter(tmp_path):
    """A fork cannot honour start-up variables: the launcher runs python itself, so PYTHONPATH is on sys.path."""
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "sitecustomize.py").write_text("import sys\nsys.stderr.write('site hook ran\\n')\n")
    forked, plain = both(["--version"], tmp_path, PYTHONPATH=str(tmp_path / "extra"))
    assert forked.stderr == plain.stderr == "site hook ran\n"
    assert forked.stdout == plain.stdout


#: A ``PYTHON*`` start-up variable of the suite's own environment (``PYTHONPATH`` of a second checkout) that every
#: child inherits: then every launch is a plain interpreter (tests/helpers/zygote.py), no fork reports its pid.
_PLAIN_LAUNCHES = sorted(k for k in os.environ if k.startswith("PYTHON") and k not in SAME_AT_STARTUP)


@pytest.mark.skipif(os.environ.get("MNEMON_TEST_NO_ZYGOTE") == "1", reason="MNEMON_TEST_NO_ZYGOTE=1: no launcher")
@pytest.mark.skipif(bool(_PLAIN_LAUNCHES), reason=f"{_PLAIN_LAUNCHES} set: every launch is a plain interpreter")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_the_server_dies_with_the_process_the_test_started(how, tmp_path):
    pidfile = tmp_path / "server.pid"
    launcher = subprocess.Popen(mnemon_command("serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=tmp_path,
                                env=child_env(MNEMON_DATA_DIR=str(tmp_path / "d"), HOME=str(tmp_path),
                                              MNEMON_TEST_ZYGOTE_PIDFILE=str(pidfile)))
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() or not pidfile.read_text().endswith("\n"):  # written once the fork is made
            assert launcher.poll() is None, f"the launcher exited first: {launcher.returncode}"
            assert time.monotonic() < deadline, "the launcher never reported its server"
            os.sched_yield()
        server = int(pidfile.read_text())
        assert _state(server) not in ("gone", "Z"), "the server is not running"
        launcher.send_signal(how)
        assert launcher.wait(timeout=60) == -how  # SIGTERM is forwarded: the launcher dies of the server's signal
        while _state(server) not in ("gone", "Z"):  # SIGKILL: the fork server kills the server
            assert time.monotonic() < deadline + 60, f"the server outlived the launcher ({_state(server)})"
            os.sched_yield()
    finally:
        launcher.kill()
        launcher.communicate()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_server_killed_by_a_signal_makes_its_launcher_die_of_it(how, tmp_path):
    """The other way round: a test that kills the forked process itself (a writer stopped at a breakpoint, by the
    pid it printed) sees the process it started die of that signal, SIGKILL included (which has no handler to
    reset: the launcher once died of the attempt with exit code 1), and only after the server is gone."""
    from tests.helpers import procs

    writer = procs.spawn_writer("hold", str(tmp_path / "root"))
    reader = procs.LineReader(writer)
    try:
        pid = procs.ready_pid(reader.readline(), writer, "HELD")
        os.kill(pid, how)
        assert writer.wait(timeout=60) == -how
        assert _state(pid) == "gone"  # reaped by the fork server before the launcher was told
        assert writer.stderr.read() == b""
    finally:
        procs.kill_hard(writer)
        procs.finish(writer)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_the_preload_imports_every_module_and_no_engine(tmp_path):
    """In a fresh interpreter, :func:`preload` imports every ``mnemon_ls`` module but ``__main__``, brings in
    none of the packages a fork must not inherit, and reports what the imports added to the environment: only
    ``OPENBLAS_NUM_THREADS=1`` (``mnemon_ls.semantic``), which a child is given again."""
    script = (
        "import json, os, pkgutil, sys\n"
        "os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
        "from tests.helpers import zygote\n"
        "added = zygote.preload()\n"
        "import mnemon_ls\n"
        "names = [m.name for m in pkgutil.walk_packages(mnemon_ls.__path__, 'mnemon_ls.')]\n"
        "print(json.dumps({'added': added, 'missing': [n for n in names if n not in sys.modules],\n"
        "                  'engines': sorted({n.split('.')[0] for n in sys.modules} & set(zygote.NEVER_PRELOADED))}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1], env=child_env())
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout) == {"added": {"OPENBLAS_NUM_THREADS": "1"}, "missing": ["mnemon_ls.__main__"],
                                       "engines": []}


#: What a module may not read while it is imported, if the fork server is to import it once for every test:
#: ``os.environ``/``os.getenv``, the working directory, the home directory, argv, the standard streams, the clock.
_IMPORT_TIME_READS = {("os", "environ"), ("os", "getenv"), ("os", "getcwd"), ("Path", "cwd"), ("Path", "home"),
                      ("sys", "argv"), ("sys", "stdin"), ("sys", "stdout"), ("sys", "stderr"), ("time", "time"),
                      ("datetime", "now"), ("os", "getpid"), ("os", "path.expanduser")}
#: The one import-time read there is, replayed in each child by the fork server (see tests/helpers/zygote.py).
_ALLOWED = {("mnemon_ls/semantic/__init__.py", ("os", "environ"))}


def _import_time_reads(path: Path) -> set[tuple[str, str]]:
    """``(name, attribute)`` pairs of :data:`_IMPORT_TIME_READS` that run when ``path`` is imported: module and
    class bodies, decorators and default values (function bodies and lambdas run later)."""
    import ast

    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for part in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
                if part is not None:
                    visit(part)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in _IMPORT_TIME_READS:
                found.add((node.value.id, node.attr))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_mnemon_ls_module_reads_the_environment_when_imported():
    """The premise of preloading ``mnemon_ls`` in the fork server: importing a module reads nothing that differs
    between two servers (a module that did would keep the fork server's value in every child)."""
    package = Path(__file__).resolve().parents[1] / "mnemon_ls"
    reads = {(str(path.relative_to(package.parent)), read) for path in sorted(package.rglob("*.py"))
             for read in _import_time_reads(path)}
    assert reads == _ALLOWED
