"""A citation of code: ``{path, startLine, endLine, sha256, symbol?}``, how its lines are hashed, and how a
caller's request to cite (``PATH[:START[-END]]`` on the command line, ``{path, startLine?, endLine?, symbol?}``
elsewhere) becomes one (:func:`resolve`), refusing what must not be cited.

- ``path`` is relative to the workspace, with POSIX separators; lines are 1-based and inclusive.
- ``sha256`` is the hex SHA-256 of the cited lines with their line endings normalised: the file is UTF-8,
  split at ``\\r\\n``, ``\\r`` and ``\\n``, and each cited line is hashed followed by one ``\\n``
  (:func:`hash_lines`). Only the place and the hash are stored, never the text.
- What is refused (:func:`resolve`, :class:`~mnemon_ls.errors.InvalidInput` naming ``cites[i].<field>`` and the
  rule): a path outside the workspace, inside the storage root or a ``.git`` directory, a directory, a file
  that does not exist, a symbolic link that leaves the workspace, a binary file (a NUL byte, or not UTF-8),
  a file over :data:`MAX_FILE_BYTES`, an empty file, lines past the end of the file, ``endLine`` before
  ``startLine``.

Base layer: imports only :mod:`mnemon_ls.errors`.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..digits import DIGITS, MAX_DIGITS
from ..errors import InvalidInput, echo_repr, echo_value
from ..fsread import is_within

#: Largest file that may be cited, in bytes (2 MiB).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: Most citations one memory may carry.
MAX_CITES = 32
#: Highest line number a request may name (a cited line, ``cited --line``): far past any file that may be
#: cited (at most :data:`MAX_FILE_BYTES` bytes, so at most that many lines plus one), and short to repeat.
MAX_LINE = 10**9
#: Longest ``path`` and ``symbol``, in characters.
MAX_PATH_CHARS = 4096
MAX_SYMBOL_CHARS = 200
#: The freshness states (:mod:`.freshness`).
FRESHNESS = ("fresh", "moved", "renamed", "changed", "gone", "unknown")

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
#: Digits of a line number ``parse_cite`` converts (Python converts at most 4,300: ``sys.get_int_max_str_digits``).
_MAX_DIGITS = MAX_DIGITS
_RANGE = re.compile(rf"({DIGITS})(?:-({DIGITS}))?")  # ASCII digits: "١" (Arabic-Indic one) is not a line


class BinaryFile(ValueError):
    """The bytes are not text (a NUL byte, or not UTF-8)."""


@dataclass(frozen=True, slots=True)
class Citation:
    """One stored citation: ``path`` (workspace-relative, POSIX), ``start_line``..``end_line`` (1-based,
    inclusive), ``sha256`` (64 hex, :func:`hash_lines` of those lines), ``symbol`` (a name given by the
    person or assistant, or ``None``)."""

    path: str
    start_line: int
    end_line: int
    sha256: str
    symbol: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{path, startLine, endLine, sha256, symbol?}``."""
        data: dict[str, Any] = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                                "sha256": self.sha256}
        if self.symbol is not None:
            data["symbol"] = self.symbol
        return data

    @classmethod
    def from_json(cls, data: Any) -> "Citation | None":
        """The citation ``data`` holds (:meth:`to_json`'s shape), or ``None`` when it is not one (a side file
        edited by hand: such an entry is skipped, never fatal)."""
        if not isinstance(data, Mapping):
            return None
        path, start, end, digest, symbol = (data.get(k) for k in ("path", "startLine", "endLine", "sha256", "symbol"))
        if not (isinstance(path, str) and path and isinstance(start, int) and isinstance(end, int)
                and not isinstance(start, bool) and not isinstance(end, bool) and 1 <= start <= end
                and isinstance(digest, str) and _HEX64.match(digest)
                and (symbol is None or isinstance(symbol, str))):
            return None
        return cls(path, start, end, digest, symbol)


