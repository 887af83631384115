"""The ``mnemon-ls`` console script, run for real in a subprocess (no in-process ``main()`` calls).

Every run gets ``HOME`` and ``MNEMON_DATA_DIR`` inside ``tmp_path``, the storage scope ``global`` with
``runtimeUserScope=storage`` named explicitly (``--scope global --runtime-user-scope storage``, the
TypeScript plugin's defaults, unless the test names a scope itself), no ``GIT_*`` / ``MNEMON_*``
variables from the outside, and a real repository made with pygit2 on branch ``main`` as its working
directory (the default workspace). The defaults themselves (``workspaces`` + ``global``) are tested in
``test_default_root_*`` below.

Expected values are written out from the reference (dsh-mnemon.md 3.1-3.7) rather than computed with
the package: the revision is sha256 of the compact JSON of memories.json, projections are the contents
joined by ``\\n§\\n`` plus ``\\n``, and snapshot texts are spelled out line by line.

Exit codes (mnemon_ls/cli/): 0 ok, 2 invalid input, 3 rejected by the store, 1 anything else. An error is one
line on stderr, never a traceback, and a failed command changes no byte under ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2
import pytest

from mnemon_ls import __version__
from mnemon_ls.runtime import ops
from mnemon_ls.guidance import WAKE_GUIDANCE_LINE
from mnemon_ls.runtime.snapshot import EXPLANATION, stamp_view_revision
from mnemon_ls.runtime.store import RuntimeStore


from tests.helpers.zygote import mnemon_command  # noqa: E402
from tests.helpers import procs  # noqa: E402  (shared subprocess and file-tree helpers)

_beside = Path(sys.executable).parent / "mnemon-ls"
MNEMON_LS = str(_beside) if _beside.exists() else shutil.which("mnemon-ls")
EMPTY_REVISION = hashlib.sha256(b'{"version":1,"entries":[]}').hexdigest()
SIG = pygit2.Signature("Test Author", "author@example.com", 1_700_000_000, 0)


def make_repo(path: Path, branch: str = "main") -> pygit2.Repository:
    """A non-bare repository with one commit on ``branch`` (index, tree and HEAD consistent)."""
    repo = pygit2.init_repository(str(path), initial_head=branch)
    (path / "README").write_text("hello\n")
    repo.index.add("README")
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])
    return repo


class Cli:
    """Runs the console script for one test: ``ws`` repo (cwd), ``data`` root, ``tmp`` (realpath)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = Path(os.path.realpath(tmp_path))
        self.ws = self.tmp / "ws"
        self.ws.mkdir()
        make_repo(self.ws)
        self.home = self.tmp / "home"
        self.home.mkdir()
        self.data = self.tmp / "data"
        self.runtime = self.data / "runtime"
        self.memories = self.runtime / "memories.json"
        self.env = procs.child_env(HOME=str(self.home), MNEMON_DATA_DIR=str(self.data))

    #: Appended to every command that takes settings and names no scope of its own.
    SCOPE = ("--scope", "global", "--runtime-user-scope", "storage")

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            scoped: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess:
        if scoped and not {"--scope", "--data-dir", "--help", "--version"} & set(args) and args[:1] != ("serve",):
            args = (*args, *self.SCOPE)
        result = subprocess.run(
            mnemon_command(*args),  # forked (the console script MNEMON_LS runs in test_argv.py, test_text.py)
            cwd=cwd or self.ws,
            env={**self.env, **(env or {})},
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=procs.WAIT_SECONDS,
        )
        assert "Traceback" not in result.stderr
        return result

    def ok(self, *args: str, stdin: str | None = None) -> str:
        result = self.run(*args, stdin=stdin)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        return result.stdout

    def ok_json(self, *args: str, stdin: str | None = None):
        return json.loads(self.ok(*args, "--json", stdin=stdin))

    def seed(self, *items: tuple[str, str]) -> None:
        """Add (target, content) entries through the store (same code the CLI runs)."""
        store = RuntimeStore(self.data)
        for target, content in items:
            store.mutate(ops.validate_request("add", target, content))

    def revision(self) -> str:
        document = json.loads(self.memories.read_bytes())
        return hashlib.sha256(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()

    def contents(self, target: str) -> list[str]:
        return [e["content"] for e in json.loads(self.memories.read_bytes())["entries"] if e["target"] == target]

    def assert_projections(self) -> None:
        for target, name in (("user", "USER.md"), ("memory", "MEMORY.md")):
            contents = self.contents(target)
            expected = ("\n\u00a7\n".join(contents) + "\n").encode() if contents else b""
            assert (self.runtime / name).read_bytes() == expected


@pytest.fixture
def cli(tmp_path) -> Cli:
    return Cli(tmp_path)


def used(contents: list[str]) -> int:
    return sum(len(c.encode()) for c in contents) + 4 * max(0, len(contents) - 1)


def snapshot(revision: str, branch_line: str, user: list[str], memory: list, used_user: int,
             used_memory: int, limits: tuple[int, int] = (4096, 10240), notices: list[str] = ()) -> str:
    """The wake text (reference 3.6 / snapshot.py layout) for fresh entries (ages 0d, importance normal; a
    ``(content, branches)`` pair is a branch-scoped entry) with the guidance line; ``revision`` is the store's."""
    def body(contents: list[str]) -> list[str]:
        if not contents:
            return ["(empty)"]
        lines: list[str] = []
        for index, content in enumerate(contents):
            if index:
                lines.append("\u00a7")
            content, branches = content if isinstance(content, tuple) else (content, None)
            scope = f"; branches={','.join(branches)}" if branches else ""
            lines += [f"[importance=normal; created=0d; updated=0d{scope}]", content]
        return lines

    return stamp_view_revision("\n".join([
        "MNEMON RUNTIME MEMORY SNAPSHOT",
        "Revision: " + "0" * 64,
        f"Store revision: {revision}",
        branch_line,
        EXPLANATION,
        WAKE_GUIDANCE_LINE,
        *[f"Notice: {n}" for n in notices],
        "",
        f"Contents of USER.md (user profile; entries: {len(user)}; UTF-8 bytes: {used_user}/{limits[0]})",
        '<runtime-memory-file name="USER.md">',
        *body(user),
        "</runtime-memory-file>",
        "",
        f"Contents of MEMORY.md (working reference; entries: {len(memory)}; UTF-8 bytes: {used_memory}/{limits[1]})",
        '<runtime-memory-file name="MEMORY.md">',
        *body(memory),
        "</runtime-memory-file>",
    ]))[0]


# ------------------------------------------------------------------------------------------------ wake


def test_wake_on_main_prints_the_snapshot_and_writes_nothing(cli):
    out = cli.ok("wake")
    assert out == snapshot(EMPTY_REVISION, "Git branch: main", [], [], 0, 0) + "\n"
    assert not cli.data.exists()  # reading an empty root creates nothing

    cli.seed(("user", "likes tea"), ("memory", "uses pytest"), ("memory", "CI runs on push"))
    out = cli.ok("wake")
    expected = snapshot(cli.revision(), "Git branch: main", ["likes tea"], ["uses pytest", "CI runs on push"],
                        9, used(["uses pytest", "CI runs on push"]))
    assert out == expected + "\n"


def test_wake_json_carries_text_revision_branch_hidden_omitted(cli):
    cli.seed(("memory", "uses pytest"))
    data = cli.ok_json("wake")
    text = snapshot(cli.revision(), "Git branch: main", [], ["uses pytest"], 0, 11)
    assert data == {
        "text": text,
        "revision": text.split("\n")[1].removeprefix("Revision: "),
        "storeRevision": cli.revision(),
        "branch": "main",
        "branchReason": None,
        "hidden": 0,
        "omitted": 0,
        "chars": len(text),
        "notices": [],
        "archived": 0,
        "root": str(cli.data),
        "repairs": [{"repaired": [], "preserved": {}, "skipped": None, "store": str(cli.data / "runtime")}],
    }


def test_wake_branch_flag_shows_and_hides_branch_scoped_entries(cli):
    cli.ok("runtime", "add", "--content", "shared fact")
    cli.ok("runtime", "add", "--content", "only on feature/x", "--branch", "feature/x")
    entries = json.loads(cli.memories.read_bytes())["entries"]
    assert [e.get("branches") for e in entries] == [None, ["feature/x"]]
    both = ["shared fact", "only on feature/x"]
    revision = cli.revision()

    feature = cli.ok_json("wake", "--branch", "feature/x")
    assert (feature["branch"], feature["branchReason"], feature["hidden"]) == ("feature/x", "given", 0)
    assert feature["text"] == snapshot(revision, "Git branch: feature/x (given)", [],
                                       ["shared fact", ("only on feature/x", ["feature/x"])], 0, used(both))

    main = cli.ok("wake", "--branch", "main")
    assert main == snapshot(revision, "Git branch: main (given; 1 branch-scoped entry hidden)", [],
                            ["shared fact"], 0, used(both)) + "\n"  # bytes count the whole store
    probed = cli.ok_json("wake")  # the repository is on main
    assert (probed["branch"], probed["branchReason"], probed["hidden"]) == ("main", None, 1)
    assert probed["text"] == snapshot(revision, "Git branch: main (1 branch-scoped entry hidden)", [],
                                      ["shared fact"], 0, used(both))
    # Same store revision on both branches; the view revision tells apart what each snapshot shows.
    assert probed["storeRevision"] == feature["storeRevision"] == revision
    assert probed["revision"] != feature["revision"]


def test_wake_repairs_a_deleted_projection_and_says_so(cli):
    cli.seed(("memory", "uses pytest"))
    (cli.runtime / "MEMORY.md").unlink()
    result = cli.run("wake")
    assert result.returncode == 0
    assert result.stderr == f"mnemon-ls: repaired {cli.runtime / 'MEMORY.md'}\n"
    assert result.stdout == snapshot(cli.revision(), "Git branch: main", [], ["uses pytest"], 0, 11) + "\n"
    cli.assert_projections()


# ------------------------------------------------------------------------------------------ runtime ops


def test_runtime_add_replace_remove_list_and_their_receipts(cli):
    out = cli.ok("runtime", "add", "--content", "Use pytest for tests")
    assert out == f"Entry added. MEMORY.md: 1 entry, 20/10240 UTF-8 bytes; revision {cli.revision()[:12]}\n"
    cli.assert_projections()

    receipt = cli.ok_json("runtime", "add", "--target", "user", "--content", "  Prefers  terse\n\tanswers ")
    assert receipt == {"success": True, "message": "Entry added.", "target": "user", "entryCount": 1,
                       "usage": {"used": 21, "limit": 4096}, "revision": cli.revision(), "changed": True,
                       "added": "Prefers terse answers"}
    cli.assert_projections()

    before = procs.tree_snapshot(cli.data)
    receipt = cli.ok_json("runtime", "add", "--content", "Use  pytest for tests")
    assert receipt == {"success": True, "message": "Entry already exists.", "target": "memory", "entryCount": 1,
                       "usage": {"used": 20, "limit": 10240}, "revision": cli.revision(), "changed": False,
                       "added": "Use pytest for tests"}
    assert procs.tree_snapshot(cli.data) == before  # a duplicate add writes nothing

    receipt = cli.ok_json("runtime", "replace", "--old-text", "pytest", "--content", "Use pytest -q for tests",
                          "--importance", "critical")
    assert receipt == {"success": True, "message": "Entry replaced.", "target": "memory", "entryCount": 1,
                       "usage": {"used": 23, "limit": 10240}, "revision": cli.revision(), "changed": True,
                       "replaced": {"from": "Use pytest for tests", "to": "Use pytest -q for tests"}}
    cli.assert_projections()
    stored = json.loads(cli.memories.read_bytes())["entries"]
    assert [(e["target"], e["content"], e["importance"]) for e in stored] == [
        ("memory", "Use pytest -q for tests", "critical"), ("user", "Prefers terse answers", "normal")]

    listing = cli.ok_json("runtime", "list")
    keyed = [e | {"key": f"{e['target']}:" + hashlib.sha256(e["content"].encode()).hexdigest()} for e in stored]
    assert listing == {"revision": cli.revision(), "entries": [keyed[1], keyed[0]], "problems": []}
    assert cli.ok("runtime", "list", "--target", "memory") == (
        "MEMORY.md (memory; 1 entry; 23/10240 UTF-8 bytes)\n"
        "  1. [critical; created=0d; updated=0d] Use pytest -q for tests\n")
    assert cli.ok("runtime", "list") == (
        "USER.md (user; 1 entry; 21/4096 UTF-8 bytes)\n"
        "  1. [normal; created=0d; updated=0d] Prefers terse answers\n"
        "MEMORY.md (memory; 1 entry; 23/10240 UTF-8 bytes)\n"
        "  1. [critical; created=0d; updated=0d] Use pytest -q for tests\n")

    receipt = cli.ok_json("runtime", "remove", "--old-text", "pytest -q")
    assert receipt == {"success": True, "message": "Entry removed.", "target": "memory", "entryCount": 0,
                       "usage": {"used": 0, "limit": 10240}, "revision": cli.revision(), "changed": True,
                       "removed": "Use pytest -q for tests"}
    cli.assert_projections()
    assert (cli.runtime / "MEMORY.md").read_bytes() == b""
    out = cli.ok("runtime", "remove", "--target", "user", "--old-text", "terse")
    assert out == f"Entry removed. USER.md: 0 entries, 0/4096 UTF-8 bytes; revision {EMPTY_REVISION[:12]}\n"
    assert cli.revision() == EMPTY_REVISION
    assert sorted(os.listdir(cli.runtime)) == [".memories.last-good.json", ".projections-history.json", "MEMORY.md", "USER.md", "memories.json"]


def test_content_dash_reads_standard_input(cli):
    receipt = cli.ok_json("runtime", "add", "--content", "-", stdin="first line\n\tsecond  line\n")
    assert (receipt["added"], receipt["usage"]) == ("first line second line", {"used": 22, "limit": 10240})
    receipt = cli.ok_json("runtime", "replace", "--old-text", "second", "--content", "-", stdin="café ☕\n")
    assert receipt["replaced"] == {"from": "first line second line", "to": "café ☕"}
    assert cli.contents("memory") == ["café ☕"]
    assert (cli.runtime / "MEMORY.md").read_bytes() == "café ☕\n".encode()
    result = cli.run("runtime", "add", "--content", "-", stdin=" \n\t\n")
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "mnemon-ls: error: --content: is required (empty or only whitespace)\n")


