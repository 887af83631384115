"""Third-party Memory Space provider operations: list, configure, enable, disable, test and discover, on the
workspace's :class:`~mnemon_ls.spaces.thirdparty.ProviderHost` (``host.spaces.thirdparty``).

A provider view is :meth:`~mnemon_ls.spaces.thirdparty.ProviderHost.view`: configured field *names*, never a
value. ``services`` values are checked against the provider's field rules before anything is written;
``null`` or ``""`` clears a field (the provider's default). Credentials travel in ``services`` (the editors ask
them without echo); on the command line only through ``--secret KEY`` (standard input, not echoed on a
terminal: :func:`read_secrets`), never ``--set`` (the shell history and the process list would keep them).
Errors: ``provider-not-configured``, ``provider-unavailable``, ``invalid-input`` naming ``services.<field>``.
"""

from __future__ import annotations

import getpass
import sys
from typing import Any

from pydantic import Field, StrictBool

from ..errors import EXIT_FAILURE, EXIT_OK, InvalidInput
from .base import Call, CliArg, CliCommand, LspMethod, Operation, WorkspaceParams

CONFIGURE = "mnemon/providers/configure"


# ------------------------------------------------------------------ params


class ProvidersListParams(WorkspaceParams):
    """``mnemon/providers/list``: ``{workspace?}``."""


class ProviderParams(WorkspaceParams):
    """``mnemon/providers/disable|test|discover``: ``{workspace?, providerId}``."""

    provider_id: str = Field(alias="providerId", description="the provider (mem0, holographic, ...)")


class ProviderConfigureParams(ProviderParams):
    """``mnemon/providers/configure|enable``: ``{workspace?, providerId, services?: {field: value},
    clearSecrets?: [field], force?}`` (``clearSecrets`` and ``force`` only for ``configure``)."""

    services: dict[str, Any] = Field(default_factory=dict, description="service fields {field: value}; null or "
                                                                       "\"\" clears one")
    clear_secrets: list[str] = Field(default_factory=list, alias="clearSecrets",
                                     description="stored credential fields to remove")
    force: StrictBool = Field(False, description="change a path field even when mapped spaces would read "
                                                 "another store")


# ------------------------------------------------------------------ runs


def _enable(call: Call, p: ProviderConfigureParams) -> dict[str, Any]:
    if p.clear_secrets:  # silently ignored once: a client would believe the credential was removed
        raise InvalidInput("clearSecrets", f"applies to {CONFIGURE} only (configure first, then enable)")
    return call.host.spaces.thirdparty.enable(p.provider_id, p.services)


def _discover(call: Call, p: ProviderParams) -> dict[str, Any]:
    spaces = call.host.spaces
    found = spaces.thirdparty.discover(p.provider_id)
    return {"providerId": p.provider_id, "spaces": [spaces.get_space(r.id).to_dict() for r in found]}


# ------------------------------------------------------------------ the command line: fields and credentials


def gather_services(args: Any, host: Any) -> dict[str, Any]:
    """``{services: {field: value}}`` of ``--set KEY=VALUE`` and ``--secret KEY`` (module doc), checked
    against the provider's fields before standard input is read (an unknown or uninstalled provider first:
    nothing is read or written); the values themselves are checked by the host. Raises :class:`InvalidInput`
    naming ``set[i]`` or ``services.<field>``."""
    from ..spaces.provider_fields import provider_label, secret_fields, service_schema

    provider_id = args.name
    host.spaces.thirdparty.plugin(provider_id)
    secrets, label = secret_fields(provider_id), provider_label(provider_id)
    listed = ", ".join(sorted(secrets)) or "none"
    fields: dict[str, Any] = {}
    for index, pair in enumerate(args.service_fields or []):
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidInput(f"set[{index}]", "must be KEY=VALUE (KEY= clears the field)")
        if key in secrets:
            raise InvalidInput(f"services.{key}", f"is a credential: give it with --secret {key} (read from standard "
                                                  "input, so it stays out of the shell history); --clear-secret "
                                                  f"{key} removes it")
        if key in fields:
            raise InvalidInput(f"set[{index}]", "repeats a field (each KEY may be set once)")
        fields[key] = value
    owner, allowed = service_schema(provider_id)[:2]
    names = list(args.secret_fields or [])
    for name in names:
        if name not in allowed:  # no field of this provider at all: say so and list its fields, as --set does
            raise InvalidInput(f"services.{name}", f"is not {owner} (" + (", ".join(allowed) or "it has none") + ")")
        if name not in secrets:
            raise InvalidInput(f"services.{name}", f"is not a credential field of {label} (--secret takes only: "
                                                   f"{listed}); give a plain field with --set {name}=VALUE")
        if name in fields or names.count(name) > 1:
            raise InvalidInput(f"services.{name}", "is given twice (each KEY may be set once)")
    fields.update(read_secrets(names, label))
    return {"services": fields}


