"""``mnemon-ls-postgres try``: a throwaway local PostgreSQL 16 with pgvector, to try team memory on one machine.

It runs the PostgreSQL binaries of the ``pgserver`` wheel (``pip install 'mnemon-ls-provider-postgres[try]'``;
only the binaries, not pgserver's own launcher) on a new cluster in a temporary directory (or ``--dir DIR``,
kept and reused), prints the connection string to give mnemon-ls, and stays up until Ctrl-C (SIGINT) or
SIGTERM; then it stops the server and deletes the temporary directory.

No password exists: the server listens on no TCP port, only on a Unix socket inside that directory (mode
0700, so only this user -- and root -- can reach it), with ``trust`` authentication; the connection string
(``postgresql://mnemon@/mnemon?host=DIR&port=PORT``) holds nothing secret and is safe to print or log. As
root PostgreSQL runs as ``nobody`` (it refuses to run as root), from a copy of the binaries when ``nobody``
cannot reach the wheel.

Exit codes: 0 stopped cleanly; 1 the server failed to start or stopped by itself; 2 bad arguments (a
directory holding something else, a socket path too long); 3 pgserver is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

USER = "mnemon"
DATABASE = "mnemon"
INSTALL = ("pip install 'mnemon-ls-provider-postgres[try]' (from a checkout of mnemon-ls: pip install . "
           "'./providers/postgres[try]')")
#: Unix socket paths are at most 107 bytes on Linux (``sun_path``); the server's is ``DIR/.s.PGSQL.PORT``.
MAX_SOCKET_PATH = 107
READY = "database system is ready to accept connections"


class TryError(Exception):
    """A reason the server cannot start, with the exit code (:data:`code`)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def pgserver_bin() -> Path | None:
    """The ``bin`` directory of the pgserver wheel's PostgreSQL, or ``None`` when it is not installed."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    return path if (path / "postgres").exists() and (path / "initdb").exists() else None


def dsn_of(directory: Path, port: int) -> str:
    """``postgresql://mnemon@/mnemon?host=<directory>&port=<port>`` (no password: module doc)."""
    return f"postgresql://{USER}@/{DATABASE}?host={quote(str(directory), safe='/')}&port={port}"


def _reachable_by_others(path: Path) -> bool:
    path = path.resolve()
    return bool(os.stat(path).st_mode & 0o001) and all(os.stat(p).st_mode & 0o001 for p in path.parents)


