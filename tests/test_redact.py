"""The redaction pass itself (mnemon_ls.redact): every credential format, prose untouched, reject/allow.

Samples are made-up values in each vendor's published format (tests/redact_samples.py). Expected
texts are written out, not computed with the module.
"""

from __future__ import annotations

import json

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.redact import Scrubber, find_secrets, placeholder, redact_file_bytes, redact_text
from mnemon_ls.settings import load_settings
from tests.redact_samples import (
    AWS_ID,
    GITHUB,
    PASSWORD,
    PEM,
    PEM_BODY_LINES,
    PROSE,
    SAMPLES,
    SPLIT_GITHUB,
    URL_TOKEN,
)

IDS = [f"{i}-{kind}" for i, (kind, _, _) in enumerate(SAMPLES)]


@pytest.mark.parametrize(("kind", "text", "secret"), SAMPLES, ids=IDS)
def test_every_format_is_found_and_replaced(kind: str, text: str, secret: str):
    redacted, matches = redact_text(text)
    assert secret not in redacted
    assert f"[redacted:{kind}]" in redacted
    assert kind in [m.kind for m in matches]
    assert redact_text(redacted) == (redacted, [])  # idempotent: a placeholder is no credential


@pytest.mark.parametrize(("kind", "text", "secret"), SAMPLES, ids=IDS)
def test_whitespace_normalized_text_is_redacted_too(kind: str, text: str, secret: str):
    """Runtime entries reach the pass with every whitespace run collapsed to one space."""
    flat = " ".join(text.split())
    redacted, _ = redact_text(flat)
    assert secret not in redacted and f"[redacted:{kind}]" in redacted


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_secrets_is_unchanged(text: str):
    assert redact_text(text) == (text, [])


def test_exact_outputs_keep_the_surrounding_text():
    assert redact_text(f"deploy as {AWS_ID}, then push")[0] == "deploy as [redacted:aws-access-key-id], then push"
    assert redact_text(f'db password="{PASSWORD}" port=5432')[0] == 'db password="[redacted:password]" port=5432'
    assert redact_text(f"git clone https://ci:{URL_TOKEN}@git.example.com/r.git")[0] == \
        "git clone https://ci:[redacted:url-credential]@git.example.com/r.git"
    assert redact_text(f"key:\n{PEM}\nend")[0] == "key:\n[redacted:private-key]\nend"
    assert placeholder("jwt") == "[redacted:jwt]"


def test_secret_split_across_lines_is_one_value():
    first, rest = SPLIT_GITHUB[:22], SPLIT_GITHUB[22:]
    for gap in ("\n", "\r\n", "\n    ", " \\\n", "\\n"):
        redacted, matches = redact_text(f"token {first}{gap}{rest} done")
        assert redacted == "token [redacted:github-token] done", gap
        assert [m.kind for m in matches] == ["github-token"]


def test_pem_without_end_line_still_loses_its_body():
    truncated = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_BODY_LINES[:3]) + "\n\nNext paragraph stays."
    redacted, _ = redact_text(truncated)
    assert not any(line in redacted for line in PEM_BODY_LINES[:3])
    assert redacted.endswith("Next paragraph stays.")


def test_pem_escaped_in_json_is_redacted():
    escaped = json.dumps({"key": PEM})[1:-1]
    redacted, _ = redact_text(escaped)
    assert not any(line in redacted for line in PEM_BODY_LINES)


def test_positions_are_code_points_of_the_given_text():
    text = f"日本語 {GITHUB['ghp']}"
    (match,) = find_secrets(text)
    assert (match.kind, match.start, match.end) == ("github-token", 4, 4 + 40)


def test_reject_names_field_kind_and_position_never_the_value():
    scrub = Scrubber("reject")
    with pytest.raises(InvalidInput) as caught:
        scrub.text("content", f"use {GITHUB['gho']}")
    error = caught.value
    assert error.field == "content"
    assert error.data["kind"] == "github-token" and error.data["position"] == 4
    assert GITHUB["gho"] not in json.dumps(error.to_dict())
    assert scrub.text("content", "No API key is needed") == "No API key is needed"