def _one_line_ending(text: str) -> str:
    """``text`` without exactly one trailing ``\\r\\n`` or ``\\n`` (none when it has none)."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def read_secrets(names: list[str], label: str) -> dict[str, str]:
    """``{field: credential}`` for the ``--secret`` fields ``names`` (in order), from standard input.

    On a terminal each is asked with :func:`getpass.getpass` (not echoed; one line). Otherwise the *whole*
    input is read: exactly one trailing line ending (``\\n`` or ``\\r\\n``) is dropped, and then it must hold
    one line per field, in order (one field: the whole input is its credential). A credential that still
    holds a line break (``\\n``, ``\\r``) is :class:`InvalidInput` naming ``services.<field>`` (it is never
    kept cut to its first line); so is more input than fields, a missing or blank one (``is empty``), and
    input longer than :data:`~mnemon_ls.spaces.provider_fields.MAX_SECRET_CHARS` (+ 2) characters per field.
    Other characters are checked by the host with every surface's rules (controls, U+2028, format
    characters)."""
    values: list[str] = []
    if names and sys.stdin is not None and sys.stdin.isatty():
        values = [getpass.getpass(f"{label} {name} (not echoed): ") for name in names]
    elif names:
        from ..spaces.provider_fields import MAX_SECRET_CHARS

        cap = (MAX_SECRET_CHARS + 2) * len(names)  # every credential at its limit, each with its line ending
        raw = sys.stdin.read(cap + 1) if sys.stdin is not None else ""
        if len(raw) > cap:  # never read without end; the host would refuse each value over its limit anyway
            raise InvalidInput(f"services.{names[0]}", f"must be at most {MAX_SECRET_CHARS} characters (standard "
                                                       f"input held more than {cap} for {len(names)} --secret "
                                                       "field(s))")
        data = _one_line_ending(raw)
        values = data.split("\n") if len(names) > 1 else [data]
        values = [v[:-1] if v.endswith("\r") and len(names) > 1 else v for v in values]
        if len(values) > len(names):
            raise InvalidInput(f"services.{names[-1]}", f"must be one line: standard input held {len(values)} lines "
                                                        f"for {len(names)} --secret field(s) (one line each, in the "
                                                        "order given; only one trailing line ending is dropped)")
    out: dict[str, str] = {}
    for index, name in enumerate(names):
        value = values[index] if index < len(values) else ""
        if "\n" in value or "\r" in value:
            raise InvalidInput(f"services.{name}", "must be one line: standard input held a line break inside the "
                                                   "credential (only one trailing line ending is dropped)")
        if not value.strip():
            raise InvalidInput(f"services.{name}", f"is empty: give the credential on standard input "
                                                   f"(--clear-secret {name} removes a stored one)")
        out[name] = value
    return out


# ------------------------------------------------------------------ text for a person (CLI)

#: what a provider without the capability cannot do, as a verb phrase (``caps`` keys: providers/base.py)
_CAPABILITY_VERBS = {"browse": "list items without a query", "related": "walk related items", "link": "link items",
                     "merge": "merge spaces", "graph": "show a graph"}


def _joined(phrases: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} or {phrases[-1]}"


def provider_line(view: dict[str, Any]) -> str:
    """One provider view on one line: id, configured/enabled state, package, spaces, fields, what it cannot do."""
    state = ("enabled" if view["enabled"] else "configured") if view.get("configured") else "not configured"
    installed = view.get("distribution") or ("installed" if view.get("installed") else _missing(view["providerId"]))
    caps = view.get("capabilities") or {}
    cannot = [_CAPABILITY_VERBS[k] for k in _CAPABILITY_VERBS if caps.get(k) is False]
    extra = f"; cannot {_joined(cannot)}" if cannot else ""
    fields = ", ".join([*view.get("configuredFields", []),
                        *(f"{s} (secret)" for s in view.get("configuredSecrets", []))])
    count = view.get("spaces", 0)
    return (f"{view['providerId']:<12} {state:<15} {installed}; {count} space{'' if count == 1 else 's'}"
            f"{'; fields: ' + fields if fields else ''}{extra}")


def _missing(provider_id: str) -> str:
    """Why a provider is not installed: its package is not, or no mnemon-ls package provides it."""
    from ..spaces import plugins

    return f"not installed ({plugins.PACKAGES[provider_id]})" if provider_id in plugins.PACKAGES else \
        "not available: no mnemon-ls package"


def _mnemon_cli() -> dict[str, Any]:
    """The built-in ``mnemon-cli`` provider's engine on this machine: ``{available: true, path}`` (the binary
    :func:`~mnemon_ls.spaces.providers.cli.find_binary` finds) or ``{available: false, reason}``
    (:data:`~mnemon_ls.spaces.provider_availability.MNEMON_CLI`)."""
    from ..spaces.provider_availability import MNEMON_CLI
    from ..spaces.providers.cli import find_binary

    try:
        return {"available": True, "path": find_binary()}
    except Exception:  # ProviderUnavailable: no binary here
        return {"available": False, "reason": MNEMON_CLI}


def list_text(views: list[dict[str, Any]], *, show_all: bool = False, mnemon_cli: dict[str, Any] | None = None) -> str:
    """``provider list``: the providers this Python can use (installed) or that this root configured, one a
    line (:func:`provider_line`; the connection state of one that checks its server, or how to install the
    package of a configured one, on the next line); then those with a package that is not installed, with how to
    install it; then the reference's providers no mnemon-ls package provides, one a line with the reason
    (``unavailable`` of the view: :mod:`~mnemon_ls.spaces.provider_availability`; with ``show_all`` the whole
    provider line first); then the built-in Mnemon CLI's binary, or why there is none (``mnemon_cli``,
    :func:`_mnemon_cli`). ``--json`` prints every view."""
    from ..spaces import plugins

    usable = [v for v in views if v.get("installed") or v.get("configured")]
    installable = [v for v in views if v not in usable and v["providerId"] in plugins.PACKAGES]
    unavailable = [v for v in views if v not in usable and v not in installable]
    lines = [_usable_lines(v) for v in usable] or ["no provider package is installed"]
    if installable:
        lines.append("")
        lines.append("not installed (to use one, install its package as shown):")
        lines.extend(f"  {provider_line(v)}\n    {plugins.install_hint(v['providerId'])}" for v in installable)
    if unavailable:
        lines.append("")
        lines.append("not available (the reference's providers; no mnemon-ls package provides them):")
        for view in unavailable:
            why = view.get("unavailable") or "no mnemon-ls package"
            lines.append(f"  {provider_line(view)}\n    {why}" if show_all else f"  {view['providerId']:<12} {why}")
    if mnemon_cli is not None:
        lines.append("")
        built_in = (f"the Mnemon CLI at {mnemon_cli['path']}" if mnemon_cli.get("available")
                    else f"not available: {mnemon_cli.get('reason', '')}")
        lines.append(f"mnemon-cli   built in: {built_in}")
    return "\n".join(lines)


def _usable_lines(view: dict[str, Any]) -> str:
    """A provider this Python can use or this root configured: :func:`provider_line`, then how to install a
    configured one's missing package, or its connection state (``connected to ...`` / ``unreachable ...``)."""
    from ..spaces import plugins
    from ..spaces.provider_connection import describe

    line = provider_line(view)
    if not view.get("installed") and plugins.install_hint(view["providerId"]):
        return f"{line}\n    {plugins.install_hint(view['providerId'])}"
    return f"{line}\n    {describe(view['connection'])}" if view.get("connection") else line


