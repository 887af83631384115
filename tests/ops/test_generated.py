"""Files generated from the operation layer are current (``python -m mnemon_ls.generate``)."""

from __future__ import annotations

from mnemon_ls import generate


def test_generated_files_are_current() -> None:
    stale = [str(path) for path, text in generate.outputs().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert stale == [], f"stale: {stale}; run `python -m mnemon_ls.generate`"


def test_the_vscode_table_carries_every_code_and_every_bound_method() -> None:
    from mnemon_ls.ops.errors import ERROR_CODES
    from mnemon_ls.ops.registry import by_lsp_method

    text = generate.vscode_protocol()
    assert all(f'"{code}": {number},' in text for code, number in ERROR_CODES.items())
    assert all(f'"{op.name}": "{method}",' in text for method, op in by_lsp_method().items())
    assert generate.main(["--check"]) == 0


def test_the_settings_page_names_a_setting_as_its_rows_do() -> None:
    """VS Code's settings editor turns `#mnemon.storageScope#` in a description into a link; docs/settings.md printed
    that syntax as it was (the dataDir row: "Required when `#mnemon.storageScope#` is `custom`") instead of the
    setting's name as the page's own rows give it."""
    page = generate.settings_page()
    assert "#mnemon." not in page
    assert "Required when `storageScope` is `custom`" in page