def text_lines(data: bytes) -> list[str]:
    """The lines of a text file's bytes, line endings removed (``\\r\\n``, ``\\r``, ``\\n``; a final line
    ending starts no extra line). Raises :class:`BinaryFile` for a NUL byte or bytes that are not UTF-8."""
    if b"\x00" in data:
        raise BinaryFile("it contains a NUL byte")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BinaryFile(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def hash_lines(lines: Sequence[str]) -> str:
    """Hex SHA-256 of ``lines``, each followed by ``\\n``, UTF-8."""
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def parse_cite(value: str) -> dict[str, Any]:
    """A command line's ``PATH[:START[-END]]`` as ``{path, startLine?, endLine?}`` (``PATH:12`` is line 12 alone,
    ``PATH`` the whole file). A path that itself holds ``:`` keeps it unless the tail is a line range (ASCII
    digits). Raises :class:`InvalidInput` naming ``cites`` for an empty path or a line of more than
    :data:`_MAX_DIGITS` digits (a line past :data:`MAX_LINE` is refused by the line rule, in its range wording)."""
    path, sep, tail = value.rpartition(":")
    match = _RANGE.fullmatch(tail) if sep else None
    if match is None:
        path, start, end = value, None, None
    else:
        if any(len(part) > _MAX_DIGITS for part in match.groups() if part is not None):
            # int() of over 4,300 digits raises a plain ValueError; shorter ones get the line rule's range wording
            raise InvalidInput("cites", f"must be PATH[:START[-END]] with lines in 1..{MAX_LINE} (got "
                                        f"{echo_repr(value)})")
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) is not None else start
    if not path:
        raise InvalidInput("cites", "must be PATH[:START[-END]], e.g. src/app.py:10-24 (got "
                                    f"{echo_repr(value)})")
    cite: dict[str, Any] = {"path": path}
    if start is not None:
        cite["startLine"], cite["endLine"] = start, end
    return cite


def check_range(cites: Sequence[Any], field: str = "cites") -> None:
    """The rules a request to cite breaks without a file read: at most :data:`MAX_CITES`, ``endLine`` not
    before ``startLine``, ``endLine`` not without ``startLine``. Each item has ``start_line``/``end_line``
    attributes or ``startLine``/``endLine`` keys. Raises :class:`InvalidInput` naming ``cites[i].endLine``."""
    if len(cites) > MAX_CITES:
        raise InvalidInput(field, f"at most {MAX_CITES} citations (got {len(cites)})")
    for index, cite in enumerate(cites):
        start, end, _symbol = _fields(cite)
        if end is not None and start is None:
            raise InvalidInput(f"{field}[{index}].endLine", "needs startLine")
        if start is not None and end is not None and end < start:
            raise InvalidInput(f"{field}[{index}].endLine", f"must not be before startLine ({end} < {start})")


def _fields(cite: Any) -> tuple[int | None, int | None, str | None]:
    if isinstance(cite, Mapping):
        return cite.get("startLine"), cite.get("endLine"), cite.get("symbol")
    return cite.start_line, cite.end_line, cite.symbol


def check_path(raw: str, field: str) -> str:
    """``raw``, a path a request names (a cited file, the file whose citing memories are listed), when it holds at
    most :data:`MAX_PATH_CHARS` characters and no NUL: the one rule of every surface (``--cite``, ``cites``,
    ``cited FILE``, ``citations.file``). Raises :class:`InvalidInput` naming ``field`` otherwise (the path is
    not repeated: it may be megabytes)."""
    if len(raw) > MAX_PATH_CHARS or "\x00" in raw:
        raise InvalidInput(field, f"must be a path of at most {MAX_PATH_CHARS} characters without NUL")
    return raw


def _path_of(cite: Any) -> Any:
    return cite.get("path") if isinstance(cite, Mapping) else cite.path


def resolve(workspace: Path | None, storage_root: Path | None, cites: Sequence[Any],
            field: str = "cites") -> list[Citation]:
    """Each request to cite (``{path, startLine?, endLine?, symbol?}`` dicts or objects with those
    attributes in snake_case) as a :class:`Citation` of the file as it is now: the path made relative to
    ``workspace``, the line range defaulted (no ``startLine``: the whole file; no ``endLine``: ``startLine``
    alone) and the lines hashed. Reads the files; writes nothing.

    Raises :class:`InvalidInput` naming ``<field>[i].<path|startLine|endLine|symbol>`` and the rule (module
    doc); ``<field>`` itself when there is no workspace to cite from."""
    check_range(cites, field)
    if cites and workspace is None:
        raise InvalidInput(field, "needs a workspace folder: a citation's path is relative to the workspace")
    found = []
    for index, cite in enumerate(cites):
        found.append(_resolve_one(Path(workspace), storage_root, cite, f"{field}[{index}]"))  # type: ignore[arg-type]
    return found


