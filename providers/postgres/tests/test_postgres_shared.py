"""One space, many machines: two users with separate storage roots (HOME and MNEMON_DATA_DIR) configured with
one database, as two CLI processes; eight writer processes at once; a server stopped in the middle of a
write, then started again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest

from mnemon_ls.errors import ProviderUnavailable
from mnemon_ls_provider_postgres.engine import PostgresEngine
from postgres_server import PostgresServer, pgserver_bin

HERE = Path(__file__).parent


def user_cli(base: Path, user: str, *args: str, stdin: str = "", env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """``mnemon-ls ARGS`` as ``user``: their own HOME (``base/user``) and storage root (``base/user/data``)."""
    home = base / user
    home.mkdir(parents=True, exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMON_", "PG"))}
    clean.update({"HOME": str(home), "MNEMON_DATA_DIR": str(home / "data"), "MNEMON_STORAGE_SCOPE": "global",
                  "MNEMON_SEMANTIC": "off", **(env or {})})
    return subprocess.run([sys.executable, "-m", "mnemon_ls", *args], capture_output=True, text=True, env=clean,
                          cwd=home, input=stdin, timeout=120)


def enable_args(server: PostgresServer, database: str) -> list[str]:
    return ["provider", "enable", "postgres", "--set", f"host={server.host}", "--set", f"port={server.port}",
            "--set", f"database={database}", "--set", f"user={server.user}", "--secret", "password"]


def test_two_users_with_separate_roots_share_one_space_at_once(tmp_path: Path, pg_server: PostgresServer,
                                                               pg_database: str) -> None:
    for user in ("ana", "ben"):
        done = user_cli(tmp_path, user, *enable_args(pg_server, pg_database), stdin=pg_server.password + "\n")
        assert done.returncode == 0, done.stderr
    made = user_cli(tmp_path, "ana", "space", "create", "--provider", "postgres", "--name", "Team",
                    "--description", "team decisions", "--active")
    assert made.returncode == 0, made.stderr
    # ben's root learns the new space from the database
    assert user_cli(tmp_path, "ben", "provider", "discover", "postgres").returncode == 0
    assert user_cli(tmp_path, "ben", "space", "activate", "Team").returncode == 0
    wrote = user_cli(tmp_path, "ana", "remember", "--space", "Team", "We run pgBouncer in transaction mode")
    assert wrote.returncode == 0, wrote.stderr
    seen = json.loads(user_cli(tmp_path, "ben", "recall", "pgbouncer transaction", "--json").stdout)
    assert [i["content"] for i in seen["results"]] == ["We run pgBouncer in transaction mode"]
    answer = user_cli(tmp_path, "ben", "remember", "--space", "Team", "Deploys freeze on December 20")
    assert answer.returncode == 0, answer.stderr
    back = json.loads(user_cli(tmp_path, "ana", "recall", "deploys freeze", "--json").stdout)
    assert [i["content"] for i in back["results"]] == ["Deploys freeze on December 20"]
    # each root holds only its own configuration: no item is stored under either
    for user in ("ana", "ben"):
        assert not list((tmp_path / user / "data").rglob("mnemon.db"))


def test_eight_writers_lose_nothing_and_duplicate_nothing(pg_server: PostgresServer, pg_database: str,
                                                          service: dict[str, Any]) -> None:
    engine = PostgresEngine.open(service)
    key = engine.create_namespace("Team", "").external_id
    engine.close()
    writers = [subprocess.Popen([sys.executable, str(HERE / "pg_writer.py")], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, cwd=HERE) for _ in range(8)]
    try:
        for number, proc in enumerate(writers):
            proc.stdin.write(json.dumps({"service": service, "spaceKey": key, "writer": number, "count": 100,
                                         "shared": 10}) + "\n")
            proc.stdin.flush()
        for proc in writers:
            assert proc.stdout.readline().strip() == "ready"
        for proc in writers:  # all connected: they start together
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [json.loads(proc.stdout.readline()) for proc in writers]
    finally:
        for proc in writers:  # a writer that failed is killed and reaped, never left behind
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
            proc.stdin.close()
            proc.stdout.close()
    receipts = [r for result in results for r in result]
    assert len(receipts) == 800
    rows = pg_server.sql("SELECT content, id FROM mnemon.items WHERE deleted_at IS NULL", pg_database)
    assert len(rows) == 8 * 90 + 10 == len({content for content, _ in rows})  # nothing lost, nothing twice
    ids = dict(rows)
    for text, ident, action in receipts:
        assert ids[text] == ident and action in ("added", "skipped")
    shared_added = [r for r in receipts if r[0].startswith("shared") and r[2] == "added"]
    assert sorted(r[0] for r in shared_added) == sorted(f"shared decision {i}" for i in range(10))


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of its own (this test stops it)."""
    bin_dir = pgserver_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed: pip install 'mnemon-ls-provider-postgres[test]'")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()


def _wait_for(condition: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # polling the server's own state: the event is in another process


def test_a_server_stopped_mid_write_keeps_no_part_and_the_next_call_reconnects(own_server: PostgresServer) -> None:
    own_server.sql("CREATE DATABASE team")
    service = {"host": own_server.host, "port": own_server.port, "database": "team", "user": own_server.user,
               "password": own_server.password, "semantic": "false"}
    engine = PostgresEngine.open(service)
    space = engine.space({"spaceKey": engine.create_namespace("Team", "").external_id}, space_id="postgres-t")
    space.remember("written before", category="fact", importance=3, tags=[], entities=[], source="user")
    blocker = psycopg.connect(host=own_server.host, port=own_server.port, dbname="team", user=own_server.user,
                              password=own_server.password)
    blocker.execute("LOCK TABLE mnemon.items IN ACCESS EXCLUSIVE MODE")  # the write waits on it, mid-transaction
    failure: list[BaseException] = []

    def write() -> None:
        try:
            space.remember("half written " + uuid.uuid4().hex, category="fact", importance=3, tags=[], entities=[],
                           source="user")
        except BaseException as exc:  # noqa: BLE001 (the test reads it)
            failure.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    _wait_for(lambda: own_server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mnemon-ls' "
                                     "AND wait_event_type = 'Lock'", "team") == [(1,)], "the write to wait")
    own_server.halt()
    writer.join(60)
    blocker.close()
    assert len(failure) == 1 and isinstance(failure[0], ProviderUnavailable)
    error = failure[0]
    assert error.data["reason"] == "engine-failed" and error.data["location"] == engine.location
    assert "nothing was written" in str(error) and own_server.password not in str(error)
    with pytest.raises(ProviderUnavailable):  # still down: a clean error again
        space.count()
    own_server.resume()
    assert [i.content for i in space.search("written", limit=5).items] == ["written before"]  # reconnected
    assert own_server.sql("SELECT count(*) FROM mnemon.items", "team") == [(1,)]
    assert space.remember("after the restart", category="fact", importance=3, tags=[], entities=[],
                          source="user")["action"] == "added"
    engine.close()
