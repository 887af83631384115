"""Line files appended durably (``state/imports.jsonl``, the lineage, ``runtime/archive/memories.jsonl``): what an
append must do first when a killed append tore the file's last line."""

from __future__ import annotations

import os
from pathlib import Path

from .fsread import O_NOFOLLOW, check_store_path, open_for_read, storage_errors


@storage_errors
def after_torn_line(path: Path, data: bytes) -> bytes:
    """``data`` (whole lines) to append to ``path``, led by a newline when the file's last byte is not one: a killed
    append left its last line torn, and the first new line would be glued onto it and lost with it. Reads the last
    byte only; a missing or empty file takes ``data`` as it is. The checks of
    :func:`~mnemon_ls.fsread.read_bytes_or_none` (no link followed). Raises :class:`~mnemon_ls.errors.StorageError`
    naming ``path``."""
    check_store_path(path, final=not O_NOFOLLOW)
    fd = open_for_read(path)
    if fd is None:
        return data
    try:
        size = os.fstat(fd).st_size
        return b"\n" + data if size and os.pread(fd, 1, size - 1) != b"\n" else data
    finally:
        os.close(fd)