class TrialServer:
    """One cluster in ``directory`` (created when missing; ``keep``: left there at the end) served on the Unix
    socket ``directory/.s.PGSQL.<port>``. :meth:`start` returns when it accepts connections; :meth:`stop`
    shuts it down (fast: open sessions are cut) and removes the directory unless ``keep``."""

    def __init__(self, bin_dir: Path, directory: Path, port: int, keep: bool) -> None:
        self.bin_dir, self.dir, self.port, self.keep = bin_dir, directory, port, keep
        self.data = directory / "data"
        self.log = directory / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.runas: dict[str, Any] = {}
        self.version = ""
        #: one byte per event, read by the main thread: ``r`` the server is ready, ``e`` it ended, ``s`` a signal
        #: (written by :func:`run_try`'s handler: a pipe, so a signal never waits on a lock)
        self.events_r, self.events_w = os.pipe()
        self.signalled = False

    def next_event(self) -> bytes:
        """The next byte of :attr:`events_r` (blocks until there is one); remembers a signal."""
        event = os.read(self.events_r, 1)
        self.signalled = self.signalled or event == b"s"
        return event

    def _as_nobody(self) -> None:
        """Root: the cluster belongs to ``nobody``, which runs the binaries (a copy when it cannot reach them)."""
        nobody = pwd.getpwnam("nobody")
        self.runas = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
        if not _reachable_by_others(self.bin_dir / "initdb"):
            package = self.bin_dir.parent.parent
            site = self.dir / "site"
            if not (site / package.name / "pginstall" / "bin" / "postgres").exists():
                shutil.copytree(self.bin_dir.parent, site / package.name / "pginstall", symlinks=True)
                libs = package.parent / f"{package.name}.libs"
                if libs.is_dir():
                    shutil.copytree(libs, site / libs.name, symlinks=True)
                for folder in (site, *(p for p in site.rglob("*") if p.is_dir())):
                    folder.chmod(folder.stat().st_mode | 0o005)
            self.bin_dir = site / package.name / "pginstall" / "bin"

    def start(self) -> None:
        """initdb (when the directory holds no cluster yet), start ``postgres`` and wait for its ready line;
        make the database ``mnemon``. Raises :class:`TryError` naming what failed (with the server's log)."""
        socket_path = self.dir / f".s.PGSQL.{self.port}"
        if len(os.fsencode(str(socket_path))) > MAX_SOCKET_PATH:
            raise TryError(f"--dir: the socket path {socket_path} is longer than {MAX_SOCKET_PATH} bytes; choose a "
                           "shorter directory", 2)
        self.dir.chmod(0o700)
        if os.geteuid() == 0:
            self._as_nobody()
        if not (self.data / "PG_VERSION").exists():
            done = subprocess.run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust",
                                   "-E", "UTF8", "--no-locale"], capture_output=True, text=True, cwd=self.dir,
                                  **self.runas)
            if done.returncode != 0:
                raise TryError(f"initdb failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
        self.proc = subprocess.Popen(
            [str(self.bin_dir / "postgres"), "-D", str(self.data), "-k", str(self.dir), "-p", str(self.port),
             "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.dir, **self.runas)
        threading.Thread(target=self._read_log, daemon=True).start()
        event = self.next_event()
        while event == b"s":  # Ctrl-C while it starts: stop it once it is up (or down)
            event = self.next_event()
        if event == b"e":
            code = self.proc.wait()
            raise TryError(f"postgres stopped while starting ({code}): {self._log_tail()}")
        import psycopg

        with psycopg.connect(host=str(self.dir), port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
            self.version = conn.execute("SHOW server_version").fetchone()[0]

    def _read_log(self) -> None:
        """Copy the server's standard error into :attr:`log`; write ``r`` to the events at its ready line and
        ``e`` when it closes (the server ended)."""
        assert self.proc is not None and self.proc.stderr is not None
        ready = False
        with open(self.log, "ab") as out:
            for line in self.proc.stderr:
                out.write(line)
                out.flush()
                if not ready and READY.encode() in line:
                    ready = True
                    os.write(self.events_w, b"r")
        os.write(self.events_w, b"e")

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace").strip()[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> int | None:
        """Stop the server (SIGINT: PostgreSQL's fast shutdown) and wait for it; remove the directory unless
        :attr:`keep`. Returns the server's exit code (``None`` when it never started)."""
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.send_signal(signal.SIGINT)
                except ProcessLookupError:  # it ended meanwhile
                    pass
            code = self.proc.wait()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        return code


def _say(text: str) -> None:
    print(text, flush=True)


def run_try(args: argparse.Namespace) -> int:
    """The ``try`` command (module doc); returns the exit code."""
    bin_dir = pgserver_bin()
    if bin_dir is None:
        _say(f"mnemon-ls-postgres try: pgserver (PostgreSQL with pgvector) is not installed: {INSTALL}")
        return 3
    keep = args.dir is not None
    if keep:
        directory = Path(args.dir).expanduser().absolute()
        if directory.exists() and any(directory.iterdir()) and not (directory / "data" / "PG_VERSION").exists():
            _say(f"mnemon-ls-postgres try: --dir {directory} holds other files; give an empty or new directory "
                 "(or one an earlier try made)")
            return 2
        directory.mkdir(parents=True, exist_ok=True)
    else:
        directory = Path(tempfile.mkdtemp(prefix="mnemon-pg-try-"))
    server = TrialServer(bin_dir, directory, args.port, keep)
    previous = {sig: signal.signal(sig, lambda *_: os.write(server.events_w, b"s"))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            server.start()
        except TryError as exc:
            _say(f"mnemon-ls-postgres try: {exc}")
            return exc.code
        dsn = dsn_of(directory, args.port)
        where = f"in {directory} (kept)" if keep else f"in {directory} (deleted when it stops)"
        _say(f"PostgreSQL {server.version} with pgvector is running {where}: no TCP port, only the Unix socket "
             "there, no password.")
        _say(f"DSN: {dsn}")
        _say("In another terminal, in your repository:")
        _say(f"  echo '{dsn}' | mnemon-ls provider configure postgres --secret dsn")
        _say("  mnemon-ls provider enable postgres && mnemon-ls provider test postgres")
        _say('  mnemon-ls space create --provider postgres --name Team --description "team decisions" --active')
        _say("Press Ctrl-C to stop it.")
        died = not server.signalled and server.next_event() == b"e"  # a signal, or the server's end
        code = server.stop()
        if died:
            _say(f"mnemon-ls-postgres try: the server stopped by itself ({code}): see {server.log}"
                 if keep else f"mnemon-ls-postgres try: the server stopped by itself ({code})")
            return 1
        _say("stopped" + ("" if keep else f"; {directory} deleted"))
        return 0
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()
        elif not keep:
            shutil.rmtree(directory, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """``mnemon-ls-postgres try [--dir DIR] [--port N]`` (module doc)."""
    parser = argparse.ArgumentParser(prog="mnemon-ls-postgres",
                                     description="tools of the mnemon-ls PostgreSQL provider")
    commands = parser.add_subparsers(dest="command", required=True)
    trial = commands.add_parser("try", help="run a throwaway local PostgreSQL with pgvector until Ctrl-C",
                                description=__doc__.split("\n\n")[1] if __doc__ else None)
    trial.add_argument("--dir", help="keep the cluster in DIR (made when missing, reused when an earlier try made "
                                     "it); default: a temporary directory, deleted at the end")
    trial.add_argument("--port", type=int, default=5432,
                       help="the number in the socket's name (.s.PGSQL.PORT; no TCP port is opened); default 5432")
    args = parser.parse_args(argv)
    if not 1 <= args.port <= 65535:
        parser.error("--port must be between 1 and 65535")
    return run_try(args)


if __name__ == "__main__":
    sys.exit(main())
