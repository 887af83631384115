"""The MCP adapter (``mnemon-ls mcp``): tools, resources and prompts over the same Host as the language
server and the CLI. Only this package imports the ``mcp`` SDK (DESIGN.md section 2)."""
