"""``mnemon-ls-postgres try`` as a real subprocess (a throwaway PostgreSQL with pgvector: it prints its DSN, serves
until SIGINT, then stops and cleans up), the set-up docs/providers.md gives run line by line against it, and the
connection state ``provider list`` and ``doctor`` show for a configured provider: connected, then unreachable
with the reason once the server stops -- never the password."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from mnemon_ls_provider_postgres.trial import pgserver_bin
from postgres_server import PostgresServer
from procs import WAIT_SECONDS, LineReader
from test_postgres_shared import enable_args, user_cli

pytestmark = pytest.mark.skipif(pgserver_bin() is None and os.environ.get("MNEMON_REQUIRE_PGVECTOR") != "1",
                                reason="pgserver is not installed: pip install 'mnemon-ls-provider-postgres[try]'")


class Trial:
    """One ``python -m mnemon_ls_provider_postgres try`` process, read up to its DSN line."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "PG"))}
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemon_ls_provider_postgres", "try", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.reader = LineReader(self.proc)
        self.lines: list[str] = []
        while True:
            line = self.reader.readline()
            self.lines.append(line)
            if line.startswith("DSN: "):
                self.dsn = line[len("DSN: "):]
                break
        self.lines.append(self.reader.readline())  # "In another terminal ..."
        while not self.lines[-1].startswith("Press Ctrl-C"):
            self.lines.append(self.reader.readline())
        self.dir = Path(conninfo_to_dict(self.dsn)["host"])

    def interrupt(self) -> tuple[int, list[str], str]:
        """SIGINT to the try process only (not its group: it must stop the server itself); its exit code, the
        rest of its output and its standard error."""
        self.proc.send_signal(signal.SIGINT)
        rest = self.reader.rest()
        code = self.proc.wait(timeout=WAIT_SECONDS)
        assert self.proc.stderr is not None
        return code, rest, self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.interrupt()


def _postmaster_pid(directory: Path) -> int:
    return int((directory / "data" / "postmaster.pid").read_text().split("\n", 1)[0])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_try_prints_a_dsn_serves_until_sigint_and_removes_everything() -> None:
    trial = Trial()
    try:
        assert trial.dir.name.startswith("mnemon-pg-try-") and trial.dsn == (
            f"postgresql://mnemon@/mnemon?host={trial.dir}&port=5432")
        text = "\n".join(trial.lines)
        assert "password" not in text.replace("no password", "")  # none exists: trust on a 0700 socket directory
        assert f"  echo '{trial.dsn}' | mnemon-ls provider configure postgres --secret dsn" in trial.lines
        with psycopg.connect(trial.dsn, autocommit=True) as conn:
            assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""  # no TCP port
            conn.execute("CREATE EXTENSION vector")
            assert conn.execute("SELECT '[1,2]'::vector <-> '[1,3]'::vector").fetchone()[0] == 1.0
            assert conn.execute("SELECT current_user, current_database()").fetchone() == ("mnemon", "mnemon")
        assert (trial.dir.stat().st_mode & 0o777) == 0o700
        pid = _postmaster_pid(trial.dir)
    except BaseException:
        trial.kill()
        raise
    code, rest, err = trial.interrupt()
    assert (code, rest, err) == (0, [f"stopped; {trial.dir} deleted"], "")
    assert not trial.dir.exists() and _gone(pid)


def test_try_with_dir_keeps_the_cluster_for_the_next_try(tmp_path: Path) -> None:
    # as root the server runs as nobody, who must reach the directory: a new one in /tmp, not under tmp_path
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="mnemon-try-test-"))
    base.chmod(0o755)
    kept = base / "pg"
    try:
        first = Trial("--dir", str(kept), "--port", "5544")
        try:
            assert first.dsn == f"postgresql://mnemon@/mnemon?host={kept}&port=5544"
            with psycopg.connect(first.dsn, autocommit=True) as conn:
                conn.execute("CREATE TABLE notes (body text)")
                conn.execute("INSERT INTO notes VALUES ('kept across tries')")
        except BaseException:
            first.kill()
            raise
        assert first.interrupt()[:2] == (0, ["stopped"])
        assert (kept / "data" / "PG_VERSION").exists()
        again = Trial("--dir", str(kept), "--port", "5544")
        try:
            with psycopg.connect(again.dsn, autocommit=True) as conn:
                assert conn.execute("SELECT body FROM notes").fetchall() == [("kept across tries",)]
        finally:
            assert again.interrupt()[0] == 0
        # a directory holding something else is refused, and left as it was
        other = base / "other"
        other.mkdir()
        (other / "mine.txt").write_text("x")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "PG"))}
        refused = subprocess.run([sys.executable, "-m", "mnemon_ls_provider_postgres", "try", "--dir", str(other)],
                                 capture_output=True, text=True, env=env, timeout=WAIT_SECONDS)
        assert refused.returncode == 2 and "holds other files" in refused.stdout
        assert sorted(p.name for p in other.iterdir()) == ["mine.txt"]
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def _in_repo(tmp_path: Path, user: str) -> Path:
    home = tmp_path / user
    home.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(home)], check=True, capture_output=True)
    return home


