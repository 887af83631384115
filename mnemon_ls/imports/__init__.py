"""Importing memory kept by other assistants (issue 28): ``mnemon-ls import SOURCE`` and the block
``mnemon-ls export agents-md|claude-md`` writes back.

- :mod:`.reading` reads one instruction file safely (size, binary, UTF-8, symlinks, digest) and splits
  Markdown into items (:class:`.reading.Item`);
- one small module per source format (:mod:`.claude_code`, :mod:`.agents_md`, :mod:`.cursor`,
  :mod:`.copilot`, :mod:`.cline`, :mod:`.hermes`) names the files of its layout and reads their items;
  :mod:`.sources` maps the source names to them (:mod:`.formats`: what they share);
- :mod:`.found` reads the files of a source and those they import (Claude Code's ``@path``);
- :mod:`.classify` routes each item to USER.md, MEMORY.md, a Document or the active Memory Space, and says why;
- :mod:`.plan` builds the plan (the dry run) and applies it through the Sources' own write paths
  (:meth:`~mnemon_ls.host.WorkspaceHost.mutate_runtime`, ``documents.create``, ``spaces.remember``);
- :mod:`.scan` is an editor's import: every source at once (each item with an id), then the items a person
  picked, through the plan's router and write path;
- :mod:`.ledger` keeps what was imported (``state/imports.json``), so a second import adds nothing;
- :mod:`.export` writes and removes the marked block in AGENTS.md / CLAUDE.md.

This package sits beside :mod:`mnemon_ls.migrate`: it takes a :class:`~mnemon_ls.host.WorkspaceHost` and the
host never imports it.
"""
