"""The one mapping from what an operation can raise to the error vocabulary of :mod:`mnemon_ls.errors`, and
the one table of JSON-RPC numbers for that vocabulary.

Every surface presents a :class:`~mnemon_ls.errors.MnemonError` in its own form (a JSON-RPC error whose
``data.code`` is the error's ``code``; an MCP tool error ``<code>: <message>``; a CLI line on stderr and the
error's ``exit_code``), but none decides *which* error an exception is: :func:`as_error` does, for all of
them. Light: imports nothing but :mod:`mnemon_ls.errors` (the language server loads it before
``initialize`` is answered).
"""

from __future__ import annotations

import errno

from ..errors import InvalidInput, MnemonError, storage_error

#: JSON-RPC numeric code of each stable ``data.code`` (every ``code`` of :mod:`mnemon_ls.errors` has one:
#: ``tests/ops/test_errors.py`` enumerates them). ``-32602`` is JSON-RPC's Invalid params; ``-32603`` its
#: Internal error; the others are in the server-defined range ``-32000..-32099``.
ERROR_CODES: dict[str, int] = {
    "invalid-input": -32602,
    "runtime-capacity": -32010,
    "revision-conflict": -32011,
    "ambiguous-match": -32012,
    "no-match": -32013,
    "not-found": -32014,
    "unreadable-store": -32015,
    "not-in-workspace": -32016,
    "store-busy": -32017,
    "document-capacity": -32018,
    "document-status": -32019,
    "provider-unavailable": -32020,
    "provider-failed": -32021,
    "space-read-only": -32022,
    "space-refused": -32023,
    "store-too-large": -32024,
    "confirmation-required": -32025,
    "provider-not-configured": -32026,
    "provider-timeout": -32027,
    "format-too-new": -32028,
    "storage-error": -32030,
    "storage-full": -32031,
    "storage-readonly": -32032,
    "storage-denied": -32033,
    "storage-unreadable": -32034,
    "storage-unsafe": -32035,
    "maintenance-failed": -32040,  # archival could not prove a destination; hot memory unchanged
    "migration-unverified": -32041,
    "pack-invalid": -32042,
    "pack-refused": -32043,
    "internal-error": -32603,
}

#: Stable ``data.code`` of the JSON-RPC 2.0 and LSP protocol-level errors (framing and envelope; pygls'
#: method-not-found and cancellation), which no domain error maps to.
PROTOCOL_ERROR_CODES: dict[str, int] = {
    "parse-error": -32700,
    "invalid-request": -32600,
    "method-not-found": -32601,
    "server-not-initialized": -32002,
    "request-cancelled": -32800,
    "content-modified": -32801,
}


def as_error(exc: BaseException) -> MnemonError | None:
    """The :class:`MnemonError` an exception raised by an operation stands for, or ``None`` when it is a
    bug (the surface answers ``internal-error`` and logs it).

    - a :class:`MnemonError` is itself;
    - a pydantic ``ValidationError`` (a model built inside an operation) is ``invalid-input`` naming its
      first field;
    - an ``OSError``/``sqlite3.Error`` a Source let through is its ``storage-*`` error
      (:func:`mnemon_ls.errors.storage_error`); a path longer than the system allows is ``invalid-input``
      (``path``);
    - a ``RecursionError`` (JSON input nested absurdly) is ``invalid-input`` (``input``).
    """
    if isinstance(exc, MnemonError):
        return exc
    if type(exc).__module__.startswith("pydantic"):
        from pydantic import ValidationError

        if isinstance(exc, ValidationError):
            from .base import invalid_input_from

            return invalid_input_from(exc)
    if isinstance(exc, RecursionError):
        return InvalidInput("input", "is nested too deeply (JSON arrays or objects inside each other)")
    mapped = storage_error(exc)
    if mapped is not None:
        return mapped
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return InvalidInput("path", f"is longer than the system allows: {exc.strerror}")
    return None


def rpc_code(error: MnemonError) -> int:
    """The JSON-RPC numeric code of ``error`` (:data:`ERROR_CODES`; ``-32603`` for a code missing there)."""
    return ERROR_CODES.get(error.code, -32603)
