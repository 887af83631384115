"""The operation layer's one error mapping (``mnemon_ls/ops/errors.py``): every code of the vocabulary has a
defined answer on every surface, and what an operation raises maps to the same error everywhere."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from mnemon_ls import errors
from mnemon_ls.errors import (EXIT_FAILURE, EXIT_INVALID, EXIT_OK, EXIT_REJECTED, EXIT_STORAGE, InvalidInput,
                              MnemonError, ProviderNotConfigured, ProviderTimedOut, StorageFull)
from mnemon_ls.lsp.protocol import to_rpc_error
from mnemon_ls.ops.errors import ERROR_CODES, as_error, rpc_code


def _error_classes() -> list[type[MnemonError]]:
    def walk(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in walk(sub))]

    import mnemon_ls.documents.indexformat  # noqa: F401 - its IndexProblem is an InvalidInput
    return [cls for cls in walk(MnemonError) if cls.__module__.startswith("mnemon_ls")]


def test_every_code_of_the_vocabulary_has_its_own_json_rpc_number_and_an_exit_code() -> None:
    """provider-not-configured and provider-timeout answered -32603 (internal error) on the language server."""
    classes = _error_classes()
    codes = {cls.code for cls in classes}
    assert {"provider-not-configured", "provider-timeout", "format-too-new", "migration-unverified"} <= codes
    missing = sorted(code for code in codes if code not in ERROR_CODES)
    assert missing == []
    numbers = [number for code, number in ERROR_CODES.items() if code != "internal-error"]
    assert len(numbers) == len(set(numbers)) and -32603 not in numbers
    for cls in classes:
        assert cls.exit_code in (EXIT_FAILURE, EXIT_INVALID, EXIT_REJECTED, EXIT_STORAGE), cls
        assert cls.exit_code != EXIT_OK


@pytest.mark.parametrize("error, number", [
    (ProviderNotConfigured("mem0 is not configured for this root"), -32026),
    (ProviderTimedOut("mem0 did not answer in 5 s"), -32027),
])
def test_provider_errors_are_not_internal_errors_on_the_language_server(error: MnemonError, number: int) -> None:
    answer = to_rpc_error(error)
    assert (answer.code, answer.data["code"]) == (number, error.code)


def test_as_error_maps_what_a_source_lets_through() -> None:
    full = as_error(OSError(errno.ENOSPC, "No space left on device", "/r/x"))
    assert isinstance(full, StorageFull) and rpc_code(full) == -32031
    locked = sqlite3.OperationalError("database or disk is full")
    locked.sqlite_errorcode = 13  # type: ignore[attr-defined]
    assert isinstance(as_error(locked), StorageFull)
    nested = as_error(RecursionError())
    assert isinstance(nested, InvalidInput) and nested.field == "input"
    long_path = as_error(OSError(errno.ENAMETOOLONG, "File name too long"))
    assert isinstance(long_path, InvalidInput) and long_path.field == "path"
    assert as_error(KeyError("a bug")) is None
    same = InvalidInput("limit", "must be an integer 1..50")
    assert as_error(same) is same


def test_a_pydantic_error_names_the_first_field() -> None:
    from mnemon_ls.ops.spaces import RecallParams

    with pytest.raises(Exception) as info:
        RecallParams.model_validate({"query": "x", "limit": "3"})
    mapped = as_error(info.value)
    assert isinstance(mapped, InvalidInput) and mapped.field == "limit"