def _resolve_one(workspace: Path, storage_root: Path | None, cite: Any, name: str) -> Citation:
    raw = _path_of(cite)
    start, end, symbol = _fields(cite)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInput(f"{name}.path", "must be a non-empty path relative to the workspace")
    check_path(raw, f"{name}.path")
    if symbol is not None and (len(symbol) > MAX_SYMBOL_CHARS or not symbol.strip() or "\n" in symbol):
        raise InvalidInput(f"{name}.symbol", f"must be one line of 1..{MAX_SYMBOL_CHARS} characters")
    base = os.path.abspath(workspace)
    full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(base, raw))
    if not is_within(full, base) or full == base:
        raise InvalidInput(f"{name}.path", f"must be a file inside the workspace {base} (got {echo_repr(raw)})")
    relative = os.path.relpath(full, base)
    parts = relative.split(os.sep)
    if ".git" in parts:
        raise InvalidInput(f"{name}.path", f"must not be inside a .git directory (got {echo_repr(raw)})")
    roots = []
    if storage_root is not None:
        roots = [os.path.abspath(storage_root), os.path.realpath(storage_root)]
        if any(is_within(full, root) for root in roots):
            raise InvalidInput(f"{name}.path", f"must not be inside the storage root {roots[0]}: memory is not a "
                                               f"source (got {echo_repr(raw)})")
    try:
        info = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        raise InvalidInput(f"{name}.path", f"does not exist in the workspace ({echo_value(relative)})") from None
    except OSError as exc:
        raise InvalidInput(f"{name}.path", f"cannot be read ({exc.strerror or exc})") from None
    real = os.path.realpath(full)
    real_base = os.path.realpath(base)
    if stat.S_ISLNK(info.st_mode) or real != os.path.join(real_base, relative):
        if not is_within(real, real_base) or real == real_base:
            raise InvalidInput(f"{name}.path", f"is a symbolic link that leaves the workspace ({relative} -> {real})")
        if ".git" in os.path.relpath(real, real_base).split(os.sep):
            raise InvalidInput(f"{name}.path", f"is a symbolic link into a .git directory ({relative} -> {real})")
        if any(is_within(real, root) for root in roots):
            raise InvalidInput(f"{name}.path", f"is a symbolic link into the storage root ({relative} -> {real})")
    try:
        info = os.stat(full)
    except OSError as exc:
        raise InvalidInput(f"{name}.path", f"cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInput(f"{name}.path", f"is a directory, not a file ({relative})")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(f"{name}.path", f"is not a regular file ({relative})")
    if info.st_size > MAX_FILE_BYTES:
        raise InvalidInput(f"{name}.path", f"is over 2 MiB ({info.st_size} bytes; at most {MAX_FILE_BYTES})")
    try:
        with open(full, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(f"{name}.path", f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{name}.path", f"is over 2 MiB (more than {MAX_FILE_BYTES} bytes)")
    try:
        lines = text_lines(data)
    except BinaryFile as exc:
        raise InvalidInput(f"{name}.path", f"is a binary file ({exc}): only text files can be cited") from None
    if not lines:
        raise InvalidInput(f"{name}.path", f"is empty: there are no lines to cite ({relative})")
    first = 1 if start is None else start
    if first < 1:
        raise InvalidInput(f"{name}.startLine", f"must be at least 1 (lines are 1-based; got {first})")
    last = (len(lines) if start is None else start) if end is None else end
    if first > len(lines):
        raise InvalidInput(f"{name}.startLine", f"is past the end of {relative} ({first} > {len(lines)} lines)")
    if last > len(lines):
        raise InvalidInput(f"{name}.endLine", f"is past the end of {relative} ({last} > {len(lines)} lines)")
    posix = "/".join(parts)
    return Citation(posix, first, last, hash_lines(lines[first - 1:last]), symbol)


def freshness_words(cite: Mapping[str, Any]) -> str:
    """A citation view's freshness in words: ``fresh``, ``moved to 12-26``, ``renamed to src/b.py``,
    ``renamed to src/b.py:12-26`` (its lines moved too), ``changed, renamed to src/b.py``, ``gone``, ``gone (git's
    renames searched in the last 12 commits only)`` (the rename search was cut short: ``renameSearchCut``)."""
    state = cite.get("freshness", "unknown")
    moved = cite.get("movedTo")
    where = ""
    if moved:
        where = str(moved["startLine"]) + (f"-{moved['endLine']}" if moved["endLine"] != moved["startLine"] else "")
    if cite.get("renamedTo"):
        renamed = f"renamed to {cite['renamedTo']}" + (f":{where}" if where else "")
        return renamed if state == "renamed" else f"{state}, {renamed}"
    if state == "moved" and moved:
        return f"moved to {where}"
    cut = cite.get("renameSearchCut")
    if state == "gone" and isinstance(cut, int):  # git's renames searched in part only (citations.renames.BUDGET)
        return f"gone (git's renames searched in the last {cut} commit{'' if cut == 1 else 's'} only)"
    return str(state)
