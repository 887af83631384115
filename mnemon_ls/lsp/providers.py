"""``mnemon/providers/*``: third-party Memory Space providers over the same :class:`ProviderHost` as the CLI.

Registered from :mod:`.server` with :func:`register`. Requests (params are the pydantic models ``ProviderParams`` /
``ProviderConfigureParams`` of :mod:`.params`; results gain ``workspace``):

- ``mnemon/providers/list`` ``{workspace?}`` -> ``{providers: [view], workspace}``;
- ``mnemon/providers/configure`` ``{workspace?, providerId, services?: {field: value}, clearSecrets?: [..]}``
  -> view;
- ``mnemon/providers/enable`` ``{workspace?, providerId, services?}`` -> view + ``health`` + ``discovered``
  (``clearSecrets`` is refused here: it belongs to ``configure``);
- ``mnemon/providers/disable`` / ``test`` / ``discover`` ``{workspace?, providerId}`` -> view /
  ``{providerId, ok, health, recall, namespaces}`` (read-only: ``ok`` false when the test failed) /
  ``{providerId, spaces: [SpaceView]}``.

A view is :meth:`mnemon_ls.spaces.thirdparty.ProviderHost.view`: configured field *names*, never a value.
``services`` values are checked against the provider's field rules before anything is written; ``null`` or
``""`` clears a field (the provider's default); credentials travel in ``services`` too (the editors ask them
without echo).
Errors are the domain errors (``provider-not-configured``, ``provider-unavailable``, ``invalid-input``
naming ``services.<field>``) as JSON-RPC errors with ``data.code``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from ..packs.gate import run_held

LIST = "mnemon/providers/list"
CONFIGURE = "mnemon/providers/configure"
ENABLE = "mnemon/providers/enable"
DISABLE = "mnemon/providers/disable"
TEST = "mnemon/providers/test"
DISCOVER = "mnemon/providers/discover"


def register(server: Any, mnemon_request: Callable[[str], Callable[..., Any]]) -> None:
    """Register the ``mnemon/providers/*`` handlers on ``server``."""
    from . import protocol as P  # params models load lazily (the serve start path imports no pydantic)

    async def call(ls: Any, workspace: str | None, fn: Callable[[Any], Any]) -> dict[str, Any]:
        state = ls.registry.resolve(workspace)
        result = await asyncio.to_thread(run_held, state.host, lambda: fn(state.host.spaces))
        return result | {"workspace": state.uri}

    @mnemon_request(LIST)
    async def providers_list(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/list`` -> ``{providers, workspace}``."""
        p = P.parse_params(P.WorkspaceParams, params)
        return await call(ls, p.workspace, lambda s: {"providers": s.thirdparty.list()})

    @mnemon_request(CONFIGURE)
    async def providers_configure(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/configure`` -> view (names only)."""
        p = P.parse_params(P.ProviderConfigureParams, params)
        return await call(ls, p.workspace, lambda s: s.thirdparty.configure(p.provider_id, p.services,
                                                                           clear_secrets=p.clear_secrets,
                                                                           force=p.force))

    @mnemon_request(ENABLE)
    async def providers_enable(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/enable`` -> view + ``health`` + ``discovered``."""
        p = P.parse_params(P.ProviderConfigureParams, params)
        if p.clear_secrets:  # silently ignored before: a client would believe the credential was removed
            from ..errors import InvalidInput

            raise InvalidInput("clearSecrets", f"applies to {CONFIGURE} only (configure first, then enable)")
        return await call(ls, p.workspace, lambda s: s.thirdparty.enable(p.provider_id, p.services))

    @mnemon_request(DISABLE)
    async def providers_disable(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/disable`` -> view (its spaces are gone from this root, its data is not)."""
        p = P.parse_params(P.ProviderParams, params)
        return await call(ls, p.workspace, lambda s: s.thirdparty.disable(p.provider_id))

    @mnemon_request(TEST)
    async def providers_test(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/test`` -> ``{providerId, ok, health, recall, namespaces}`` (writes nothing)."""
        p = P.parse_params(P.ProviderParams, params)
        return await call(ls, p.workspace, lambda s: s.thirdparty.test(p.provider_id))

    @mnemon_request(DISCOVER)
    async def providers_discover(ls: Any, params: Any) -> dict[str, Any]:
        """``mnemon/providers/discover`` -> ``{providerId, spaces: [SpaceView]}``."""
        p = P.parse_params(P.ProviderParams, params)

        def run(spaces: Any) -> dict[str, Any]:
            found = spaces.thirdparty.discover(p.provider_id)
            return {"providerId": p.provider_id, "spaces": [spaces.get_space(r.id).to_dict() for r in found]}

        return await call(ls, p.workspace, run)