def test_the_documented_set_up_on_the_try_server_then_doctor_says_unreachable(tmp_path: Path) -> None:
    """docs/providers.md's "Team memory on PostgreSQL", line by line (the storage root is the repository's,
    the default scope), then ``doctor`` and ``provider list`` once the server stopped."""
    _in_repo(tmp_path, "ana")
    trial = Trial()

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return user_cli(tmp_path, "ana", *args, stdin=stdin, env={"MNEMON_STORAGE_SCOPE": "workspaces"})

    try:
        steps = [cli("provider", "configure", "postgres", "--secret", "dsn", stdin=trial.dsn + "\n"),
                 cli("provider", "enable", "postgres"),
                 cli("provider", "test", "postgres"),
                 cli("space", "create", "--provider", "postgres", "--name", "Team", "--description", "team decisions",
                     "--active"),
                 cli("remember", "--space", "Team", "Deploys go out on Tuesdays"),
                 cli("recall", "deploys")]
        for step in steps:
            assert (step.returncode, step.stderr) == (0, ""), step.args
        assert "schema migrated from version 0 to 4" in steps[1].stdout
        assert steps[2].stdout.startswith("ok: PostgreSQL 16") and f"postgresql {trial.dir}:5432/mnemon as mnemon" \
            in steps[2].stdout
        assert "Team: Deploys go out on Tuesdays" in steps[5].stdout
        up = cli("doctor")
        assert up.returncode == 0, up.stdout + up.stderr
        line = next(x for x in up.stdout.splitlines() if "provider postgres" in x)
        assert line.startswith("[ok     ] provider postgres: enabled; 1 space (1 active); fields: dsn (secret); "
                               "mnemon-ls-provider-postgres 0.1.0; connected to postgresql ")
        assert "PostgreSQL 16" in line and "as role mnemon; schema mnemon at version 4; engine not opened" in line
        listed = _after_postgres(cli("provider", "list").stdout)
        assert listed[1].startswith(f"    connected to postgresql {trial.dir}:5432/mnemon as mnemon: PostgreSQL 16")
    finally:
        code = trial.interrupt()[0]
    assert code == 0
    down = cli("doctor", "--json")
    assert down.returncode == 0  # a warning, not a problem: everything else still works
    finding = next(f for f in json.loads(down.stdout)["findings"] if f["subject"] == "provider postgres")
    assert finding["level"] == "warning"
    assert f'unreachable (postgresql {trial.dir}:5432/mnemon as mnemon): ' in finding["message"]
    assert f'connection to server on socket "{trial.dir}/.s.PGSQL.5432" failed: No such file or directory' \
        in finding["message"]
    assert "start the server or correct the fields" in finding["advice"]
    view = next(p for p in json.loads(cli("provider", "list", "--json").stdout)["providers"]
                if p["providerId"] == "postgres")
    assert view["connection"]["state"] == "unreachable" and "No such file or directory" in view["connection"]["message"]


def test_doctor_says_connected_then_unreachable_and_never_the_password(tmp_path: Path,
                                                                        pg_server: PostgresServer) -> None:
    """A server with password authentication over TCP, of this test's own (it is stopped halfway)."""
    own = PostgresServer(pg_server.bin_dir).start()
    try:
        own.sql("CREATE DATABASE team")
        done = user_cli(tmp_path, "ana", *enable_args(own, "team"), stdin=own.password + "\n")
        assert done.returncode == 0, done.stderr
        where = f"postgresql 127.0.0.1:{own.port}/team as {own.user}"
        up = user_cli(tmp_path, "ana", "doctor")
        line = next(x for x in up.stdout.splitlines() if "provider postgres" in x)
        assert f"; connected to {where}: PostgreSQL 16" in line and f"as role {own.user}; schema mnemon at " \
            "version 4" in line and line.startswith("[ok     ]")
        own.halt()
        answers = [user_cli(tmp_path, "ana", "doctor"), user_cli(tmp_path, "ana", "doctor", "--json"),
                   user_cli(tmp_path, "ana", "provider", "list"), user_cli(tmp_path, "ana", "provider", "list", "--json")]
        line = next(x for x in answers[0].stdout.splitlines() if "provider postgres" in x)
        assert line.startswith("[warning] provider postgres: enabled; 0 spaces (0 active); fields: database, host, "
                               "port, user, password (secret)")
        assert f"unreachable ({where}): connection failed: connection to server at \"127.0.0.1\", port {own.port} " \
               "failed: Connection refused" in line
        assert answers[0].returncode == 0 and _after_postgres(answers[2].stdout)[1].startswith(f"    unreachable ({where})")
        for answer in answers:
            assert own.password not in answer.stdout + answer.stderr
    finally:
        own.stop()


def _after_postgres(listing: str) -> list[str]:
    """The lines of a ``provider list`` from the postgres provider's line on (other provider packages installed
    beside it, as in CI, are listed first)."""
    lines = listing.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("postgres ")):]
