"""Ways to leave a watched host's citation view trusted although the cited file changed (issue 24 items 3 and 9),
each on real files under the real watch (watchfiles, inotify), each failing before its fix:

- an ancestor directory renamed away, or replaced by a symlink to another tree (inotify follows the moved
  inode, so the cited file's own directory reports nothing): the ancestors are watched too;
- a workspace opened through a symlink that is then retargeted: such a workspace's views are never trusted;
- a hard-linked file edited through its other name (reported in the other name's directory): never trusted;
- a same-size edit whose mtime is put back: the file the watch reports is dropped from the cache too;
- watched and wanted directories counted together against the cap;
- a link made after the view was trusted, then an edit through it: seen (the link's attribute event drops the
  view; the periodic audit, every 30 s, bounds what any event misses, such as an overflowed event queue).

Each waits for the watch's own report, never a fixed time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from mnemon_ls.citations import freshness, trust
from mnemon_ls.citations.model import resolve
from mnemon_ls.citations.watch import CitedWatch
from tests.citations.test_watch import CODE, DEADLINE, Seen, trusted_view, workspace  # noqa: F401  (fixture)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[CitedWatch, Seen]]:
    monkeypatch.setenv("MNEMON_WATCH_AUDIT_MS", "200")  # the audit's period, read by the watch
    freshness.clear()
    seen = Seen()
    cited = CitedWatch(on_change=seen)
    cited.start()
    yield cited, seen
    cited.stop()
    freshness.clear()


def wait_under(seen: Seen, directory: Path, after: int = 0) -> bool:
    """Wait until a batch reported after the first ``after`` names ``directory`` or a path under it."""
    real = str(directory)
    with seen._event:
        return seen._event.wait_for(lambda: any(p == real or p.startswith(real + os.sep)
                                                for b in seen.batches[after:] for p in b), DEADLINE)


def cite(workspace: Path, path: str, start: int = 1, end: int | None = None):
    [citation] = resolve(workspace, workspace / ".root", [{"path": path, "startLine": start, "endLine": end or start}])
    return citation


def test_an_ancestor_renamed_away_makes_the_view_gone(watch, workspace: Path) -> None:
    cited, seen = watch
    deep = cite(workspace, "lib/pkg/deep.py")
    assert trusted_view(cited, workspace, deep)["freshness"] == "fresh"
    assert cited.wait_armed([str(workspace), str(workspace / "lib")], DEADLINE)  # the ancestors stand watched
    (workspace / "lib").rename(workspace / "lib-old")
    assert wait_under(seen, workspace / "lib")
    assert not freshness.trusted(workspace, deep)
    assert freshness.view(workspace, deep)["freshness"] == "gone"


def test_an_ancestor_replaced_by_a_symlink_to_another_tree_is_never_answered_from_the_old_one(
        watch, workspace: Path, tmp_path: Path) -> None:
    cited, seen = watch
    deep = cite(workspace, "lib/pkg/deep.py", 1, 2)
    trusted_view(cited, workspace, deep)
    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "deep.py").write_text("something else entirely\n")
    (workspace / "lib").rename(tmp_path / "lib-moved")
    (workspace / "lib").symlink_to(other, target_is_directory=True)
    trust.changed([str(workspace / "lib")])  # the watch's first report (before its catch-up drops the cache)
    assert freshness.view(workspace, deep)["freshness"] == "unknown"  # its real path now leaves the workspace
    assert not freshness.trusted(workspace, deep)  # reached through a link: never trusted (not by a stale verdict)
    assert wait_under(seen, workspace / "lib")
    assert freshness.view(workspace, deep)["freshness"] == "unknown"
    assert not freshness.trusted(workspace, deep)


def test_a_workspace_opened_through_a_symlink_is_never_trusted_and_its_retargeting_is_seen(
        watch, workspace: Path, tmp_path: Path) -> None:
    cited, _seen = watch
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy, symlinks=True)
    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    steps = cite(link, "src/steps.py", 3, 4)
    freshness.view(link, steps)
    assert not cited.wait_armed([str(workspace / "src")], 0.5) or True  # whatever the watch does, ...
    for _ in range(3):
        assert freshness.view(link, steps)["freshness"] == "fresh"
        assert not freshness.trusted(link, steps)  # ... no view of a linked workspace is trusted
    (copy / "src" / "steps.py").write_text("rewritten\n")
    tmp = tmp_path / "link.new"
    tmp.symlink_to(copy, target_is_directory=True)
    os.replace(tmp, link)  # retargeted
    assert freshness.view(link, steps)["freshness"] == "changed"


def test_a_hard_linked_file_is_never_trusted(watch, workspace: Path, tmp_path: Path) -> None:
    cited, seen = watch
    (workspace / "src" / "extra.py").write_text(CODE)
    trusted_view(cited, workspace, cite(workspace, "src/extra.py"))  # a watch stands behind src/
    os.link(workspace / "src" / "steps.py", tmp_path / "other-name.py")
    steps = cite(workspace, "src/steps.py", 3, 4)
    for _ in range(2):
        assert freshness.view(workspace, steps)["freshness"] == "fresh"
    assert not freshness.trusted(workspace, steps)
    with open(tmp_path / "other-name.py", "r+") as handle:  # edited in place through its other name
        handle.write("# changed through the other name\n")
    assert freshness.view(workspace, steps)["freshness"] != "fresh"


def test_a_same_size_edit_with_its_mtime_put_back_is_seen(watch, workspace: Path) -> None:
    cited, seen = watch
    path = workspace / "src" / "steps.py"
    steps = cite(workspace, "src/steps.py", 1, 2)
    assert trusted_view(cited, workspace, steps)["freshness"] == "fresh"
    before = os.stat(path)
    path.write_text(CODE.replace("def step_0():", "def STEP_0():"))  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    assert seen.wait_for(path)
    assert freshness.view(workspace, steps)["freshness"] == "changed"


def test_watched_and_wanted_directories_count_together_against_the_cap(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.setattr(trust, "MAX_DIRECTORIES", 3)
    trust.listen(lambda: None)
    try:
        trust.arm([str(tmp_path / "a"), str(tmp_path / "b")])
        trust.offer(("w", 1), str(tmp_path / "c"), {"freshness": "fresh"}, trust.generation())
        trust.offer(("w", 2), str(tmp_path / "d"), {"freshness": "fresh"}, trust.generation())
        assert trust.wanted() == sorted(str(tmp_path / n) for n in "abc")  # d is beyond the cap: never watched
    finally:
        trust.listen(None)
        trust.disarm()
        freshness.clear()


def test_an_edit_through_a_link_made_later_is_seen(watch, workspace: Path, tmp_path: Path) -> None:
    """A link made after the view was trusted, then an edit through it (the edit itself is reported only in the
    link's directory): the change is seen, within the audit's period at worst."""
    cited, seen = watch
    path = workspace / "src" / "steps.py"
    steps = cite(workspace, "src/steps.py", 1, 2)
    assert trusted_view(cited, workspace, steps)["freshness"] == "fresh"
    os.link(path, tmp_path / "later-link.py")
    mark = seen.mark()
    with open(tmp_path / "later-link.py", "r+") as handle:
        handle.write("# edited through a link made later, longer than before\n")
    assert seen.wait_for(path, after=mark)  # within the audit's period (200 ms here, 30 s by default)
    assert freshness.view(workspace, steps)["freshness"] == "changed"


WATCHER_AS_NOBODY = r"""
import json, sys
from pathlib import Path
import watchfiles  # (imported here too: a watch that cannot import it must not pass as the refused one)
from mnemon_ls.citations import freshness
from mnemon_ls.citations.model import resolve
from mnemon_ls.citations.watch import CitedWatch
workspace = Path(sys.argv[1])
watch = CitedWatch()
watch.start()
[citation] = resolve(workspace, workspace / ".root", [{"path": "src/steps.py", "startLine": 4}])
before = freshness.view(workspace, citation)["freshness"]
failed = watch.wait_failures(1, 60.0)
again = freshness.view(workspace, citation)["freshness"]
trusted = freshness.trusted(workspace, citation)
armed = watch.wait_armed([str(workspace / "src")], 0)
with open(workspace / "src" / "steps.py", "r+b") as handle:
    handle.seek(len("".join(open(workspace / "src" / "steps.py").read().splitlines(keepends=True)[:3])))
    handle.write(b"X")
after = freshness.view(workspace, citation)["freshness"]
watch.stop()
print(json.dumps({"failed": failed, "before": before, "armed": armed, "again": again, "trusted": trusted,
                  "after": after}))
"""


def reachable_packages(site_dir: Path) -> Path:
    """Copies the packages the watcher script imports (mnemon_ls and, from this interpreter's site-packages,
    watchfiles and what it loads) into *site_dir*, readable by ``nobody``: CI installs into a Python under
    ``/root`` (0700), which ``nobody`` may not enter. Returns *site_dir*."""
    import subprocess
    import sys

    probe = ("import sys, watchfiles, anyio.to_thread, mnemon_ls.citations.watch, mnemon_ls.citations.freshness, "
             "mnemon_ls.citations.model; print('\\n'.join(sorted({getattr(m, '__file__', None) or '' "
             "for m in list(sys.modules.values())})))")
    files = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    roots = {Path(p).resolve() for p in __import__("site").getsitepackages()}
    roots.add(Path(__file__).resolve().parents[2])
    site_dir.mkdir()
    for file in map(Path, files):
        for root in sorted(roots, key=lambda r: -len(r.parts)):  # the deepest first (a venv inside the clone)
            if root in file.parents:
                top_level = root / file.relative_to(root).parts[0]
                target = site_dir / top_level.name
                if not target.exists():
                    if top_level.is_dir():
                        shutil.copytree(top_level, target, ignore=shutil.ignore_patterns("__pycache__"))
                    else:
                        shutil.copy2(top_level, target)
                break
    for path in [site_dir, *site_dir.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644 | (path.stat().st_mode & 0o111))
    return site_dir


def test_a_directory_the_watch_may_not_read_is_never_trusted() -> None:
    """The real failure (from the attack2 helper): as root no permission is denied, so the watching process runs as
    ``nobody`` with ``src/`` searchable but not readable (0111): its files can be read, but ``inotify_add_watch``
    is refused (EACCES). watchfiles used to skip it (``ignore_permission_denied``) and the directory was trusted
    with no watch behind it; now the watch fails and nothing is trusted (one ``stat`` per citation)."""
    import json
    import subprocess
    import sys
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("needs root to run the watcher as another user")
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.exists():  # the venv's interpreter may live under /root, which nobody may enter
        pytest.skip(f"no {system} to run the watcher as nobody")
    top = Path(tempfile.mkdtemp(prefix="mnemon-attack-"))
    try:
        os.chmod(top, 0o755)
        (top / "src").mkdir()
        (top / "src" / "steps.py").write_text(CODE)
        for path in (top, top / "src", top / "src" / "steps.py"):
            os.chown(path, 65534, 65534)
        os.chmod(top / "src", 0o111)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
        env.update(PYTHONPATH=str(reachable_packages(top / "site")), PYTHONDONTWRITEBYTECODE="1", HOME=str(top))
        done = subprocess.run([str(system), "-c", WATCHER_AS_NOBODY, str(top)], user=65534, group=65534, env=env,
                              capture_output=True, text=True, timeout=120, cwd=str(top))
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        assert answer == {"failed": True, "before": "fresh", "armed": False, "again": "fresh", "trusted": False,
                          "after": "changed"}
    finally:
        os.chmod(top / "src", 0o755)
        shutil.rmtree(top, ignore_errors=True)
