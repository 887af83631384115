"""mnemon-ls: workspace-scoped, git-branch-aware memory for coding assistants.

See ``DESIGN.md`` (shared) for vocabulary and layout. The package is layered:
``lsp/``, ``mcp/`` and ``cli/`` -> ``ops/`` -> ``host.py`` -> Sources (``runtime/``, ...) ->
``fsio``/``gitstate``/``roots``.
"""

__version__ = "0.1.0"
