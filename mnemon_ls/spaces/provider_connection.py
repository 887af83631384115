"""Whether a configured provider's server can be reached, without opening its engine: the connection state
that ``provider list``, ``doctor`` and the editors' provider views show (``connected``, or ``unreachable`` and
why).

A provider that talks to a server declares a quick, read-only check (``check_connection`` of its plugin,
:class:`~.providers.base.Connection`; the PostgreSQL provider connects and reads the server version, its role
and the schema version). It runs with the stored service fields, under :func:`mnemon_ls.output.third_party`,
bounded by the host's provider timeout (the caller's timed runner, :func:`~.thirdparty.call_with_timeout`). Whatever it
says is passed through a scrubber that replaces every stored credential of the provider (its secret fields' values) by
``***``, so a checker that let one slip into an error message cannot show it.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from .. import output
from ..errors import MnemonError
from .providers.base import Connection

#: The states a connection check answers.
STATES = ("connected", "unreachable")


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` with each of ``secrets`` (longest first) replaced by ``***``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


def check(plugin: Any, provider_id: str, service: Mapping[str, Any], timeout: float,
          call_with_timeout: Callable[..., Any]) -> dict[str, Any] | None:
    """``{state, location, message, latencyMs}`` of the provider's connection check with the stored ``service``
    fields, or ``None`` when the plugin declares none. ``call_with_timeout(fn, timeout, provider=...)`` runs the
    check (:func:`~.thirdparty.call_with_timeout`, passed in: that module calls this one). Never raises for the
    check's own failures: an error of the checker, or no answer within ``timeout`` seconds, is ``unreachable``
    with the reason."""
    checker = getattr(plugin, "check_connection", None)
    if checker is None:
        return None
    secret_names = frozenset(getattr(plugin, "secret_fields", ()) or ())
    secrets = [str(v) for k, v in service.items() if k in secret_names and v not in (None, "")]
    started = time.perf_counter()

    def run() -> Connection | None:
        with output.third_party():
            return checker(dict(service))

    try:
        found = call_with_timeout(run, timeout, provider=provider_id)
    except MnemonError as exc:
        found = Connection("unreachable", None, exc.message)
    except Exception as exc:  # a checker's own bug must not break the list or the doctor
        found = Connection("unreachable", None, f"the check failed: {type(exc).__name__}: {exc}")
    if found is None:
        return None
    data = found.to_dict()
    if data["state"] not in STATES:
        data["state"] = "unreachable"
    data["message"] = scrub(" ".join(str(data["message"]).split()), secrets)[:500]
    if data["location"] is not None:
        data["location"] = scrub(str(data["location"]), secrets)
    if data["latencyMs"] is None:
        data["latencyMs"] = round((time.perf_counter() - started) * 1000, 3)
    return data


def describe(connection: Mapping[str, Any]) -> str:
    """One phrase: ``connected to <location>: <message>`` or ``unreachable (<location>): <reason>``."""
    where = connection.get("location")
    if connection["state"] == "connected":
        return f"connected to {where}: {connection['message']}" if where else f"connected: {connection['message']}"
    return f"unreachable ({where}): {connection['message']}" if where else f"unreachable: {connection['message']}"
