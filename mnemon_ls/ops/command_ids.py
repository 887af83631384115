"""The ids of the language server's editor commands (``workspace/executeCommand``), light: no pydantic, nothing
of the project.

Each id is bound by the :class:`~.surfaces.LspCommand` of one or more operations (declared beside the
operation, :mod:`.runtime`, :mod:`.spaces`, :mod:`.workspace`, :mod:`.documents`). The ids are listed here as
well because the language server advertises them in its ``initialize`` answer
(``executeCommandProvider.commands``), before it loads the registry (which imports pydantic); the registry
refuses an id bound by no operation or bound but not listed (:func:`mnemon_ls.ops.registry.operations`).
Namespaced ``mnemon.server.*``, apart from the editor plugins' own command ids.
"""

from __future__ import annotations

#: "Remember selection": MEMORY.md (``runtime.mutate``), or a Memory Space with ``spaceId`` (``spaces.remember``).
REMEMBER_SELECTION = "mnemon.server.rememberSelection"
#: "Show wake snapshot" (``workspace.wake``), rendered to a read-only file and opened.
SHOW_WAKE_SNAPSHOT = "mnemon.server.showWakeSnapshot"
#: "Create document from file" (``documents.create`` with ``file``).
CREATE_DOCUMENT_FROM_FILE = "mnemon.server.createDocumentFromFile"
#: "Update document from file" (``documents.updateFromFile``).
UPDATE_DOCUMENT_FROM_FILE = "mnemon.server.updateDocumentFromFile"
#: "Show the memories citing this" (``citations.file``), what a code lens on a cited range runs: rendered, opened.
SHOW_CITING_MEMORIES = "mnemon.server.showCitingMemories"

#: Every editor command, in the order ``initialize`` advertises them.
COMMANDS: tuple[str, ...] = (REMEMBER_SELECTION, SHOW_WAKE_SNAPSHOT, CREATE_DOCUMENT_FROM_FILE,
                             UPDATE_DOCUMENT_FROM_FILE, SHOW_CITING_MEMORIES)
