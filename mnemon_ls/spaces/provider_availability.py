"""Why a memory engine of the reference's provider matrix has no mnemon-ls provider package, engine by engine.

What was found when each engine was tried on this project's machines, which reach only the package
registries (PyPI, npm, Debian) and no other host (docs/providers.md, "The nine engines", says how each was
tried). ``mnemon-ls provider list`` prints the reason beside the engine, its JSON and
``mnemon/providers/list`` carry it as ``unavailable`` (:func:`unavailable_reason`), so nobody has to guess
whether a missing adapter is an oversight: an engine that cannot run here gets no untested adapter.

:data:`UNAVAILABLE` holds the third-party engines (ids of the provider matrix); :data:`MNEMON_CLI` why the
built-in ``mnemon-cli`` provider's engine, the Mnemon CLI's Go binary, is not on these machines (``provider
list`` shows it when no binary is found). An engine that gets a package leaves :data:`UNAVAILABLE` (the
package's own README then says how it is tested).
"""

from __future__ import annotations

#: ``{provider id: the exact reason}`` (one sentence each; versions as found in the registries).
UNAVAILABLE: dict[str, str] = {
    "honcho": "its server is in no package registry: the Honcho server (plastic-labs' 'honcho' 3.4.1, Python "
              ">= 3.13) installs from a git clone or a Docker image, PyPI's 'honcho' is an unrelated Procfile "
              "runner, and only its clients are published (honcho-ai 2.7.0 on PyPI, @honcho-ai/sdk 2.5.0 on npm); "
              "the hosted service needs an account",
    "supermemory": "hosted only: supermemory 5.0.1 (PyPI) and 4.25.4 (npm) are clients of the hosted API, which "
                   "needs an account and an API key; no server package is published",
    "retaindb": "no package in any registry: 'retaindb' and '@retaindb/sdk' are on neither PyPI nor npm; its "
                "self-hosted server installs only from a git clone (pnpm) or a Docker image, and RetainDB Cloud "
                "needs an account",
}

#: Why the built-in ``mnemon-cli`` provider finds no binary to test on this project's machines.
MNEMON_CLI = ("the Mnemon CLI (a Go binary) is in no registry: PyPI's 'mnemon-cli' 0.0.1 is an empty placeholder "
              "(no binary), npm's 'mnemon' is an unrelated WebAssembly tool, Debian has no package, and building it "
              "needs Go >= 1.24.6 (Debian 12 has 1.19) with modules fetched from the Go module proxy")


def unavailable_reason(provider_id: str) -> str | None:
    """The reason ``provider_id`` has no package (:data:`UNAVAILABLE`), or ``None`` for any other id."""
    return UNAVAILABLE.get(provider_id)

