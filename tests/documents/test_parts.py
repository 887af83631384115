"""The parts a DocumentStore owns reach it only through their declared interface.

``store.capacity``, ``store.search``, ``store.freshness``, ``store.moves`` and ``store.recovery`` each keep the
store in ``self.store`` and declare what they use of it as a Protocol in their module
(:class:`~mnemon_ls.documents.capacity.CapacityStore`, ...). These tests read the parts' source: every
attribute they take from the store is a member of their Protocol, every attribute they take from another
part through the store (``store.moves.repair``) is a member of the small Protocol that member is declared
with, and a real store has every member of both. ``store.files`` and ``store.index`` are built from the
paths they need and hold no store at all.
"""

from __future__ import annotations

import ast
import inspect
import typing
from typing import Protocol

import pytest

from mnemon_ls.documents import DocumentStore, capacity, files, freshness, index, moves, recovery, search
from tests.helpers.parts import owner_attributes, protocol_members

PARTS = [("capacity", capacity, capacity.CapacityStore, capacity.Capacity),
         ("search", search, search.SearchedStore, search.Search),
         ("freshness", freshness, freshness.RefreshedStore, freshness.Freshness),
         ("moves", moves, moves.MovingStore, moves.Moves),
         ("recovery", recovery, recovery.RecoveringStore, recovery.Recovery)]
IDS = [name for name, *_ in PARTS]


def _protocol_members_of(protocol: type) -> dict[str, type]:
    """``member -> its annotation`` for the members of ``protocol`` annotated with another Protocol."""
    hints = typing.get_type_hints(protocol)
    return {name: hint for name, hint in hints.items()
            if isinstance(hint, type) and issubclass(hint, Protocol) and getattr(hint, "_is_protocol", False)}


def _second_level(module, owner: str, member: str) -> set[str]:
    """Every ``X`` of ``<owner>.<member>.X`` and ``self.<owner>.<member>.X`` in ``module``'s source."""
    used = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and node.value.attr == member):
            continue
        base = node.value.value
        if (isinstance(base, ast.Name) and base.id == owner) or (
                isinstance(base, ast.Attribute) and base.attr == owner
                and isinstance(base.value, ast.Name) and base.value.id == "self"):
            used.add(node.attr)
    return used


@pytest.mark.parametrize(("name", "module", "protocol", "part"), PARTS, ids=IDS)
def test_a_part_uses_only_its_declared_interface_of_the_store(name, module, protocol, part):
    members = protocol_members(protocol)
    used = owner_attributes(module, "store")
    assert used, "the parser found no use of the store: the test would prove nothing"
    assert used <= members, f"{module.__name__} uses {sorted(used - members)} of the store beyond {protocol.__name__}"
    assert not any(member.startswith("_") for member in members)


@pytest.mark.parametrize(("name", "module", "protocol", "part"), PARTS, ids=IDS)
def test_a_part_uses_only_the_declared_interface_of_the_other_parts_it_reaches(name, module, protocol, part):
    for member, nested in _protocol_members_of(protocol).items():
        declared = protocol_members(nested)
        used = _second_level(module, "store", member)
        assert used, f"{module.__name__} declares store.{member} as {nested.__name__} but never uses it"
        assert used <= declared, (f"{module.__name__} uses {sorted(used - declared)} of store.{member} beyond "
                                  f"{nested.__name__}")


@pytest.mark.parametrize(("name", "module", "protocol", "part"), PARTS, ids=IDS)
def test_a_store_has_every_member_its_parts_declare(tmp_path, name, module, protocol, part):
    assert issubclass(protocol, Protocol)
    store = DocumentStore(tmp_path / "root", None)
    missing = sorted(member for member in protocol_members(protocol) if not hasattr(store, member))
    assert missing == []
    for member, nested in _protocol_members_of(protocol).items():
        owned = getattr(store, member)
        assert sorted(n for n in protocol_members(nested) if not callable(getattr(owned, n, None))) == [], member


def test_the_store_owns_one_of_each_part_bound_to_itself(tmp_path):
    store = DocumentStore(tmp_path / "root", tmp_path, search_index=False)
    for name, _module, _protocol, part in PARTS:
        assert isinstance(getattr(store, name), part) and getattr(store, name).store is store, name
    assert isinstance(store.files, files.ManagedFiles) and store.files.documents_dir == store.documents_dir
    assert isinstance(store.index, index.IndexFile) and store.index.files is store.files
    assert store.index.path == store.index_path
    assert not any(isinstance(value, DocumentStore) for value in vars(store.files).values())
    assert not any(isinstance(value, DocumentStore) for value in vars(store.index).values())
    assert DocumentStore.__bases__ == (object,)
    assert not (tmp_path / "root" / "documents").exists()  # building the parts wrote nothing
