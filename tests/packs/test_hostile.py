"""Bad packs an attack pass on ``mnemon-ls pack inspect|import`` found unhandled: a packed store with a
damaged page (a traceback from the credential scan), JSON nested past the parser's depth (named
``input`` instead of the pack file), a space name of the wrong type ("is required"). Each gets a clear
error naming the entry or field and the rule, from inspect as from import, and the root stays exactly as
it was (every file's bytes, mode, inode and mtime)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import PackInvalid
from tests.helpers import procs
from tests.helpers.packs import host_on, repack, seed, unpack
from tests.helpers.zygote import mnemon_command


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> tuple[dict[str, bytes], Path]:
    """(the entries of a valid full pack, a seeded root to copy)."""
    base = tmp_path_factory.mktemp("packs-hostile")
    seed(base / "source")
    seed(base / "target", tag=" (target)")
    host = host_on(base / "source")
    try:
        return unpack(packs.export_pack(host).data), base / "target"
    finally:
        host.close()


@pytest.fixture
def target(good, tmp_path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(good[1], root)
    return root


def refused(root: Path, data: bytes) -> PackInvalid:
    before = procs.tree_snapshot(root)
    host = host_on(root)
    try:
        with pytest.raises(PackInvalid) as inspected:
            host.inspect_pack(data)
        with pytest.raises(PackInvalid) as imported:
            host.import_pack(data)
    finally:
        host.close()
    assert procs.tree_snapshot(root) == before
    assert (inspected.value.field, inspected.value.rule) == (imported.value.field, imported.value.rule)
    return imported.value


def _damaged_db(db: bytes) -> bytes:
    """``db`` with its second page overwritten (a b-tree page SQLite's quick_check rejects)."""
    page = int.from_bytes(db[16:18], "big") or 65536
    return db[:page] + b"\xff" * page + db[2 * page:]


def test_a_store_with_a_damaged_page_is_refused_by_inspect_and_import(good, target):
    files = dict(good[0])
    files["payload/data/default/mnemon.db"] = _damaged_db(files["payload/data/default/mnemon.db"])
    error = refused(target, repack(files))
    assert error.field == "entry:payload/data/default/mnemon.db"
    assert error.rule.startswith("is a damaged SQLite database (") and "\n" not in error.rule


def test_the_cli_names_the_damaged_store_without_a_traceback(good, target, tmp_path):
    files = dict(good[0])
    files["payload/data/default/mnemon.db"] = _damaged_db(files["payload/data/default/mnemon.db"])
    pack = tmp_path / "bad.zip"
    pack.write_bytes(repack(files))
    before = procs.tree_snapshot(target)
    for action in ("inspect", "import"):
        result = subprocess.run(
            [*mnemon_command(), "pack", action, str(pack), "--scope", "custom", "--data-dir",
             str(target), "--runtime-user-scope", "storage"], capture_output=True, text=True, cwd=tmp_path,
            timeout=procs.WAIT_SECONDS, env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("mnemon-ls: error: entry:payload/data/default/mnemon.db: is a damaged SQLite "
                                        "database (")
    assert procs.tree_snapshot(target) == before


@pytest.mark.parametrize("name", ["manifest.json", "checksums.json", "payload/runtime/memories.json",
                                  "payload/documents/index.json", "payload/data/.dsh-memory-bodies.json"])
def test_json_nested_past_the_parser_names_the_pack_file(good, target, name):
    files = dict(good[0])
    files[name] = b"[" * 100000 + b"]" * 100000
    error = refused(target, repack(files, checksums=name != "checksums.json"))
    assert (error.field, error.rule) == (name, "is nested too deeply (JSON arrays or objects inside each other)")


@pytest.mark.parametrize("key, value, kind", [("name", 7, ", not an integer (got 7)"),
                                              ("id", ["default"], ", not an array (got ['default'])"),
                                              ("name", None, ", not null")])
def test_a_space_field_of_the_wrong_type_names_the_type(good, target, key, value, kind):
    files = dict(good[0])
    catalog = json.loads(files["payload/data/.dsh-memory-bodies.json"])
    catalog["bodies"][0][key] = value
    files["payload/data/.dsh-memory-bodies.json"] = json.dumps(catalog).encode()
    error = refused(target, repack(files))
    assert (error.field, error.rule) == (f"payload/data/.dsh-memory-bodies.json:bodies[0].{key}",
                                         f"must be a string{kind}")