# ------------------------------------------------------------------------------------------ failures

# (args, env overrides, exit code, stderr line). Placeholders: {tmp} (realpath of tmp_path), {data}.
FAILURES = {
    "content-with-section-sign": (["runtime", "add", "--content", "a\u00a7b"], {}, 2,
                                  "--content: must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "empty-content": (["runtime", "add", "--content", ""], {}, 2, "--content: is required (empty or only whitespace)"),
    "blank-content": (["runtime", "add", "--content", " \n\t "], {}, 2,
                      "--content: is required (empty or only whitespace)"),
    "content-over-8-KiB": (["runtime", "add", "--content", "é" * 4097], {}, 2,
                           "--content: is 8194 UTF-8 bytes; an entry is at most 8192 bytes"),
    "branch-with-target-user": (["runtime", "add", "--target", "user", "--content", "x", "--branch", "main"], {}, 2,
                                "--branch: applies to target=memory only"),
    "branch-dash-x": (["runtime", "add", "--content", "x", "--branch=-x"], {}, 2,
                      "--branch -x: must not start with '/' or '-' (got '-x')"),
    "branch-dot-dot": (["runtime", "add", "--content", "x", "--branch", "a..b"], {}, 2,
                       "--branch a..b: must not contain '..' (got 'a..b')"),
    "branch-repeated": (["runtime", "add", "--content", "x", "--branch", "main", "--branch", "main"], {}, 2,
                        "--branch main: repeats the branch name 'main'"),
    "no-branches-with-branch": (["runtime", "replace", "--old-text", "alpha one", "--content", "y",
                                 "--no-branches", "--branch", "main"], {}, 2,
                                "--branch: --no-branches cannot be combined with --branch"),
    "replace-into-duplicate": (["runtime", "replace", "--old-text", "alpha one", "--content", "alpha  two"], {}, 2,
                               "--content: duplicates another memory entry; remove one of them instead"),
    "old-text-with-section-sign": (["runtime", "remove", "--old-text", "alpha\u00a7"], {}, 2,
                                   "--old-text: must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "empty-old-text": (["runtime", "remove", "--old-text", "  "], {}, 2,
                       "--old-text: is required (empty or only whitespace)"),
    "memory-limit-zero": (["runtime", "add", "--content", "x", "--memory-limit-bytes", "0"], {}, 2,
                          "--memory-limit-bytes: must be an integer in 1..1048576 (got 0)"),
    "user-limit-too-big": (["runtime", "add", "--content", "x", "--user-limit-bytes", "1048577"], {}, 2,
                           "--user-limit-bytes: must be an integer in 1..1048576 (got 1048577)"),
    "missing-workspace": (["runtime", "add", "--content", "x", "--workspace", "{tmp}/nope"], {}, 2,
                          "--workspace: {tmp}/nope does not exist"),
    "empty-workspace": (["runtime", "add", "--content", "x", "--workspace", ""], {}, 2,
                        "--workspace: must not be empty (got '')"),
    "data-dir-is-a-file": (["runtime", "add", "--content", "x", "--scope", "custom", "--data-dir", "{tmp}/afile"], {},
                           2, "--data-dir: {tmp}/afile is a file, but the storage root must be a directory"),
    "data-dir-under-a-file": (["runtime", "add", "--content", "x", "--scope", "custom", "--data-dir",
                               "{tmp}/afile/sub"], {}, 2,
                              "--data-dir: {tmp}/afile is a file, but a parent of the storage root {tmp}/afile/sub "
                              "must be a directory"),
    "data-dir-relative": (["runtime", "add", "--content", "x", "--scope", "custom", "--data-dir", "rel"], {}, 2,
                          "--data-dir: must be an absolute path or start with ~/ (got 'rel')"),
    "custom-without-data-dir": (["runtime", "add", "--content", "x", "--scope", "custom"], {}, 2,
                                "--data-dir: is required with --scope custom (the root to use)"),
    "env-data-dir-is-a-file": (["runtime", "add", "--content", "x"], {"MNEMON_DATA_DIR": "{tmp}/afile"}, 2,
                               "MNEMON_DATA_DIR: {tmp}/afile is a file, but the storage root must be a directory"),
    "wake-budget-10": (["wake", "--budget", "10"], {}, 2,
                       "--budget: must be an integer in 1024..4194304 characters (got 10)"),
    "wake-branch-dash-x": (["wake", "--branch=-x"], {}, 2, "--branch: must not start with '/' or '-' (got '-x')"),
    "wake-branch-dot-dot": (["wake", "--branch", "a..b"], {}, 2, "--branch: must not contain '..' (got 'a..b')"),
    "wake-branch-empty": (["wake", "--branch", ""], {}, 2, "--branch: must not be empty (got '')"),
    "no-match": (["runtime", "remove", "--old-text", "zzz"], {}, 3, "--old-text: no memory entry contains 'zzz'"),
    "no-match-other-target": (["runtime", "remove", "--target", "user", "--old-text", "alpha"], {}, 3,
                              "--old-text: no user entry contains 'alpha'"),
    "replace-no-match": (["runtime", "replace", "--old-text", "zzz", "--content", "q"], {}, 3,
                         "--old-text: no memory entry contains 'zzz'"),
    "ambiguous-match": (["runtime", "remove", "--old-text", "alpha"], {}, 3,
                        "--old-text: 2 memory entries contain 'alpha' ('alpha one', 'alpha two'); use a unique substring"),
    "memory-capacity": (["runtime", "add", "--content", "0123456789", "--memory-limit-bytes", "25",
                         "--memory-maintenance", "reject"], {}, 3,
                        "memory is over capacity: 36 of 25 UTF-8 bytes after this change (now 22); remove or "
                        "shorten entries, or raise runtimeMemory.memoryLimitBytes"),
    "user-capacity": (["runtime", "add", "--target", "user", "--content", "x", "--user-limit-bytes", "12"], {}, 3,
                      "USER.md is full: this change needs 14 of 12 UTF-8 bytes (now 9). Make room, then run this "
                      "command again: `mnemon-ls runtime list --target user` numbers its 1 entry; `mnemon-ls runtime "
                      "compact --target user --merge 1 --as \"one shorter text\"` rewrites entry 1 as that text (the "
                      "entries left may use at most 3 UTF-8 bytes for this change to fit; what leaves is kept word for "
                      "word in runtime/archived/). Or remove an entry (`mnemon-ls runtime remove --target user "
                      "--old-text TEXT`) or raise the limit (--user-limit-bytes, setting "
                      "runtimeMemory.userLimitBytes)."),
    "replace-capacity": (["runtime", "replace", "--old-text", "alpha one", "--content", "alpha one plus more",
                          "--memory-limit-bytes", "30", "--memory-maintenance", "reject"], {}, 3,
                         "memory is over capacity: 32 of 30 UTF-8 bytes after this change (now 22); remove or "
                         "shorten entries, or raise runtimeMemory.memoryLimitBytes"),
}


@pytest.fixture
def seeded(cli) -> Cli:
    cli.seed(("memory", "alpha one"), ("memory", "alpha two"), ("user", "likes tea"))
    (cli.tmp / "afile").write_text("not a directory\n")
    return cli


@pytest.mark.parametrize("case", list(FAILURES))
def test_failure_exit_code_one_line_naming_the_field_and_no_change(seeded, case):
    args, env, code, line = FAILURES[case]
    fill = {"tmp": str(seeded.tmp), "data": str(seeded.data)}
    args = [a.format(**fill) for a in args]
    env = {k: v.format(**fill) for k, v in env.items()}
    before = procs.tree_snapshot(seeded.tmp)
    result = seeded.run(*args, env=env)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", f"mnemon-ls: error: {line.format(**fill)}\n")
    assert procs.tree_snapshot(seeded.tmp) == before


def test_json_failure_prints_the_error_object_too(seeded):
    before = procs.tree_snapshot(seeded.tmp)
    result = seeded.run("runtime", "remove", "--old-text", "alpha", "--json")
    assert result.returncode == 3
    message = "--old-text: 2 memory entries contain 'alpha' ('alpha one', 'alpha two'); use a unique substring"
    assert result.stderr == f"mnemon-ls: error: {message}\n"  # the option typed, on the line and in --json
    assert json.loads(result.stdout) == {"error": {
        "code": "ambiguous-match", "message": message, "field": "--old-text", "param": "oldText",
        "rule": message.split(": ", 1)[1], "target": "memory", "oldText": "alpha", "matches": 2,
        "candidates": ["alpha one", "alpha two"]}}
    result = seeded.run("runtime", "add", "--content", "a\u00a7", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout) == {"error": {
        "code": "invalid-input", "message": "--content: must not contain '\u00a7' (U+00A7), the reserved entry delimiter",
        "field": "--content", "rule": "must not contain '\u00a7' (U+00A7), the reserved entry delimiter",
        "param": "content", "value": "a\u00a7"}}
    assert procs.tree_snapshot(seeded.tmp) == before


def test_two_identical_entries_are_ambiguous_for_an_exact_selector(cli):
    stamp = "2026-01-02T03:04:05.678Z"
    entry = {"content": "dup", "created_at": stamp, "updated_at": stamp, "target": "memory", "importance": "normal"}
    cli.runtime.mkdir(parents=True)
    cli.memories.write_text(json.dumps({"version": 1, "entries": [entry, entry]}, indent=2) + "\n")
    before = procs.tree_snapshot(cli.tmp)
    result = cli.run("runtime", "remove", "--old-text", "dup")
    assert (result.returncode, result.stdout, result.stderr) == (
        3, "", "mnemon-ls: error: --old-text: 2 memory entries are identical to 'dup' ('dup', 'dup'); use a unique substring\n")
    assert procs.tree_snapshot(cli.tmp) == before


def truncate_store(cli: Cli) -> tuple[bytes, bytes, str]:
    """Cut memories.json inside the second entry; returns (original, truncated, JSON error text)."""
    original = cli.memories.read_bytes()
    cut = original.index(b'"alpha two"') + 5
    truncated = original[:cut]
    cli.memories.write_bytes(truncated)
    try:
        json.loads(truncated.decode())
    except json.JSONDecodeError as exc:
        reason = f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    else:  # pragma: no cover
        raise AssertionError("the cut must break the JSON")
    return original, truncated, reason


@pytest.mark.parametrize("args", [
    ["runtime", "add", "--content", "new"],
    ["runtime", "replace", "--old-text", "alpha one", "--content", "new"],
    ["runtime", "remove", "--old-text", "alpha one"],
], ids=["add", "replace", "remove"])
def test_unreadable_store_exits_1_and_is_never_rewritten(seeded, args):
    _, _, reason = truncate_store(seeded)
    before = procs.tree_snapshot(seeded.tmp)
    result = seeded.run(*args)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"mnemon-ls: error: {seeded.memories}: {reason}; nothing was written. Run `mnemon-ls doctor` "
        "to see why and `mnemon-ls runtime recover` to restore it\n")
    assert procs.tree_snapshot(seeded.tmp) == before


