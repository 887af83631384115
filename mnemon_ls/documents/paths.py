"""``sourcePaths`` resolution and managed-path safety (reads the filesystem, never writes).

A source path names the workspace file a document was written from. Seed 000 "Project Documents": it
may point only inside the current workspace, is a reference only (never modified, never read), need
not exist, and may not point into the managed ``documents/`` directory. Where the plugin checks
lexically (reference section 11), we resolve with ``realpath`` so a symlink cannot lead out.

Rules, applied to each list item ``sourcePaths[i]`` (the error names that index):

1. a string; surrounding whitespace trimmed; empty items dropped; repeats dropped (first kept);
2. more than :data:`~mnemon_ls.documents.model.MAX_SOURCE_PATHS` distinct paths is rejected (the plugin
   silently kept the first 50; we never drop a reference silently);
3. no NUL, no backslash and no Windows drive (``C:\\x``, ``C:x``, ``\\\\server``): use ``/``;
   a leading ``~`` or ``~/`` is your home (:func:`~mnemon_ls.settings.own_home_path`, as every path argument:
   ``~/proj/a.md`` is ``a.md`` of the workspace ``~/proj``), and ``~name`` (another user's home) is refused;
4. resolved against the workspace with ``realpath`` (symlinks followed as far as they exist, ``..``
   applied after them, missing parts kept lexically) it must stay inside the workspace's real path;
   absolute paths are accepted only when they resolve inside it;
5. it must not resolve into the storage root's ``documents/`` directory, and a path written in the
   managed form (``documents/active/...``, ``documents/archived/...``, ``documents/index.json``,
   ``.mnemon/documents/...``) is refused even when it does not exist, because it reads as a reference to
   a managed copy rather than to a workspace file;
6. stored workspace-relative with ``/`` (the workspace itself is ``.``): the lexical form the caller
   gave, normalized, when it resolves to the same place; otherwise the resolved form.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, echo_repr, type_rule
from ..fsread import is_within
from ..settings import INSTEAD_WORKSPACE_FILE, own_home_path
from .model import MAX_SOURCE_PATHS, js_trim

_WINDOWS = re.compile(r"^[A-Za-z]:")
_MANAGED_FORM = re.compile(r"^(?:\.mnemon/documents(?:/|$)|documents/(?:active|archived)(?:/|$)"
                           r"|documents/index\.json$)")


def resolve_source_paths(value: Any, workspace: Path | None, managed_dir: Path,
                         field_name: str = "sourcePaths") -> tuple[str, ...]:
    """Validate and normalize a ``sourcePaths`` list (module doc); ``None`` -> ``()``.

    ``workspace`` is the session workspace (``None``: no workspace, then only an empty list is
    accepted); ``managed_dir`` is ``<storage root>/documents``. Raises :class:`InvalidInput` naming
    ``sourcePaths`` or ``sourcePaths[i]`` and the rule.
    """
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(field_name, type_rule("a list of workspace-relative paths", value))
    items: list[tuple[int, str]] = []
    seen: set[str] = set()
    for index, raw in enumerate(value):
        if not isinstance(raw, str):
            raise InvalidInput(f"{field_name}[{index}]", type_rule("a string", raw))
        text = js_trim(raw)
        if text and text not in seen:
            seen.add(text)
            items.append((index, text))
    if len(items) > MAX_SOURCE_PATHS:
        raise InvalidInput(field_name, f"has {len(items)} paths; at most {MAX_SOURCE_PATHS} (nothing was stored; "
                                       "keep the paths that matter most)", count=len(items), limit=MAX_SOURCE_PATHS)
    if not items:
        return ()
    if workspace is None:
        raise InvalidInput(field_name, "needs a workspace: this session has none, so source paths cannot be checked")
    base = os.path.realpath(workspace)
    managed = os.path.realpath(managed_dir)
    out: list[str] = []
    for index, text in items:
        stored = _resolve_one(text, base, managed, f"{field_name}[{index}]")
        if stored not in out:
            out.append(stored)
    return tuple(out)


def _resolve_one(text: str, base: str, managed: str, where: str) -> str:
    if "\x00" in text:
        raise InvalidInput(where, "must not contain NUL")
    typed, text = text, own_home_path(text, where, INSTEAD_WORKSPACE_FILE)  # ~/x: your home (rule 4); ~name: refused
    if "\\" in text or _WINDOWS.match(text):
        raise InvalidInput(where, "must be a workspace path with '/' separators, not a Windows path (got "
                                  f"{echo_repr(text)})")
    joined = text if os.path.isabs(text) else os.path.join(base, text)
    resolved = os.path.realpath(joined)
    if not is_within(resolved, base):
        raise InvalidInput(where, f"must stay inside the workspace {base} (got {echo_repr(typed)}, which "
                                  f"resolves to {resolved})")
    if is_within(resolved, managed):
        raise InvalidInput(where, f"points into the managed documents/ directory ({managed}); give the original "
                                  f"workspace file instead (got {echo_repr(typed)})")
    lexical = os.path.normpath(joined)
    lexical_rel = os.path.relpath(lexical, base)
    if lexical_rel == ".." or lexical_rel.startswith(".." + os.sep) or os.path.realpath(lexical) != resolved:
        lexical_rel = os.path.relpath(resolved, base)
    stored = lexical_rel.replace(os.sep, "/")
    if _MANAGED_FORM.match(stored) or _MANAGED_FORM.match(os.path.relpath(resolved, base).replace(os.sep, "/")):
        raise InvalidInput(where, f"names a managed document path ({stored}); give the original workspace file "
                                  "instead")
    return stored

