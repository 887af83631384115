"""Errors of the Memory Spaces Source (subclasses of :class:`~mnemon_ls.errors.MnemonError`, stable codes).

Bad requests use :class:`~mnemon_ls.errors.InvalidInput` (``data.field`` names the field) like every other
Source; a store that cannot be read uses :class:`~mnemon_ls.errors.UnreadableStore` and a store locked
past the timeout :class:`~mnemon_ls.errors.StoreBusy`. The classes below are the ones only spaces need;
to move into :mod:`mnemon_ls.errors` when convenient (codes stay).
"""

from __future__ import annotations

from ..errors import EXIT_FAILURE, EXIT_REJECTED, MnemonError


class ProviderUnavailable(MnemonError):
    """The data plane of a space cannot be reached: the ``mnemon`` binary is missing or timed out, or a
    third-party provider has no adapter / is disabled. ``data`` has ``provider`` and ``reason``."""

    code = "provider-unavailable"
    exit_code = EXIT_FAILURE


class ProviderFailed(MnemonError):
    """The provider answered with an error: ``mnemon`` exited non-zero (``data.exitCode``, ``data.output``)
    or printed output that is not the documented JSON shape (``data.reason``)."""

    code = "provider-failed"
    exit_code = EXIT_FAILURE


class SpaceReadOnly(MnemonError):
    """A write reached a space opened read-only (its ``mnemon.db`` has a newer schema than this version
    knows, or is not writable). ``data`` has ``spaceId``, ``file`` and ``reason``."""

    code = "space-read-only"
    exit_code = EXIT_REJECTED


class SpaceRefused(MnemonError):
    """A well-formed space operation the rules refuse: deleting the last native store, merging a space
    into itself, merging a non-native space. ``data`` has ``spaceId`` and ``reason``."""

    code = "space-refused"
    exit_code = EXIT_REJECTED
