"""``mnemon-ls pack export|inspect|import``: the command line of Mnemon Packs (text by default, ``--json``).

The handlers call the Host operations (:meth:`WorkspaceHost.export_pack`, ``inspect_pack``,
``import_pack``) like every other surface; this module only parses and prints.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable

from ..errors import EXIT_OK, InvalidInput
from .format import COMPONENTS, MAX_ARCHIVE_BYTES, SCOPES


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add ``pack`` and its actions to the ``commands`` subparsers (``common``: the shared flags)."""
    pack = commands.add_parser("pack", help="Mnemon Packs: back up, move or share a whole memory as one ZIP")
    actions = pack.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser("export", parents=[common], help="write this root's memory to a pack")
    export.add_argument("--pack-scope", choices=tuple(SCOPES), default="full",
                        help="what goes in: full (default), runtime, documents or memory-spaces")
    export.add_argument("--include-user-profile", action="store_true",
                        help="also carry your user profile (USER.md entries); left out by default")
    export.add_argument("-o", "--output", metavar="FILE",
                        help="pack file (default: mnemon-backup-<time>.zip in the current directory)")
    inspect = actions.add_parser("inspect", parents=[common], help="validate a pack and list what it holds")
    inspect.add_argument("file")
    imp = actions.add_parser("import", parents=[common], help="import a pack (merge by default)")
    imp.add_argument("file")
    imp.add_argument("--replace", action="store_true",
                     help="replace the chosen components instead of merging (a pack without spaces never empties a "
                          "root that has stores)")
    imp.add_argument("--component", action="append", dest="components", choices=COMPONENTS, metavar="COMPONENT",
                     help=f"import only this component ({', '.join(COMPONENTS)}; repeatable; default: all the pack has)")


def _read(path: str) -> bytes:
    file = Path(os.path.expanduser(path))
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        raise InvalidInput("file", f"{file} does not exist") from None
    if not file.is_file():
        raise InvalidInput("file", f"{file} is not a file")
    if size > MAX_ARCHIVE_BYTES:
        raise InvalidInput("file", f"{file} is {size} bytes; a pack holds at most {MAX_ARCHIVE_BYTES} bytes (48 MiB)")
    return file.read_bytes()


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


def summary_lines(description: dict[str, Any]) -> list[str]:
    """One line per component of a pack's :meth:`~mnemon_ls.packs.validate.Pack.describe`, counting what
    it really holds: Runtime entries per target, documents per status, spaces and the items in them."""
    lines = []
    for row in description["summary"]:
        component = row["component"]
        files = f"{_plural(row['files'], 'file')}, {row['bytes']} bytes"
        if component == "runtime":
            per = description.get("runtime") or {}
            what = (f"{_plural(row['items'], 'entry', 'entries')} "
                    f"({per.get('user', 0)} in USER.md, {per.get('memory', 0)} in MEMORY.md)")
        elif component == "documents":
            docs = description.get("documents") or []
            active = sum(1 for d in docs if d["status"] == "active")
            what = f"{_plural(row['items'], 'document')} ({active} active, {len(docs) - active} archived)"
        else:
            spaces = description.get("spaces") or []
            what = f"{_plural(row['items'], 'space')} holding {_plural(sum(s['items'] for s in spaces), 'item')}"
        lines.append(f"  {component}: {what}, {files}")
    return lines


