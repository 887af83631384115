"""``mnemon-ls provider list|configure|enable|disable|test|discover NAME``: third-party Memory Space providers.

Every action calls :class:`mnemon_ls.spaces.thirdparty.ProviderHost` (the language server's
``mnemon/providers/*`` call the same operations). Fields are ``--set KEY=VALUE`` (service scope, e.g.
``dataPath=~/.hermes/memory_store.db``), checked against the provider's own fields and their rules before
anything is written; ``--set KEY=`` clears a field back to the provider's default. A credential (a field the
provider declares secret) is read from standard input with ``--secret KEY`` (without echo on a terminal;
piped, the whole input less one trailing line ending, one line per ``--secret``, a line break inside a
credential refused: :func:`read_secrets`) and never taken from ``--set`` (the command line stays in the shell history and the process
list); ``--clear-secret KEY`` removes one. ``--secret`` takes only secret fields. Credentials are never
printed: views list configured field *names* only.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any, Callable

from .errors import EXIT_FAILURE, EXIT_OK, InvalidInput

ACTIONS = ("list", "configure", "enable", "disable", "test", "discover")


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``provider`` to the CLI's subcommands."""
    provider = commands.add_parser("provider", help="third-party Memory Space providers (installed packages)")
    actions = provider.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="installed and known providers, configured or not")
    listing.add_argument("--all", action="store_true",
                         help="also list, one a line, the reference's providers that no mnemon-ls package provides")
    for name, text in (("configure", "save a provider's service fields (nothing is enabled)"),
                       ("enable", "open the provider, discover its namespaces into spaces, enable it"),
                       ("disable", "remove the provider's spaces from this root (never its data)"),
                       ("test", "open the provider read-only: health, namespaces and one probe recall (writes "
                                "nothing, not even a probe item; exits 1 when the test fails)"),
                       ("discover", "list the provider's namespaces into spaces again")):
        sub = actions.add_parser(name, parents=[common], help=text)
        sub.add_argument("name", metavar="NAME")
        if name in ("configure", "enable"):
            sub.add_argument("--set", action="append", default=[], dest="service_fields", metavar="KEY=VALUE",
                             help="a service field, e.g. dataPath=PATH or endpoint=http://127.0.0.1:8080/v1; KEY= "
                                  "clears it (the provider's default)")
            sub.add_argument("--secret", action="append", default=[], dest="secret_fields", metavar="KEY",
                             help="read this credential field from standard input (not echoed on a terminal; piped: "
                                  "one line per --secret, a line break inside a credential is refused)")
        if name == "configure":
            sub.add_argument("--clear-secret", action="append", default=[], dest="clear_secret_fields", metavar="KEY",
                             help="remove a stored credential field")
            sub.add_argument("--force", action="store_true",
                             help="change a path field even when mapped spaces would read another store")


def _fields(args: argparse.Namespace, providers: Any) -> dict[str, Any]:
    """``{field: value}`` of ``--set`` and ``--secret`` (module doc), checked against the provider's secret
    fields before standard input is read; the values themselves are checked by the host."""
    from .spaces.provider_fields import provider_label, secret_fields, service_schema

    providers.plugin(args.name)  # an unknown or uninstalled provider first (nothing is read or written)
    secrets, label = secret_fields(args.name), provider_label(args.name)
    listed = ", ".join(sorted(secrets)) or "none"
    fields: dict[str, Any] = {}
    for index, pair in enumerate(args.service_fields):
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
    owner, allowed = service_schema(args.name)[:2]
    for name in args.secret_fields:
        if name not in allowed:  # no field of this provider at all: say so and list its fields, as --set does
            raise InvalidInput(f"services.{name}", f"is not {owner} (" + (", ".join(allowed) or "it has none") + ")")
        if name not in secrets:
            raise InvalidInput(f"services.{name}", f"is not a credential field of {label} (--secret takes only: "
                                                   f"{listed}); give a plain field with --set {name}=VALUE")
        if name in fields or args.secret_fields.count(name) > 1:
            raise InvalidInput(f"services.{name}", "is given twice (each KEY may be set once)")
    fields.update(read_secrets(args.secret_fields, label))
    return fields


def _one_line_ending(text: str) -> str:
    """``text`` without exactly one trailing ``\r\n`` or ``\n`` (none when it has none)."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def read_secrets(names: list[str], label: str) -> dict[str, str]:
    """``{field: credential}`` for the ``--secret`` fields ``names`` (in order), from standard input.

    On a terminal each is asked with :func:`getpass.getpass` (not echoed; one line). Otherwise the *whole*
    input is read: exactly one trailing line ending (``\n`` or ``\r\n``) is dropped, and then it must hold one
    line per field, in order (one field: the whole input is its credential). A credential that still holds
    a line break (``\n``, ``\r``) is :class:`InvalidInput` naming ``services.<field>`` (it is never kept
    cut to its first line); so is more input than fields, a missing or blank one (``is empty``), and input
    longer than :data:`~.spaces.provider_fields.MAX_SECRET_CHARS` (+ 2) characters per field. Other
    characters are checked by the host with every surface's rules (controls, U+2028, format characters)."""
    values: list[str] = []
    if names and sys.stdin is not None and sys.stdin.isatty():
        values = [getpass.getpass(f"{label} {name} (not echoed): ") for name in names]
    elif names:
        from .spaces.provider_fields import MAX_SECRET_CHARS

        cap = (MAX_SECRET_CHARS + 2) * len(names)  # every credential at its limit, each with its line ending
        raw = sys.stdin.read(cap + 1) if sys.stdin is not None else ""
        if len(raw) > cap:  # never read without end; the host would refuse each value over its limit anyway
            raise InvalidInput(f"services.{names[0]}", f"must be at most {MAX_SECRET_CHARS} characters (standard "
                                                       f"input held more than {cap} for {len(names)} --secret field(s))")
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


