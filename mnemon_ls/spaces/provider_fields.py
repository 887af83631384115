"""Field rules of the third-party provider plane (``state/memory-providers.json``; reference dsh-mnemon.md 6.7).

Known provider ids (:data:`PROVIDER_LABELS`, plus any installed provider distribution, :mod:`.plugins`),
service-scope fields (:data:`SERVICE_FIELDS`) and memory-scope fields (:data:`MEMORY_FIELDS`), each extended
by the fields an installed plugin declares; unknown keys are refused; strings at most 2,000 characters
(secrets 8,000); endpoint URLs (``endpoint`` and every ``*Endpoint`` field) must be http(s) without
credentials and with a port 1..65535; no value holds a C0/C1 control or U+2028/U+2029, and a secret no
format character either (:func:`forbidden_character`); a path field starts with ``/``,
``~`` or ``~/`` (``~name``, another user's home, is refused); OpenViking's ``targetUri`` must be a user
memories root or a folder under it. Errors are
:class:`~mnemon_ls.errors.InvalidInput` naming ``services.<field>`` / ``connection.<field>`` and never
echoing a value.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Mapping

from ..errors import InvalidInput, choice_rule
from .model import js_length, require_unicode


def _plugins() -> Any:
    """:mod:`.plugins` (installed provider distributions), imported on first use: reading a registry that
    names no third-party provider needs neither it nor the provider protocol it imports."""
    from . import plugins

    return plugins


PROVIDER_LABELS = {
    "openviking": "OpenViking", "honcho": "Honcho", "mem0": "Mem0", "hindsight": "Hindsight",
    "holographic": "Holographic", "retaindb": "RetainDB", "byterover": "ByteRover", "supermemory": "Supermemory",
}
#: Providers whose package this project ships (:data:`.plugins.PACKAGES`) but the reference's matrix does not
#: name: their label while the package is not installed.
PACKAGE_LABELS = {"postgres": "PostgreSQL"}
REMOTE_PROVIDERS = frozenset({"openviking", "honcho", "mem0", "hindsight", "retaindb", "supermemory", "postgres"})
SERVICE_FIELDS = ("endpoint", "apiKey", "account", "mode", "dataPath", "cliPath", "defaultDirectory")
MEMORY_FIELDS = ("targetUri", "user", "actorPeerId", "workspace", "userId", "agentId", "rerank", "bankId", "budget",
                 "defaultTrust", "minTrust", "project", "workingDirectory", "containerTag", "searchMode")
SECRET_FIELDS = frozenset({"apiKey"})
MAX_FIELD_CHARS = 2000
MAX_SECRET_CHARS = 8000
_NAME_KEYS = ("name", "title", "displayName", "workspace", "bankId", "project", "containerTag", "userId", "user",
              "workingDirectory", "targetUri")
#: OpenViking's ``targetUri``: a user's memories root, or a folder under it (no ``.`` or ``..`` segment).
_VIKING = re.compile(r"^viking://user(?:/[^/\s]+)?/memories(?:/(?!\.\.?(?:/|$))[^/\s]+)*$")


def known_provider(value: Any) -> bool:
    """A third-party provider id of the reference's matrix, of a package this project ships (installed or not:
    a stored configuration of ``postgres`` stays valid while its package is uninstalled) or of an installed
    provider distribution."""
    return isinstance(value, str) and (value in PROVIDER_LABELS or value in _plugins().PACKAGES
                                       or value in _plugins().installed())


def provider_label(provider_id: str) -> str:
    """The label people see (the matrix's, else the installed plugin's, else a shipped package's, else the
    id)."""
    if provider_id in PROVIDER_LABELS:
        return PROVIDER_LABELS[provider_id]
    plugin = _plugins().try_load(provider_id)
    return getattr(plugin, "label", None) or PACKAGE_LABELS.get(provider_id) or provider_id


def secret_fields(provider_id: str) -> frozenset[str]:
    """The credential fields of a provider: those its installed plugin declares, else the reference's
    (``apiKey``)."""
    return service_schema(provider_id)[2]


def _provider_id(value: Any) -> str:
    if not known_provider(value):
        raise InvalidInput("providerId", choice_rule(sorted({*PROVIDER_LABELS, *_plugins().PACKAGES,
                                                             *_plugins().installed()}), value))
    return value


#: Query keys that carry a credential; a plain field value holding one is refused (credentials go in ``apiKey``).
_CREDENTIAL_QUERY = re.compile(r"[?&;#](?:api[_-]?key|key|token|access[_-]?token|secret|password|passwd|pwd|auth)=",
                               re.IGNORECASE)

#: Query parameter names (lower case, ``-``/``_``/``.`` removed, after percent-decoding) that carry a credential:
#: an endpoint URL holding one is refused (:func:`validate_endpoint`); so is any name ending in one of
#: :data:`CREDENTIAL_QUERY_SUFFIXES` (``x-api-key``, ``client_secret``, ``refresh_token``).
CREDENTIAL_QUERY_NAMES = frozenset({"apikey", "key", "token", "accesstoken", "authtoken", "secret", "password",
                                    "passwd", "pwd", "pass", "auth", "authorization", "bearer", "credential",
                                    "credentials", "sig", "signature", "session", "sessionid", "jwt"})
CREDENTIAL_QUERY_SUFFIXES = ("apikey", "token", "secret", "password", "passwd", "credential", "credentials")


def _credential_query_name(query: str) -> str | None:
    """The first parameter name of the URL query ``query`` that carries a credential, or ``None``."""
    from urllib.parse import parse_qsl

    for name, _value in parse_qsl(query.replace(";", "&"), keep_blank_values=True):
        folded = re.sub(r"[-_.\s]", "", name).casefold()
        if folded in CREDENTIAL_QUERY_NAMES or folded.endswith(CREDENTIAL_QUERY_SUFFIXES):
            return name
    return None


def validate_endpoint(value: Any, field_path: str) -> str:
    """``value`` when it is an ``http(s)`` URL a provider may be given and stored in plain text, else
    :class:`InvalidInput` naming ``field_path`` and the rule (the value is never echoed: it may hold a
    secret). The rules, in order:

    - ``http://`` or ``https://``, a host, no white space;
    - no user information (``https://user:password@host``);
    - no fragment (``#...``: an HTTP client never sends it, so it is only ever a place to paste a secret,
      ``https://host/v1#api_key=...``);
    - no query parameter that carries a credential (:data:`CREDENTIAL_QUERY_NAMES`, any name ending in
      :data:`CREDENTIAL_QUERY_SUFFIXES`, compared without case, ``-``/``_``/``.`` and percent-encoding:
      ``?api_key=``, ``?API-Key=``, ``?api%5Fkey=``, ``?access_token=``);
    - a port, when given, of ASCII digits 1..65535;
    - a host an HTTP client can read (``urllib.parse``): an IPv6 address closed by its bracket, ``[zz]`` refused.

    Every surface (``provider configure|enable`` on the CLI, ``mnemon/providers/configure|enable``) calls this
    through :func:`validate_service_fields`."""
    rule = "must be an http(s) URL without credentials (put the key in apiKey)"
    if not isinstance(value, str) or not re.match(r"^https?://", value):
        raise InvalidInput(field_path, "must be an http(s) URL: begin with http:// or https:// "
                                       "(e.g. http://127.0.0.1:8888)")
    authority = re.split(r"[/?#]", value.split("://", 1)[1], maxsplit=1)[0]
    if "@" in authority:
        raise InvalidInput(field_path, "must not hold user information (user:password@ before the host): put the "
                                       "key in apiKey")
    if not re.match(r"^https?://[^\s/@?#]+(?:[/?#]\S*)?$", value):
        raise InvalidInput(field_path, rule)
    if "#" in value:
        raise InvalidInput(field_path, "must not have a fragment (#...): an HTTP client never sends it, and a "
                                       "credential pasted there would be stored in plain text (put the key in apiKey)")
    query = value.split("?", 1)[1] if "?" in value else ""
    if query and _credential_query_name(query) is not None:
        raise InvalidInput(field_path, "must not carry a credential in its query string (api_key=, key=, token=, "
                                       "password=, secret=, ...): put the key in apiKey")
    if authority.startswith("[") and "]" not in authority:
        raise InvalidInput(field_path, "must close an IPv6 host's bracket ([::1]:8080)")
    port = authority.rsplit("]", 1)[1] if authority.startswith("[") else authority
    if ":" in port:
        digits = port.rsplit(":", 1)[1]
        if not re.fullmatch(r"[0-9]{1,5}", digits) or not 1 <= int(digits) <= 65535:
            raise InvalidInput(field_path, "must have a port of ASCII digits between 1 and 65535 (or none: the "
                                           "scheme's default)")
    try:  # what an HTTP client will parse: an IPv6 host it cannot read ([zz]) is refused here, not at open
        from urllib.parse import urlsplit

        urlsplit(value).port
    except ValueError:
        raise InvalidInput(field_path, "must name a host an HTTP client can read (a name, an IPv4 address or an "
                                       "IPv6 address in brackets)") from None
    return value


def _check_value(name: str, value: Any, field_path: str, secrets: frozenset[str] = SECRET_FIELDS, *,
                 url: bool = False) -> Any:
    limit = MAX_SECRET_CHARS if name in secrets else MAX_FIELD_CHARS
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        raise InvalidInput(field_path, "must be a string, number or boolean")
    # a trailing line ending (a paste) goes first; then nothing a strip would hide may remain (str.strip drops
    # U+0085, U+2028, U+001C..U+001F at the ends: the check runs before it)
    text = require_unicode(value.strip(" \t\r\n"), field_path)
    bad = forbidden_character(text, secret=name in secrets)
    if bad is not None and name in secrets:  # a NUL, an ESC or a U+200B in a key is a paste accident or an attack
        raise InvalidInput(field_path, f"must not contain control or invisible characters (found U+{ord(bad):04X}: "
                                       + SECRET_CHARACTER_RULE + ")")
    if bad is not None:
        # Field values are stored in plain text: control characters and credentials have no place there
        # (a credential goes in a secret field such as apiKey, which is never shown back).
        raise InvalidInput(field_path, f"must not contain control characters (found U+{ord(bad):04X}: "
                                       + PLAIN_CHARACTER_RULE + ")")
    text = text.strip()
    if js_length(text) > limit:
        raise InvalidInput(field_path, f"must be at most {limit} characters")
    if url:  # the URL's own rules first (user information, fragment, query): they name what is wrong exactly
        validate_endpoint(text, field_path)
    if name not in secrets:
        if ("://" in text and "@" in text.split("://", 1)[1].split("/", 1)[0]) or _CREDENTIAL_QUERY.search(text):
            raise InvalidInput(field_path, "must not hold a credential (" + _secret_hint(secrets) + ")")
        from ..redact import find_secrets  # a token in a path or an account name (``dataPath=/x/ghp_...``)

        found = find_secrets(text)
        if found:
            raise InvalidInput(field_path, f"must not hold a credential ({found[0].kind}; {_secret_hint(secrets)})")
    return text


#: What :func:`forbidden_character` refuses in a plain field, and in a secret field (as error text).
PLAIN_CHARACTER_RULE = "C0 and C1 controls (U+0000..U+001F, U+007F..U+009F), U+2028 and U+2029 are refused"
SECRET_CHARACTER_RULE = ("C0 and C1 controls (U+0000..U+001F, U+007F..U+009F), U+2028, U+2029 and format "
                         "characters (Unicode Cf, such as U+200B and U+FEFF) are refused")


def forbidden_character(text: str, *, secret: bool) -> str | None:
    """The first character of ``text`` no field value may hold, or ``None``: a C0 control (U+0000..U+001F,
    line breaks and tabs included), U+007F, a C1 control (U+0080..U+009F, e.g. U+0085 NEXT LINE), the line and
    paragraph separators U+2028/U+2029; in a ``secret`` also any format character (Unicode category Cf: zero-
    width spaces and joiners, U+FEFF, bidirectional marks), invisible in every prompt and log."""
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029):
            return ch
        if secret and code > 0x9F and unicodedata.category(ch) == "Cf":
            return ch
    return None


def _secret_hint(secrets: frozenset[str]) -> str:
    if not secrets:
        return "this provider takes no credentials"
    return "put it in a secret field: " + ", ".join(sorted(secrets))


def service_schema(provider_id: str) -> tuple[str, tuple[str, ...], frozenset[str], Mapping[str, Any]]:
    """``(owner, service fields, secret fields, field rules)`` of a provider: an installed plugin's own
    declarations (owner ``"a Holographic service field"``), else the reference's (:data:`SERVICE_FIELDS`,
    :data:`SECRET_FIELDS`, no rules; owner ``"a service field"``)."""
    plugin = _plugins().try_load(provider_id)
    if plugin is None:
        return "a service field", SERVICE_FIELDS, SECRET_FIELDS, {}
    label = getattr(plugin, "label", None) or provider_id
    return (f"a {label} service field", tuple(plugin.service_fields), frozenset(plugin.secret_fields),
            _plugins().field_rules(provider_id))


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    return "text" if isinstance(value, str) else "another JSON type"


def stored_field_problem(provider_id: str, name: str, value: Any, *, scope: str = "services") -> str | None:
    """Why the stored ``value`` of field ``name`` (read from ``state/memory-providers.json``) has the wrong JSON
    type for an installed provider, or ``None`` when it is of the declared type or undeclared. ``scope``:
    ``services`` (the provider's :attr:`service_fields`) or ``connection`` (its :attr:`memory_fields`). A
    declared field's type is its :class:`~.providers.base.FieldRule`'s :attr:`~.FieldRule.stored_type` (a
    field without a rule is text). Nothing is converted (``true`` is not ``1``, ``"0.1"`` is not ``0.1``).
    The text is the rule and the value, e.g. ``must be a JSON number, not true/false (Holographic's rule: must
    be a number between 0 and 1) (got true)``; a secret's value is never part of it."""
    from .providers.base import FieldRule

    plugin = _plugins().try_load(provider_id)
    if plugin is None:
        return None
    declared = plugin.service_fields if scope == "services" else plugin.memory_fields
    if name not in declared:
        return None
    rule = _plugins().field_rules(provider_id).get(name) or FieldRule()
    label = getattr(plugin, "label", None) or provider_id
    got = "" if name in secret_fields(provider_id) else f" (got {_stored_echo(value)})"
    if not rule.stored_type_ok(value):
        return f"must be {rule.stored_type}, not {_json_kind(value)} ({label}'s rule: {rule.rule}){got}"
    if rule.kind in ("number", "integer", "choice", "boolean"):
        # of the right type and still impossible (``embeddingDims: -1``, ``timeoutSeconds: 1e308``): the rule
        # configure applies, so a hand edit cannot store what configure refuses
        try:
            rule.normalise(value)
        except ValueError as exc:
            return f"{exc} ({label}'s rule){got}"
    return None


def _stored_echo(value: Any) -> str:
    """A stored value as a damage reason repeats it: as JSON writes it (``"5432"``, ``5432.0``, ``true``),
    escaped and clipped as :func:`~mnemon_ls.errors.echo_value` does."""
    import json

    from ..errors import echo_value

    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return echo_value(text, 40)


def stored_fields_problem(provider_id: str, fields: Mapping[str, Any], field_path: str, *,
                          scope: str = "services") -> str | None:
    """The first :func:`stored_field_problem` of ``fields`` as ``<field_path>.<field>: <rule>`` (the damage
    reason of the file, e.g. ``services.holographic.minTrust: must be a JSON number, not true/false (...)``),
    or ``None`` when every field has its declared type."""
    for name, value in fields.items():
        problem = stored_field_problem(provider_id, name, value, scope=scope)
        if problem is not None:
            return f"{field_path}.{name}: {problem}"
    return None


def quoted(value: Any, limit: int = 40) -> str:
    """``value`` for an error message: double-quoted, at most ``limit`` characters (``...`` after a cut),
    anything not printable as ``\\uXXXX`` (only for values that passed the credential checks)."""
    text = str(value)
    cut = text[:limit]
    shown = "".join(ch if ch.isprintable() and ch not in '"\\' else
                    ("\\" + ch if ch in '"\\' else f"\\u{ord(ch):04x}") for ch in cut)
    return f'"{shown}{"..." if len(text) > limit else ""}"'


def validate_service_fields(fields: Mapping[str, Any], provider_id: str,
                            roots: "tuple[Any, ...] | list[Any]" = ()) -> dict[str, Any]:
    """Service-scope fields of ``provider_id`` checked against its schema (:func:`service_schema`): the
    field must be one of the provider's (the error lists them), the value passes the common rules (module
    doc) and then the field's :class:`~.providers.base.FieldRule` (type, range, allowed values, path or URL
    rules), which gives the stored form (``"0.7"`` -> ``0.7``). A value ``None`` or blank (``--set
    field=``) is returned as ``None``: the caller clears the field (the provider's default applies).
    Errors are :class:`InvalidInput` naming ``services.<field>``; a plain value breaking a field rule is
    quoted (``must be a number between 0 and 1 (got "abc")``, after the credential checks passed), a
    secret's never. A path field (:data:`PATH_FIELDS`, any field ending in ``Path``, kind ``path``)
    resolving inside a mnemon-ls storage root (:func:`storage_roots` of ``roots``) is refused: a provider
    engine would write its tables there."""
    if not isinstance(fields, Mapping):
        raise InvalidInput("services", "must be an object")
    owner, allowed, secrets, rules = service_schema(provider_id)
    out: dict[str, Any] = {}
    for name, value in fields.items():
        path = f"services.{name}"
        if name not in allowed:
            raise InvalidInput(path, f"is not {owner} (" + (", ".join(allowed) or "it has none") + ")")
        if name in secrets and not isinstance(value, str):
            # a credential is a string; removing one is explicit (clearSecrets, --clear-secret), never a null,
            # a false or a number that would have cleared the stored key
            raise InvalidInput(path, "must be a non-empty string (a credential); clearSecrets (CLI "
                                     "--clear-secret) removes a stored one")
        if name in secrets and not value.strip():
            raise InvalidInput(path, "must not be empty (a credential); clearSecrets (CLI --clear-secret) removes "
                                     "a stored one")
        if value is None or (isinstance(value, str) and not value.strip()):
            out[name] = None  # cleared: the provider's default
            continue
        rule = rules.get(name)
        kind = getattr(rule, "kind", None)
        value = _check_value(name, value, path, secrets,
                             url=name == "endpoint" or name.endswith("Endpoint") or kind == "url")
        if rule is not None:
            try:
                value = rule.normalise(value)
            except ValueError as exc:
                shown = "" if name in secrets else f" (got {quoted(value)})"
                raise InvalidInput(path, f"{exc}{shown}") from None
        if name == "endpoint" or name.endswith("Endpoint") or kind == "url":
            value = validate_endpoint(value, path)
        path_field = is_path_field(name) or kind == "path"
        if path_field and isinstance(value, str):
            expand_home(value, path)  # ``~name`` (another user's home) is refused with its own rule
        if path_field and isinstance(value, str) and not _anchored(value):
            # a relative path would name another place in each process (the CLI's, the server's cwd)
            raise InvalidInput(path, "must be an absolute path or start with ~/ (empty: the provider's default)"
                                     + ("" if name in secrets else f" (got {quoted(value)})"))
        if path_field and isinstance(value, str):
            check_outside_roots(value, path, roots)
            _check_target(value, path, getattr(rule, "target", None))
        out[name] = value
    return out


def _check_target(value: str, field_path: str, target: str | None) -> None:
    """An existing entry at the path ``value`` must be of the ``target`` type (``file`` | ``directory``)."""
    import os

    real = expand_home(value, field_path)
    if target == "file" and os.path.isdir(real):
        raise InvalidInput(field_path, f"must name a file, not a directory (empty: the provider's default) (got "
                                       f"{quoted(value)})")
    if target == "directory" and os.path.exists(real) and not os.path.isdir(real):
        raise InvalidInput(field_path, f"must name a directory, not a file (empty: the provider's default) (got "
                                       f"{quoted(value)})")


def merge_service(stored: Mapping[str, Any], clean: Mapping[str, Any],
                  provider_id: str | None = None) -> dict[str, Any]:
    """``stored`` service fields with ``clean`` (from :func:`validate_service_fields`) over them; a ``None``
    clears its field. With ``provider_id``, the installed plugin's cross-field ``check_service`` runs on the
    result (:class:`InvalidInput` naming the field and the rule)."""
    merged = {**stored, **clean}
    out = {k: v for k, v in merged.items() if v is not None}
    plugin = _plugins().try_load(provider_id) if provider_id is not None else None
    check = getattr(plugin, "check_service", None)
    if check is not None:
        check(out)
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

    real = Path(os.path.realpath(expand_home(value, field_path)))
    if not _anchored(value):
        return
    known = storage_roots(roots)
    inside = any(real == root or root in real.parents for root in known)
    if not inside:  # another storage root (another workspace's, a custom --data-dir): known by its files
        inside = any(looks_like_storage_root(folder) for folder in (real, *real.parents))
    if inside or real.name == "mnemon.db":
        raise InvalidInput(field_path, "must not be inside a mnemon-ls storage root or name a Mnemon store "
                                       "(mnemon.db): a provider keeps its data outside every root")


#: Files only a mnemon-ls (or TypeScript plugin) storage root holds, relative to the root.
ROOT_MARKERS = ("state/memory-providers.json", "data/.dsh-memory-bodies.json", "runtime/memories.json",
                "documents/index.json")


def looks_like_storage_root(folder: "Any") -> bool:
    """Whether the directory ``folder`` (a :class:`~pathlib.Path`) holds one of :data:`ROOT_MARKERS`."""
    return any((folder / marker).is_file() for marker in ROOT_MARKERS)


def expand_home(value: str, field_path: str) -> str:
    """``value`` with a leading ``~`` or ``~/`` replaced by the current user's home (``$HOME``); anything else
    unchanged (:func:`mnemon_ls.settings.expand_own_home`). ``~name`` (another user's home) is
    :class:`InvalidInput` naming ``field_path``: a provider's store belongs under this user's home or an
    absolute path."""
    from ..settings import expand_own_home

    try:
        return expand_own_home(value)
    except ValueError as exc:
        raise InvalidInput(field_path, str(exc)) from None


def _anchored(value: str) -> bool:
    import os

    return os.path.isabs(value) or value == "~" or value.startswith("~/")


def validate_memory_fields(fields: Mapping[str, Any], provider_id: str,
                           field_path: str = "connection") -> dict[str, Any]:
    """Memory-scope fields of a provider space (module doc); OpenViking's ``targetUri`` must be a user
    memories root or a folder under it (trailing slashes stripped)."""
    if not isinstance(fields, Mapping):
        raise InvalidInput(field_path, "must be an object")
    extra = _plugins().declared_fields(provider_id)[1]
    allowed = (*MEMORY_FIELDS, *sorted(extra - set(MEMORY_FIELDS)))
    rules = _plugins().field_rules(provider_id)
    out: dict[str, Any] = {}
    for name, value in fields.items():
        path = f"{field_path}.{name}"
        if name not in allowed:
            raise InvalidInput(path, "is not a memory-scope field (" + ", ".join(allowed) + ")")
        value = _check_value(name, value, path)
        rule = rules.get(name)
        if rule is not None and rule.kind in ("number", "integer", "boolean", "choice") and value != "":
            try:
                value = rule.normalise(value)
            except ValueError as exc:
                raise InvalidInput(path, f"{exc} (got {quoted(value)})") from None
        if name == "targetUri" and provider_id == "openviking":
            if not isinstance(value, str) or not _VIKING.match(value.rstrip("/")):
                raise InvalidInput(path, "must be a user memories root or a folder under it: "
                                         "viking://user[/<user>]/memories[/<folder>...], no '.' or '..' folder")
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
