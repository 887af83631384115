"""mnemon_ls.settings (validation, defaults) and mnemon_ls.roots (scope -> storage root).

Reference: shared/reference/dsh-mnemon.md 2.1 (scopes, canonical workspace path), 3.2 / 7.4 (runtime
limits 1..1,048,576), case 39; DESIGN.md invariant 7 (resolving a root never writes to disk).
Every resolve test snapshots the whole tmp tree (files and directories) before and after.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, NotFound
from mnemon_ls.roots import canonical_workspace_path, global_root, resolve_root, workspace_hash
from mnemon_ls.settings import MAX_RUNTIME_LIMIT_BYTES, RuntimeMemorySettings, Settings, load_settings

try:
    from tests import gitrepo
except ImportError:  # tests/ on sys.path (pytest "prepend" import mode)
    import gitrepo


def tree(base: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path under base: kind, mtime_ns, bytes (files)."""
    result = {}
    for path in sorted(base.rglob("*")):
        info = path.lstat()
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        data = path.read_bytes() if kind == "file" else b""
        result[str(path.relative_to(base))] = (kind, info.st_mtime_ns, data)
    return result


class Guard:
    """``path`` is tmp_path; call ``seal()`` after the test's own setup."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sealed: dict | None = None

    def seal(self) -> Path:
        self.sealed = tree(self.path)
        return self.path


@pytest.fixture
def untouched(tmp_path):
    """At teardown, asserts nothing under tmp_path changed since ``seal()`` (which must be called)."""
    guard = Guard(tmp_path)
    yield guard
    assert guard.sealed is not None
    assert tree(tmp_path) == guard.sealed


# ================================================================= settings


def test_defaults():
    settings = load_settings()
    assert settings == load_settings({}) == load_settings(None)
    assert (settings.storage_scope, settings.data_dir, settings.runtime_user_scope) == ("workspaces", None, "global")
    assert (settings.runtime_memory.user_limit_bytes, settings.runtime_memory.memory_limit_bytes) == (4096, 10240)
    assert (settings.detached_head_policy, settings.worktree_sharing, settings.wake_budget_chars) == (
        "hide", "shared", 65536)
    assert settings.runtime_memory.limit_for("user") == 4096
    assert settings.runtime_memory.limit_for("memory") == 10240
    assert MAX_RUNTIME_LIMIT_BYTES == 1_048_576


def test_camel_case_settings_are_read():
    settings = load_settings({
        "storageScope": "workspaces", "dataDir": "/srv/mnemon", "runtimeUserScope": "global",
        "runtimeMemory": {"userLimitBytes": 1, "memoryLimitBytes": 1_048_576},
        "detachedHeadPolicy": "show", "worktreeSharing": "separate", "wakeBudgetChars": 1024,
    })
    assert settings.runtime_memory == RuntimeMemorySettings(userLimitBytes=1, memoryLimitBytes=1_048_576)
    assert (settings.storage_scope, settings.data_dir, settings.runtime_user_scope) == (
        "workspaces", "/srv/mnemon", "global")
    assert (settings.detached_head_policy, settings.worktree_sharing, settings.wake_budget_chars) == (
        "show", "separate", 1024)


@pytest.mark.parametrize("key", ["userLimitBytes", "memoryLimitBytes"])
@pytest.mark.parametrize("value", [0, -1, 2 * 1024 * 1024, 1_048_577, "4096", 4096.0, True, None])
def test_case_39_runtime_limit_out_of_range_is_rejected(key, value):
    with pytest.raises(InvalidInput) as info:
        load_settings({"runtimeMemory": {key: value}})
    assert info.value.field == f"runtimeMemory.{key}"
    assert info.value.message.startswith(f"runtimeMemory.{key}: must be an integer in 1..1048576 (got ")
    assert info.value.data["errors"][0]["field"] == f"runtimeMemory.{key}"


def test_every_problem_is_listed():
    with pytest.raises(InvalidInput) as info:
        load_settings({"runtimeMemory": {"userLimitBytes": 0, "memoryLimitBytes": 2 * 1024 * 1024},
                       "storageScope": "everywhere"})
    fields = sorted(problem["field"] for problem in info.value.data["errors"])
    assert fields == ["runtimeMemory.memoryLimitBytes", "runtimeMemory.userLimitBytes", "storageScope"]


@pytest.mark.parametrize(
    "raw, field, rule",
    [
        ({"storageScope": "everywhere"}, "storageScope", "must be one of global, workspace, workspaces, custom"),
        ({"runtimeUserScope": "local"}, "runtimeUserScope", "must be one of storage, global"),
        ({"detachedHeadPolicy": "maybe"}, "detachedHeadPolicy", "must be one of hide, show"),
        ({"worktreeSharing": "yes"}, "worktreeSharing", "must be one of shared, separate"),
        ({"wakeBudgetChars": 1023}, "wakeBudgetChars", "must be an integer in 1024..4194304"),
        ({"wakeBudgetChars": 4_194_305}, "wakeBudgetChars", "must be an integer in 1024..4194304"),
        ({"storeName": "x"}, "storeName", "is not a known setting"),
        ({"runtimeMemory": {"maxTokens": 5}}, "runtimeMemory.maxTokens", "is not a known setting"),
        ({"dataDir": "relative/dir"}, "dataDir", "must be an absolute path or start with ~/"),
        ({"dataDir": "/a\x00b"}, "dataDir", "must not contain NUL"),
        ({"storageScope": "custom"}, "dataDir", "is required when storageScope is custom"),
        ({"storageScope": "custom", "dataDir": "   "}, "dataDir", "is required when storageScope is custom"),
    ],
)
def test_invalid_settings_name_the_field(raw, field, rule):
    with pytest.raises(InvalidInput) as info:
        load_settings(raw)
    assert info.value.field == field
    assert info.value.rule.startswith(rule)
    assert info.value.code == "invalid-input"


def test_data_dir_is_expanded_and_normalized():
    assert load_settings({"dataDir": "~/mnemon-data/"}).data_dir == os.path.join(os.path.expanduser("~"), "mnemon-data")
    assert load_settings({"dataDir": " /srv//a/../b "}).data_dir == "/srv/b"
    assert load_settings({"dataDir": "  "}).data_dir is None


def test_with_overrides_validates():
    settings = load_settings({"storageScope": "workspace"})
    changed = settings.with_overrides(memoryLimitBytes=20480, userLimitBytes=None, wakeBudgetChars=2048)
    assert changed.runtime_memory.memory_limit_bytes == 20480
    assert changed.runtime_memory.user_limit_bytes == 4096
    assert (changed.storage_scope, changed.wake_budget_chars) == ("workspace", 2048)
    with pytest.raises(InvalidInput) as info:
        settings.with_overrides(userLimitBytes=0)
    assert info.value.field == "runtimeMemory.userLimitBytes"
    assert settings.runtime_memory.user_limit_bytes == 4096


def test_settings_are_frozen():
    settings = load_settings()
    with pytest.raises(Exception):
        settings.storage_scope = "custom"  # type: ignore[misc]
    assert isinstance(settings, Settings)


# ================================================================= roots


def test_global_root_from_environment(untouched):
    untouched.seal()
    assert global_root({"MNEMON_DATA_DIR": "  /srv/mnemon  "}) == Path("/srv/mnemon")
    assert global_root({"MNEMON_DATA_DIR": "~/m"}) == Path(os.path.expanduser("~")) / "m"
    assert global_root({"MNEMON_DATA_DIR": "   "}) == Path(os.path.expanduser("~")) / ".mnemon"
    assert global_root({}) == Path(os.path.expanduser("~")) / ".mnemon"
    with pytest.raises(InvalidInput) as info:
        global_root({"MNEMON_DATA_DIR": "/a\x00"})
    assert info.value.field == "MNEMON_DATA_DIR"


def test_each_scope_resolves_without_writing(untouched):
    tmp = untouched.path
    workspace = tmp / "project"
    workspace.mkdir()
    base = tmp / "base"
    untouched.seal()
    env = {"MNEMON_DATA_DIR": str(tmp / "global")}
    real = workspace.resolve()

    glob = resolve_root(workspace, load_settings({"storageScope": "global", "runtimeUserScope": "storage"}), env)
    assert (glob.root, glob.user_root, glob.scope, glob.workspace, glob.split_user) == (
        tmp / "global", tmp / "global", "global", real, False)
    digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()
    default = resolve_root(workspace, load_settings(), env)  # workspaces + runtimeUserScope global
    assert (default.root, default.user_root, default.scope, default.workspace, default.split_user) == (
        tmp / "global" / "workspaces" / digest, tmp / "global", "workspaces", real, True)
    alone = resolve_root(None, load_settings(), env)  # no workspace: the global root
    assert (alone.root, alone.user_root, alone.scope, alone.workspace, alone.split_user) == (
        tmp / "global", tmp / "global", "global", None, False)
    assert resolve_root(workspace, load_settings({"storageScope": "workspace"}), env).root == real / ".mnemon"
    custom = resolve_root(None, load_settings({"storageScope": "custom", "dataDir": str(base)}), env)
    assert (custom.root, custom.workspace) == (base, None)
    digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()
    assert workspace_hash(real) == digest and len(digest) == 64
    assert resolve_root(workspace, load_settings({"storageScope": "workspaces", "dataDir": str(base)}), env).root == (
        base / "workspaces" / digest)
    assert resolve_root(workspace, load_settings({"storageScope": "workspaces"}), env).root == (
        tmp / "global" / "workspaces" / digest)
    split = resolve_root(workspace, load_settings({"storageScope": "workspace", "runtimeUserScope": "global"}), env)
    assert (split.root, split.user_root, split.split_user) == (real / ".mnemon", tmp / "global", True)


def test_workspace_path_is_canonical(untouched):
    tmp = untouched.path
    (tmp / "real" / "sub").mkdir(parents=True)
    (tmp / "link").symlink_to(tmp / "real")
    (tmp / "file.txt").write_text("x")
    untouched.seal()
    real = (tmp / "real").resolve()
    assert canonical_workspace_path(tmp / "link" / "sub") == real / "sub"
    assert canonical_workspace_path(str(tmp / "link" / "sub" / ".." / "sub" / "")) == real / "sub"
    assert canonical_workspace_path(tmp / "link" / "not" / "yet") == real / "not" / "yet"
    with pytest.raises(InvalidInput) as info:
        canonical_workspace_path(tmp / "file.txt" / "child")
    assert info.value.field == "workspace"
    with pytest.raises(InvalidInput) as info:
        canonical_workspace_path("relative/path")
    assert info.value.field == "workspace" and "absolute" in info.value.rule
    with pytest.raises(InvalidInput):
        canonical_workspace_path(str(tmp) + "/a\x00b")
    a = resolve_root(tmp / "link", load_settings({"storageScope": "workspaces"}), {"MNEMON_DATA_DIR": str(tmp / "g")})
    b = resolve_root(tmp / "real", load_settings({"storageScope": "workspaces"}), {"MNEMON_DATA_DIR": str(tmp / "g")})
    assert a.root == b.root


def test_missing_workspace_is_not_found(untouched):
    missing = untouched.seal() / "nope"
    with pytest.raises(NotFound) as info:
        resolve_root(missing, load_settings({"storageScope": "workspace"}), {})
    assert info.value.code == "not-found"
    assert info.value.data == {"field": "workspace", "path": str(missing.parent.resolve() / "nope")}
    assert info.value.message.startswith("workspace: ")
    resolved = resolve_root(missing, load_settings({"storageScope": "workspace"}), {}, require_workspace=False)
    assert resolved.root == missing.parent.resolve() / "nope" / ".mnemon"


def test_workspace_that_is_a_file_or_absent_for_workspace_scopes(untouched):
    (untouched.path / "file").write_text("x")
    untouched.seal()
    with pytest.raises(InvalidInput) as info:
        resolve_root(untouched.path / "file", load_settings({"storageScope": "workspace"}), {})
    assert info.value.field == "workspace"
    with pytest.raises(InvalidInput) as info:
        resolve_root(None, load_settings({"storageScope": "workspace"}), {})
    assert (info.value.field, info.value.rule) == ("workspace", "is required when storageScope is workspace")


def test_data_dir_that_is_a_file_is_rejected(untouched):
    tmp = untouched.path
    (tmp / "data-file").write_text("not a dir")
    (tmp / "ws").mkdir()
    untouched.seal()
    for data_dir in (tmp / "data-file", tmp / "data-file" / "below"):
        for scope, workspace in (("custom", None), ("workspaces", tmp / "ws")):
            with pytest.raises(InvalidInput) as info:
                resolve_root(workspace, load_settings({"storageScope": scope, "dataDir": str(data_dir)}), {})
            assert info.value.field == "dataDir"
            assert info.value.message.startswith("dataDir: ")
            assert str(tmp / "data-file") in info.value.message and "is a file" in info.value.message


def test_global_root_that_is_a_file_is_rejected(untouched):
    tmp = untouched.path
    (tmp / "g").write_text("x")
    (tmp / "ws").mkdir()
    untouched.seal()
    env = {"MNEMON_DATA_DIR": str(tmp / "g")}
    for settings in (load_settings(), load_settings({"storageScope": "global"})):
        with pytest.raises(InvalidInput) as info:
            resolve_root(None, settings, env)
        assert info.value.field == "MNEMON_DATA_DIR"
    with pytest.raises(InvalidInput) as info:
        resolve_root(tmp / "ws", load_settings({"storageScope": "workspace", "runtimeUserScope": "global"}), env)
    assert info.value.field == "MNEMON_DATA_DIR"


def test_linked_worktree_shares_the_main_tree_root(tmp_path):
    repo = gitrepo.make_repo(tmp_path / "main")
    gitrepo.add_worktree(repo, "wt", tmp_path / "wt", "feature")
    (tmp_path / "wt" / "pkg").mkdir()
    before = tree(tmp_path)
    main = (tmp_path / "main").resolve()
    shared = resolve_root(tmp_path / "wt" / "pkg", load_settings({"storageScope": "workspace"}), {})
    assert (shared.root, shared.workspace, shared.shared_from) == (
        main / "pkg" / ".mnemon", main / "pkg", (tmp_path / "wt" / "pkg").resolve())
    separate = resolve_root(tmp_path / "wt", load_settings({"storageScope": "workspace", "worktreeSharing": "separate"}), {})
    assert (separate.root, separate.shared_from) == ((tmp_path / "wt").resolve() / ".mnemon", None)
    in_main = resolve_root(tmp_path / "main", load_settings({"storageScope": "workspace"}), {})
    assert (in_main.root, in_main.shared_from) == (main / ".mnemon", None)
    assert tree(tmp_path) == before


def test_data_dir_without_scope_means_custom(tmp_path):
    # Reference 2.1: with no storageScope, a dataDir selects the custom scope (and is not ignored).
    settings = load_settings({"dataDir": str(tmp_path / "root")})
    assert (settings.storage_scope, settings.data_dir) == ("custom", str(tmp_path / "root"))
    assert load_settings({"dataDir": str(tmp_path), "storageScope": "workspaces"}).storage_scope == "workspaces"


# ================================================================= default workspace (CLI) and .gitignore


def test_find_workspace_is_the_nearest_git_or_mnemon_folder(untouched):
    from mnemon_ls.roots import find_workspace

    tmp = untouched.path
    repo = gitrepo.make_repo(tmp / "repo")
    (tmp / "repo" / "a" / "b").mkdir(parents=True)
    (tmp / "plain" / "deep").mkdir(parents=True)
    (tmp / "marked" / ".mnemon").mkdir(parents=True)
    (tmp / "marked" / "x").mkdir()
    home = tmp / "home"
    (home / ".mnemon").mkdir(parents=True)
    (home / "notes").mkdir()
    gitrepo.add_worktree(repo, "wt", tmp / "wt", "feature")
    untouched.seal()
    real = tmp.resolve()
    env = {"MNEMON_DATA_DIR": str(tmp / "elsewhere")}
    assert find_workspace(tmp / "repo" / "a" / "b", env) == real / "repo"
    assert find_workspace(tmp / "repo" / "a" / "b" / "file.txt", env) == real / "repo"  # a file: its directory
    assert find_workspace(tmp / "wt", env) == real / "wt"  # a linked worktree's .git file counts
    assert find_workspace(tmp / "marked" / "x", env) == real / "marked"
    assert find_workspace(tmp / "plain" / "deep", env) is None
    # The global root's .mnemon and the one in $HOME are not workspace markers.
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        assert find_workspace(home / "notes", {}) is None
        assert find_workspace(home / "notes", {"MNEMON_DATA_DIR": str(tmp / "marked" / ".mnemon")}) is None
    finally:
        if old is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old
    assert find_workspace(tmp / "marked" / "x", {"MNEMON_DATA_DIR": str(tmp / "marked" / ".mnemon")}) is None


def _add(host, content="a fact"):
    from mnemon_ls.runtime import ops

    return host.runtime.mutate(ops.validate_request("add", "memory", content))


def test_gitignore_is_written_when_a_write_creates_a_root_inside_a_working_tree(tmp_path):
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.roots_gitignore import ROOT_GITIGNORE

    repo = gitrepo.make_repo(tmp_path / "repo")
    ws = (tmp_path / "repo").resolve()
    env = {"MNEMON_DATA_DIR": str(tmp_path / "global")}
    before = tree(tmp_path)
    host = WorkspaceHost(ws, load_settings({"storageScope": "workspace"}), env=env)
    assert tree(tmp_path) == before  # resolving and building the host write nothing (invariant 7)
    _add(host)
    gitignore = ws / ".mnemon" / ".gitignore"
    assert gitignore.read_bytes() == ROOT_GITIGNORE == b"# Created by mnemon-ls: this storage root is private memory, not source.\n*\n"
    assert gitignore.stat().st_mode & 0o777 == 0o600
    assert repo.status() == {}  # nothing untracked: the whole root is ignored
    assert repo.path_is_ignored(".mnemon/runtime/memories.json")
    # custom scope inside the repository: same treatment, at the root's top
    custom = WorkspaceHost(ws, load_settings({"storageScope": "custom", "dataDir": str(ws / "var" / "mem")}), env=env)
    _add(custom)
    assert (ws / "var" / "mem" / ".gitignore").read_bytes() == ROOT_GITIGNORE
    assert not (ws / "var" / ".gitignore").exists()
    assert repo.status() == {}
    # a root outside every working tree gets none (the default scope: <global>/workspaces/<sha256>)
    default = WorkspaceHost(ws, load_settings(), env=env)
    _add(default)
    assert (default.root / "runtime" / "memories.json").exists()
    assert not (default.root / ".gitignore").exists() and not (tmp_path / "global" / ".gitignore").exists()


def test_gitignore_is_written_once_and_never_overwritten(tmp_path):
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.roots_gitignore import write_root_gitignore

    gitrepo.make_repo(tmp_path / "repo")
    ws = (tmp_path / "repo").resolve()
    settings = load_settings({"storageScope": "workspace"})
    _add(WorkspaceHost(ws, settings, env={}), "first")
    gitignore = ws / ".mnemon" / ".gitignore"
    gitignore.write_bytes(b"# mine\n*\n!shared.md\n")
    stat = gitignore.stat()
    host = WorkspaceHost(ws, settings, env={})
    _add(host, "second")
    host.documents.create("Title", "Body")  # another Source creating documents/ under the same root
    assert gitignore.read_bytes() == b"# mine\n*\n!shared.md\n"
    assert (gitignore.stat().st_ino, gitignore.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert write_root_gitignore(ws / ".mnemon") is False and gitignore.read_bytes() == b"# mine\n*\n!shared.md\n"
    # A person who deletes it (to commit the memory on purpose) is not overruled by later writes.
    gitignore.unlink()
    _add(WorkspaceHost(ws, settings, env={}), "third")
    assert not gitignore.exists()


def test_doctor_git_findings_for_tracked_and_unignored_roots(tmp_path):
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.roots_gitignore import diagnose_git

    repo = gitrepo.make_repo(tmp_path / "repo")
    ws = (tmp_path / "repo").resolve()
    host = WorkspaceHost(ws, load_settings({"storageScope": "workspace"}), env={})
    root = ws / ".mnemon"
    assert diagnose_git(root) == []  # not created yet
    _add(host)
    [ok] = diagnose_git(root)
    assert (ok.level, ok.subject, ok.message) == ("ok", str(root), f"inside the git working tree {ws}; ignored by git")
    repo.index.add(".mnemon/runtime/MEMORY.md")  # force-added, as `git add -f` would
    repo.index.write()
    before = tree(tmp_path)
    [tracked] = diagnose_git(root)
    assert tree(tmp_path) == before  # read-only
    assert (tracked.level, tracked.message, tracked.advice) == (
        "warning",
        f"1 file(s) under this storage root are tracked by the git repository {ws} (.mnemon/runtime/MEMORY.md); "
        "memory is private and would be pushed with the repository",
        f"git -C {ws} rm -r --cached -- .mnemon (the files stay on disk), and keep {root / '.gitignore'} "
        "containing the line *")
    repo.index.remove(".mnemon/runtime/MEMORY.md")
    repo.index.write()
    (root / ".gitignore").unlink()
    [unignored] = diagnose_git(root)
    assert (unignored.level, unignored.message) == (
        "warning", f"lies inside the git working tree {ws} and is not ignored: `git add .` would commit it")
    assert diagnose_git(tmp_path / "nowhere") == []
