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
