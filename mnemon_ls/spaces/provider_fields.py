"""Field rules of the third-party provider plane (``state/memory-providers.json``; reference dsh-mnemon.md 6.7).

Known provider ids (:data:`PROVIDER_LABELS`, plus any installed provider distribution, :mod:`.plugins`),
service-scope fields (:data:`SERVICE_FIELDS`) and memory-scope fields (:data:`MEMORY_FIELDS`), each extended
by the fields an installed plugin declares; unknown keys are refused; strings at most 2,000 characters
(secrets 8,000); endpoint URLs (``endpoint`` and every ``*Endpoint`` field) must be http(s) without
credentials; OpenViking's ``targetUri`` must be a user memories root. Errors are
:class:`~mnemon_ls.errors.InvalidInput` naming ``services.<field>`` / ``connection.<field>`` and never
echoing a value.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..errors import InvalidInput
from . import plugins
from .model import js_length, require_unicode

PROVIDER_LABELS = {
    "openviking": "OpenViking", "honcho": "Honcho", "mem0": "Mem0", "hindsight": "Hindsight",
    "holographic": "Holographic", "retaindb": "RetainDB", "byterover": "ByteRover", "supermemory": "Supermemory",
}
REMOTE_PROVIDERS = frozenset({"openviking", "honcho", "mem0", "hindsight", "retaindb", "supermemory"})
SERVICE_FIELDS = ("endpoint", "apiKey", "account", "mode", "dataPath", "cliPath", "defaultDirectory")
MEMORY_FIELDS = ("targetUri", "user", "actorPeerId", "workspace", "userId", "agentId", "rerank", "bankId", "budget",
                 "defaultTrust", "minTrust", "project", "workingDirectory", "containerTag", "searchMode")
SECRET_FIELDS = frozenset({"apiKey"})
MAX_FIELD_CHARS = 2000
MAX_SECRET_CHARS = 8000
_NAME_KEYS = ("name", "title", "displayName", "workspace", "bankId", "project", "containerTag", "userId", "user",
              "workingDirectory", "targetUri")
_VIKING = re.compile(r"^viking://user(?:/[^/\s]+)?/memories$")


def known_provider(value: Any) -> bool:
    """A third-party provider id of the reference's matrix or of an installed provider distribution."""
    return isinstance(value, str) and (value in PROVIDER_LABELS or value in plugins.installed())


def provider_label(provider_id: str) -> str:
    """The label people see (the matrix's, else the installed plugin's, else the id)."""
    if provider_id in PROVIDER_LABELS:
        return PROVIDER_LABELS[provider_id]
    plugin = plugins.try_load(provider_id)
    return getattr(plugin, "label", None) or provider_id


def secret_fields(provider_id: str) -> frozenset[str]:
    """The credential fields of a provider: ``apiKey`` plus those its installed plugin declares."""
    return SECRET_FIELDS | plugins.declared_fields(provider_id)[2]


def _provider_id(value: Any) -> str:
    if not known_provider(value):
        raise InvalidInput("providerId", "must be one of " + ", ".join(sorted({*PROVIDER_LABELS, *plugins.installed()})))
    return value


#: Query keys that carry a credential; an endpoint URL holding one is refused (credentials go in ``apiKey``).
_CREDENTIAL_QUERY = re.compile(r"[?&;](?:api[_-]?key|key|token|access[_-]?token|secret|password|passwd|pwd|auth)=",
                               re.IGNORECASE)


def validate_endpoint(value: Any, field_path: str) -> str:
    """An ``http(s)`` URL without credentials (no ``user:password@``, no ``?token=``-like query key) or
    :class:`InvalidInput` naming ``field_path`` (the value is never echoed: it may be a secret)."""
    if not isinstance(value, str) or not re.match(r"^https?://[^\s/@?#]+(?:[/?#]\S*)?$", value):
        raise InvalidInput(field_path, "must be an http(s) URL without credentials (put the key in apiKey)")
    if _CREDENTIAL_QUERY.search(value) or "@" in value.split("/", 3)[2]:
        raise InvalidInput(field_path, "must be an http(s) URL without credentials (put the key in apiKey)")
    return value


def _check_value(name: str, value: Any, field_path: str, secrets: frozenset[str] = SECRET_FIELDS) -> Any:
    limit = MAX_SECRET_CHARS if name in secrets else MAX_FIELD_CHARS
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        raise InvalidInput(field_path, "must be a string, number or boolean")
    text = require_unicode(value.strip(), field_path)
    if js_length(text) > limit:
        raise InvalidInput(field_path, f"must be at most {limit} characters")
    if name not in secrets:
        # Field values are stored in plain text: control characters and credentials have no place there
        # (a credential goes in a secret field such as apiKey, which is never shown back).
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
            raise InvalidInput(field_path, "must not contain control characters")
        if ("://" in text and "@" in text.split("://", 1)[1].split("/", 1)[0]) or _CREDENTIAL_QUERY.search(text):
            raise InvalidInput(field_path, "must not hold a credential (put it in a secret field: "
                                           + ", ".join(sorted(secrets)) + ")")
        from ..redact import find_secrets  # a token in a path or an account name (``dataPath=/x/ghp_...``)

        found = find_secrets(text)
        if found:
            raise InvalidInput(field_path, f"must not hold a credential ({found[0].kind}; put it in a secret "
                                           "field: " + ", ".join(sorted(secrets)) + ")")
    return text