#: what a provider without the capability cannot do, as a verb phrase (``caps`` keys: providers/base.py)
_CAPABILITY_VERBS = {"related": "walk related items", "link": "link items", "merge": "merge spaces",
                     "graph": "show a graph"}


def _joined(phrases: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} or {phrases[-1]}"


def _line(view: dict[str, Any]) -> str:
    state = ("enabled" if view["enabled"] else "configured") if view.get("configured") else "not configured"
    installed = view.get("distribution") or ("installed" if view.get("installed") else _missing(view["providerId"]))
    caps = view.get("capabilities") or {}
    cannot = [_CAPABILITY_VERBS[k] for k in _CAPABILITY_VERBS if caps and not caps.get(k)]
    extra = f"; cannot {_joined(cannot)}" if cannot else ""
    fields = ", ".join([*view.get("configuredFields", []), *(f"{s} (secret)" for s in view.get("configuredSecrets", []))])
    count = view.get("spaces", 0)
    return (f"{view['providerId']:<12} {state:<15} {installed}; {count} space{'' if count == 1 else 's'}"
            f"{'; fields: ' + fields if fields else ''}{extra}")


def _missing(provider_id: str) -> str:
    """Why a provider is not installed: its package is not, or no mnemon-ls package provides it."""
    from .spaces import plugins

    return f"not installed ({plugins.PACKAGES[provider_id]})" if provider_id in plugins.PACKAGES else \
        "not available: no mnemon-ls package"


def list_text(views: list[dict[str, Any]], *, show_all: bool = False) -> str:
    """``provider list``: the providers this Python can use (installed) or that this root configured, one a
    line (:func:`_line`: id, configured/enabled state, package, spaces); then those with a package that is not
    installed, with how to install it; then the reference's providers no mnemon-ls package provides, named on
    one line (one a line with ``show_all``). ``--json`` prints every view."""
    from .spaces import plugins

    usable = [v for v in views if v.get("installed") or v.get("configured")]
    installable = [v for v in views if v not in usable and v["providerId"] in plugins.PACKAGES]
    unavailable = [v for v in views if v not in usable and v not in installable]
    lines = [_line(v) for v in usable] or ["no provider package is installed"]
    if installable:
        lines.append("")
        lines.append("not installed (to use one, install its package as shown):")
        lines.extend(f"  {_line(v)}\n    {plugins.install_hint(v['providerId'])}" for v in installable)
    if unavailable:
        lines.append("")
        if show_all:
            lines.append("not available (the reference's providers; no mnemon-ls package provides them):")
            lines.extend(f"  {_line(v)}" for v in unavailable)
        else:
            lines.append(f"not available (no mnemon-ls package): {', '.join(v['providerId'] for v in unavailable)}"
                         " (`--all` lists them)")
    return "\n".join(lines)


def test_text(data: dict[str, Any]) -> str:
    """``provider test``'s report (:meth:`~mnemon_ls.spaces.thirdparty.ProviderHost.test`): ``ok:`` or
    ``FAILED:``, the engine, where it is, its health message and latency, the namespaces; then the probe
    recall's line (or why it did not run)."""
    health, recall = data["health"], data.get("recall")
    names = ", ".join(f"{n['name'] or n['externalId']} ({n['items']})" for n in data["namespaces"])
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


def run(args: argparse.Namespace, host_of: Callable[[argparse.Namespace], Any],
        emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """Run one ``provider`` action (module doc)."""
    host = host_of(args)
    try:
        providers = host.spaces.thirdparty
        action = args.action
        if action == "list":
            views = providers.list()
            emit(args, views, list_text(views, show_all=args.all))
            return EXIT_OK
        if action == "configure":
            data = providers.configure(args.name, _fields(args, providers), clear_secrets=args.clear_secret_fields,
                                       force=args.force)
            text = "\n".join([_line(data), *(f"warning: {w}" for w in data.get("warnings", []))])
        elif action == "enable":
            data = providers.enable(args.name, _fields(args, providers))
            text = f"{_line(data)}\n{data['health']['message']}; spaces: {', '.join(data['discovered']) or 'none yet'}"
            text += "".join(f"\n{line}" for line in renamed_lines(data.get("renamed", [])))
        elif action == "disable":
            data = providers.disable(args.name)
            text = (f"{_line(data)}\nIts spaces were removed from this root; the provider's data is unchanged."
                    if data.get("changed", True) else
                    f"{_line(data)}\n{args.name} was not enabled; nothing changed.")
        elif action == "test":  # read-only; a failed test prints its report (text or --json) and exits 1
            data = providers.test(args.name)
            emit(args, data, test_text(data))
            return EXIT_OK if data["ok"] else EXIT_FAILURE
        else:  # discover
            spaces = providers.discover(args.name)
            data = {"providerId": args.name, "spaces": [s.id for s in spaces]}
            text = "\n".join(f"{s.id}  {s.name}  ({'active' if s.active else 'inactive'})" for s in spaces) or \
                "no namespace found"
        emit(args, data, text)
        return EXIT_OK
    finally:
        host.close()
