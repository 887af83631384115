"""Two more texts that quoted a stored credential to an assistant: the ``ambiguous-match`` error of a Runtime
replace/remove (its message and ``data.candidates`` quote the entries it could mean) and the
``possiblySuperseded[].preview`` of a receipt (the memory a new one may supersede). Both now show such a value
redacted (``possiblySuperseded`` unless ``secrets`` is ``allow``; an error always), and nothing on disk changes.
The credential is stored with ``MNEMON_SECRETS=allow`` (as a person who allowed it, or another program, would
have it in the store); every command is the real command line in a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_foreign_runtime_reads import files
from tests.cli.test_foreign_secrets import SECRET, run
from tests.gitrepo import commit_files, make_repo

STORED = f"deploy token {SECRET} for staging"
SHOWN = "deploy token [redacted:github-token] for staging"


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    repo, root = tmp_path / "repo", tmp_path / "root"
    commit_files(make_repo(repo), {"x.py": "a\nb\nc\nd\n"}, "x")
    run(repo, root, "runtime", "add", "--content", STORED, "--cite", "x.py:1-3", secrets="allow")
    return repo, root


def test_an_ambiguous_old_text_quotes_the_entries_redacted(tmp_path: Path) -> None:
    repo, root = _repo(tmp_path)
    run(repo, root, "runtime", "add", "--content", "deploy runs on fridays")
    before = files(root)
    for argv in (("remove",), ("replace", "--content", "deploy runs on mondays")):
        done = run(repo, root, "runtime", *argv, "--old-text", "deploy", "--json", check=False)
        assert done.returncode != 0 and SECRET not in done.stdout + done.stderr
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "ambiguous-match"
        assert error["candidates"] == [SHOWN, "deploy runs on fridays"]
        assert error["message"] == (f"--old-text: 2 memory entries contain 'deploy' ('{SHOWN}', 'deploy runs on "
                                    "fridays'); use a unique substring")
    assert files(root) == before


def test_a_possibly_superseded_preview_is_redacted_unless_secrets_allow(tmp_path: Path) -> None:
    repo, root = _repo(tmp_path)
    done = run(repo, root, "runtime", "add", "--content", "deploy runs on fridays", "--cite", "x.py:2-3", "--json")
    assert SECRET not in done.stdout
    assert [p["preview"] for p in json.loads(done.stdout)["possiblySuperseded"]] == [SHOWN]
    done = run(repo, root, "runtime", "add", "--content", "deploy runs on mondays", "--cite", "x.py:2-3", "--json",
               secrets="allow")
    assert STORED in [p.get("preview") for p in json.loads(done.stdout)["possiblySuperseded"]]
    assert SECRET.encode() in files(root)["memories.json"]  # the store keeps what was stored
