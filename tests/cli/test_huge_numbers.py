"""A number of more digits than Python converts (4,300: ``sys.get_int_max_str_digits``) in a file the tool reads,
or in a ``--cite`` line, is a damaged file or a refused value, never a traceback: ``json`` raises it as a plain
``ValueError``, which the readers did not catch (an adversarial pass: one such line in the committed
``shared.jsonl`` crashed every teammate's ``wake`` and session-start hook, and ``doctor`` said "no problems").
Real CLI subprocesses on real roots and a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli.test_error_fields import cli, workspace
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

DIGITS = "9" * 5000


def test_a_records_line_with_a_huge_number_is_a_damaged_line_not_a_crash(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    made = cli(ws, tmp_path, "records", "create", "--record-scope", "shared-project", "--confirm", "--title",
               "team rule", "--content", "use tabs")
    assert made.returncode == 0, made.stderr
    shared = ws / ".dsh" / "workspace-memory" / "shared.jsonl"
    line = json.loads(shared.read_text(encoding="utf-8").splitlines()[0])
    bad = json.dumps(line | {"id": "memory:user:fact:bbbbbbbbbbbbbbbbbbbbbbbb"}).replace(
        f'"useCount": {line["useCount"]}', f'"useCount": {DIGITS}')
    assert DIGITS in bad
    shared.write_text(shared.read_text(encoding="utf-8") + bad + "\n", encoding="utf-8")
    for command in (("wake",), ("records", "list"), ("doctor",)):
        done = cli(ws, tmp_path, *command)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (command, done.stderr[-500:])
    listed = cli(ws, tmp_path, "records", "list").stdout
    assert "team rule" in listed
    assert "damaged" in cli(ws, tmp_path, "doctor").stdout
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off",
                              "MNEMON_DATA_DIR": str(tmp_path / "root")}
    hook = subprocess.run([*mnemon_command(), "hook", "session-start"], input=json.dumps({"cwd": str(ws)}),
                          capture_output=True, text=True, env=env, cwd=ws, timeout=procs.WAIT_SECONDS)
    assert hook.returncode == 0 and "Traceback" not in hook.stderr, hook.stderr[-500:]


def test_memories_json_with_a_huge_number_is_reported_and_its_entries_recovered(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert cli(ws, tmp_path, "runtime", "add", "--content", "keep this entry", "--target", "memory").returncode == 0
    path = next((tmp_path / "root").rglob("memories.json"))
    text = path.read_text(encoding="utf-8")
    assert '"version": 1' in text
    path.write_text(text.replace('"version": 1', f'"version": {DIGITS}', 1), encoding="utf-8")
    wake = cli(ws, tmp_path, "wake")
    assert wake.returncode == 0, wake.stderr[-500:]
    assert "is not valid JSON: a number has more than 4300 digits" in wake.stdout
    assert "keep this entry" in wake.stdout  # the recoverable entries are shown
    doctor = cli(ws, tmp_path, "doctor")
    assert "Traceback" not in doctor.stderr and "a number has more than 4300 digits" in doctor.stdout


def test_a_cite_line_of_thousands_of_digits_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    before = procs.tree_snapshot(tmp_path)
    done = cli(ws, tmp_path, "remember", "x", "--cite", "src/lib.py:" + DIGITS)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-300:]
    assert "with lines in 1..1000000000" in done.stderr and len(done.stderr) < 800
    arabic = cli(ws, tmp_path, "runtime", "add", "--content", "x y", "--cite", "src/lib.py:\u0661")
    assert arabic.returncode == 2 and "(path): does not exist in the workspace" in arabic.stderr, arabic.stderr
    assert procs.tree_snapshot(tmp_path) == before


def test_a_record_id_is_repeated_short(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    done = cli(ws, tmp_path, "records", "show", "A" * 100_000, "--json")
    assert done.returncode in (2, 3) and len(done.stderr) < 1000 and len(done.stdout) < 2000, (
        done.returncode, len(done.stderr), len(done.stdout))


def test_an_old_text_that_matches_nothing_is_repeated_short_in_the_error_data(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert cli(ws, tmp_path, "runtime", "add", "--content", "first entry", "--target", "memory").returncode == 0
    done = cli(ws, tmp_path, "runtime", "remove", "--old-text", "Q" * 100_000, "--target", "memory", "--json")
    assert done.returncode == 3, done.stderr[-300:]
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "no-match" and len(done.stdout) < 1500 and error["oldText"].startswith("QQQ"), (
        len(done.stdout), error.get("code"))


def test_a_pack_entry_name_and_components_are_repeated_short_and_escaped(tmp_path: Path) -> None:
    import zipfile

    ws = workspace(tmp_path)
    pack = tmp_path / "bad.zip"
    with zipfile.ZipFile(pack, "w") as archive:
        archive.writestr("a" * 60_000 + "\x1b[2J/../x", "x")
    done = cli(ws, tmp_path, "pack", "inspect", str(pack))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr) < 1000 and "\x1b" not in done.stderr and "entry:aaa" in done.stderr, done.stderr[:300]
