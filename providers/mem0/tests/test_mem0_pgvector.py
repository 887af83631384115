"""Mem0 spaces on a real PostgreSQL + pgvector server (started by conftest.pg_server from the pgserver
wheel's binaries; no mocks): configuration rules and the password as a credential (stored 0600, never
shown back, refused inside a URL), remember/recall in English and Chinese, forget, discovery of scopes that
Mem0 itself wrote, two machines sharing one database, and a database that stops answering isolated in
federated recall."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces import SpacesService

from servers import PostgresServer


def _mem0_writes(pg_server: PostgresServer, dbname: str, data: Path) -> None:
    """Memories written by Mem0 itself (not through mnemon-ls) for two scopes."""
    from mnemon_ls_provider_mem0.engine import Mem0Engine

    engine = Mem0Engine.open({"dataPath": str(data), **pg_server.service(dbname)})
    try:
        engine.memory.add("Alice prefers dark mode in every editor", user_id="alice", infer=False)
        engine.memory.add("The bot deploys on Fridays only after review", user_id="bob", agent_id="bot", infer=False)
    finally:
        engine.close()


def test_pgvector_fields_are_checked_and_the_password_is_a_credential(tmp_path: Path, pg_server: PostgresServer,
                                                                      pg_database: str) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.configure("mem0", {"collection": "mnemon"})
    providers_file = root / "state" / "memory-providers.json"
    before = providers_file.read_bytes()
    good = pg_server.service(pg_database, dataPath=str(tmp_path / "mem0"))
    password = pg_server.password
    cases = [
        ({**good, "pgHost": ""}, "services.pgHost", "is required"),
        ({**good, "pgHost": f"postgresql://{pg_server.user}:{password}@127.0.0.1:{pg_server.port}/x"},
         "services.pgHost", "must not hold a credential (put it in a secret field: apiKey, llmApiKey, pgPassword, "
                            "vectorApiKey)"),
        ({**good, "pgHost": "postgresql://127.0.0.1:5432/db"}, "services.pgHost", "not a URL"),
        ({**good, "pgPort": "54x"}, "services.pgPort", "integer"),
        ({**good, "pgPort": 70000}, "services.pgPort", "between 1 and 65535"),
        ({**good, "pgUser": ""}, "services.pgUser", "is required"),
        ({**good, "pgSslMode": "sometimes"}, "services.pgSslMode",
         "must be one of disable, allow, prefer, require, verify-ca, verify-full (got \"sometimes\")"),
        ({**good, "vectorStore": "pgvectr"}, "services.vectorStore", "must be one of"),
        ({**good, "timeoutSeconds": "soon"}, "services.timeoutSeconds", "seconds"),
    ]
    for fields, field, rule in cases:
        with pytest.raises(InvalidInput) as error:
            service.thirdparty.enable("mem0", fields)
        assert error.value.data["field"] == field and rule in error.value.message, (field, error.value.message)
        assert password not in json.dumps(error.value.to_dict())
    # a real server refusing the login: the error names the server, the database and the user, not the password
    with pytest.raises(ProviderUnavailable) as refused:
        service.thirdparty.enable("mem0", {**good, "pgPassword": "not-the-password"})
    message = refused.value.message
    assert f"127.0.0.1:{pg_server.port}/{pg_database} as {pg_server.user}" in message
    assert "password authentication failed" in message and "not-the-password" not in json.dumps(refused.value.to_dict())
    with pytest.raises(ProviderUnavailable) as missing:
        service.thirdparty.enable("mem0", {**good, "pgDatabase": "no_such_database"})
    assert 'database "no_such_database" does not exist' in missing.value.message
    assert providers_file.read_bytes() == before
    assert not (tmp_path / "mem0").exists()  # nothing of Mem0's either (its MEM0_DIR goes under dataPath)
    # the right password: stored in the 0600 provider file, never in any answer
    enabled = service.thirdparty.enable("mem0", good)
    assert enabled["configuredSecrets"] == ["pgPassword"] and "pgHost" in enabled["configuredFields"]
    assert stat.S_IMODE(providers_file.stat().st_mode) == 0o600
    assert json.loads(providers_file.read_text())["services"]["mem0"]["pgPassword"] == password
    for answer in (enabled, service.thirdparty.view("mem0"), service.thirdparty.list(), service.thirdparty.test("mem0")):
        assert password not in json.dumps(answer)
    assert service.thirdparty.test("mem0")["health"]["location"] == (
        f"postgresql 127.0.0.1:{pg_server.port}/{pg_database} as {pg_server.user}")
    service.close()


def test_pgvector_discovery_remember_recall_forget_and_a_second_machine(tmp_path: Path, pg_server: PostgresServer,
                                                                        pg_database: str) -> None:
    _mem0_writes(pg_server, pg_database, tmp_path / "writer")
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    enabled = service.thirdparty.enable("mem0", pg_server.service(pg_database, dataPath=str(tmp_path / "mem0")))
    assert enabled["health"]["items"] == 2 and enabled["health"]["details"]["vectorStore"] == "pgvector"
    views = {v.record.external_id: v.to_dict() for v in service.list_spaces()}
    assert set(views) == {"user=alice", "user=bob;agent=bot"}
    space = service.create_space("Team Memory", "decisions of the team", active=True, provider="mem0").to_dict()
    english = service.remember("We roll back when the error rate passes five percent", space_id=space["id"],
                               tags=["release"], category="decision").to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed"
    assert service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()["status"] == "skipped"
    # the rows are in PostgreSQL, in Mem0's schema (a pgvector column of 384 dimensions)
    rows = pg_server.sql("SELECT payload->>'data', vector_dims(vector) FROM mnemon ORDER BY payload->>'data'",
                         pg_database)
    assert ("部署窗口是每周二晚上八点", 384) in rows and len(rows) == 4
    hit = service.recall("we roll back when the error rate passes five percent", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == english["id"] and hit[0]["tags"] == ["release"] and hit[0]["category"] == "decision"
    hit = service.recall("部署窗口是每周二晚上", spaces=[space["id"]]).to_dict()["results"]
    assert hit[0]["id"] == chinese["id"]
    # a second machine (its own root and Mem0 data directory) on the same database sees the team's scope
    other = SpacesService(tmp_path / "other-root", provider_timeout=60)
    other.thirdparty.enable("mem0", pg_server.service(pg_database, dataPath=str(tmp_path / "other-mem0")))
    team = [v.record.id for v in other.list_spaces() if v.record.external_id == "user=team_memory"]
    assert len(team) == 1
    other.activate(team[0])
    assert other.recall("部署窗口", spaces=team).to_dict()["results"][0]["content"] == "部署窗口是每周二晚上八点"
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert chinese["id"] not in [r["id"] for r in other.recall("部署窗口", spaces=team).to_dict()["results"]]
    assert pg_server.sql(f"SELECT count(*) FROM mnemon WHERE id = '{chinese['id']}'", pg_database) == [(0,)]
    with pytest.raises(InvalidInput):
        service.forget(space["id"], chinese["id"])
    other.close()
    service.close()


def test_a_database_that_stops_answering_is_isolated_in_federated_recall(tmp_path: Path, pg_server: PostgresServer,
                                                                         pg_database: str) -> None:
    _mem0_writes(pg_server, pg_database, tmp_path / "writer")
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=60)
    service.thirdparty.enable("mem0", pg_server.service(pg_database, dataPath=str(tmp_path / "mem0"),
                                                        timeoutSeconds=3))
    alice = [v.record.id for v in service.list_spaces() if v.record.external_id == "user=alice"][0]
    service.activate(alice)
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    assert {r["spaceId"] for r in service.recall("dark mode in every editor").to_dict()["results"]} == {native, alice}
    service.close()
    pg_server.sql(f'ALTER DATABASE "{pg_database}" ALLOW_CONNECTIONS false')
    pg_server.sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{pg_database}'")
    try:
        fresh = SpacesService(root, provider_timeout=60)
        result = fresh.recall("dark mode in every editor").to_dict()
        assert [r["spaceId"] for r in result["results"]] == [native]
        status = {s["spaceId"]: s for s in result["sources"]}
        assert status[alice]["status"] == "unavailable" and result["failed"] == [alice]
        assert f"127.0.0.1:{pg_server.port}/{pg_database}" in status[alice]["hint"]
        assert "not currently accepting connections" in status[alice]["hint"]
        assert pg_server.password not in json.dumps(result)
        fresh.close()
    finally:
        pg_server.sql(f'ALTER DATABASE "{pg_database}" ALLOW_CONNECTIONS true')


def test_cli_enable_reads_the_password_from_stdin_and_never_prints_it(tmp_path: Path, pg_server: PostgresServer,
                                                                      pg_database: str) -> None:
    _mem0_writes(pg_server, pg_database, tmp_path / "writer")
    root = tmp_path / "root"
    fields = pg_server.service(pg_database, dataPath=str(tmp_path / "mem0"))
    password = fields.pop("pgPassword")
    args = [sys.executable, "-m", "mnemon_ls", "provider", "enable", "mem0", "--data-dir", str(root), "--json",
            *[f"--set={key}={value}" for key, value in fields.items()], "--secret", "pgPassword"]
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    done = subprocess.run(args, input=password + "\n", capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert password not in done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["configuredSecrets"] == ["pgPassword"] and len(answer["discovered"]) == 2
    recall = subprocess.run([sys.executable, "-m", "mnemon_ls", "space", "list", "--data-dir", str(root), "--json"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert recall.returncode == 0, recall.stderr
    assert password not in recall.stdout and "user=alice" in recall.stdout