def test_doctor_flags_a_truncated_store_and_recover_restores_it(seeded):
    def head(problem_lines: list[str], tail: str) -> str:
        return "\n".join([
            f"mnemon-ls {__version__}",
            f"workspace: {seeded.ws}",
            f"storage scope: global; root: {seeded.data}",
            "git branch: main",
            "writes to:",
            f"  storage root: {seeded.data} (runtime/, documents/, data/, state/)",
            f"  pack exports: {seeded.data / 'state' / 'pack-exports'} (pack export without --output)",
            f"  records: project and shared-project scopes: {seeded.ws / '.dsh'} (workspace-memory/records.jsonl, "
            "workspace-memory/shared.jsonl, .gitignore)",
            f"  records: user and session scopes: {seeded.data / 'workspace-memory'} (user.jsonl, sessions/)",
            f"  temporary files: {tempfile.gettempdir()} (removed after use: the copy migrate reads, a pack import's "
            "dry run, drafts for the Mnemon CLI)",
            "  only where you name it: `setup` writes the client's configuration file, `serve --log-file` the log, "
            "`pack export --output` the pack",
            *problem_lines,
            tail,
        ]) + "\n"

    healthy_revision = seeded.revision()
    assert seeded.ok("doctor") == head(
        [f"[ok     ] {seeded.memories}: valid: 1 user and 2 memory entries, revision {healthy_revision[:12]}"],
        "no problems found")

    original, truncated, reason = truncate_store(seeded)
    before = procs.tree_snapshot(seeded.tmp)
    result = seeded.run("doctor")
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == head([
        f"[PROBLEM] {seeded.memories}: {reason}",
        "          -> `mnemon-ls runtime recover` moves it to runtime/quarantine/ and restores 3 entries (1 readable "
        "in the damaged file, 0 damaged there, the rest from the last committed copy); writes are refused until then",
    ], "1 problem(s) found")
    assert procs.tree_snapshot(seeded.tmp) == before  # doctor never writes

    out = seeded.ok("runtime", "recover")
    quarantined = sorted((seeded.runtime / "quarantine").iterdir())
    assert len(quarantined) == 1
    assert quarantined[0].read_bytes() == truncated
    assert out == (f"{seeded.runtime}: restored 3 entries (1 from the damaged file, 2 from the last committed state); "
                   f"the damaged file is kept at {quarantined[0]}\n")
    assert seeded.memories.read_bytes() == original
    assert (seeded.runtime / ".memories.last-good.json").read_bytes() == original
    seeded.assert_projections()

    assert seeded.ok("doctor") == head([
        f"[ok     ] {seeded.memories}: valid: 1 user and 2 memory entries, revision {healthy_revision[:12]}",
        f"[ok     ] {seeded.runtime / 'quarantine'}: 1 damaged file moved aside by recover",
    ], "no problems found")
    assert seeded.ok("runtime", "recover") == f"{seeded.runtime}: {seeded.memories} is valid; nothing to recover\n"
    receipt = seeded.ok_json("runtime", "add", "--content", "after recovery")
    assert (receipt["changed"], receipt["entryCount"]) == (True, 3)