def run(args: argparse.Namespace, host_factory: Callable[[argparse.Namespace], Any],
        emit: Callable[[argparse.Namespace, Any, str], None]) -> int:
    """Run one ``pack`` action with the CLI's own helpers (host, output)."""
    from .export import pack_roots, write_pack_file

    host = host_factory(args)
    if args.action == "export":
        exported = host.export_pack(args.pack_scope, include_user_profile=args.include_user_profile)
        output = Path(os.path.expanduser(args.output)) if args.output else Path.cwd() / exported.file_name
        write_pack_file(output, exported.data, pack_roots(host))
        data = {**exported.to_dict(), "path": str(output)}
        lines = [f"exported {exported.pack.archive.scope} pack of {host.root} to {output} ({len(exported.data)} bytes)",
                 *summary_lines(exported.pack.describe())]
        if exported.user_profile_left_out:
            lines.append(f"  USER.md: {_plural(exported.user_profile_left_out, 'entry', 'entries')} about you left out "
                         "(--include-user-profile carries them)")
        elif exported.pack.user_profile_entries():
            lines.append(f"  USER.md: carries {_plural(exported.pack.user_profile_entries(), 'entry', 'entries')} "
                         "about you (your user profile)")
        if exported.provider_spaces_left_out:
            lines.append(f"  memory-spaces: {_plural(exported.provider_spaces_left_out, 'provider space')} (third-party) "
                         "left out: packs never carry third-party connections; their content stays with the provider")
        emit(args, data, "\n".join(lines))
        return EXIT_OK
    payload = _read(args.file)
    if args.action == "inspect":
        data = host.inspect_pack(payload)
        lines = [f"{args.file}: a valid {data['scope']} pack exported {data['exportedAt']} by "
                 f"{data['source']['plugin']} {data['source']['pluginVersion']}", *summary_lines(data)]
        if data["userProfile"]:
            lines.append(f"  USER.md: carries {_plural(data['userProfile'], 'entry', 'entries')} about a person "
                         "(a user profile); importing it adds them to your USER.md")
        for doc in data["documents"] or ():
            lines.append(f"  document {doc['id']} [{doc['status']}] {doc['title']}")
        for space in data["spaces"] or ():
            lines.append(f"  space {space['id']}{' (active)' if space['active'] else ''}: {space['name']}, "
                         f"{_plural(space['items'], 'item')}")
        emit(args, data, "\n".join(lines))
        return EXIT_OK
    receipt = host.import_pack(payload, mode="replace" if args.replace else "merge", components=args.components)
    lines = [f"imported {args.file} into {host.root} ({receipt['mode']}: {', '.join(receipt['components'])})"]
    names = {"runtime": "Runtime entries", "documents": "documents", "spaces": "Memory Spaces"}
    units = {"runtime": ("entry", "entries"), "documents": ("document", None), "spaces": ("space", None)}
    for key, label in names.items():
        part = receipt.get(key)
        if part is None:
            continue
        renamed = len(part.get("renamed") or ())  # ``added`` counts them too: one outcome each
        if receipt["mode"] == "replace":  # ``added`` took the place of ``replaced``: say it as one outcome
            word, words = units[key]
            was = part["replaced"]
            text = f"  {label}: {_plural(part['added'], word, words)} " + (
                f"replaced the {was} that {'was' if was == 1 else 'were'} here" if was else "imported (none were here)")
            if part["skipped"]:
                text += f", {part['skipped']} repeated in the pack left out"
        else:
            text = f"  {label}: {part['added'] - renamed} added, {part['skipped']} already here"
        if part.get("renamed"):
            text += f", {len(part['renamed'])} under a new id (" + ", ".join(
                f"{r['from']} -> {r['to']}" for r in part["renamed"]) + ")"
        lines.append(text)
    spaces = receipt.get("spaces") or {}
    for change in spaces.get("nameChanged") or ():
        lines.append(f"  space {change['spaceId']}: named {change['to']!r} because {change['from']!r} is taken "
                     "(space names are unique in a root, ignoring case)")
    if spaces.get("arrivedInactive"):
        lines.append(f"  {_plural(len(spaces['arrivedInactive']), 'imported space')} arrived inactive so the spaces "
                     "active here stay as they were (`mnemon-ls space activate ID`): "
                     + ", ".join(spaces["arrivedInactive"]))
    if spaces.get("activeSpaces", 1) > 1:
        lines.append(f"  {spaces['activeSpaces']} spaces are now active: `remember` needs --space to choose one")
    profile = (receipt.get("runtime") or {}).get("userProfile") or {}
    if profile.get("carried"):
        lines.append(f"  USER.md: the pack carried {_plural(profile['carried'], 'user-profile entry', 'user-profile entries')}"
                     f", {profile['added']} added")
    emit(args, receipt, "\n".join(lines))
    return EXIT_OK
