"""A pack re-zipped by a zip tool holds directory entries (``payload/``, ``payload/runtime/``...: names ending
``/``, no data) before the files inside them. Those of the pack layout are skipped, so the pack imports as it
was written; any other directory entry is refused in accurate words (not ``unsafe path: has an empty
segment``, which the trailing ``/`` used to read as), and the root refused into is left as it was."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import PackInvalid
from tests.helpers import procs
from tests.helpers.packs import contents, host_on, seed, unpack


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[bytes, Path]:
    """(a full pack of a seeded root, that root)."""
    base = tmp_path_factory.mktemp("packs-folders")
    seed(base / "source")
    host = host_on(base / "source")
    try:
        return packs.export_pack(host, include_user_profile=True).data, base / "source"
    finally:
        host.close()


def rezip(files: dict[str, bytes], folders: list[str], *, folder_data: dict[str, bytes] | None = None) -> bytes:
    """``files`` re-zipped the way ``zip -r`` writes a tree: each folder as a directory entry (made by
    :meth:`zipfile.ZipFile.mkdir`, Python 3.11+, or a ``ZipInfo`` ending ``/`` when it is to hold
    ``folder_data``) before the files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder in folders:
            if folder in (folder_data or {}):
                archive.writestr(zipfile.ZipInfo(folder), folder_data[folder])  # type: ignore[index]
            else:
                archive.mkdir(folder.rstrip("/"))
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def folders_of(names: list[str]) -> list[str]:
    """Every parent folder of ``names`` (``payload/``, ``payload/runtime/``...), shortest first."""
    found = {"/".join(name.split("/")[:i]) + "/" for name in names for i in range(1, name.count("/") + 1)}
    return sorted(found, key=lambda f: (f.count("/"), f))


def test_folders_of_the_layout_are_skipped_and_the_pack_imports_whole(written, tmp_path: Path) -> None:
    data, source = written
    files = unpack(data)
    folders = folders_of(list(files))
    assert {"payload/", "payload/runtime/", "payload/documents/active/"} <= set(folders)
    with_folders = rezip(files, folders)
    with zipfile.ZipFile(io.BytesIO(with_folders)) as archive:  # real directory entries
        assert [i.filename for i in archive.infolist() if i.is_dir()] == folders
    host = host_on(tmp_path / "root")
    try:
        described = host.inspect_pack(with_folders)
        assert described["scope"] == "full"
        host.import_pack(with_folders, mode="replace", replace_user_profile=True)
    finally:
        host.close()
    assert contents(tmp_path / "root") == contents(source)


@pytest.mark.parametrize("folder, rule", [
    ("notes/", "is a directory entry outside the pack layout"),
    ("payload/runtime/extra/", "is a directory entry outside the pack layout"),
    ("payload/data/../", "unsafe path: has an empty, '.' or '..' segment ('..')"),
])
def test_other_folders_are_refused_in_accurate_words(written, tmp_path: Path, folder: str, rule: str) -> None:
    files = unpack(written[0])
    root = tmp_path / "root"
    shutil.copytree(written[1], root)
    before = procs.tree_snapshot(root)
    host = host_on(root)
    try:
        with pytest.raises(PackInvalid) as info:
            host.import_pack(rezip(files, ["payload/", folder]))
    finally:
        host.close()
    assert info.value.field == f"entry:{folder}"
    assert info.value.rule.startswith(rule) and "empty segment" not in info.value.rule
    assert procs.tree_snapshot(root) == before


def test_a_folder_entry_with_data_is_refused(written, tmp_path: Path) -> None:
    files = unpack(written[0])
    host = host_on(tmp_path / "root")
    try:
        with pytest.raises(PackInvalid) as info:
            host.inspect_pack(rezip(files, ["payload/"], folder_data={"payload/": b"hidden"}))
    finally:
        host.close()
    assert (info.value.field, info.value.rule) == (
        "entry:payload/", "is a directory entry that holds 6 bytes; a folder holds none")
