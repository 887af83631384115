"""The error vocabulary shared by every Source, the CLI and the language server.

Every error carries a stable machine ``code`` (the ``data.code`` of a JSON-RPC error, DESIGN.md section 5)
and a one-line human message that names the field and the rule. The CLI maps them to exit codes
(:data:`EXIT_INVALID` for bad input, :data:`EXIT_REJECTED` for well-formed requests the store refused,
:data:`EXIT_STORAGE` for a file system failure: :class:`StorageError` and its ``storage-*`` codes, built
from an ``OSError``/``sqlite3.Error`` by :func:`storage_error`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every command imports this module)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

def json_type_name(value: Any) -> str:
    """The JSON word for a decoded value's type (``null``, ``boolean``, ``integer``, ``number``, ``string``,
    ``array``, ``object``), for error messages that name what was given instead of Python's type name."""
    for kind, name in ((type(None), "null"), (bool, "boolean"), (int, "integer"), (float, "number"),
                       (str, "string"), ((list, tuple), "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def range_rule(kind: str, bounds: dict[str, Any], sent: Any = None) -> str:
    """The one wording of a number out of its range, on every surface: ``kind`` ``integer`` or ``number``;
    ``bounds`` any of ``ge``/``gt``/``le``/``lt``; ``sent`` the value given, echoed when it is a number (at
    most 32 characters): ``must be an integer in 1..50 (got 0)``, ``must be a number in 0..1 (got 1.5)``,
    ``must be an integer >= 1 (got -1)``, ``must be an integer in 1..50`` (``sent`` not a number)."""
    if "ge" in bounds and "le" in bounds:
        span = f"in {bounds['ge']}..{bounds['le']}"
    else:
        words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
        span = " and ".join(f"{words[key]} {bounds[key]}" for key in ("ge", "gt", "le", "lt") if key in bounds)
    rule = f"must be {'an integer' if kind == 'integer' else 'a number'} {span}"
    if isinstance(sent, (int, float)) and not isinstance(sent, bool):
        rule += f" (got {echo_repr(sent, 32)})"
    return rule


#: How many UTF-8 bytes of a value someone typed an error repeats (then ``...``); :func:`echo_value`.
ECHO_LIMIT = 256


def echo_value(value: Any, limit: int = ECHO_LIMIT) -> str:
    """A value someone sent as an error repeats it: on one line, each control or formatting character (a
    newline, a terminal escape, a right-to-left override) shown escaped (``\\n``, ``\\x1b``, ``\\u202e``), and at
    most ``limit`` UTF-8 bytes of that escaped text, then ``...``. Whole characters only: the character that
    would cross the limit (an escaped one counted as its escape, e.g. 4 bytes for ``\\x1b``) is left out with
    the rest. Bytes, not characters, so a value of four-byte characters (emoji) is repeated no longer than one
    of ASCII letters."""
    pieces: list[str] = []
    used = 0
    for c in str(value):
        piece = c if c.isprintable() else repr(c)[1:-1]
        used += len(piece.encode("utf-8"))  # no lone surrogate is left: each is escaped
        if used > limit:
            return "".join(pieces) + "..."
        pieces.append(piece)
    return "".join(pieces)


#: In ``repr`` of a text: an escaped backslash, or the escape of a byte the command line could not read as
#: UTF-8 (Python keeps byte 0xff of ``sys.argv`` as the lone surrogate U+DCFF).
_ARGV_BYTE = r"\\\\|\\udc([89a-f][0-9a-f])"


def echo_repr(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` as :func:`echo_value` repeats it (escaped, at most ``limit`` UTF-8 bytes, then ``...``):
    the form of a value an error quotes (``'abc'``, ``12``, ``None``). A byte of the command line that is not
    UTF-8 reads as the byte typed (``'\\xff'``), not as Python's stand-in for it (``'\\udcff'``)."""
    text = repr(value)
    if isinstance(value, str) and "\\udc" in text:
        import re  # rare: only a value holding such a byte

        text = re.sub(_ARGV_BYTE, lambda m: m.group(0) if m.group(1) is None else f"\\x{m.group(1)}",
                      text)
    return echo_value(text, limit)


def not_sent(sent: Any, limit: int = 40) -> str:
    """The end of every rule refusing a value of the wrong type, on every surface: the JSON type received
    (:func:`json_type_name`) and at most ``limit`` UTF-8 bytes of the value (then ``...``; an array or object
    cut short by ``reprlib``, so a megabyte one costs what its first items cost), escaped as :func:`echo_value`
    escapes, a string as :func:`echo_repr` shows it, ``null``/``true``/``false`` as JSON writes them:
    ``, not an integer (got 5)``, ``, not a string (got 'abc')``, ``, not an array (got ['a', 'b'])``,
    ``, not null``. :func:`type_rule` and the pydantic rules (:mod:`mnemon_ls.ops.base`) end with it."""
    import reprlib  # on use: every command imports this module

    class Short(reprlib.Repr):
        def repr_NoneType(self, _value: None, _level: int) -> str:
            return "null"

        def repr_bool(self, value: bool, _level: int) -> str:
            return "true" if value else "false"

    if sent is None:
        return ", not null"
    try:
        shown = echo_repr(sent[:limit + 1], limit) if isinstance(sent, str) else Short().repr(sent)
    except ValueError:  # an integer of more digits than Python writes out
        shown = "a number too long to show"
    kind = json_type_name(sent)
    return f", not {'an' if kind[0] in 'aeiou' else 'a'} {kind} (got {echo_value(shown, limit)})"


def not_a_choice(sent: Any) -> str:
    """The end of a rule refusing a value that is none of the choices (an enum field), on every surface: a string
    as :func:`echo_repr` shows it (at most :data:`ECHO_LIMIT` UTF-8 bytes, escaped: `` (got 'x')``), any other
    value its JSON type and start (:func:`not_sent`: ``, not an integer (got 1)``)."""
    if isinstance(sent, str):
        return f" (got {echo_repr(sent[:ECHO_LIMIT + 1])})"
    return not_sent(sent)


def choice_rule(choices: Iterable[str], sent: Any) -> str:
    """``must be one of a, b, c`` and what was sent (:func:`not_a_choice`): ``must be one of user, memory (got
    'x')``."""
    return f"must be one of {', '.join(choices)}{not_a_choice(sent)}"


def type_rule(expected: str, sent: Any) -> str:
    """The rule of a value of the wrong type: ``must be`` ``expected`` (``a string``, ``an integer``, ``a list
    of strings``) then what was received (:func:`not_sent`): ``must be a string, not an integer (got 5)``."""
    return f"must be {expected}{not_sent(sent)}"


def _is_control(c: str) -> bool:
    """A C0 control (U+0000..U+001F), DEL or a C1 control (U+0080..U+009F): Unicode category Cc."""
    return c < " " or "\x7f" <= c <= "\x9f"


def control_rule(text: str, allowed: str = "") -> str | None:
    """The one rule of a text that is stored and shown later (a Runtime entry, a Memory Space item's content):
    ``None`` when ``text`` holds no control character (Unicode category Cc: U+0000..U+001F, DEL,
    U+0080..U+009F) but those in ``allowed``; else the rule naming the first one, ``must not contain control
    characters (found U+001B)``, or with ``allowed`` ``"\\n\\t"`` ``must not contain control characters other
    than newline and tab (found U+000D)``. A terminal escape or a carriage return stored would reach whatever
    reads it (a terminal gets content stored earlier escaped: :data:`mnemon_ls.output.TERMINAL_ESCAPES`)."""
    if text.isprintable():  # the common case, at C speed: no control character at all
        return None
    found = next((c for c in text if _is_control(c) and c not in allowed), None)
    if found is None:
        return None
    names = {"\n": "newline", "\t": "tab", "\r": "carriage return"}
    other = " other than " + " and ".join(names.get(c, f"U+{ord(c):04X}") for c in allowed) if allowed else ""
    return f"must not contain control characters{other} (found U+{ord(found):04X})"


def echo_path(path: Any) -> str:
    """A file path someone named (an input file, ``--from``, ``--output``) as a line of output shows it: each control
    character escaped as :func:`echo_value` escapes it, clipped only past 4,096 UTF-8 bytes (PATH_MAX), so a
    path is shown whole but a terminal escape in it never reaches the terminal."""
    return echo_value(path, 4096)


def rename_fields(rule: str, name_of: Callable[[str], str | None]) -> str:
    """``rule`` with each field name it mentions in camelCase (``must differ from sourceId``) as a surface names
    that field: ``name_of(name)`` (``SOURCE_ID`` on the command line, ``source_id`` for an MCP tool), or the name
    kept when it returns ``None`` (a word that names no field of the request)."""
    import re  # on use: every command imports this module

    return re.sub(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b", lambda m: name_of(m.group(0)) or m.group(0), rule)


EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2
EXIT_REJECTED = 3


class MnemonError(Exception):
    """Base class: ``code`` is a stable kebab-case id, ``data`` a JSON-serialisable dict of details."""

    code = "internal-error"
    exit_code = EXIT_FAILURE

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = data

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message", **data}``: the shape sent to clients and printed by ``--json``."""
        return {"code": self.code, "message": self.message, **self.data}


class InvalidInput(MnemonError):
    """A request or setting broke a rule; ``field`` names it (dotted path), ``rule`` says what was expected."""

    code = "invalid-input"
    exit_code = EXIT_INVALID

    def __init__(self, field: str, rule: str, **data: Any) -> None:
        super().__init__(f"{field}: {rule}", field=field, rule=rule, **data)
        self.field = field
        self.rule = rule


class RuntimeCapacityError(MnemonError):
    """A Runtime mutation would push a target past its byte limit (UTF-8 bytes of the joined target).

    ``data`` carries ``target``, ``used`` (bytes now), ``projected`` (bytes after) and ``limit``.
    """

    code = "runtime-capacity"
    exit_code = EXIT_REJECTED


class RevisionConflict(MnemonError):
    """The expected revision (sha256 hex) no longer matches the store; ``data`` has ``expected``/``actual``."""

    code = "revision-conflict"
    exit_code = EXIT_REJECTED


class AmbiguousMatch(MnemonError):
    """``oldText`` located more than one entry (or two identical exact entries); ``data.matches`` counts them."""

    code = "ambiguous-match"
    exit_code = EXIT_REJECTED


class NoMatch(MnemonError):
    """``oldText`` (or ``key``) located no entry of the requested target."""

    code = "no-match"
    exit_code = EXIT_REJECTED


class DuplicateContent(MnemonError):
    """A candidate list (compaction) holds the same normalized content twice, or reintroduces a mutated one."""

    code = "invalid-input"
    exit_code = EXIT_INVALID


class NotFound(MnemonError):
    """A named object (workspace, file, view) does not exist."""

    code = "not-found"
    exit_code = EXIT_INVALID


class NotInWorkspace(MnemonError):
    """A file URI or path lies outside every open workspace folder."""

    code = "not-in-workspace"
    exit_code = EXIT_INVALID


class UnreadableStore(MnemonError):
    """A truth file (e.g. ``runtime/memories.json``) cannot be read or is invalid; it is never overwritten.

    ``data`` carries ``file`` (absolute path) and ``reason``. Run ``mnemon-ls doctor`` / ``runtime recover``.
    """

    code = "unreadable-store"
    exit_code = EXIT_FAILURE


class StoreBusy(MnemonError):
    """The cross-process lock could not be taken within the timeout (seconds in ``data.timeoutSeconds``)."""

    code = "store-busy"
    exit_code = EXIT_FAILURE


class DocumentCapacityError(MnemonError):
    """A create, update or restore would push the active documents past ``activeLimitBytes``.

    ``data``: ``projected`` (UTF-8 bytes of every active rendered file after the change), ``limit``
    (bytes), ``used`` (bytes now), ``candidates`` (the other active documents, least recently accessed
    first: ``[{id, title, relativePath, sizeBytes, lastAccessedAt, updatedAt, revision}]``). Nothing
    was written. Reference section 5.6 (the TypeScript plugin's ``DocumentCapacityError``).
    """

    code = "document-capacity"
    exit_code = EXIT_REJECTED

    def __init__(self, message: str, *, projected: int, limit: int, used: int,
                 candidates: list[dict[str, Any]]) -> None:
        super().__init__(message, projected=projected, limit=limit, used=used, candidates=candidates)
        self.projected = projected
        self.limit = limit
        self.used = used
        self.candidates = candidates


class DocumentStatusError(MnemonError):
    """The operation needs the other status: updating or archiving an archived document (archived
    documents are immutable), restoring an active one. ``data``: ``id``, ``status`` (current),
    ``required`` (the status the operation needs)."""

    code = "document-status"
    exit_code = EXIT_REJECTED


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


class MigrationUnverified(MnemonError):
    """``mnemon-ls migrate`` wrote its copy but a value read back from the destination differs from the
    source (``data.problems``: one line per difference). The source is unchanged; migrating again skips
    what landed."""

    code = "migration-unverified"
    exit_code = EXIT_FAILURE


#: Exit code of the CLI for a storage failure (disk full, read-only, denied, unreadable, unsafe path).
EXIT_STORAGE = 4


class StorageError(MnemonError, OSError):
    """The file system refused an operation on a file or directory of a storage root.

    Also an :class:`OSError` (``errno``, ``filename`` kept), so code that handles I/O errors still does.
    ``data``: ``file`` (absolute path concerned), ``errno`` (symbolic name, e.g. ``ENOSPC``, or ``None``),
    ``reason`` (the operating system's text). Subclasses fix ``code``; build one with
    :func:`storage_error`. Changes nothing on disk by itself; the operation that raised it was not done.
    """

    code = "storage-error"
    exit_code = EXIT_STORAGE
    #: What the message says after the path.
    what = "the file system refused the operation"

    def __init__(self, file: str | None, errno_value: int | None = None, reason: str = "", **data: Any) -> None:
        import errno as errno_module

        name = errno_module.errorcode.get(errno_value) if errno_value is not None else None
        detail = f" ({reason})" if reason else ""
        message = f"{file or 'storage'}: {self.what}{detail}"
        OSError.__init__(self, errno_value or 0, message, file)
        self.message = message
        self.data = {"file": file, "errno": name, "reason": reason, **data}

    def __str__(self) -> str:
        return self.message


class StorageFull(StorageError):
    """No space (``ENOSPC``) or quota (``EDQUOT``, ``EFBIG``, SQLite ``SQLITE_FULL``) left where a store
    writes. Reads keep working; free space and retry."""

    code = "storage-full"
    what = "no space left on the device (free some space and retry; reads keep working)"


class StorageReadOnly(StorageError):
    """The store lies on a read-only file system (``EROFS``, SQLite ``SQLITE_READONLY``): reads work,
    writes cannot."""

    code = "storage-readonly"
    what = "the file system is read-only, so nothing can be written here"


class StorageDenied(StorageError):
    """The operating system denied access (``EACCES``, ``EPERM``): check the owner and mode (the
    stores create files 0600 and directories 0700)."""

    code = "storage-denied"
    what = "permission denied (check the owner and mode of this path)"


class StorageUnreadable(StorageError):
    """A path of the store is not what the layout expects or cannot be read: a directory where a file
    should be (``EISDIR``), a file where a directory should be (``ENOTDIR``), an I/O error (``EIO``,
    SQLite ``SQLITE_IOERR``/``SQLITE_CANTOPEN``). Unlike :class:`UnreadableStore` (the file reads
    but its content is invalid), the file system itself failed; ``mnemon-ls doctor`` explains."""

    code = "storage-unreadable"
    what = "cannot be used as the store expects"


class StorageUnsafe(StorageError):
    """A storage root, or a directory or file inside it, is a symbolic link (or resolves elsewhere) where
    a write could be redirected outside the expected place (DESIGN.md invariant 10). Nothing was
    written. ``data.rule`` says what was expected; remove or replace the link (``mnemon-ls doctor``)."""

    code = "storage-unsafe"
    what = "a symbolic link could redirect writes outside the storage root, so mnemon does not write through it"

    def __init__(self, file: str | None, rule: str = "must not be a symbolic link", **data: Any) -> None:
        import errno as errno_module

        super().__init__(file, errno_module.ELOOP, rule, rule=rule, **data)
        self.message = f"{file or 'storage'}: {rule}; {self.what} (run `mnemon-ls doctor`)"
        self.args = (errno_module.ELOOP, self.message)
        self.strerror = self.message


_STORAGE_ERRNO: dict[str, type[StorageError]] = {
    "ENOSPC": StorageFull, "EDQUOT": StorageFull, "EFBIG": StorageFull,
    "EROFS": StorageReadOnly,
    "EACCES": StorageDenied, "EPERM": StorageDenied,
    "EISDIR": StorageUnreadable, "ENOTDIR": StorageUnreadable, "EIO": StorageUnreadable,
    "ENXIO": StorageUnreadable, "ENODEV": StorageUnreadable, "ELOOP": StorageUnsafe,
}
#: SQLite primary result codes (``sqlite3.Error.sqlite_errorcode & 0xff``) that are storage failures.
_STORAGE_SQLITE: dict[int, type[StorageError]] = {
    13: StorageFull,        # SQLITE_FULL
    8: StorageReadOnly,     # SQLITE_READONLY
    3: StorageDenied,       # SQLITE_PERM
    10: StorageUnreadable,  # SQLITE_IOERR
    14: StorageUnreadable,  # SQLITE_CANTOPEN
}


def storage_error(exc: BaseException, file: str | Any | None = None) -> StorageError | None:
    """The stable :class:`StorageError` for an :class:`OSError` or a ``sqlite3.Error``, else ``None``.

    ``file`` names the path concerned (default: the exception's own ``filename``). ``ENOENT`` and
    other errnos that are not storage failures give ``None`` (the caller keeps its own handling); an
    exception that already is a :class:`StorageError` is returned unchanged. The SQLite mapping uses the
    primary result code of Python 3.11's ``sqlite_errorcode`` (sqlite.org/rescode.html).
    """
    import errno as errno_module

    if isinstance(exc, StorageError):
        return exc
    path = None if file is None else str(file)
    if isinstance(exc, OSError):
        name = errno_module.errorcode.get(exc.errno or 0, "")
        cls = _STORAGE_ERRNO.get(name)
        if cls is None:
            return None
        where = path or (str(exc.filename) if exc.filename is not None else None)
        if cls is StorageUnsafe:
            return StorageUnsafe(where, "must not be a symbolic link")
        return cls(where, exc.errno, exc.strerror or str(exc))
    sqlite_code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        cls = _STORAGE_SQLITE.get(sqlite_code & 0xFF)
        if cls is None:
            return None
        errno_value = {StorageFull: errno_module.ENOSPC, StorageReadOnly: errno_module.EROFS,
                       StorageDenied: errno_module.EACCES}.get(cls, errno_module.EIO)
        return cls(path, errno_value, f"{getattr(exc, 'sqlite_errorname', 'SQLITE')}: {exc}")
    return None
class StoreTooLarge(MnemonError):
    """A workspace memory records file (seed 002) is over its safety limit (8 MiB): it stays readable
    but every write is refused (the seed's ``STORE_TOO_LARGE``, also in ``data.reason``). ``data``:
    ``file``, ``sizeBytes``, ``limitBytes``. Compact it (``mnemon-ls records compact``) or move records out."""

    code = "store-too-large"
    exit_code = EXIT_REJECTED


class ConfirmationRequired(MnemonError):
    """A write needs an explicit confirmation the request did not carry (a write to the
    ``shared-project`` record scope, which is meant to be committed). ``data``: ``field``, ``scope``."""

    code = "confirmation-required"
    exit_code = EXIT_REJECTED


class ProviderNotConfigured(MnemonError):
    """A third-party provider package is installed but the user has not configured and enabled it
    (seed 003: only installed *and* configured providers are used; ``mnemon-ls provider enable NAME``).
    ``data``: ``provider``, ``reason`` (``not-configured`` | ``disabled`` | ``not-installed``)."""

    code = "provider-not-configured"
    exit_code = EXIT_REJECTED


class ProviderTimedOut(MnemonError):
    """A third-party provider did not answer within ``providerTimeout`` seconds. ``data``: ``provider``,
    ``spaceId``, ``timeoutMs``. Federated recall reports it per space and still answers from the others."""

    code = "provider-timeout"
    exit_code = EXIT_FAILURE


class MaintenanceFailed(MnemonError):
    """Capacity maintenance (issue 9: archiving MEMORY.md overflow into Memory Spaces or the local
    archive) could not prove every entry it would remove is stored elsewhere, so hot memory was left
    unchanged. ``data``: ``reason`` (a stable word: ``provider-failed``, ``no-evidence``,
    ``space-ineligible``, ``revision-conflict``, ``routes``), ``kept`` (``"hot memory unchanged"``),
    ``safeDuplicates`` (``[{sourceIndex, destination}]``: entries already written to a space; harmless
    copies of facts still in hot memory) and, when a space was involved, ``spaceId``."""

    code = "maintenance-failed"
    exit_code = EXIT_REJECTED


class PackInvalid(MnemonError):
    """A Mnemon Pack (reference section 9) breaks a rule of the format: ``data.field`` names the entry or
    the manifest/checksums/payload field (``entry:payload/../x``, ``manifest.version``, ...) and
    ``data.rule`` what was expected. Nothing was changed on disk."""

    code = "pack-invalid"
    exit_code = EXIT_INVALID

    def __init__(self, field: str, rule: str, **data: Any) -> None:
        super().__init__(f"{field}: {rule}", field=field, rule=rule, **data)
        self.field = field
        self.rule = rule


class PackRefused(MnemonError):
    """A well-formed pack operation this root refuses: an export of a store whose WAL is not
    checkpointed, a replace that would empty an initialized set of stores, a credential under
    ``secrets: reject``, a component changed by hand (or by a program that takes no lock) while the import
    was staged, or a swap that failed and was rolled back. ``data.reason`` is a stable word
    (``wal-not-checkpointed``, ``would-empty``, ``secret``, ``changed-meanwhile`` (``data.file``: the
    directory), ``swap-failed``, ``backup-failed``, ``document-changed``: an export's document file changed outside
    mnemon-ls in a way that could not be taken in, ``data.file``), ``foreign-table``: an export cannot leave out a
    table of a space's store that the Mnemon format does not define, ``data.file``). Nothing was changed."""

    code = "pack-refused"
    exit_code = EXIT_REJECTED


class ItemNotFound(InvalidInput):
    """A well-formed item id that names no active item of the space (unknown, or already forgotten): the
    ``field: rule`` form of :class:`InvalidInput` (``data``: ``field``, ``rule``, ``id``, ``spaceId``), but a
    missing match, so it exits 3 like :class:`NoMatch` (docs/cli.md, exit codes). Code ``no-match``."""

    code = "no-match"
    exit_code = EXIT_REJECTED


class FormatTooNew(UnreadableStore):
    """A truth file was written by a newer version of mnemon-ls (or of the TypeScript plugin): its format
    ``version`` is above the ones this version reads (``supported``, e.g. ``"1..4"``). It is read-only
    here: never rewritten, moved or quarantined; operations that need it fail with this error, the rest
    keep working. ``data``: ``file``, ``reason``, ``version``, ``supported``. Upgrade mnemon-ls to use it."""

    code = "format-too-new"
