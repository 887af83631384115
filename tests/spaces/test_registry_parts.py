"""The provider plane a SpaceRegistry owns reaches it only through its declared interface.

:class:`~mnemon_ls.spaces.registry_providers.ProviderPlane` (``registry.provider_plane``) declares what it uses
of the registry as :class:`~mnemon_ls.spaces.registry_providers.PlaneRegistry`; every attribute it takes from the
registry is a member of it, and a real registry has every member. The same holds for the repair of a damaged
registry file (:func:`~mnemon_ls.spaces.registry_repair.repair_locked`, through
:class:`~mnemon_ls.spaces.registry_repair.RepairedRegistry`).
"""

from __future__ import annotations

from mnemon_ls.spaces import registry_providers, registry_repair
from mnemon_ls.spaces.registry import SpaceRegistry
from tests.helpers.parts import owner_attributes, protocol_members


def test_the_provider_plane_uses_only_its_declared_interface_of_the_registry():
    members = protocol_members(registry_providers.PlaneRegistry)
    used = owner_attributes(registry_providers, "registry")
    assert used, "the parser found no use of the registry: the test would prove nothing"
    assert used <= members, f"the provider plane uses {sorted(used - members)} beyond PlaneRegistry"
    assert not any(name.startswith("_") for name in members)


def test_a_registry_owns_its_provider_plane_and_has_every_member_it_declares(tmp_path):
    registry = SpaceRegistry(tmp_path / "root")
    assert isinstance(registry.provider_plane, registry_providers.ProviderPlane)
    assert registry.provider_plane.registry is registry
    assert sorted(n for n in protocol_members(registry_providers.PlaneRegistry) if not hasattr(registry, n)) == []
    assert SpaceRegistry.__bases__ == (object,)


def test_the_repair_uses_only_its_declared_interface_of_the_registry(tmp_path):
    members = protocol_members(registry_repair.RepairedRegistry)
    used = owner_attributes(registry_repair, "registry")
    assert used, "the parser found no use of the registry: the test would prove nothing"
    assert used <= members, f"the repair uses {sorted(used - members)} beyond RepairedRegistry"
    assert not any(name.startswith("_") for name in members)
    registry = SpaceRegistry(tmp_path / "root")
    assert sorted(n for n in members if not hasattr(registry, n)) == []
