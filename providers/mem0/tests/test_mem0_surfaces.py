"""mnemon-ls with Mem0 enabled, through its real surfaces (CLI subprocesses, the language server, the MCP
server), on the real engine: commands that do not need Mem0 never import or open it (``wake``, ``doctor``
without ``--providers``); what Mem0 and its libraries print, warn or log never reaches our output (CLI
stdout/stderr at the default verbosity, the JSON-RPC stdout of both servers); the provider bad inputs (not
configured, an engine that fails to open, a timeout mid-recall, a credential in an endpoint URL) answer a
clear error and change nothing."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService

REPO = Path(__file__).resolve().parents[3]
#: Printed by Mem0 2.2.1 at import / open / search when spaCy and fastembed are missing (they are).
MEM0_NOISE = ("spaCy", "fastembed", "mem0ai[", "Telemetry", "DeprecationWarning")
MODULES = "import sys; print('MODULES', 'mem0' in sys.modules, 'qdrant_client' in sys.modules, file=sys.__stderr__)"


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("MEM0_DIR", "MNEMON_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def root(tmp_path: Path) -> dict[str, str]:
    """A global root with a native space and an active Mem0 space holding one memory; the environment of
    the CLI/servers on it (``--scope global``, ``MNEMON_DATA_DIR``)."""
    data = tmp_path / "data"
    service = SpacesService(data, provider_timeout=120)
    service.create_space("Project", "project decisions", active=True)
    service.remember("We chose SQLite FTS5 for the side index")
    service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "mem0")})
    team = service.create_space("Team", "team decisions", active=True, provider="mem0").record.id
    service.remember("We deploy on Tuesdays after review", space_id=team)
    service.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(HOME=os.environ["HOME"], MNEMON_DATA_DIR=str(data), MNEMON_STORAGE_SCOPE="global",
               MNEMON_SEMANTIC="off", PYTHONUNBUFFERED="1",
               MNEMON_PROVIDER_TIMEOUT_MS="300000")  # the first call opens Mem0: seconds on a busy machine
    return {"data": str(data), "team": team, **{f"env:{k}": v for k, v in env.items()}}


def env_of(root: dict[str, str]) -> dict[str, str]:
    return {k[4:]: v for k, v in root.items() if k.startswith("env:")}


def cli(root: dict[str, str], *args: str, prelude: str = "", epilogue: str = "") -> subprocess.CompletedProcess:
    code = f"{prelude}\nimport sys\nfrom mnemon_ls.cli.full import main\nrc = main(sys.argv[1:])\n{epilogue}\nsys.exit(rc)"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env_of(root),
                          cwd=root["data"], timeout=300)


def test_wake_and_doctor_never_import_mem0_and_doctor_reports_its_configuration(root: dict[str, str]) -> None:
    wake = cli(root, "wake", epilogue=MODULES)
    assert wake.returncode == 0, wake.stderr
    assert f"- Team (id {root['team']}, Mem0 space): team decisions" in wake.stdout
    assert "- Project (id default, 1 item): project decisions" in wake.stdout
    assert "MODULES False False" in wake.stderr
    doctor = cli(root, "doctor", epilogue=MODULES)
    assert "MODULES False False" in doctor.stderr, doctor.stderr
    assert ("[ok     ] provider mem0: enabled; 1 space (1 active); fields: dataPath; mnemon-ls-provider-mem0 "
            "0.1.0; engine not opened") in doctor.stdout
    checked = cli(root, "doctor", "--providers", epilogue=MODULES)
    assert "MODULES True True" in checked.stderr
    line = next(x for x in checked.stdout.splitlines() if "provider mem0:" in x)
    assert "engine mem0ai 2.2.1 library mode: 1 memories in collection mnemon; 1 namespace" in line, line
    assert not any(noise in checked.stdout + checked.stderr for noise in MEM0_NOISE), checked.stderr


def test_the_engine_opens_at_the_first_recall_and_once_per_process(root: dict[str, str]) -> None:
    service = SpacesService(Path(root["data"]), provider_timeout=300)
    try:
        assert "Mem0 space" in service.cover(2000).text and [v.available for v in service.list_spaces()] == [True] * 2
        assert service.thirdparty._engines == {}  # listing, the wake cover: nothing opened
        service.recall("deploy Tuesdays")
        engine = service.thirdparty._engines["mem0"]
        service.remember("Hotfixes need one approval", space_id=root["team"])
        assert "Hotfixes need one approval" in [r["content"] for r in service.recall("hotfix approval").results]
        assert service.thirdparty._engines == {"mem0": engine}
    finally:
        service.close()


def test_recall_and_remember_through_mem0_print_only_our_output(root: dict[str, str]) -> None:
    recall = cli(root, "recall", "deploy Tuesdays", "--space", root["team"])
    assert recall.returncode == 0, recall.stderr
    # Mem0 (without mem0ai[extras]) finds it by its vector search alone: labelled so, with the row's cosine
    assert re.search(r"Team: We deploy on Tuesdays after review \(by meaning alone: cosine 0\.\d{3}\)$",
                     recall.stdout.splitlines()[-2]), recall.stdout
    assert recall.stdout.splitlines()[-1] == "1 result(s)"
    assert recall.stderr == ""
    remember = cli(root, "remember", "Hotfixes need one approval", "--space", root["team"], "--json")
    assert remember.returncode == 0 and remember.stderr == "", remember.stderr
    assert json.loads(remember.stdout)["status"] == "committed"


def test_installed_but_not_configured_is_refused_by_the_cli_and_nothing_is_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(MNEMON_DATA_DIR=str(tmp_path / "fresh"), MNEMON_STORAGE_SCOPE="global", MNEMON_SEMANTIC="off")
    for args in (("provider", "test", "mem0"), ("provider", "discover", "mem0"),
                 ("space", "create", "--provider", "mem0", "--name", "Team", "--description", "team")):
        done = subprocess.run([sys.executable, "-m", "mnemon_ls", *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 3, (args, done.stderr)
        assert (f"provider mem0 is installed but not configured for the storage root {tmp_path / 'fresh'} (each "
                "storage root has its own providers: run `mnemon-ls provider enable mem0` for this workspace; "
                "--set KEY=VALUE changes a field from its default)") in done.stderr
    assert not (tmp_path / "fresh" / "state").exists()


def test_a_credential_in_an_endpoint_url_is_refused_by_the_cli_and_nothing_changes(root: dict[str, str]) -> None:
    providers = Path(root["data"]) / "state" / "memory-providers.json"
    before = providers.read_bytes()
    for value in ("http://user:hunter2@127.0.0.1:6333", "http://127.0.0.1:6333/?api_key=sk-live-hunter2"):
        done = cli(root, "provider", "configure", "mem0", "--set", f"vectorEndpoint={value}")
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("mnemon-ls: error: services.vectorEndpoint:") and "hunter2" not in done.stderr
    assert providers.read_bytes() == before


def test_an_engine_that_fails_to_open_is_a_clear_error_on_every_surface_and_recall_answers_from_the_rest(
        root: dict[str, str], tmp_path: Path) -> None:
    """A locked local store (another process holds Qdrant's lock) stands for an engine that fails to open."""
    from mnemon_ls_provider_mem0.engine import Mem0Engine

    holder = Mem0Engine.open({"dataPath": str(tmp_path / "mem0")})
    try:
        providers = Path(root["data"]) / "state" / "memory-providers.json"
        before = providers.read_bytes()
        tested = cli(root, "provider", "test", "mem0")
        assert tested.returncode != 0 and "provider mem0" in tested.stderr and "does not open" in tested.stderr
        recall = cli(root, "recall", "side index FTS5", "--json")
        assert recall.returncode == 0, recall.stderr
        answer = json.loads(recall.stdout)
        assert [r["content"] for r in answer["results"]] == ["We chose SQLite FTS5 for the side index"]
        assert answer["failed"] == [root["team"]]
        assert providers.read_bytes() == before
    finally:
        holder.close()


def test_a_provider_that_times_out_mid_recall_leaves_the_other_spaces_answering(root: dict[str, str]) -> None:
    """100 ms is far less than opening Mem0 takes (importing mem0ai alone takes more than a second)."""
    env = {**env_of(root), "MNEMON_PROVIDER_TIMEOUT_MS": "100"}
    done = subprocess.run([sys.executable, "-m", "mnemon_ls", "recall", "side index FTS5", "--json"],
                          capture_output=True, text=True, env=env, cwd=root["data"], timeout=300)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert [r["content"] for r in answer["results"]] == ["We chose SQLite FTS5 for the side index"]
    assert answer["failed"] == [root["team"]]
    [source] = [s for s in answer["sources"] if s["spaceId"] == root["team"]]
    assert source["status"] == "unavailable" and "did not answer within 100 ms" in source["hint"]


def test_the_language_server_stdout_stays_json_rpc_with_mem0_and_mem0_logs_stay_at_debug(
        root: dict[str, str], tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from tests.lsp.rawclient import RawServer  # the strict frame parser of the main suite

    async def session() -> tuple[RawServer, list[dict]]:
        folder = tmp_path / "repo"
        (folder / ".git").mkdir(parents=True)
        server = RawServer()
        await server.start(env_of(root), tmp_path)
        answers = []
        try:
            await server.initialize([folder], {"mnemon": {"storageScope": "global", "providerTimeoutMs": 300000}})
            for method, params in (
                    ("mnemon/recall", {"query": "deploy Tuesdays", "spaces": [root["team"]]}),
                    ("mnemon/remember", {"content": "Releases need two approvals", "spaceId": root["team"]}),
                    ("mnemon/recall", {"query": "release approvals"}),
                    ("mnemon/providers/configure", {"providerId": "mem0", "services": {
                        "vectorEndpoint": "http://user:hunter2@127.0.0.1:6333"}})):
                answers.append(await server.call(method, params, timeout=180))
        finally:
            await server.close()
        return server, answers

    server, answers = asyncio.run(session())
    assert server.protocol_errors == []
    first, remembered, federated, credential = answers
    assert credential["error"]["data"]["code"] == "invalid-input", credential
    assert credential["error"]["data"]["field"] == "services.vectorEndpoint" and "hunter2" not in str(credential)
    assert [r["content"] for r in first["result"]["results"]] == ["We deploy on Tuesdays after review"], first
    assert remembered["result"]["status"] == "committed"
    assert "Releases need two approvals" in [r["content"] for r in federated["result"]["results"]]
    log = server.stderr.decode("utf-8", "replace")
    assert not any(noise in log for noise in MEM0_NOISE), log


def test_the_mcp_server_stdout_stays_json_rpc_with_mem0(root: dict[str, str], tmp_path: Path) -> None:
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "mnemon_recall", "arguments": {"query": "deploy Tuesdays"}}}]
    proc = subprocess.Popen([sys.executable, "-m", "mnemon_ls", "mcp", "--workspace", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_of(root),
                            cwd=tmp_path)
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        lines = []
        while len([m for m in lines if m.get("id") in (1, 2)]) < 2:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode()
            lines.append(json.loads(line))  # every line of stdout is one JSON-RPC message
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        rest, log = proc.stdout.read(), proc.stderr.read().decode("utf-8", "replace")
    assert rest.strip() == b"" or all(json.loads(x) for x in rest.splitlines())
    [answer] = [m for m in lines if m.get("id") == 2]
    assert "We deploy on Tuesdays after review" in json.dumps(answer["result"])
    assert not any(noise in log for noise in MEM0_NOISE), log