def test_text(data: dict[str, Any], _call: Any = None, _p: Any = None) -> str:
    """``provider test``'s report (:meth:`~mnemon_ls.spaces.thirdparty.ProviderHost.test`): ``ok:`` or
    ``FAILED:``, the engine, where it is, its health message and latency, the namespaces; then the probe
    recall's line (or why it did not run)."""
    health, recall = data["health"], data.get("recall")
    names = ", ".join(f"{n['name'] or n['externalId']}" + (f" ({n['items']})" if n.get("items") is not None else "")
                      for n in data["namespaces"])  # (an engine that does not count cheaply gives no count)
    lines = [f"{'ok' if data['ok'] else 'FAILED'}: {health['engine']} at {health['location']}: "
             f"{health['message']} ({health['latencyMs']} ms){'; namespaces: ' + names if names else ''}"]
    if recall is None:
        lines.append("recall: not run (the engine is not healthy)")
    else:
        took = f" ({recall['latencyMs']} ms)" if recall.get("latencyMs") is not None else ""
        lines.append(f"recall {recall['query']!r}: {recall['message']}{took}")
    return "\n".join(lines)


def renamed_lines(renamed: list[dict[str, Any]]) -> list[str]:
    """One line per space an enable named or numbered differently from the provider (``renamed`` of
    :meth:`~mnemon_ls.spaces.thirdparty.ProviderHost.enable`): what it is called now and who holds the rest."""
    lines = []
    for change in renamed:
        wanted = [f"{what} {change['wanted' + what.title()]!r}" for what in ("name", "id")
                  if f"wanted{what.title()}" in change]
        kept = "; ".join(f"space {t['label']} keeps {change['wanted' + t['what'].title()]!r}"
                         for t in change.get("takenBy", []))
        lines.append(f"renamed: namespace {change['externalId']} is space {change['name']!r} ({change['spaceId']}), "
                     f"not {' and '.join(wanted)}" + (f": {kept}" if kept else ""))
    return lines


