"""The parts a RuntimeStore owns reach it only through their declared interface.

:class:`~mnemon_ls.runtime.capacity.CapacityMaintenance` (``store.maintenance``) and
:class:`~mnemon_ls.runtime.repair.ProjectionRepair` (``store.projections``) each declare what they use of the
store as a Protocol (:class:`~mnemon_ls.runtime.capacity.MaintainedStore`,
:class:`~mnemon_ls.runtime.repair.RepairedStore`). These tests read the parts' source: every attribute they
take from the store is a member of their Protocol, and a real store has every member.
"""

from __future__ import annotations

from typing import Protocol

import pytest

from mnemon_ls.runtime import capacity, repair
from mnemon_ls.runtime.store import RuntimeStore
from tests.helpers.parts import owner_attributes, protocol_members


PARTS = [(capacity, capacity.MaintainedStore), (repair, repair.RepairedStore)]


@pytest.mark.parametrize(("module", "protocol"), PARTS, ids=["capacity", "repair"])
def test_a_part_uses_only_its_declared_interface_of_the_store(module, protocol):
    members = protocol_members(protocol)
    used = owner_attributes(module, "store")
    assert used, "the parser found no use of the store: the test would prove nothing"
    assert used <= members, f"{module.__name__} uses {sorted(used - members)} of the store beyond {protocol.__name__}"
    assert not any(name.startswith("_") for name in members)


@pytest.mark.parametrize(("module", "protocol"), PARTS, ids=["capacity", "repair"])
def test_a_store_has_every_member_its_parts_declare(tmp_path, module, protocol):
    assert issubclass(protocol, Protocol)
    store = RuntimeStore(tmp_path / "root")
    missing = sorted(name for name in protocol_members(protocol) if not hasattr(store, name))
    assert missing == []


def test_the_store_owns_one_of_each_part_bound_to_itself(tmp_path):
    store = RuntimeStore(tmp_path / "root", hand_edits="restore")
    assert isinstance(store.maintenance, capacity.CapacityMaintenance) and store.maintenance.store is store
    assert isinstance(store.projections, repair.ProjectionRepair) and store.projections.store is store
    assert store.projections.hand_edits == "restore"
    assert RuntimeStore.__bases__ == (object,)
