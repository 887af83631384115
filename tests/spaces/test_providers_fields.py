"""Service fields of a third-party provider that an attack pass got stored although they were bad: a
relative ``dataPath``/``enginePath`` (each process would resolve it against its own working directory:
the CLI's, the editor's server's) and a credential inside a plain field (plain fields are stored and
shown in clear; credentials belong in secret fields such as ``apiKey``). Each is refused naming the
field and the rule, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import SpacesService

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize("field, value, rule", [
    ("dataPath", "relative/memory.db", "must be an absolute path or start with ~/ (empty: the provider's default) "
                                       '(got "relative/memory.db")'),
    ("dataPath", "./memory.db", "must be an absolute path or start with ~/ (empty: the provider's default) "
                                '(got "./memory.db")'),
    ("dataPath", f"/tmp/{TOKEN}/memory.db", "must not hold a credential (github-token; put it in a secret field: "
                                            "apiKey)"),
    ("account", f"token={TOKEN}", "must not hold a credential (github-token; put it in a secret field: "
                                  "apiKey)"),
])
def test_a_bad_service_field_is_refused_and_nothing_is_written(tmp_path: Path, field: str, value: str, rule: str) -> None:
    service = SpacesService(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.configure_provider("honcho", {field: value})
    assert (refused.value.field, refused.value.rule) == (f"services.{field}", rule)
    assert TOKEN not in refused.value.message
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("value", ["/var/lib/memory.db", "~/memory.db", "~"])
def test_an_absolute_or_home_relative_path_passes_the_field_rules(value: str) -> None:
    from mnemon_ls.spaces.provider_fields import validate_service_fields

    assert validate_service_fields({"dataPath": value}, "honcho") == {"dataPath": value}


@pytest.mark.parametrize("value", ["", "  ", None])
def test_an_empty_value_clears_the_field(value: str | None) -> None:
    from mnemon_ls.spaces.provider_fields import validate_service_fields

    assert validate_service_fields({"dataPath": value}, "honcho") == {"dataPath": None}


def test_the_holographic_engine_path_must_be_absolute(tmp_path: Path) -> None:
    pytest.importorskip("mnemon_ls_provider_holographic")
    service = SpacesService(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.configure_provider("holographic", {"enginePath": "site-packages"})
    assert refused.value.field == "services.enginePath" and refused.value.rule.startswith("must be an absolute path")
    assert not (tmp_path / "state").exists()


def test_a_path_field_in_another_storage_root_or_naming_a_mnemon_store_is_refused(tmp_path):
    """A provider's dataPath in a storage root this command does not know (another workspace's, a custom
    --data-dir) made the engine write its tables into that root's mnemon.db (attack pass): such a root is
    known by its own files, and a file named mnemon.db is a Mnemon store wherever it is."""
    import pytest

    from mnemon_ls.errors import InvalidInput
    from mnemon_ls.spaces.provider_fields import check_outside_roots
    from tests.helpers.packs import seed

    other = tmp_path / "other-root"
    seed(other)
    assert (other / "data" / "default" / "mnemon.db").is_file()
    for value in (other / "data" / "default" / "mnemon.db", other / "hh.db", other / "data" / "new" / "x.db",
                  tmp_path / "elsewhere" / "mnemon.db"):
        with pytest.raises(InvalidInput) as caught:
            check_outside_roots(str(value), "services.dataPath", ())
        assert caught.value.field == "services.dataPath" and "storage root" in caught.value.message
    check_outside_roots(str(tmp_path / "elsewhere" / "facts.db"), "services.dataPath", ())  # outside: fine


SECRET_RULE = ("C0 and C1 controls (U+0000..U+001F, U+007F..U+009F), U+2028, U+2029 and format characters "
               "(Unicode Cf, such as U+200B and U+FEFF) are refused")


@pytest.mark.parametrize("field, value, rule", [
    ("apiKey", "sk-abc\x00def-0123", f"must not contain control or invisible characters (found U+0000: {SECRET_RULE})"),
    ("apiKey", "sk-abc\x1b[2Jdef-0123", f"must not contain control or invisible characters (found U+001B: {SECRET_RULE})"),
    ("apiKey", "sk-abc\x07def-0123", f"must not contain control or invisible characters (found U+0007: {SECRET_RULE})"),
    # C1 controls, the Unicode line separators and format characters: invisible, and str.strip drops some of
    # them at the ends, so they are looked for before anything is trimmed
    *[("apiKey", f"sk-abc{ch}def-0123", f"must not contain control or invisible characters (found U+{ord(ch):04X}: "
                                       f"{SECRET_RULE})")
      for ch in ("\x85", "\x80", "\x9f", "\u2028", "\u2029", "\u200b", "\ufeff", "\u200e")],
    ("apiKey", "sk-abc-def-0123\x85", f"must not contain control or invisible characters (found U+0085: {SECRET_RULE})"),
    ("apiKey", "\u2028sk-abc-def-0123", f"must not contain control or invisible characters (found U+2028: "
                                        f"{SECRET_RULE})"),
    ("account", "team\x85two", "must not contain control characters (found U+0085: C0 and C1 controls "
                               "(U+0000..U+001F, U+007F..U+009F), U+2028 and U+2029 are refused)"),
    ("endpoint", "http://127.0.0.1:99999/v1", "must have a port of ASCII digits between 1 and 65535 (or none: the "
                                               "scheme's default)"),
    ("endpoint", "http://127.0.0.1:0/v1", "must have a port of ASCII digits between 1 and 65535 (or none: the "
                                           "scheme's default)"),
    ("endpoint", "http://[::1]:٨٠٨٠/v1", "must have a port of ASCII digits between 1 and 65535 (or none: the "
                                         "scheme's default)"),
    ("endpoint", "http://[::1", "must close an IPv6 host's bracket ([::1]:8080)"),  # was an IndexError
    ("endpoint", "http://[zz]:80/v1", "must name a host an HTTP client can read (a name, an IPv4 address or an "
                                      "IPv6 address in brackets)"),
    ("dataPath", "~root/x.db", "must not start with ~name (another user's home): only ~ or ~/ (your own home) is "
                               "expanded; give an absolute path instead"),
])
def test_a_bad_secret_port_or_home_is_refused_and_changes_no_byte(tmp_path: Path, field: str, value: str,
                                                                  rule: str) -> None:
    service = SpacesService(tmp_path)
    service.configure_provider("honcho", {"endpoint": "https://honcho.example.test/v1", "apiKey": "sk-kept-0001"})
    path = tmp_path / "state" / "memory-providers.json"
    before = path.read_bytes(), path.stat().st_mtime_ns
    with pytest.raises(InvalidInput) as refused:
        service.configure_provider("honcho", {field: value})
    assert (refused.value.field, refused.value.rule) == (f"services.{field}", rule)
    assert "sk-abc" not in refused.value.message
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("value", ["١٢", "１２", "1_2", "١.٥", "٠.٥", "0x1", "1e999"])
def test_numbers_take_ascii_digits_only(value: str) -> None:
    from mnemon_ls.spaces.providers.base import FieldRule

    for rule in (FieldRule("number", 0, 100), FieldRule("integer", 0, 100)):
        with pytest.raises(ValueError) as refused:
            rule.normalise(value)
        assert str(refused.value).startswith(rule.rule)
        if not value.isascii():
            assert str(refused.value) == f"{rule.rule}, in ASCII digits (0-9)"
    assert FieldRule("number", 0, 100).normalise(" 12.5 ") == 12.5
    assert FieldRule("integer", 0, 100).normalise("12") == 12


def test_a_hand_edited_home_of_another_user_is_refused_before_the_engine_opens(tmp_path: Path) -> None:
    from mnemon_ls.spaces.provider_fields import check_outside_roots

    with pytest.raises(InvalidInput) as refused:  # what ProviderHost._open runs on each stored path field
        check_outside_roots("~root/x.db", "services.dataPath", (tmp_path,))
    assert refused.value.field == "services.dataPath" and "~name" in refused.value.rule


@pytest.mark.parametrize("value", [12345, False, None, "", "   "])
def test_a_credential_that_is_not_a_non_empty_string_is_refused_and_the_stored_key_kept(tmp_path: Path, value) -> None:
    """The attack pass: ``mnemon/providers/configure {services: {apiKey: 12345}}`` (or false, null, "")
    answered success and removed the stored key. A credential is a non-empty string; only ``clearSecrets``
    removes one."""
    service = SpacesService(tmp_path)
    service.configure_provider("honcho", {"apiKey": "sk-live-stored-key-000"})
    stored = tmp_path / "state" / "memory-providers.json"
    before = stored.read_bytes()
    with pytest.raises(InvalidInput) as refused:
        service.configure_provider("honcho", {"apiKey": value})
    assert refused.value.field == "services.apiKey" and "clearSecrets" in refused.value.rule
    assert stored.read_bytes() == before
