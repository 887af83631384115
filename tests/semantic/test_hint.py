"""The install hint of semantic recall names a command that works (issue 10 item 3: mnemon-ls is not on
PyPI, and a fresh user's doctor suggested ``pip install 'mnemon-ls[semantic]'``)."""

from __future__ import annotations

from types import SimpleNamespace

from mnemon_ls.semantic.backends import INSTALL_HINT
from mnemon_ls.semantic.doctor import diagnose


def test_doctor_without_the_extra_suggests_installing_from_the_checkout() -> None:
    host = SimpleNamespace(semantic=SimpleNamespace(enabled=False))
    [finding] = diagnose(host)
    assert finding.level == "ok" and finding.advice == INSTALL_HINT
    assert INSTALL_HINT == "pip install '<your mnemon-ls checkout>[semantic]'"
