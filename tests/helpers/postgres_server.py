"""PostgreSQL 16 with the pgvector extension for the provider packages' tests (``providers/mem0``,
``providers/postgres``), started and stopped by the tests themselves from the binaries the ``pgserver``
wheel ships (``pgserver/pginstall/bin``: ``initdb``, ``pg_ctl``, ``postgres`` and ``vector.so``; only the
binaries are used, not pgserver's own launcher). A fresh cluster in a temporary directory, password
(SCRAM) authentication over TCP on 127.0.0.1 at a free port; as root it runs as ``nobody`` (PostgreSQL
refuses to run as root). Loaded by path (this folder is put on ``sys.path`` by the packages' conftest)."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any, Iterator

PG_USER = "mnemon_admin"
PG_PASSWORD = "pw with spaces, @ / : and 'quotes'"


def pgserver_bin() -> Path | None:
    """The ``bin`` directory of the pgserver wheel's PostgreSQL (with pgvector), or None when not installed."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    return path if (path / "postgres").exists() and (path / "initdb").exists() else None


def _reachable_by_others(path: Path) -> bool:
    """Whether a user who is neither the owner nor in the group can execute ``path`` (every directory above it
    searchable by others, the file executable by others)."""
    path = path.resolve()
    if not os.stat(path).st_mode & 0o001:
        return False
    return all(os.stat(parent).st_mode & 0o001 for parent in path.parents)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One PostgreSQL cluster (module doc). ``start()`` returns when it accepts connections; ``stop()``
    shuts it down (fast mode) and removes its directory."""

    def __init__(self, bin_dir: Path, settings: str = "-c fsync=off") -> None:
        self.bin_dir = bin_dir
        self.settings = settings  # server options (tests: no fsync; bench/postgres_scale.py: durable)
        self.port = free_port()
        self.host = "127.0.0.1"
        self.user = PG_USER
        self.password = PG_PASSWORD
        self.dir = Path(tempfile.mkdtemp(prefix="mnemon-pg-"))
        self.data = self.dir / "data"
        self.runas: dict[str, Any] = {}
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
            self.runas = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
            if not _reachable_by_others(bin_dir / "initdb"):
                # ``nobody`` cannot reach the wheel (a Python under /root, mode 0700): run a copy of it from our
                # directory, keeping its layout (initdb finds share/ and lib/ relative to itself, and its RPATH
                # is $ORIGIN/../../../pgserver.libs)
                package = bin_dir.parent.parent
                site = self.dir / "site"
                shutil.copytree(bin_dir.parent, site / package.name / "pginstall", symlinks=True)
                libs = package.parent / f"{package.name}.libs"
                if libs.is_dir():
                    shutil.copytree(libs, site / libs.name, symlinks=True)
                for folder in (site, *(p for p in site.rglob("*") if p.is_dir())):
                    folder.chmod(folder.stat().st_mode | 0o005)
                self.bin_dir = site / package.name / "pginstall" / "bin"

    def _run(self, *args: str) -> None:
        done = subprocess.run([str(self.bin_dir / args[0]), *args[1:]], capture_output=True, text=True, timeout=120,
                              cwd=self.dir, **self.runas)
        if done.returncode != 0:
            log = (self.dir / "log").read_text(errors="replace") if (self.dir / "log").exists() else ""
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr}{done.stdout}\n{log}")

    def start(self) -> "PostgresServer":
        """initdb (SCRAM passwords, UTF-8, no sync) and pg_ctl start on 127.0.0.1:port with :attr:`settings`."""
        pwfile = self.dir / "pwfile"
        pwfile.write_text(self.password + "\n")
        if self.runas:
            os.chown(pwfile, self.runas["user"], self.runas["group"])
        self._run("initdb", "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}", "--auth=scram-sha-256",
                  "-E", "UTF8", "--no-locale", "--no-sync")
        pwfile.unlink()
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.dir / "log"), "-o",
                  f"-h 127.0.0.1 -p {self.port} -k {self.dir} {self.settings} -c max_connections=60", "start")
        return self

    def halt(self) -> None:
        """Stop the server (fast mode: open sessions are cut, transactions in flight are rolled back) and keep
        its cluster, for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-m", "fast", "stop")

    def resume(self) -> None:
        """Start the halted cluster again on the same port."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.dir / "log"), "-o",
                  f"-h 127.0.0.1 -p {self.port} -k {self.dir} {self.settings} -c max_connections=60", "start")

    def stop(self) -> None:
        """Stop the server and delete the cluster."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def sql(self, statement: str, dbname: str = "postgres") -> list[tuple]:
        """Run one statement as the admin user (autocommit) and return its rows (empty for no result)."""
        import psycopg

        with psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                             dbname=dbname, autocommit=True) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def service(self, dbname: str, **extra: Any) -> dict[str, Any]:
        """The provider's service fields for database ``dbname`` of this server."""
        return {"vectorStore": "pgvector", "pgHost": self.host, "pgPort": self.port, "pgDatabase": dbname,
                "pgUser": self.user, "pgPassword": self.password, **extra}


def session_server(what: str, install: str) -> Iterator[PostgresServer]:
    """The body of a provider test session's ``pg_server`` fixture: a :class:`PostgresServer` started from the
    pgserver wheel and stopped afterwards. Without the wheel the test is skipped naming ``what`` is missing and
    the ``install`` line that brings it, or failed when ``MNEMON_REQUIRE_PGVECTOR=1`` (``.ci/run`` installs it: a
    skip there would hide that)."""
    import pytest

    bin_dir = pgserver_bin()
    if bin_dir is None:
        if os.environ.get("MNEMON_REQUIRE_PGVECTOR") == "1":
            pytest.fail(f"MNEMON_REQUIRE_PGVECTOR=1 but the pgserver wheel ({what}) is not installed")
        pytest.skip(f"{what} is not installed: {install}")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()


def fresh_database(server: PostgresServer) -> Iterator[str]:
    """The body of a ``pg_database`` fixture: the name of a new, empty database of ``server``, dropped
    afterwards."""
    name = "mnemon_" + uuid.uuid4().hex[:12]
    server.sql(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        server.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
