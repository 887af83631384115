"""Credentials: the password reaches libpq and ``state/memory-providers.json`` (0600) only -- never another file,
an answer or an error -- and ``PGPASSWORD``, a ``.pgpass`` file and ``MNEMON_POSTGRES_DSN`` work without
mnemon-ls storing any password. Capacity maintenance archives runtime memory into a shared space."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from postgres_server import PostgresServer
from test_postgres_shared import enable_args, user_cli


def _files_holding(top: Path, secret: str) -> list[str]:
    needle = secret.encode()
    return sorted(str(p.relative_to(top)) for p in top.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_the_password_is_stored_0600_in_the_provider_file_only_and_never_shown(
        tmp_path: Path, pg_server: PostgresServer, pg_database: str) -> None:
    answers = [user_cli(tmp_path, "ana", *enable_args(pg_server, pg_database), "--json",
                        stdin=pg_server.password + "\n")]
    answers.append(user_cli(tmp_path, "ana", "space", "create", "--provider", "postgres", "--name", "Team",
                            "--description", "team decisions", "--active"))
    answers.append(user_cli(tmp_path, "ana", "remember", "--space", "Team", "the staging database is db-stg-2"))
    answers.append(user_cli(tmp_path, "ana", "provider", "test", "postgres", "--json"))
    answers.append(user_cli(tmp_path, "ana", "provider", "list", "--json"))
    answers.append(user_cli(tmp_path, "ana", "doctor", "--providers"))
    # a wrong password and a connection string that does not parse: errors name the place, never the secret
    answers.append(user_cli(tmp_path, "ana", "provider", "configure", "postgres", "--secret", "password",
                            stdin="not-the-password-xyzzy\n"))
    answers.append(user_cli(tmp_path, "ana", "recall", "staging database", "--json"))
    answers.append(user_cli(tmp_path, "ana", "provider", "configure", "postgres", "--secret", "dsn",
                            stdin="postgresql://u:dsn-secret-pw@host/db?no_such_option=1\n"))
    answers.append(user_cli(tmp_path, "ana", "provider", "test", "postgres"))
    assert answers[0].returncode == 0 and answers[2].returncode == 0, answers[0].stderr + answers[2].stderr
    # the wrong password is proved before it is saved: refused, and the stored one keeps working
    assert answers[6].returncode == 1 and "password authentication failed" in answers[6].stderr
    assert [r["content"] for r in json.loads(answers[7].stdout)["results"]] == ["the staging database is db-stg-2"]
    assert answers[8].returncode != 0 and "services.dsn" in answers[8].stderr and answers[9].returncode == 0
    for secret in (pg_server.password, "not-the-password-xyzzy", "dsn-secret-pw"):
        for answer in answers:
            assert secret not in answer.stdout and secret not in answer.stderr
        assert _files_holding(tmp_path, secret) == (["ana/data/state/memory-providers.json"]
                                                    if secret == pg_server.password else [])
    providers = tmp_path / "ana" / "data" / "state" / "memory-providers.json"
    assert stat.S_IMODE(providers.stat().st_mode) == 0o600


def _no_password_enable(tmp_path: Path, server: PostgresServer, database: str, env: dict[str, str],
                        *fields: str) -> None:
    done = user_cli(tmp_path, "ana", "provider", "enable", "postgres", *fields, env=env)
    assert done.returncode == 0, done.stderr
    made = user_cli(tmp_path, "ana", "space", "create", "--provider", "postgres", "--name", "Team",
                    "--description", "team decisions", "--active", env=env)
    assert made.returncode == 0, made.stderr
    wrote = user_cli(tmp_path, "ana", "remember", "--space", "Team", "the release train leaves on Thursdays",
                     env=env)
    assert wrote.returncode == 0, wrote.stderr
    assert server.sql("SELECT content FROM mnemon.items", database) == [("the release train leaves on Thursdays",)]
    assert _files_holding(tmp_path / "ana" / "data", server.password) == []  # nothing stored by mnemon-ls
    assert "password" not in json.loads(user_cli(tmp_path, "ana", "provider", "list", "--json", env=env).stdout
                                        )["providers"][0]["configuredSecrets"]


def _fields(server: PostgresServer, database: str) -> list[str]:
    return ["--set", f"host={server.host}", "--set", f"port={server.port}", "--set", f"database={database}",
            "--set", f"user={server.user}"]


def test_pgpassword_works_and_is_not_stored(tmp_path: Path, pg_server: PostgresServer, pg_database: str) -> None:
    _no_password_enable(tmp_path, pg_server, pg_database, {"PGPASSWORD": pg_server.password},
                        *_fields(pg_server, pg_database))


def test_a_pgpass_file_works(tmp_path: Path, pg_server: PostgresServer, pg_database: str) -> None:
    home = tmp_path / "ana"
    home.mkdir()
    escaped = pg_server.password.replace("\\", "\\\\").replace(":", "\\:")
    pgpass = home / ".pgpass"
    pgpass.write_text(f"{pg_server.host}:{pg_server.port}:{pg_database}:{pg_server.user}:{escaped}\n")
    os.chmod(pgpass, 0o600)  # libpq ignores a .pgpass others can read
    _no_password_enable(tmp_path, pg_server, pg_database, {}, *_fields(pg_server, pg_database))


def test_mnemon_postgres_dsn_works_with_no_field(tmp_path: Path, pg_server: PostgresServer, pg_database: str) -> None:
    from psycopg.conninfo import make_conninfo

    dsn = make_conninfo("", host=pg_server.host, port=pg_server.port, dbname=pg_database, user=pg_server.user,
                        password=pg_server.password)
    _no_password_enable(tmp_path, pg_server, pg_database, {"MNEMON_POSTGRES_DSN": dsn})


def test_capacity_maintenance_archives_into_the_shared_space(tmp_path: Path, pg_server: PostgresServer,
                                                            pg_database: str) -> None:
    for user in ("ana", "ben"):
        assert user_cli(tmp_path, user, *enable_args(pg_server, pg_database),
                        stdin=pg_server.password + "\n").returncode == 0
    assert user_cli(tmp_path, "ana", "space", "create", "--provider", "postgres", "--name", "Decisions",
                    "--description", "team decisions", "--active").returncode == 0
    archived = None
    for n in range(12):
        done = user_cli(tmp_path, "ana", "runtime", "add", "--memory-limit-bytes", "600", "--json", "--content",
                        f"Decision {n:02d}: the payment service retries webhooks with backoff step {n}")
        assert done.returncode == 0, done.stderr
        if "maintenance" in done.stdout:
            archived = json.loads(done.stdout)
            break
    assert archived is not None, "no entry was archived"
    stored = [c for (c,) in pg_server.sql("SELECT content FROM mnemon.items", pg_database)]
    assert stored and all(c.startswith("Decision ") for c in stored)
    assert user_cli(tmp_path, "ben", "provider", "discover", "postgres").returncode == 0
    assert user_cli(tmp_path, "ben", "space", "activate", "Decisions").returncode == 0
    seen = json.loads(user_cli(tmp_path, "ben", "recall", stored[0], "--json").stdout)
    assert stored[0] in [r["content"] for r in seen["results"]]  # the other machine reads the archived decision
