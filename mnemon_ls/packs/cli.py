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
from .backups import KEEP
from .format import COMPONENTS, MAX_ARCHIVE_BYTES, SCOPES, describe_source


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
                        help="pack file (default: <global root>/state/pack-exports/mnemon-backup-<time>.zip, "
                             "~/.mnemon/state/pack-exports unless MNEMON_DATA_DIR is set; never the current "
                             "directory, where `git add .` would commit your memory)")
    inspect = actions.add_parser("inspect", parents=[common], help="validate a pack and list what it holds")
    inspect.add_argument("file")
    imp = actions.add_parser("import", parents=[common], help="import a pack (merge by default)")
    imp.add_argument("file")
    imp.add_argument("--replace", action="store_true",
                     help="replace the chosen components instead of merging (a pack without spaces never empties a "
                          "root that has stores); what is replaced is saved first in <root>/state/pack-backups "
                          f"(the newest {KEEP} are kept)")
    imp.add_argument("--replace-user-profile", action="store_true",
                     help="with --replace: also replace a shared (global) USER.md with the pack's user profile; "
                          "without it a shared USER.md only gets the pack's entries added")
    imp.add_argument("--dry-run", action="store_true",
                     help="validate the pack and print exactly what the import would do; writes nothing")
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

    host = host_factory(args)
    if args.action == "export":
        exported = host.export_pack(args.pack_scope, include_user_profile=args.include_user_profile)
        from .backups import default_export_path, write_export

        # never the current directory (usually a git work tree) by default: the per-user exports folder
        output = (Path(os.path.abspath(os.path.expanduser(args.output))) if args.output
                  else default_export_path(host, exported.file_name))  # printed in full either way
        write_export(host, exported.data, output)
        data = {**exported.to_dict(), "path": str(output)}
        lines = [f"exported {exported.pack.archive.scope} pack of {host.root} to {output} ({len(exported.data)} bytes)",
                 *hand_edit_lines(exported.hand_edits), *summary_lines(exported.pack.describe())]
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
        # source.plugin is always the format's (the TypeScript plugin's name): the writer says who wrote it
        lines = [f"{args.file}: a valid {data['scope']} pack exported {data['exportedAt']} (format mnemonpack "
                 f"{data.get('version', 1)}, {describe_source(data['source'])})",
                 *summary_lines(data)]
        if data["userProfile"]:
            lines.append(f"  USER.md: carries {_plural(data['userProfile'], 'entry', 'entries')} about a person "
                         "(a user profile); importing it adds them to your USER.md (a --replace with --replace-user-profile "
                         "replaces your USER.md with them)")
        for doc in data["documents"] or ():
            lines.append(f"  document {doc['id']} [{doc['status']}] {doc['title']}")
        for space in data["spaces"] or ():
            lines.append(f"  space {space['id']}{' (active)' if space['active'] else ''}: {space['name']}, "
                         f"{_plural(space['items'], 'item')}")
        emit(args, data, "\n".join(lines))
        return EXIT_OK
    receipt = host.import_pack(payload, mode="replace" if args.replace else "merge", components=args.components,
                               dry_run=args.dry_run, replace_user_profile=args.replace_user_profile)
    emit(args, receipt, "\n".join(receipt_lines(receipt, args.file, host.root)))
    return EXIT_OK


def hand_edit_lines(edits: Any) -> list[str]:
    """One line per hand edit taken in before a pack was exported or imported (``handEdits``)."""
    lines = []
    for edit in edits:
        saved = edit.get("savedAs")
        saved = f"; your edit is saved at {saved}" if saved and saved not in edit["message"] else ""
        lines.append(f"  first, your hand edit of {edit['file']}: {edit['message']}{saved}")
    return lines


def _counts(part: dict[str, Any], replace: bool) -> str:
    text = f"{part['added']} added, {part['skipped']} already here"
    if part.get("renamed"):
        text += f", {len(part['renamed'])} under a new id (" + ", ".join(
            f"{r['from']} -> {r['to']}" for r in part["renamed"]) + ")"
    if replace:
        text += f", {part['removed']} removed"
    return text


