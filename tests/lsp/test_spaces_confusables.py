"""``mnemon/spaces/create`` and ``mnemon/spaces/update`` refuse a name that looks the same as one in use
across scripts (UTS #39 confusable skeleton: Greek ``Ρ`` U+03A1 for Latin ``P``), through the same service
operation as the CLI: ``invalid-input`` naming ``name`` and the space, and no byte changes on disk."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import procs
from tests.lsp.conftest import MnemonClient


async def test_a_confusable_name_is_refused_by_the_language_server(client: MnemonClient, repo_dir: Path):
    project = await client.call("mnemon/spaces/create", {"name": "Project", "description": "facts", "active": True})
    notes = await client.call("mnemon/spaces/create", {"name": "Notes", "description": "scratch"})
    root = repo_dir / ".mnemon"
    before = procs.tree_snapshot(root)
    for method, params in (("mnemon/spaces/create", {"name": "\u03a1roject", "description": "Greek rho"}),
                           ("mnemon/spaces/update", {"spaceId": notes["id"], "name": "Pr\u043eject"})):
        error = await client.call_error(method, params)
        assert (error.data["code"], error.data["field"], error.data["spaceId"]) == ("invalid-input", "name",
                                                                                    project["id"]), error.data
        assert error.message.startswith(f"name: looks the same as the name of space Project ({project['id']})")
    assert procs.tree_snapshot(root) == before
    greek = await client.call("mnemon/spaces/create", {"name": "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac",
                                                       "description": "wholly Greek"})
    assert greek["name"] == "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac"
