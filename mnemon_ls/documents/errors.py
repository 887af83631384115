"""Errors the Documents Source raises; they live in :mod:`mnemon_ls.errors` with the others."""

from ..errors import DocumentCapacityError, DocumentStatusError

__all__ = ["DocumentCapacityError", "DocumentStatusError"]