def receipt_lines(receipt: dict[str, Any], file: str, root: Any,
                  opt_in: str = "--replace-user-profile") -> list[str]:
    """The text of an import receipt (:func:`mnemon_ls.packs.import_pack`): per component what was added,
    already here, under a new id and (replace) removed; Runtime entries per target; what happened to the
    user profile (``opt_in``: how this surface names the opt-in); the backup and the command restoring it."""
    replace = receipt["mode"] == "replace"
    what = f"({receipt['mode']}: {', '.join(receipt['components'])})"
    if receipt.get("dryRun"):
        lines = [f"dry run: importing {file} into {root} {what} would do this; nothing was written"]
    else:
        lines = [f"imported {file} into {root} {what}"]
    runtime = receipt.get("runtime")
    if runtime is not None:
        per = "; ".join(f"{PROJECTION_NAMES[t]}: {_counts(c, replace)}" for t, c in runtime["targets"].items())
        lines.append(f"  Runtime entries: {_counts(runtime, replace)} ({per})")
        lines += hand_edit_lines(runtime.get("handEdits") or ())
    if receipt.get("documents") is not None:
        lines.append(f"  documents: {_counts(receipt['documents'], replace)}")
    pending = [*(runtime or {}).get("pendingHandEdits", ()),
               *(receipt.get("documents") or {}).get("pendingHandEdits", ())]
    for path in pending:
        lines.append(f"  {path} was changed by hand: the import takes it in first, so its counts can differ from these")
    spaces = receipt.get("spaces")
    if spaces is not None:
        lines.append(f"  Memory Spaces: {_counts(spaces, replace)}")
        for change in spaces.get("nameChanged") or ():
            lines.append(f"  space {change['spaceId']}: named {change['to']!r} because {change['from']!r} is taken "
                         "(space names are unique in a root, ignoring case)")
        if spaces.get("arrivedInactive"):
            lines.append(f"  {_plural(len(spaces['arrivedInactive']), 'imported space')} arrived inactive so the "
                         "spaces active here stay as they were (`mnemon-ls space activate ID`): "
                         + ", ".join(spaces["arrivedInactive"]))
        if spaces.get("activeSpaces", 1) > 1:
            lines.append(f"  {spaces['activeSpaces']} spaces are now active: `remember` needs --space to choose one")
    if runtime is not None:
        lines.extend(_profile_lines(runtime["userProfile"], replace, opt_in))
    backup = receipt.get("backup")
    if backup:
        if backup.get("reused"):
            lines.append(f"  backup: what this import replaced is already saved, exactly, in the newest backup "
                         f"{backup['path']} (no copy made); restore it with: {backup['restore']}")
        elif backup.get("written"):
            lines.append(f"  backup: what this import replaced is saved in {backup['path']} (the newest "
                         f"{backup['keep']} backups are kept); restore it with: {backup['restore']}")
        else:
            lines.append(f"  backup: what would be replaced would first be saved in {backup['path']}")
    return lines


PROJECTION_NAMES = {"user": "USER.md", "memory": "MEMORY.md"}


def _profile_lines(profile: dict[str, Any], replace: bool, opt_in: str) -> list[str]:
    carried = profile["carried"]
    where = f"{profile['path']}, shared by every workspace" if profile.get("shared") else profile["path"]
    entries = _plural(carried, "user-profile entry", "user-profile entries")
    if profile["handling"] == "replaced":
        whose = "the shared user profile" if profile.get("shared") else "this root's user profile"
        return [f"  USER.md: replaced {whose} ({where}) with the pack's {entries}: {profile['removed']} removed, "
                f"{profile['added']} added, {profile['skipped']} already here"]
    if profile["handling"] == "merged":
        text = f"  USER.md: the pack carried {entries}, {profile['added']} added, {profile['skipped']} already here"
        if profile.get("optInNeeded"):
            text += (f", none removed: your user profile ({where}) was merged, not replaced; "
                     f"add {opt_in} to replace it")
        return [text]
    if replace and profile["path"]:
        return ["  USER.md: kept as it is (the pack carries no user profile)"]
    return []