def test_allow_keeps_everything_and_counts_nothing():
    scrub = Scrubber("allow")
    text = f"use {GITHUB['ghs']}"
    assert scrub.text("content", text) == text
    assert scrub.identifier("branch", GITHUB["ghs"]) == GITHUB["ghs"]
    assert scrub.summary() is None


def test_redact_mode_summary_counts_kinds_and_fields():
    scrub = Scrubber()
    scrub.text("title", f"{AWS_ID} and {GITHUB['ghp']}")
    scrub.texts("tags", ["plain", GITHUB["ghu"]])
    assert scrub.summary() == {"count": 3, "kinds": {"aws-access-key-id": 1, "github-token": 2},
                               "fields": ["title", "tags[1]"]}


def test_identifiers_holding_a_credential_are_refused_in_redact_and_reject():
    for mode in ("redact", "reject"):
        with pytest.raises(InvalidInput) as caught:
            Scrubber(mode).identifiers("branches", ["main", GITHUB["ghr"]])
        assert caught.value.field == "branches[1]" and caught.value.data["kind"] == "github-token"
    assert Scrubber().identifier("branch", "feature/token-refresh") == "feature/token-refresh"


def test_selector_is_redacted_like_the_stored_text_but_never_refused():
    text = f"deploy as {AWS_ID}"
    assert Scrubber("reject").selector("oldText", text) == redact_text(text)[0]
    assert Scrubber("allow").selector("oldText", text) == text


def test_file_copies_stay_valid_json_and_jsonl():
    doc = {"version": 1, "entries": [{"content": f"k {PEM}"}, {"content": "plain"}]}
    new, kinds = redact_file_bytes(json.dumps(doc, indent=2).encode(), "x.json")
    assert kinds == ["private-key"]
    assert json.loads(new) == {"version": 1, "entries": [{"content": "k [redacted:private-key]"}, {"content": "plain"}]}
    lines = (json.dumps({"content": f"a {AWS_ID}"}) + "\nnot json " + GITHUB["ghp"] + "\n").encode()
    new, kinds = redact_file_bytes(lines, "archive.jsonl")
    assert new == b'{"content": "a [redacted:aws-access-key-id]"}\nnot json [redacted:github-token]\n'
    assert redact_file_bytes(b"\xff\xfe plain", "x.md") == (b"\xff\xfe plain", [])


def test_secrets_setting_default_and_rule():
    assert load_settings({}).secrets == "redact"
    assert load_settings({"secrets": "reject"}).secrets == "reject"
    with pytest.raises(InvalidInput) as caught:
        load_settings({"secrets": "off"})
    assert caught.value.field == "secrets" and "redact, reject, allow" in caught.value.rule


@pytest.mark.parametrize("glued", ["feat-", "url-", "x_", "pre", "token", "a.b/"])
def test_a_distinctive_token_glued_to_a_word_is_still_found(glued: str) -> None:
    """Found by a fresh-clone trial: ``feat-ghp_...`` and ``x_AKIA...`` were stored verbatim."""
    from tests.redact_samples import GITHUB_PAT

    github = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    aws = "AKIA3XRILAV63FV9CYK2"
    for value, kind in ((github, "github-token"), (aws, "aws-access-key-id"), (GITHUB_PAT, "github-token")):
        text, matches = redact_text(f"see {glued}{value} now")
        assert text == f"see {glued}[redacted:{kind}] now" and [m.kind for m in matches] == [kind]


def test_generic_prefixes_still_need_a_word_start() -> None:
    for prose in ("task-abcdefghijklmnopqrstuvwxyz0123", "MYAKIA3XRILAV63FV9CYK2X", "the desk-ant-sized thing"):
        assert redact_text(prose) == (prose, [])


def test_a_branch_name_holding_a_glued_token_is_refused() -> None:
    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.redact import Scrubber

    with pytest.raises(InvalidInput) as refused:
        Scrubber("redact").identifier("branches[0]", "feat-ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d")
    assert refused.value.field == "branches[0]" and "ghp_u8" not in refused.value.message
