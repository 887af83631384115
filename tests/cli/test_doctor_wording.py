"""What ``mnemon-ls doctor`` (and the messages beside it) says about real states (issue 12): a lock left by
a killed process, saved hand edits that were imported, an entry not found uniquely, the source of a pack,
the name of the space archived facts went to. Real files, real processes (a holder SIGKILLed), the CLI
as a person runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command


def cli(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``mnemon-ls ARGS`` in the workspace ``tmp_path/ws`` with its memory in ``tmp_path/root``."""
    result = subprocess.run(mnemon_command(*args, "--scope", "custom",
                             "--data-dir", str(tmp_path / "root")), cwd=tmp_path / "ws", input=stdin,
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr, result.stderr
    return result


def doctor(tmp_path: Path) -> dict[str, dict[str, str]]:
    """``doctor --json`` findings by subject."""
    report = json.loads(cli(tmp_path, "doctor", "--json").stdout)
    return {f["subject"]: f for f in report["findings"]}


def workspace(tmp_path: Path) -> Path:
    make_repo(tmp_path / "ws")
    return tmp_path / "root"


# ---------------------------------------------------------------------------------------------- locks


def test_a_lock_left_by_a_killed_writer_is_not_said_to_be_held_by_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert cli(tmp_path, "runtime", "add", "--content", "the build uses make").returncode == 0
    with procs.writer("hold", str(root), word="HELD") as holder:
        lock = str(root / "runtime" / ".memories.lock")
        # while it runs, it is the holder
        running = doctor(tmp_path)[lock]
        assert running["message"].startswith(f"held by pid {holder.pid} (running) for ")
        assert holder.kill() == -9
    pid = holder.pid
    assert Path(lock).exists()  # SIGKILL released nothing: the marker of a dead owner stays
    finding = doctor(tmp_path)[lock]
    assert "held by" not in finding["message"]
    assert finding["message"].startswith(f"left by pid {pid}, which is no longer running (")
    assert finding["message"].endswith("no process holds it")
    assert finding["advice"] == "nothing to do: the next writer removes it and goes on"
    # and it is right: the next write goes through at once and takes the marker away
    assert cli(tmp_path, "runtime", "add", "--content", "tests run with pytest").returncode == 0
    assert not Path(lock).exists()
    assert lock not in doctor(tmp_path)


def test_a_documents_lock_of_a_dead_owner_is_named_a_leftover(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert cli(tmp_path, "doc", "create", "--title", "Plan", "--content", "Ship it.").returncode == 0
    identity = subprocess.run([sys.executable, str(procs.WRITER), "identity"], capture_output=True, text=True,
                              env=procs.child_env(), timeout=procs.WAIT_SECONDS)
    record = json.loads(identity.stdout)  # the owner record of a process that has exited by now
    pid = int(record.split("\n")[0])
    lock = root / "documents" / ".index.lock"
    lock.write_text(record)
    finding = doctor(tmp_path)[str(lock)]
    assert finding["message"].startswith(f"left by pid {pid}, which is no longer running")


# ---------------------------------------------------------------------------------------------- hand edits


def test_an_imported_hand_edit_is_not_called_preserved_before_repair(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    assert cli(tmp_path, "runtime", "add", "--content", "the build uses make").returncode == 0
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text() + "§\nDeploys go through the blue-green switch\n")
    listed = cli(tmp_path, "runtime", "list", "--json")  # a runtime command imports the hand edit first
    assert "Deploys go through the blue-green switch" in listed.stdout
    edits = root / "runtime" / "edits"
    assert len(list(edits.iterdir())) == 1
    finding = doctor(tmp_path)[str(edits)]
    assert finding["level"] == "ok"
    assert "preserved before repair" not in finding["message"]
    assert finding["message"] == ("1 saved copy of hand-edited USER.md/MEMORY.md: its every item is in memories.json "
                                  "(imported, or the same there)")
    assert finding["advice"] == "kept for reference; nothing to do (delete them when you like)"

    # an edit that breaks a rule is saved and not imported: that copy is named, the imported one counted
    memory_md.write_text(memory_md.read_text() + "§\nOnly on main [branches=main]\n")
    cli(tmp_path, "runtime", "list")
    rejected = sorted(edits.iterdir())[-1]
    assert "Only on main" in rejected.read_text()
    finding = doctor(tmp_path)[str(edits)]
    assert finding["message"] == (
        "2 saved copies of hand-edited USER.md/MEMORY.md: 1 whose every item is in memories.json; 1 holding text "
        "memories.json does not have (an edit not imported: it broke a rule, was a leftover, or handEdits is "
        f"restore; or removed since): {rejected.name}")
    assert finding["advice"] == "open those to take what you need (`mnemon-ls runtime add`), then delete them"


# ---------------------------------------------------------------------------------------------- ambiguous oldText


def test_an_ambiguous_old_text_lists_the_entries_it_matched(tmp_path: Path) -> None:
    workspace(tmp_path)
    for n in (1, 10, 11, 12, 13, 14, 2):
        assert cli(tmp_path, "runtime", "add", "--content", f"Fact {n}: the cache of target {n}").returncode == 0
    result = cli(tmp_path, "runtime", "remove", "--old-text", "Fact 1", "--json")
    assert result.returncode == 3
    assert result.stderr == (
        "mnemon-ls: error: --old-text: 6 memory entries contain 'Fact 1' ('Fact 1: the cache of target 1', "
        "'Fact 10: the cache of target 10', 'Fact 11: the cache of target 11', 'Fact 12: the cache of target 12', "
        "'Fact 13: the cache of target 13' and 1 more); use a unique substring\n")
    error = json.loads(result.stdout)["error"]
    assert error["matches"] == 6
    assert error["candidates"] == [f"Fact {n}: the cache of target {n}" for n in (1, 10, 11, 12, 13, 14)]


# ---------------------------------------------------------------------------------------------- pack source


def test_a_pack_says_which_program_wrote_it(tmp_path: Path) -> None:
    import zipfile

    from mnemon_ls import __version__

    workspace(tmp_path)
    assert cli(tmp_path, "runtime", "add", "--content", "the build uses make").returncode == 0
    pack = tmp_path / "runtime.zip"
    assert cli(tmp_path, "pack", "export", "--pack-scope", "runtime", "-o", str(pack)).returncode == 0
    with zipfile.ZipFile(pack) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        members = {name: archive.read(name) for name in archive.namelist()}
    # the plugin's keys stay (it refuses a source whose plugin is not dsh-mnemon); ours name the writer
    assert manifest["source"] == {"plugin": "dsh-mnemon", "pluginVersion": __version__, "writer": "mnemon-ls",
                                  "writerVersion": __version__}
    shown = cli(tmp_path, "pack", "inspect", str(pack)).stdout.splitlines()[0]
    assert shown.endswith(f"(format mnemonpack 1, written by mnemon-ls {__version__})")
    assert "source dsh-mnemon" not in shown

    # a pack of the TypeScript plugin names no writer: the line says so instead of inventing one
    plugin_pack = tmp_path / "plugin.zip"
    manifest["source"] = {"plugin": "dsh-mnemon", "pluginVersion": "0.1.0"}
    with zipfile.ZipFile(plugin_pack, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, json.dumps(manifest) if name == "manifest.json" else data)
    shown = cli(tmp_path, "pack", "inspect", str(plugin_pack)).stdout.splitlines()[0]
    assert shown.endswith("(format mnemonpack 1, written in the dsh-mnemon plugin's format (pluginVersion 0.1.0; "
                          "the program that wrote it is not recorded))")


# ---------------------------------------------------------------------------------------------- killed archival

ARCHIVE_FLAGS = ("--scope", "workspace", "--runtime-user-scope", "storage", "--memory-limit-bytes", "1024")


def ws_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``mnemon-ls ARGS`` with the settings of ``writer.py archive`` (its root is inside the workspace)."""
    result = subprocess.run(mnemon_command(*args, *ARCHIVE_FLAGS), cwd=tmp_path / "ws",
                            capture_output=True, text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr, result.stderr
    return result


def kill_archival_at(tmp_path: Path, step: str) -> list[int]:
    """Add facts through capacity maintenance in a child until its first archival reaches ``step`` (a
    breakpoint), then SIGKILL it there; returns the facts it acknowledged."""
    proc = subprocess.Popen([sys.executable, str(procs.WRITER), "archive", str(tmp_path / "ws"), "0", "40",
                             "--limit", "1024", "--pause-at", step], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=procs.child_env())
    reader = procs.LineReader(proc)
    acknowledged = []
    try:
        assert reader.readline().startswith("READY")
        while (line := reader.readline()).startswith("ACK "):
            acknowledged.append(int(line.split()[1]))
        assert line == f"PAUSED {step.replace(':', ' ')}", line
    finally:
        procs.kill_hard(proc)
        procs.finish(proc)
    return acknowledged


def memory_entries(tmp_path: Path) -> list[str]:
    listed = json.loads(ws_cli(tmp_path, "runtime", "list", "--json").stdout)
    return [e["content"] for e in listed["entries"] if e["target"] == "memory"]


def test_doctor_names_entries_a_killed_archival_left_in_memory_md_and_finish_removes_them(tmp_path: Path) -> None:
    import sys as _sys

    _sys.path.insert(0, str(procs.WRITER.parent))
    from writer import archive_fact

    make_repo(tmp_path / "ws")
    assert ws_cli(tmp_path, "space", "create", "--name", "Project", "--description", "build facts",
                  "--active").returncode == 0
    acknowledged = kill_archival_at(tmp_path, "commit:1")  # after the space writes and the lineage append
    hot = memory_entries(tmp_path)
    assert [archive_fact(n) for n in acknowledged] == hot  # the killed archival removed nothing
    archived = json.loads(ws_cli(tmp_path, "runtime", "archived", "--json").stdout)["records"]
    assert archived and all(r["stillInHotMemory"] for r in archived)
    in_both = [r["summary"] for r in archived]
    assert set(in_both) <= set(hot)

    # runtime archived names the space by its name, not only its id
    text = ws_cli(tmp_path, "runtime", "archived").stdout
    assert "-> Memory Space Project (id default), item " in text and "-> Memory Space default," not in text
    assert archived[0]["spaceName"] == "Project"

    report = json.loads(ws_cli(tmp_path, "doctor", "--json").stdout)
    found = [f for f in report["findings"] if "interrupted" in f["message"]]
    assert len(found) == 1, report["findings"]
    finding = found[0]
    n = len(in_both)
    assert finding["level"] == "warning" and finding["subject"].endswith("runtime/archived/lineage.jsonl")
    assert finding["message"].startswith(
        f"{n} entries of MEMORY.md are also in Memory Space Project (id default): an archival was interrupted after "
        "writing them there and before removing them from MEMORY.md (")
    assert repr(in_both[0][:57] + "...") in finding["message"]
    assert finding["advice"] == ("`mnemon-ls runtime archived --finish` removes the MEMORY.md copies, each only after "
                                 "checking that its copy there still has exactly its content")

    # one space copy goes away before finishing: that entry must stay in MEMORY.md
    gone = archived[0]
    item_id = gone["destination"]["reference"].rpartition("/item:")[2]
    assert ws_cli(tmp_path, "space", "forget", item_id, "--space", "default").returncode == 0
    finished = ws_cli(tmp_path, "runtime", "archived", "--finish", "--json")
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout)
    assert sorted(r["content"] for r in result["removed"]) == sorted(in_both[1:])
    assert [(k["content"], k["reason"]) for k in result["kept"]] == [(gone["summary"], "the item is gone")]
    left = memory_entries(tmp_path)
    assert left == [c for c in hot if c not in in_both[1:]] and gone["summary"] in left
    # every removed entry is in the space, with exactly its content
    recalled = {r["summary"] for r in json.loads(ws_cli(tmp_path, "runtime", "archived", "--json").stdout)["records"]
                if not r["stillInHotMemory"]}
    assert recalled == set(in_both[1:])
    report = json.loads(ws_cli(tmp_path, "doctor", "--json").stdout)
    messages = [f["message"] for f in report["findings"] if "interrupted" in f["message"]]
    assert messages == [f"1 entry of MEMORY.md was also written by an interrupted archival, but the copy could not "
                        f"be verified (Memory Space Project (id default), item {item_id}: the item is gone): "
                        f"{gone['summary'][:57] + '...'!r}"]
    again = ws_cli(tmp_path, "runtime", "archived", "--finish")
    assert again.stdout.startswith("Kept 1 entry in MEMORY.md: the copy could not be verified:")
    assert memory_entries(tmp_path) == left


# ------------------------------------------------------------------------------ damaged stores


def test_doctor_names_a_memory_space_store_that_is_not_a_database_or_cut_short(tmp_path: Path) -> None:
    """A ``mnemon.db`` overwritten with other bytes, or cut in half, makes every recall and remember of its
    space fail; doctor must say so (it said "no problems found"), and reading changes nothing."""
    root = workspace(tmp_path)
    assert cli(tmp_path, "space", "create", "--name", "main", "--description", "facts").returncode == 0
    assert cli(tmp_path, "remember", "the build uses uv", "--space", "main").returncode == 0
    db = root / "data" / "default" / "mnemon.db"
    assert cli(tmp_path, "space", "status", "main").returncode == 0  # checkpointed: mnemon.db holds it all
    assert doctor(tmp_path).get(str(db), {"level": "ok"})["level"] == "ok"
    good = db.read_bytes()
    for damaged, why in ((b"not a database " * 100, "not a SQLite database"),
                         (good[:len(good) // 2], "cut short")):
        for leftover in db.parent.glob("mnemon.db-*"):
            leftover.unlink()
        db.write_bytes(damaged)
        result = cli(tmp_path, "doctor", "--json")
        finding = {f["subject"]: f for f in json.loads(result.stdout)["findings"]}[str(db)]
        assert finding["level"] == "problem" and why in finding["message"], finding
        assert "main" in finding["message"] and finding["advice"], finding
        assert result.returncode == 1 and db.read_bytes() == damaged
