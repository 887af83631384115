"""``python -m mnemon_ls`` and the ``mnemon-ls`` console script.

``serve`` goes straight to the language server (:mod:`mnemon_ls.lsp.launch`) so that editors get the
``initialize`` answer without the command line's imports; ``hook``, ``wake`` and ``mcp``, which assistants
wait on at every prompt and session start, go to :mod:`mnemon_ls.cli_light` (their own small parser, no
operation registry), which hands anything it does not run back; every other command is :mod:`mnemon_ls.cli`.
"""

import sys


def main() -> int:
    """Entry point; returns the exit code (or ends the process with it while a third-party provider call
    that timed out is still running: :func:`mnemon_ls.spaces.thirdparty.end_process`)."""
    if sys.argv[1:2] == ["serve"]:
        from .lsp.launch import main as serve

        code = serve(sys.argv[2:])
    else:
        from .cli_light import main as light

        code = light(sys.argv[1:])
        if code is None:
            from .cli import main as cli

            code = cli()
    thirdparty = sys.modules.get("mnemon_ls.spaces.thirdparty")  # not imported: no provider call was made
    return thirdparty.end_process(code) if thirdparty is not None else code


if __name__ == "__main__":
    sys.exit(main())
