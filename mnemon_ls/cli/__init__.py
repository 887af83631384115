"""The ``mnemon-ls`` command line: the console script's and ``python -m mnemon_ls``'s :func:`main`.

``serve`` goes straight to the language server (:mod:`mnemon_ls.lsp.launch`) so that editors get the
``initialize`` answer without the command line's imports; ``hook``, ``wake`` and ``mcp``, which assistants
wait on at every prompt and session start, go to :mod:`.light` (their own small parser, no operation
registry), which hands anything it does not run back; every other command is :mod:`.full` (the parser of
every command, built from the operation registry).

The modules of the package: :mod:`.full` (every command), :mod:`.light` (``hook``, ``wake``, ``mcp``),
:mod:`.ops` (the binding of the operation layer: a parser and one handler per
:class:`~mnemon_ls.ops.surfaces.CliCommand`), :mod:`.parser` (the settings flags every command takes),
:mod:`.common` (settings, the command's host, printing, errors to exit codes), :mod:`.argv` (arguments
that are not UTF-8) and :mod:`.hooks` (``hook EVENT``). Every command but ``mcp``, ``serve`` and ``hook`` is an
operation of :mod:`mnemon_ls.ops`.

Light: importing this package imports nothing (``hook prompt`` runs at every prompt a person types).
"""


def main(argv: list[str] | None = None) -> int:
    """Run ``argv`` (default ``sys.argv[1:]``) and return the exit code, or end the process with it while a
    third-party provider call that timed out is still running
    (:func:`mnemon_ls.spaces.thirdparty.end_process`)."""
    import sys

    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        from ..lsp.launch import main as serve

        code = serve(argv[1:])
    else:
        from .light import main as light

        code = light(argv)
        if code is None:
            from .full import main as full

            code = full(argv)
    thirdparty = sys.modules.get("mnemon_ls.spaces.thirdparty")  # not imported: no provider call was made
    return thirdparty.end_process(code) if thirdparty is not None else code