def _configure_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return "\n".join([provider_line(data), *(f"warning: {w}" for w in data.get("warnings", []))])


def _enable_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    text = f"{provider_line(data)}\n{data['health']['message']}; spaces: {', '.join(data['discovered']) or 'none yet'}"
    return text + "".join(f"\n{line}" for line in renamed_lines(data.get("renamed", [])))


def _disable_text(data: dict[str, Any], _call: Call, p: ProviderParams) -> str:
    if data.get("changed", True):
        return f"{provider_line(data)}\nIts spaces were removed from this root; the provider's data is unchanged."
    return f"{provider_line(data)}\n{p.provider_id} was not enabled; nothing changed."


def _discover_text(data: dict[str, Any], _call: Call, _p: Any) -> str:
    return "\n".join(f"{s['id']}  {s['name']}  ({'active' if s['active'] else 'inactive'})"
                     for s in data["spaces"]) or "no namespace found"


# ------------------------------------------------------------------ declarations

_NAME = CliArg("provider_id", dest="name", metavar="NAME", help="")
_FIELDS = {
    "--set": {"action": "append", "default": [], "dest": "service_fields", "metavar": "KEY=VALUE",
              "help": "a service field, e.g. dataPath=PATH or endpoint=http://127.0.0.1:8080/v1; KEY= clears it "
                      "(the provider's default)"},
    "--secret": {"action": "append", "default": [], "dest": "secret_fields", "metavar": "KEY",
                 "help": "read this credential field from standard input (not echoed on a terminal; piped: one line "
                         "per --secret, a line break inside a credential is refused)"}}


