"""Citations (issue 24 items 1 and 3) in process, on real files and real git repositories: the hash of the cited
lines with line endings normalised, ``PATH[:START[-END]]``, and freshness (fresh, moved with the new range,
changed, gone, unknown) against the working tree now, per branch, with its cache by path, size, mtime and inode."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from mnemon_ls.citations import freshness
from mnemon_ls.citations.model import Citation, hash_lines, parse_cite, resolve, text_lines
from mnemon_ls.citations.store import CitationFile
from mnemon_ls.errors import InvalidInput
from tests.gitrepo import commit_files, create_branch, make_repo, switch


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    freshness.clear()


def test_the_hash_is_of_the_lines_each_ending_in_one_newline_whatever_the_file_used() -> None:
    expected = hashlib.sha256(b"b\nc\n").hexdigest()
    for data in (b"a\nb\nc\nd\n", b"a\r\nb\r\nc\r\nd", b"a\rb\rc\rd\r"):
        assert hash_lines(text_lines(data)[1:3]) == expected
    assert text_lines(b"x\n\ny") == ["x", "", "y"]  # an empty line is a line; a final newline starts none
    assert text_lines("\ufeffé\n".encode()) == ["é"]


def test_parse_cite_takes_a_path_a_line_or_a_range() -> None:
    assert parse_cite("src/app.py") == {"path": "src/app.py"}
    assert parse_cite("src/app.py:12") == {"path": "src/app.py", "startLine": 12, "endLine": 12}
    assert parse_cite("src/app.py:3-9") == {"path": "src/app.py", "startLine": 3, "endLine": 9}
    assert parse_cite("odd:name.txt") == {"path": "odd:name.txt"}  # a tail that is no range stays in the path
    with pytest.raises(InvalidInput) as caught:
        parse_cite(":3")
    assert caught.value.field == "cites"


def test_resolve_makes_the_path_relative_and_posix_and_defaults_the_range(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    whole, line, absolute = resolve(workspace, tmp_path / "root", [
        {"path": "src/app.py"}, {"path": "./src/../src/app.py", "startLine": 2, "symbol": "two"},
        {"path": str(workspace / "src" / "app.py"), "startLine": 2, "endLine": 3}])
    assert whole == Citation("src/app.py", 1, 3, hashlib.sha256(b"one\ntwo\nthree\n").hexdigest())
    assert line == Citation("src/app.py", 2, 2, hashlib.sha256(b"two\n").hexdigest(), "two")
    assert absolute == Citation("src/app.py", 2, 3, hashlib.sha256(b"two\nthree\n").hexdigest())


def _cite(workspace: Path, path: str, start: int, end: int) -> Citation:
    return resolve(workspace, None, [{"path": path, "startLine": start, "endLine": end}])[0]


def test_fresh_moved_changed_gone_and_unknown(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / "f.py"
    target.write_text("a\nb\nc\nd\n")
    cite = _cite(workspace, "f.py", 2, 3)
    assert freshness.evaluate(workspace, cite) == {"freshness": "fresh"}
    target.write_text("new\nnewer\na\nb\nc\nd\n")
    assert freshness.evaluate(workspace, cite) == {"freshness": "moved", "movedTo": {"startLine": 4, "endLine": 5}}
    assert freshness.reanchored(workspace, cite) == Citation("f.py", 4, 5, cite.sha256)
    target.write_text("a\nB\nc\nd\n")
    assert freshness.evaluate(workspace, cite) == {"freshness": "changed"}
    target.write_bytes(b"a\x00b\n")
    assert freshness.evaluate(workspace, cite) == {"freshness": "changed"}  # no longer text: not found
    target.unlink()
    assert freshness.evaluate(workspace, cite) == {"freshness": "gone"}
    target.mkdir()
    assert freshness.evaluate(workspace, cite) == {"freshness": "gone"}
    assert freshness.evaluate(None, cite) == {"freshness": "unknown"}
    target.rmdir()
    target.write_text("a\nb\nc\nd\n")
    target.chmod(0)
    try:
        if not os.access(target, os.R_OK):  # root reads anything: then the state is fresh
            assert freshness.evaluate(workspace, cite) == {"freshness": "unknown"}
    finally:
        target.chmod(0o644)


def test_moved_picks_the_copy_nearest_the_old_place(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "f.py").write_text("x\ny\n" + "pad\n" * 10 + "x\ny\n")
    cite = _cite(workspace, "f.py", 11, 12)
    assert cite.sha256 == hashlib.sha256(b"pad\npad\n").hexdigest()
    (workspace / "f.py").write_text("x\ny\n" + "pad\n" * 10 + "x\ny\n" + "pad\n" * 2)
    # "pad\npad" now also starts at 2 lines below; the nearest match to 11 is 11 itself: fresh
    assert freshness.evaluate(workspace, cite) == {"freshness": "fresh"}
    (workspace / "f.py").write_text("pad\npad\n" + "q\n" * 5 + "pad\npad\n")  # at 1-2 and 8-9: 8 is nearer 11
    assert freshness.evaluate(workspace, cite) == {"freshness": "moved", "movedTo": {"startLine": 8, "endLine": 9}}


def test_freshness_follows_the_branch_checked_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    workspace = Path(repo.workdir)
    commit_files(repo, {"src/lib.py": "def f():\n    return 1\n", "gone.py": "x = 1\n"}, "lib")
    create_branch(repo, "feature")
    cite = _cite(workspace, "src/lib.py", 1, 2)
    gone = _cite(workspace, "gone.py", 1, 1)
    switch(repo, "feature")
    repo.index.remove("gone.py")
    (workspace / "gone.py").unlink()
    commit_files(repo, {"src/lib.py": "import os\n\ndef f():\n    return 1\n"}, "moved on feature")
    assert freshness.evaluate(workspace, cite) == {"freshness": "moved", "movedTo": {"startLine": 3, "endLine": 4}}
    assert freshness.evaluate(workspace, gone) == {"freshness": "gone"}
    switch(repo, "main")
    assert freshness.evaluate(workspace, cite) == {"freshness": "fresh"}
    assert freshness.evaluate(workspace, gone) == {"freshness": "fresh"}


def test_the_cache_reads_a_file_again_only_when_its_stat_changes_or_it_is_invalidated(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / "f.py"
    target.write_text("a\nb\n")
    cite = _cite(workspace, "f.py", 1, 1)
    before = freshness.reads
    for _ in range(5):
        assert freshness.evaluate(workspace, cite)["freshness"] == "fresh"
    assert freshness.reads == before + 1  # one read for five evaluations
    info = os.stat(target)
    target.write_text("z\nb\n")  # same size; the mtime may not move on a coarse clock: pin it back
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    replaced = workspace / "f.new"
    replaced.write_text("z\nb\n")
    os.utime(replaced, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(replaced, target)  # same size and mtime, a new inode: read again
    assert freshness.evaluate(workspace, cite) == {"freshness": "changed"}
    assert freshness.reads == before + 2
    assert freshness.evaluate(workspace, cite) == {"freshness": "changed"}
    assert freshness.reads == before + 2
    freshness.invalidate(target)  # the watcher's call: read again
    assert freshness.evaluate(workspace, cite) == {"freshness": "changed"}
    assert freshness.reads == before + 3


def test_a_side_file_keeps_only_citations_and_skips_what_is_not_one(tmp_path: Path) -> None:
    side = CitationFile(tmp_path / "state" / "citations" / "runtime.json")
    assert side.read() == {}
    good = Citation("f.py", 1, 2, "a" * 64, "f")
    side.update({"k1": [good], "k2": [good]})
    assert side.read() == {"k1": [good], "k2": [good]}
    assert oct(side.path.stat().st_mode & 0o777) == "0o600"
    side.update({"k1": None}, keep=lambda key: key != "k2")
    assert side.read() == {}
    side.path.write_text('{"version": 1, "citations": {"k": [{"path": "f.py", "startLine": 3, "endLine": 2, '
                         '"sha256": "' + "a" * 64 + '"}, ' + '{"path": "f.py", "startLine": 1, "endLine": 2, '
                         '"sha256": "' + "a" * 64 + '"}]}}')
    assert side.read() == {"k": [Citation("f.py", 1, 2, "a" * 64)]}
    side.path.write_text("not json")
    assert side.read() == {}


def test_a_known_file_replaced_by_a_link_out_of_the_workspace_is_unknown_and_views_follow_the_file(
        tmp_path: Path) -> None:
    """The one-``stat`` fast paths (a known path's verdict, a kept view) hold only while the file is the same: a
    cited file replaced by a link to an identical file outside the workspace is ``unknown`` at once, and a view
    kept for the fresh file is not answered for the changed one."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / "f.py"
    target.write_text("a\nb\nc\n")
    cite = _cite(workspace, "f.py", 1, 2)
    for _ in range(3):  # known and kept
        assert freshness.view(workspace, cite)["freshness"] == "fresh"
        assert freshness.evaluate(workspace, cite) == {"freshness": "fresh"}
    outside = tmp_path / "outside.py"
    outside.write_text("a\nb\nc\n")
    target.unlink()
    target.symlink_to(outside)
    assert freshness.evaluate(workspace, cite) == {"freshness": "unknown"}
    assert freshness.view(workspace, cite)["freshness"] == "unknown"
    target.unlink()
    target.write_text("x\na\nb\nc\n")
    assert freshness.view(workspace, cite) == cite.to_json() | {"freshness": "moved",
                                                                "movedTo": {"startLine": 2, "endLine": 3}}
    view = freshness.view(workspace, cite)
    view["freshness"] = "edited by a caller"  # a caller's change never reaches the kept view
    assert freshness.view(workspace, cite)["freshness"] == "moved"
