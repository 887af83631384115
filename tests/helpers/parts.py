"""Holding a part to the interface it declares of its owner (``docs/architecture.md``, "A store that has parts").

A part (e.g. :class:`~mnemon_ls.runtime.capacity.CapacityMaintenance`) keeps its owner in one attribute
(``self.store``, ``self.registry``) and declares what it uses of it as a Protocol. These helpers read the
part's module: the members a Protocol declares, and every attribute the module takes from the owner.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType


def protocol_members(protocol: type) -> set[str]:
    """The attribute and method names ``protocol`` declares (its annotations and its public functions)."""
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
    return names


def owner_attributes(module: ModuleType, owner: str) -> set[str]:
    """Every ``X`` of ``<owner>.X`` and ``self.<owner>.X`` in ``module``'s source (``owner`` e.g. ``"store"``)."""
    used = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id == owner:
            used.add(node.attr)
        elif (isinstance(base, ast.Attribute) and base.attr == owner
              and isinstance(base.value, ast.Name) and base.value.id == "self"):
            used.add(node.attr)
    return used