def _provider(action: str, help_text: str, text: Any, **options: Any) -> CliCommand:
    return CliCommand(("provider", action), help_text, (_NAME, *options.pop("args", ())), text=text, **options)


OPERATIONS = (
    Operation(
        "providers.list", ProvidersListParams,
        lambda c, p: {"providers": c.host.spaces.thirdparty.list(), "mnemonCli": _mnemon_cli()},
        "Installed and known providers, configured or not (field names only, never a value; `unavailable`: why no "
        "package provides an engine; a configured one with a server to reach (postgres) also its connection state: "
        "connected, or unreachable and why), and the built-in Mnemon CLI's binary (`mnemonCli`: `available`, "
        "`path` or `reason`).",
        lsp=LspMethod("mnemon/providers/list"),
        cli=CliCommand(("provider", "list"), "installed and known providers, configured or not",
                       text=lambda d, c, _p: list_text(d["providers"], show_all=c.options.get("all", False),
                                                       mnemon_cli=d.get("mnemonCli")),
                       extra={"--all": {"action": "store_true", "dest": "all", "help": "also show the state of the "
                              "reference's providers that no mnemon-ls package provides"}})),
    Operation(
        "providers.configure", ProviderConfigureParams,
        lambda c, p: c.host.spaces.thirdparty.configure(p.provider_id, p.services, clear_secrets=p.clear_secrets,
                                                        force=p.force),
        "Save a provider's service fields (nothing is enabled); answers its view.", effect="write",
        lsp=LspMethod(CONFIGURE),
        cli=_provider("configure", "save a provider's service fields (nothing is enabled)", _configure_text,
                      args=(CliArg("clear_secrets", flag="--clear-secret", repeat=True, metavar="KEY",
                                   help="remove a stored credential field"),
                            CliArg("force", flag="--force", kind="flag")),
                      extra=_FIELDS, gather=gather_services)),
    Operation(
        "providers.enable", ProviderConfigureParams, _enable,
        "Open the provider, discover its namespaces into spaces, enable it; answers its view with health and "
        "discovered.", effect="write",
        lsp=LspMethod("mnemon/providers/enable"),
        cli=_provider("enable", "open the provider, discover its namespaces into spaces, enable it", _enable_text,
                      extra=_FIELDS, gather=gather_services)),
    Operation(
        "providers.disable", ProviderParams, lambda c, p: c.host.spaces.thirdparty.disable(p.provider_id),
        "Remove the provider's spaces from this root (never its data); answers its view.", effect="write",
        lsp=LspMethod("mnemon/providers/disable"),
        cli=_provider("disable", "remove the provider's spaces from this root (never its data)", _disable_text)),
    Operation(
        "providers.test", ProviderParams, lambda c, p: c.host.spaces.thirdparty.test(p.provider_id),
        "Open the provider read-only: health, namespaces and one probe recall ({providerId, ok, health, recall, "
        "namespaces}; writes nothing).",
        lsp=LspMethod("mnemon/providers/test"),
        cli=_provider("test", "open the provider read-only: health, namespaces and one probe recall (writes nothing, "
                              "not even a probe item; exits 1 when the test fails)", test_text,
                      exit_code=lambda d: EXIT_OK if d["ok"] else EXIT_FAILURE)),
    Operation(
        "providers.discover", ProviderParams, _discover,
        "List the provider's namespaces into spaces again ({providerId, spaces: [space]}).", effect="write",
        lsp=LspMethod("mnemon/providers/discover"),
        cli=_provider("discover", "list the provider's namespaces into spaces again", _discover_text)),
)