# ------------------------------------------------------------------------------------------ known bugs


@pytest.mark.parametrize("args", [
    ["runtime", "remove", "--old-text", "zzz"],
    ["runtime", "add", "--content", "0123456789", "--memory-limit-bytes", "5"],
], ids=["no-match", "capacity"])
def test_rejected_mutation_on_a_fresh_root_creates_nothing(cli, args):
    assert not cli.data.exists()
    result = cli.run(*args)
    assert (result.returncode, result.stdout) == (3, "")
    assert not cli.data.exists()


@pytest.mark.parametrize("args", [
    ["runtime", "add", "--content", "x", "--branch", "-x"],
    ["runtime", "add", "--content", "x", "--memory-limit-bytes", "abc"],
], ids=["branch-dash-x", "limit-not-an-integer"])
def test_usage_errors_are_one_line(seeded, args):
    before = procs.tree_snapshot(seeded.tmp)
    result = seeded.run(*args)
    assert procs.tree_snapshot(seeded.tmp) == before
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("mnemon-ls")


def test_old_text_from_standard_input(cli):
    assert cli.run("runtime", "add", "--content", "entry with a tab\tinside").returncode == 0
    result = cli.run("runtime", "remove", "--old-text", "-", stdin="entry with a tab inside\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert "Entry removed." in result.stdout
    both = cli.run("runtime", "replace", "--old-text", "-", "--content", "-", stdin="x")
    assert both.returncode == 2
    assert both.stderr.startswith("mnemon-ls: error: --old-text: only one of --old-text and --content")


# ================================================================= the defaults (workspaces + runtimeUserScope global)


def default_root(data: Path, folder: Path) -> Path:
    """``<global>/workspaces/<sha256 of the folder's real path>``, spelled out."""
    return data / "workspaces" / hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()


def test_default_root_from_a_subdirectory_is_the_repositorys_and_outside_it(cli):
    sub = cli.ws / "src" / "pkg"
    sub.mkdir(parents=True)
    expected = default_root(cli.data, cli.ws)
    added = cli.run("runtime", "add", "--content", "from a subdirectory", "--json", scoped=False, cwd=sub)
    assert added.returncode == 0, added.stderr
    user = cli.run("runtime", "add", "--target", "user", "--content", "Name: Ada", scoped=False, cwd=cli.ws)
    assert user.returncode == 0, user.stderr
    assert (expected / "runtime" / "MEMORY.md").read_bytes() == b"from a subdirectory\n"
    assert (cli.data / "runtime" / "USER.md").read_bytes() == b"Name: Ada\n"  # the profile follows the person
    assert not (expected / "runtime" / "USER.md").exists()  # no USER.md here: the profile lives in the global root
    assert not (cli.data / "runtime" / "MEMORY.md").exists()  # and the global root keeps no MEMORY.md
    assert sorted(p.name for p in cli.ws.iterdir()) == [".git", "README", "src"]  # nothing in the repository
    wake = json.loads(cli.run("wake", "--json", scoped=False, cwd=sub).stdout)
    assert wake["root"] == str(expected)
    assert "from a subdirectory" in wake["text"] and "Name: Ada" in wake["text"]
    # --workspace names the folder exactly, as an editor's workspace folder does
    explicit = json.loads(cli.run("wake", "--json", "--workspace", str(sub), scoped=False).stdout)
    assert explicit["root"] == str(default_root(cli.data, sub))


def test_no_workspace_uses_the_global_root(cli):
    plain = cli.tmp / "plain" / "dir"
    plain.mkdir(parents=True)
    added = cli.run("runtime", "add", "--content", "no folder here", scoped=False, cwd=plain)
    assert added.returncode == 0, added.stderr
    assert cli.memories.exists() and cli.contents("memory") == ["no folder here"]
    assert not (cli.data / "workspaces").exists()
    doctor = cli.run("doctor", scoped=False, cwd=plain)
    assert doctor.returncode == 0, doctor.stderr
    lines = doctor.stdout.splitlines()
    assert lines[1:4] == [
        "workspace: none",
        f"storage scope: global; root: {cli.data}",
        "no workspace: no directory from here upward holds .git or .mnemon, so the global root is used "
        "(give --workspace DIR for another folder)",
    ]
    # --scope workspace cannot do without a folder
    refused = cli.run("runtime", "add", "--content", "x", "--scope", "workspace", cwd=plain)
    assert (refused.returncode, refused.stderr) == (
        2, "mnemon-ls: error: --workspace: --scope workspace needs a workspace, and no directory from here upward "
           "holds .git or .mnemon: pass --workspace DIR, or run inside a git repository\n")


def test_the_first_wake_outside_a_repository_reports_no_repair(tmp_path):
    """USER.md lives in the global root (runtimeUserScope global), so using mnemon-ls in a repository writes that
    root's USER.md and never its MEMORY.md. The first `wake` outside any repository (the global root is then the
    storage root) printed `mnemon-ls: repaired <root>/runtime/MEMORY.md`, as if something had been damaged: a
    projection of a target with no entries that was never written is created, not repaired."""
    cli = Cli(tmp_path)
    added = cli.run("runtime", "add", "--target", "user", "--content", "I like tea", scoped=False)
    assert (added.returncode, added.stderr) == (0, ""), added.stderr
    assert not (cli.runtime / "MEMORY.md").exists()
    elsewhere = cli.tmp / "elsewhere"
    elsewhere.mkdir()
    checked = cli.run("doctor", scoped=False, cwd=elsewhere)  # warned "MEMORY.md: missing" before
    assert checked.returncode == 0 and "warning" not in checked.stdout, checked.stdout
    woke = cli.run("wake", scoped=False, cwd=elsewhere)
    assert (woke.returncode, woke.stderr) == (0, "")
    assert "I like tea" in woke.stdout
    assert (cli.runtime / "MEMORY.md").read_bytes() == b""
    hand_deleted = cli.run("runtime", "add", "--content", "a global fact", scoped=False, cwd=elsewhere)
    assert hand_deleted.returncode == 0, hand_deleted.stderr
    (cli.runtime / "MEMORY.md").unlink()  # a projection with entries that is gone is still a repair, and said
    woke = cli.run("wake", scoped=False, cwd=elsewhere)
    assert woke.stderr == f"mnemon-ls: repaired {cli.runtime / 'MEMORY.md'}\n"
