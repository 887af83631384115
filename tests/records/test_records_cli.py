"""``mnemon-ls records ...`` through the console script (real subprocesses, a real git repository)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

MNEMON_LS = mnemon_command()


class RecordsCli:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = Path(os.path.realpath(tmp_path))
        self.ws = self.tmp / "ws"
        make_repo(self.ws)
        self.dsh = self.tmp / "dsh"
        self.env = procs.child_env(HOME=str(self.tmp / "home"), MNEMON_DATA_DIR=str(self.tmp / "data"),
                                   DSH_HOME=str(self.dsh), DSH_USER_ID="ana")

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
        result = subprocess.run([*MNEMON_LS, "records", *args], cwd=self.ws, env=self.env, input=stdin,
                                capture_output=True, text=True, encoding="utf-8", timeout=procs.WAIT_SECONDS)
        assert "Traceback" not in result.stderr
        return result

    def ok(self, *args: str, stdin: str = "") -> str:
        result = self.run(*args, stdin=stdin)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        return result.stdout

    def json(self, *args: str, stdin: str = ""):
        return json.loads(self.ok(*args, "--json", stdin=stdin))


@pytest.fixture
def cli(tmp_path):
    return RecordsCli(tmp_path)


def test_propose_list_verify_reject_show_in_text_and_json(cli):
    proposal = cli.json("propose", "--title", "Tests", "--content", "Run pytest -n 2", "--type", "convention",
                        "--source-ref", "file:pyproject.toml")
    pid = proposal["id"]
    assert proposal["record"]["governance"]["origin"] == "model-suggested"
    mine = cli.json("create", "--title", "Storage", "--content", "-", "--tag", "storage", stdin="JSONL records\n")
    assert mine["record"]["content"] == "JSONL records\n"
    text = cli.ok("list", "--proposals")
    assert pid in text and "proposal" in text and mine["id"] not in text
    assert cli.ok("verify", pid).strip() == f"verified {pid}"
    assert cli.json("list", "--proposals")["count"] == 0
    assert cli.json("reject", mine["id"])["record"]["governance"]["verification"] == "rejected"
    shown = cli.ok("show", pid)
    assert "verification: verified" in shown and "sources: file:pyproject.toml" in shown
    edited = cli.json("edit", pid, "--content", "Run pytest -n 4")
    assert edited["record"]["governance"]["revision"] == 2
    assert cli.json("archive", pid)["record"]["status"] == "archived"
    assert cli.json("forget", pid)["record"]["status"] == "forgotten"
    assert [r["id"] for r in cli.json("list")["records"]] == [mine["id"]]
    assert (cli.ws / ".dsh" / "workspace-memory" / "records.jsonl").exists()


def test_bad_input_exit_codes_and_nothing_written(cli):
    result = cli.run("create", "--title", "x", "--content", "y", "--record-scope", "shared-project", "--json")
    assert result.returncode == 3
    assert json.loads(result.stdout)["error"]["code"] == "confirmation-required"
    assert not (cli.ws / ".dsh").exists()
    result = cli.run("create", "--title", "x", "--content", "y", "--record-scope", "session")
    assert result.returncode == 2 and "--session-id: is required" in result.stderr
    result = cli.run("propose", "--title", "x", "--content", "y")
    assert result.returncode == 2 and result.stderr.startswith("mnemon-ls: error: --source-ref: ")  # the option that fills it
    result = cli.run("create", "--title", "x", "--content", "y", "--source-ref", "nocolon")
    assert result.returncode == 2 and "--source-ref nocolon: " in result.stderr
    assert not (cli.ws / ".dsh").exists()
    result = cli.run("verify", "memory:none")
    assert result.returncode == 2 and "no record memory:none" in result.stderr


def test_export_import_compact_round_trip(cli, tmp_path):
    cli.ok("create", "--title", "A", "--content", "alpha")
    cli.ok("create", "--title", "B", "--content", "beta", "--record-scope", "user")
    bundle_path = tmp_path / "bundle.json"
    cli.ok("export", "--output", str(bundle_path))
    bundle = json.loads(bundle_path.read_text())
    assert bundle["schemaVersion"] == 1 and len(bundle["records"]) == 2
    other = RecordsCli(tmp_path / "other")
    receipt = other.json("import", str(bundle_path))
    assert (receipt["imported"], receipt["skipped"], receipt["renamed"]) == (2, 0, 0)
    assert other.ok("import", str(bundle_path)).startswith("imported 0 of 2 into project (2 skipped")
    bad = dict(bundle, schemaVersion=2)
    result = other.run("import", "-", "--json", stdin=json.dumps(bad))
    assert result.returncode == 2 and json.loads(result.stdout)["error"]["field"] == "schemaVersion"
    compacted = other.json("compact")
    assert compacted["linesAfter"] == 2
    assert Path(compacted["file"] + ".bak").exists()


def test_doctor_names_the_damaged_lines_a_read_moved_out_of_a_records_file(cli):
    """A read moves damaged lines to ``<file>.corrupt`` and said nothing anywhere; doctor now names the file
    and how many lines it holds (and reading it writes nothing)."""
    cli.ok("create", "--title", "Kept", "--content", "a record that stays")
    path = cli.ws / ".dsh" / "workspace-memory" / "records.jsonl"
    path.write_bytes(path.read_bytes() + b'{"schemaVersion":1,"id":cut\n' + "中文".encode("gbk") + b"\n")
    assert "Kept" in cli.ok("list")
    corrupt = path.with_name("records.jsonl.corrupt")
    held = corrupt.read_bytes()
    doctor = subprocess.run([*MNEMON_LS, "doctor", "--json"], cwd=cli.ws, env=cli.env, capture_output=True,
                            text=True, timeout=procs.WAIT_SECONDS)
    findings = {f["subject"]: f for f in json.loads(doctor.stdout)["findings"]}
    finding = findings[str(corrupt)]
    assert finding["level"] == "warning" and "2 damaged lines" in finding["message"], finding
    assert str(path) in finding["message"] and finding["advice"], finding
    assert corrupt.read_bytes() == held
