"""Branch names follow ``git check-ref-format --branch`` (issue 15 defect 9), checked against the real git.

A name is accepted exactly when git accepts it, restricted to the TypeScript plugin's characters
``A-Z a-z 0-9 . _ / -`` (outside them the plugin refuses the whole store, DESIGN.md invariant 8): every
accepted name is accepted by git, and inside that character set the two answers are the same.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemon_ls.errors import InvalidInput
from mnemon_ls.runtime.model import _BRANCH_CHARSET, branch_name_problem
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore
from tests.helpers.zygote import mnemon_command

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")

NASTY = [
    "HEAD", "-x", "-", "--", "a..b", "..", ".", "a.lock", "a.lock/b", "b/a.lock", ".lock", "a/.lock", "x.lock.y",
    "@", "a@{b", "@{-1}", "a.", "a/", "/a", "//", "a//b", ".a", "a/.b", "a./b", "a/-b", "a-", "refs/heads/x",
    "heads/x", "HEAD/x", "x/HEAD", "xHEAD", "head", "a\x01b", "a\x7fb", "a\tb", "a b", " a", "a~b", "a^b", "a:b",
    "a?b", "a*b", "a[b", "a\\b", "é", "feature/é", "日本", "x@y", "a{b}", "fix#12", "main", "feature/deep/branch_1",
    "release-1.2", "v1.0", "a_b", "A.LOCK", "a.Lock", "a" * 128, "a" * 129, "...", "a..", "x/y.", "_", "0",
]


def git_accepts(name: str, cwd: Path) -> bool:
    """The real ``git check-ref-format --branch`` run outside any repository (so ``@{-N}`` is not expanded)."""
    proc = subprocess.run(["git", "check-ref-format", "--branch", name], cwd=cwd, capture_output=True)
    return proc.returncode == 0 and proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n") == name


def check_against_git(name: str, cwd: Path) -> None:
    git = git_accepts(name, cwd)
    ours = branch_name_problem(name) is None
    if ours:
        assert git, f"{name!r} accepted here but refused by git"
    if _BRANCH_CHARSET.fullmatch(name) and len(name) <= 128:
        assert ours == git, f"{name!r}: git {'accepts' if git else 'refuses'} it, we {'accept' if ours else 'refuse'} it"


@pytest.mark.parametrize("name", NASTY)
def test_branch_rule_agrees_with_git_on_nasty_names(tmp_path, name):
    check_against_git(name, tmp_path)


_ALPHABET = st.sampled_from(list("ab0_-./") + ["..", ".lock", "HEAD", "@", "@{", "//", "~", "^", ":", "*", "é", " "])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_ALPHABET, min_size=1, max_size=7))
def test_branch_rule_agrees_with_git_on_generated_names(tmp_path, parts):
    check_against_git("".join(parts), tmp_path)


@pytest.mark.parametrize("name", ["HEAD", "-x", "a.lock", ".hidden", "a/.b", "feature/x.lock/y"])
def test_runtime_add_with_a_branch_git_refuses_is_invalid_input_and_writes_nothing(tmp_path, name):
    root = tmp_path / "root"
    with pytest.raises(InvalidInput) as caught:
        RuntimeStore(root).mutate(validate_request("add", "memory", "scoped", branches=[name]))
    assert caught.value.field == "branches[0]"
    assert repr(name) in caught.value.message
    assert not root.exists()


def test_cli_runtime_add_branch_head_exits_2_and_names_the_rule(tmp_path):

    root = tmp_path / "root"
    proc = subprocess.run([*mnemon_command(), "runtime", "add", "--content", "x", "--branch", "HEAD",
                           "--scope", "custom", "--data-dir", str(root)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--branch HEAD: " in proc.stderr and "must not be HEAD" in proc.stderr
    assert not (root / "runtime").exists()
