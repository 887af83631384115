"""documents/.cover.json (mnemon_ls.documents.covercache): a one-shot wake of an unchanged ``documents/`` prints the
block the store rendered, without loading the Documents Source, and never a block older than ``documents/``.

Real roots and git repositories; one-shot hosts as the CLI makes them, long-lived ones as the servers do; the CLI as
a subprocess for what a fresh process imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.documents import covercache
from mnemon_ls.errors import StorageUnsafe
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.settings import load_settings
from tests.gitrepo import make_repo
from tests.helpers.procs import child_env


def block(text: str) -> str:
    """The Documents block of a wake's text (to the next blank line)."""
    start = text.index("MNEMON PROJECT DOCUMENTS")
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end]


def wake_text(ws: Path, root: Path, *, one_shot: bool = True, **settings: object) -> str:
    host = WorkspaceHost(ws, load_settings({"dataDir": str(root), **settings}), one_shot=one_shot)
    try:
        return host.wake()[0].text
    finally:
        host.close()


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A repository and a custom root with three documents (created by a long-lived host); their ids."""
    ws, root = tmp_path / "repo", tmp_path / "root"
    make_repo(ws)
    host = WorkspaceHost(ws, load_settings({"dataDir": str(root)}))
    ids = [host.documents.create(f"Design {n}", f"Body of design {n}.\n", description=f"about {n}").document.record.id
           for n in range(3)]
    host.close()
    return ws, root, ids


def test_a_one_shot_wake_keeps_the_block_and_the_next_prints_it_unchanged(made):
    ws, root, _ = made
    cover = root / "documents" / ".cover.json"
    assert not cover.exists()
    first = wake_text(ws, root)
    kept = json.loads(cover.read_bytes())
    assert kept["version"] == covercache.COVER_VERSION
    assert [block(first)] == [b["text"].strip("\n") for b in kept["blocks"]]
    assert wake_text(ws, root) == first
    assert block(first).startswith("MNEMON PROJECT DOCUMENTS\nActive: 3 documents")


def test_a_fresh_process_wakes_from_the_kept_block_without_the_documents_source(made, tmp_path):
    ws, root, _ = made
    env = child_env(HOME=str(tmp_path))
    argv = [sys.executable, "-m", "mnemon_ls", "wake", "--workspace", str(ws), "--scope", "custom", "--data-dir",
            str(root)]
    first = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(ws), timeout=120)
    assert first.returncode == 0, first.stderr
    probe = ("import io, runpy, sys, contextlib\nsys.argv = ['mnemon_ls', *sys.argv[1:]]\nout = io.StringIO()\n"
             "with contextlib.redirect_stdout(out):\n    try:\n"
             "        runpy.run_module('mnemon_ls', run_name='__main__')\n"
             "    except SystemExit:\n        pass\nprint(repr(out.getvalue()))\n"
             "print(sorted(m for m in sys.modules if m.startswith(('mnemon_ls.documents.', 'mnemon_ls.redact'))))")
    second = subprocess.run([sys.executable, "-c", probe, *argv[3:]], capture_output=True, text=True, env=env,
                            cwd=str(ws), timeout=120)
    assert second.returncode == 0, second.stderr
    printed, modules = second.stdout.splitlines()[-2:]
    assert eval(printed) == first.stdout
    assert eval(modules) == ["mnemon_ls.documents.covercache"]


def test_a_hand_edited_document_is_adopted_by_the_next_wake_not_hidden_by_the_kept_block(made):
    ws, root, _ = made
    before = block(wake_text(ws, root))
    path = next((root / "documents" / "active").glob("design-1-*.md"))
    path.write_text(path.read_text("utf-8").replace("Body of design 1.", "Body of design 1, now much longer."),
                    "utf-8")
    after = block(wake_text(ws, root))
    assert after != before
    used = int(after.split("\n")[1].split(", ")[1].split(" of ")[0])
    assert used == int(before.split("\n")[1].split(", ")[1].split(" of ")[0]) + len(", now much longer")
    assert block(wake_text(ws, root)) == after  # kept again for the new state


def test_an_index_another_program_rewrote_shows_its_new_title(made):
    ws, root, ids = made
    wake_text(ws, root)
    index = root / "documents" / "index.json"
    data = json.loads(index.read_bytes())
    for document in data["documents"]:
        if document["id"] == ids[0]:
            document["title"] = "Design zero renamed"
    index.write_text(json.dumps(data, indent=2), "utf-8")
    text = block(wake_text(ws, root))
    assert "- Design zero renamed" in text and "- Design 0 " not in text


def test_reading_a_document_reorders_the_block_of_the_next_wake(made, tmp_path):
    ws, root, ids = made
    first = block(wake_text(ws, root))
    assert first.splitlines()[-1].startswith("- Design 0")  # least recently accessed (created first)
    for n in (0, 1):  # the first read creates documents/.access.json, the second rewrites it
        got = subprocess.run([sys.executable, "-m", "mnemon_ls", "doc", "get", ids[n], "--workspace", str(ws),
                              "--data-dir", str(root)], capture_output=True, text=True,
                             env=child_env(HOME=str(tmp_path)), cwd=str(ws), timeout=120)
        assert got.returncode == 0, got.stderr
        lines = block(wake_text(ws, root)).splitlines()
        assert lines[lines.index("Recently accessed:") + 1].startswith(f"- Design {n}")


def test_the_kept_block_answers_only_the_budget_limit_and_secrets_it_was_rendered_for(made):
    ws, root, _ = made
    wake_text(ws, root)
    documents = root / "documents"
    kept = json.loads((documents / ".cover.json").read_bytes())["blocks"][0]
    token = covercache.state_token(str(documents))
    budget = next(b for b in range(200_000) if covercache.cover_key(token, b, 10_485_760, "redact") == kept["key"])
    assert covercache.cached_text(documents, budget, 10_485_760, "redact") == kept["text"]
    assert [covercache.cached_text(documents, *other) for other in
            ((budget + 1, 10_485_760, "redact"), (budget, 1024, "redact"), (budget, 10_485_760, "allow"))] == [None] * 3


def test_a_small_budget_wake_renders_its_own_block(made):
    ws, root, _ = made
    wide = block(wake_text(ws, root))
    host = WorkspaceHost(ws, load_settings({"dataDir": str(root)}), one_shot=True)
    try:
        narrow = host.wake(budget_chars=1024)[0].text
    finally:
        host.close()
    assert "Design" in wide and narrow.count("- Design") <= wide.count("- Design")
    assert block(wake_text(ws, root)) == wide


@pytest.mark.parametrize("garbage", [b"", b"{", b"[]", b'{"version": 1, "blocks": [{"key": "x", "text": 5}, 7]}',
                                     b'{"version": 1, "blocks": {}}', b"\xff\xfe"])
def test_a_damaged_kept_block_is_rendered_again(made, garbage):
    ws, root, _ = made
    good = wake_text(ws, root)
    (root / "documents" / ".cover.json").write_bytes(garbage)
    assert wake_text(ws, root) == good
    assert json.loads((root / "documents" / ".cover.json").read_bytes())["version"] == covercache.COVER_VERSION


def test_a_kept_block_that_is_a_link_is_refused_as_any_link_in_the_root_and_left_as_it_is(made, tmp_path):
    ws, root, _ = made
    wake_text(ws, root)
    cover = root / "documents" / ".cover.json"
    elsewhere = tmp_path / "elsewhere.json"
    forged = json.loads(cover.read_bytes())
    forged["blocks"][0]["text"] = "MNEMON PROJECT DOCUMENTS\nActive: 99 documents"
    elsewhere.write_text(json.dumps(forged), "utf-8")
    cover.unlink()
    os.symlink(elsewhere, cover)
    for one_shot in (True, False):
        with pytest.raises(StorageUnsafe, match=r"documents/\.cover\.json: a file inside the storage root must not"):
            wake_text(ws, root, one_shot=one_shot)
    assert cover.is_symlink() and json.loads(elsewhere.read_bytes()) == forged
    assert covercache.cached_text(root / "documents", 4096, 10_485_760, "redact") is None  # never followed


def test_the_block_is_not_kept_when_the_state_moved_on_or_was_never_refreshed(made):
    ws, root, _ = made
    documents = root / "documents"
    token = covercache.state_token(str(documents))
    (documents / "active" / "stray.txt").write_text("x", "utf-8")
    covercache.keep(documents, token, "stale", 4096, 10_485_760, "redact")
    covercache.keep(documents, None, "unrefreshed", 4096, 10_485_760, "redact")
    assert not (documents / ".cover.json").exists()


def test_a_block_with_a_notice_is_never_kept(made):
    ws, root, _ = made
    path = next((root / "documents" / "active").glob("design-2-*.md"))
    path.unlink()
    text = block(wake_text(ws, root))
    assert "missing or unreadable" in text
    assert not (root / "documents" / ".cover.json").exists()
    assert block(wake_text(ws, root)) == text


def test_a_long_lived_host_keeps_the_block_only_after_a_refresh(made):
    ws, root, _ = made
    host = WorkspaceHost(ws, load_settings({"dataDir": str(root)}))
    try:
        first = host.wake()[0].text
        cover = root / "documents" / ".cover.json"
        assert cover.exists()  # the first read of the store refreshed it
        cover.unlink()
        assert host.wake()[0].text == first
        assert not cover.exists()  # no refresh was due: the store's view may be older than the disk
    finally:
        host.close()


def test_blocks_of_several_budgets_are_kept_side_by_side_and_another_states_dropped(made):
    ws, root, _ = made
    documents = root / "documents"
    token = covercache.state_token(str(documents))
    for budget in (1000, 2000, 3000, 4000, 5000):
        covercache.keep(documents, token, f"block {budget}", budget, 10_485_760, "redact")
    found = [covercache.cached_text(documents, b, 10_485_760, "redact") for b in (1000, 2000, 3000, 4000, 5000)]
    assert found == [None, "block 2000", "block 3000", "block 4000", "block 5000"]  # KEPT_BLOCKS, newest kept
    (documents / "active" / "stray.txt").write_text("x", "utf-8")
    token = covercache.state_token(str(documents))
    covercache.keep(documents, token, "after", 1000, 10_485_760, "redact")
    assert [b["text"] for b in json.loads((documents / ".cover.json").read_bytes())["blocks"]] == ["after"]


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_a_file_changed_just_after_the_scan_is_not_hidden_by_the_kept_block(made, monkeypatch, change):
    # Another program deletes or edits a managed file right after the wake's full refresh checked it (before the
    # block is rendered and kept): the state key must be taken before the scan, or the block of the state before the
    # change is kept under the key of the state after it, and every later one-shot wake prints it.
    from mnemon_ls.documents.freshness import Freshness

    ws, root, _ = made
    path = next((root / "documents" / "active").glob("design-1-*.md"))
    scan = Freshness._refresh

    def scan_then_change(self):
        report = scan(self)
        monkeypatch.setattr(Freshness, "_refresh", scan)  # once
        if change == "delete":
            path.unlink()
        else:
            path.write_text(path.read_text("utf-8").replace("Body of design 1.", "Body of design 1, longer."),
                            "utf-8")
        return report

    monkeypatch.setattr(Freshness, "_refresh", scan_then_change)
    wake_text(ws, root)
    cached = block(wake_text(ws, root))
    (root / "documents" / ".cover.json").unlink(missing_ok=True)
    full = block(wake_text(ws, root))
    assert cached == full
    assert ("missing or unreadable" in full) == (change == "delete")


def test_code_that_renders_another_block_under_the_same_version_does_not_print_the_kept_one(made, tmp_path):
    # An editable install (the version stays 0.1.0) whose cover.py was edited: the block kept by the code before the
    # edit must not be printed by the code after it.
    import shutil

    import mnemon_ls

    ws, root, _ = made
    code = tmp_path / "code"
    shutil.copytree(Path(mnemon_ls.__file__).parent, code / "mnemon_ls", ignore=shutil.ignore_patterns("__pycache__"))
    env = child_env(HOME=str(tmp_path), PYTHONPATH=str(code))
    argv = [sys.executable, "-m", "mnemon_ls", "wake", "--workspace", str(ws), "--data-dir", str(root)]

    def wake_block() -> str:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(ws), timeout=120)
        assert done.returncode == 0, done.stderr
        return block(done.stdout)

    assert "\nSearch before reading: these are titles only." in wake_block()
    assert (root / "documents" / ".cover.json").exists()
    rendering = code / "mnemon_ls" / "documents" / "cover.py"
    rendering.write_text(rendering.read_text("utf-8").replace("Search before reading: these are titles only.",
                                                              "Search first: titles only."), "utf-8")
    assert "\nSearch first: titles only." in wake_block()


def test_the_temp_file_of_another_wakes_write_leaves_the_state_as_it_is(made):
    # ..cover.json.<pid>.<ms>.<hex>.tmp (fsio.temp_name) exists while another one-shot wake keeps its block: a wake
    # then must still find the kept block, and a crashed writer's leftover must not make every wake render anew.
    ws, root, _ = made
    documents = root / "documents"
    first = wake_text(ws, root)
    token = covercache.state_token(str(documents))
    from mnemon_ls.fsio import temp_name

    temp_name(documents / covercache.FILE_NAME).write_text("{", "utf-8")
    assert covercache.state_token(str(documents)) == token
    assert wake_text(ws, root) == first
