"""Flags of the ``mnemon/*`` requests take only JSON ``true`` and ``false`` (an attack pass found the params
models lax: pydantic turned ``"yes"``, ``"false"``, ``1`` and ``0`` into booleans, so ``confirm: "yes"`` wrote
a shared-project record that needs explicit confirmation, and ``active: "false"`` created a space).

Each wrong flag must be a JSON-RPC ``-32602`` ``invalid-input`` naming the field with the rule, against the
real server in a subprocess, and change no byte on disk (DESIGN.md invariant 4).
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.lsp.conftest import Launcher, tree_state

RULE = "input should be a valid boolean, not {}"  # the JSON type and the value sent: every surface words it so

# (method, params without the flag, flag field)
FLAGS = [
    ("mnemon/records/create", {"recordScope": "shared-project", "title": "Shared rule", "content": "Use ruff"},
     "confirm"),
    ("mnemon/records/propose", {"recordScope": "shared-project", "title": "Shared rule", "content": "Use ruff"},
     "confirm"),
    ("mnemon/records/forget", {"id": "memory:manual:fact:x"}, "confirm"),
    ("mnemon/records/import", {"bundle": {"schemaVersion": 1, "records": []}}, "confirm"),
    ("mnemon/records/compact", {}, "confirm"),
    ("mnemon/records/list", {}, "proposals"),
    ("mnemon/spaces/create", {"name": "Work", "description": "decisions"}, "active"),
    ("mnemon/spaces/list", {}, "activeOnly"),
    ("mnemon/spaces/merge", {"sourceIds": ["a"], "targetId": "b"}, "deactivateSources"),
    ("mnemon/remember", {"content": "Deploys go through the blue-green switch"}, "scopeToBranch"),
    ("mnemon/documents/search", {"query": "deploy"}, "includeArchived"),
    ("mnemon/documents/search", {"query": "deploy"}, "includeContent"),
    ("mnemon/providers/configure", {"providerId": "holographic"}, "force"),
    ("mnemon/recall", {"query": "deploy"}, "includeLowConfidence"),
]
#: JSON values a lax parser takes for a boolean; none of them is one.
NOT_BOOLEANS = ["yes", "false", "true", 1, 0, "0", None]


async def test_flags_take_only_json_booleans_and_a_wrong_one_changes_nothing(lsp: Launcher, repo: pygit2.Repository,
                                                                             repo_dir: Path, tmp_path: Path) -> None:
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "seed"})
    await client.call("mnemon/documents/search", {"query": "seed"})  # derived side indexes built first
    await client.call("mnemon/records/list", {})
    before = tree_state(tmp_path)
    problems = []
    for method, params, field in FLAGS:
        for value in NOT_BOOLEANS:
            error = await client.call_error(method, {**params, field: value})
            got = (error.code, error.message, error.data)
            rule = RULE.format({str: f"a string (got {value!r})", int: f"an integer (got {value})",
                                type(None): "null"}[type(value)])
            want = (-32602, f"{field}: {rule}", {"code": "invalid-input", "field": field, "rule": rule})
            if got != want:
                problems.append(f"{method} {field}={value!r}:\n  got  {got!r}\n  want {want!r}")
    assert not problems, "\n".join(problems)
    assert tree_state(tmp_path) == before
    assert not (repo_dir / ".dsh" / "workspace-memory" / "shared.jsonl").exists()

    # The real booleans still work: an explicit confirmation writes the shared record, false refuses it.
    refused = await client.call_error("mnemon/records/create", {**FLAGS[0][1], "confirm": False})
    assert refused.data["code"] == "confirmation-required"
    created = await client.call("mnemon/records/create", {**FLAGS[0][1], "confirm": True})
    assert created["record"]["scope"] == "shared-project", created


def test_every_flag_of_every_params_model_is_strict() -> None:
    """A flag added later cannot be lax again: every boolean field of every params model (the operations' and
    the editor commands' argument objects, ``ops/command_args.py``) refuses the string ``"false"`` and the number 0."""
    from pydantic import ValidationError

    from mnemon_ls.ops.base import Params
    from mnemon_ls.ops.registry import operations

    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    operations()  # the operation layer's models (mnemon_ls/ops)
    flags = [(model, name, info) for model in subclasses(Params)
             for name, info in model.model_fields.items() if info.annotation is bool]
    assert len(flags) >= 13
    lax = []
    for model, name, info in flags:
        for value in ("false", 0):
            try:
                model.__pydantic_validator__.validate_assignment(model.model_construct(), name, value)
            except ValidationError as exc:
                assert exc.errors()[0]["type"] == "bool_type", (model, name)
            else:
                lax.append(f"{model.__name__}.{name}={value!r}")
    assert not lax, lax


def test_every_number_of_every_params_model_refuses_strings_and_booleans() -> None:
    """``mnemon/link`` took ``weight: "0.9"`` and ``weight: true`` (as 1.0) where MCP refuses both: every float
    field of every params model refuses a string and a boolean, and still takes an integer."""
    from pydantic import ValidationError

    from mnemon_ls.ops.base import Params
    from mnemon_ls.ops.registry import operations

    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    operations()
    numbers = [(model, name) for model in subclasses(Params)
               for name, info in model.model_fields.items() if info.annotation in (float, float | None)]
    assert ("LinkParams", "weight") in [(m.__name__, n) for m, n in numbers]
    lax = []
    for model, name in numbers:
        for value in ("0.9", True):
            try:
                model.__pydantic_validator__.validate_assignment(model.model_construct(), name, value)
            except ValidationError:
                continue
            lax.append(f"{model.__name__}.{name}={value!r}")
        assert model.__pydantic_validator__.validate_assignment(model.model_construct(), name, 1) is not None
    assert not lax, lax