def validate_service_fields(fields: Mapping[str, Any], provider_id: str,
                            roots: "tuple[Any, ...] | list[Any]" = ()) -> dict[str, Any]:
    """Service-scope fields (module doc). Errors name ``services.<field>`` and never echo a value. A path
    field (:data:`PATH_FIELDS`, and any plugin field ending in ``Path``) resolving inside a mnemon-ls storage
    root (:func:`storage_roots` of ``roots``) is refused: a provider engine would write its tables there."""
    if not isinstance(fields, Mapping):
        raise InvalidInput("services", "must be an object")
    extra_service, _extra_memory, extra_secret = plugins.declared_fields(provider_id)
    allowed = (*SERVICE_FIELDS, *sorted(extra_service - set(SERVICE_FIELDS)))
    secrets = SECRET_FIELDS | extra_secret
    out: dict[str, Any] = {}
    for name, value in fields.items():
        path = f"services.{name}"
        if name not in allowed:
            raise InvalidInput(path, "is not a service field (" + ", ".join(allowed) + ")")
        value = _check_value(name, value, path, secrets)
        if name == "endpoint" or name.endswith("Endpoint"):
            value = validate_endpoint(value, path)
        if name in PATH_FIELDS and isinstance(value, str) and value and not _anchored(value):
            # a relative path would name another place in each process (the CLI's, the server's cwd)
            raise InvalidInput(path, "must be an absolute path or start with ~/ (empty: the provider's default)")
        if is_path_field(name) and isinstance(value, str) and value:
            check_outside_roots(value, path, roots)
        out[name] = value
    return out


#: Service fields that name a file or directory on this machine (each provider package's README).
PATH_FIELDS = frozenset({"dataPath", "enginePath"})


def is_path_field(name: str) -> bool:
    """A service field naming a file or directory: :data:`PATH_FIELDS` or any ``*Path`` field."""
    return name in PATH_FIELDS or name.endswith("Path")


def storage_roots(roots: "tuple[Any, ...] | list[Any]" = ()) -> list[Any]:
    """Resolved mnemon-ls storage roots: ``roots`` (e.g. this workspace's), each one's ``workspaces`` base
    when it is a workspace root, the global root (``$MNEMON_DATA_DIR`` or ``~/.mnemon``, which holds every
    ``workspaces/<hash>`` root of the default base)."""
    import os
    from pathlib import Path

    from ..roots import global_root

    out: list[Path] = []
    candidates = [Path(r) for r in roots]
    try:
        candidates.append(global_root())
    except InvalidInput:
        pass
    for root in candidates:
        real = Path(os.path.realpath(os.path.expanduser(str(root))))
        out.append(real)
        if real.parent.name == "workspaces":
            out.append(real.parent)  # every root under the same storage base
    return out


def check_outside_roots(value: str, field_path: str, roots: "tuple[Any, ...] | list[Any]" = ()) -> None:
    """:class:`InvalidInput` naming ``field_path`` when the path ``value`` resolves inside a storage root."""
    import os
    from pathlib import Path

    if not _anchored(value):
        return
    real = Path(os.path.realpath(os.path.expanduser(value)))
    for root in storage_roots(roots):
        if real == root or root in real.parents:
            raise InvalidInput(field_path, "must not be inside a mnemon-ls storage root (a provider keeps its "
                                           "data outside this project's roots)")


def _anchored(value: str) -> bool:
    import os

    return os.path.isabs(value) or value == "~" or value.startswith("~/")


def validate_memory_fields(fields: Mapping[str, Any], provider_id: str, field_path: str = "connection") -> dict[str, Any]:
    """Memory-scope fields of a provider space (module doc); OpenViking's ``targetUri`` must be a user
    memories root (trailing slashes stripped)."""
    if not isinstance(fields, Mapping):
        raise InvalidInput(field_path, "must be an object")
    extra = plugins.declared_fields(provider_id)[1]
    allowed = (*MEMORY_FIELDS, *sorted(extra - set(MEMORY_FIELDS)))
    out: dict[str, Any] = {}
    for name, value in fields.items():
        path = f"{field_path}.{name}"
        if name not in allowed:
            raise InvalidInput(path, "is not a memory-scope field (" + ", ".join(allowed) + ")")
        value = _check_value(name, value, path)
        if name == "targetUri" and provider_id == "openviking":
            if not isinstance(value, str) or not _VIKING.match(value.rstrip("/")):
                raise InvalidInput(path, "must be a user memories root: viking://user[/<user>]/memories")
            value = value.rstrip("/")
        out[name] = value
    return out


def _fallback_name(name: Any, connection: Mapping[str, Any], label: str, external: str) -> str:
    if isinstance(name, str) and name.strip():
        return name.strip()[:100]
    for key in _NAME_KEYS:
        value = connection.get(key)
        if isinstance(value, str) and value.strip():
            tail = re.split(r"[/:\\]", value.replace("*", "").rstrip("/:\\"))[-1].strip()
            if tail:
                return tail[:100]
    tail = re.split(r"[/:\\]", external.rstrip("/:\\"))[-1] or external
    return f"{label} {tail}"[:100]
