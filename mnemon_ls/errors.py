"""The error vocabulary shared by every Source, the CLI and the language server.

Every error carries a stable machine ``code`` (the ``data.code`` of a JSON-RPC error, DESIGN.md section 5)
and a one-line human message that names the field and the rule. The CLI maps them to exit codes
(:data:`EXIT_INVALID` for bad input, :data:`EXIT_REJECTED` for well-formed requests the store refused).
"""

from __future__ import annotations

from typing import Any

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
    """``oldText`` located no entry of the requested target."""

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
