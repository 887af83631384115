"""Errors only the Memory Spaces Source raises; they live in :mod:`mnemon_ls.errors` with the others.

Bad requests use :class:`~mnemon_ls.errors.InvalidInput` (``data.field`` names the field); a store that
cannot be read :class:`~mnemon_ls.errors.UnreadableStore`; a store locked past the timeout
:class:`~mnemon_ls.errors.StoreBusy`.
"""

from ..errors import ProviderFailed, ProviderUnavailable, SpaceReadOnly, SpaceRefused

__all__ = ["ProviderFailed", "ProviderUnavailable", "SpaceReadOnly", "SpaceRefused"]
