"""``provider list`` text for a provider package that is not installed: the exact install line (the
package lives in the checkout, as docs/providers.md and doctor say), not a bare "pip install the package"."""

from __future__ import annotations

from mnemon_ls.ops.providers import list_text


def test_a_provider_package_not_installed_gets_its_install_line() -> None:
    views = [{"providerId": "mem0", "installed": False, "configured": False, "enabled": False, "spaces": 0,
              "capabilities": {}}]
    text = list_text(views)
    assert "pip install the package" not in text
    assert text.splitlines()[3:5] == [
        "  mem0         not configured  not installed (mnemon-ls-provider-mem0); 0 spaces",
        "    install the mnemon-ls-provider-mem0 package (from a checkout of mnemon-ls: pip install ./providers/mem0)"]


def test_an_engine_no_package_provides_is_listed_with_the_reason() -> None:
    """Each engine of the matrix that cannot run here is named with the exact reason, one a line (without
    ``--all`` too), and the Mnemon CLI's line says why there is no binary."""
    from mnemon_ls.spaces.provider_availability import MNEMON_CLI, UNAVAILABLE

    views = [{"providerId": pid, "installed": False, "configured": False, "enabled": False, "spaces": 0,
              "capabilities": None, "unavailable": UNAVAILABLE[pid]} for pid in ("honcho", "supermemory")]
    lines = list_text(views, mnemon_cli={"available": False, "reason": MNEMON_CLI}).splitlines()
    assert lines[2:5] == ["not available (the reference's providers; no mnemon-ls package provides them):",
                          f"  honcho       {UNAVAILABLE['honcho']}", f"  supermemory  {UNAVAILABLE['supermemory']}"]
    assert lines[-1] == f"mnemon-cli   built in: not available: {MNEMON_CLI}"
    assert list_text(views, show_all=True).splitlines()[3:5] == [
        "  honcho       not configured  not available: no mnemon-ls package; 0 spaces", f"    {UNAVAILABLE['honcho']}"]
    assert list_text([], mnemon_cli={"available": True, "path": "/opt/mnemon"}).splitlines()[-1] == \
        "mnemon-cli   built in: the Mnemon CLI at /opt/mnemon"
