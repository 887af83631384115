"""Mnemon Pack operations: export, exportFolder, inspect and import, on the Host's pack operations
(:meth:`~mnemon_ls.host.WorkspaceHost.export_pack`, ``inspect_pack``, ``import_pack``).

- ``packs.export`` ``{workspace?, packScope?: full|runtime|documents|memory-spaces, path?,
  includeUserProfile?, save?}`` -> ``{fileName, bytes, scope, components, summary, exportedAt, userProfile:
  {carried, leftOut}, providerSpaces, handEdits, redacted, foreignTables, contents: {runtime, documents, spaces},
  path | base64}`` (``redacted``: ``{count, kinds}`` of the values that looked like credentials, replaced in the pack
  unless ``secrets`` is ``allow``; absent when none was; ``foreignTables``: ``{leftOut: [{space, table}]}``, the
  tables of a space's ``mnemon.db`` the Mnemon format does not define, left out unless ``secrets`` is ``allow``
  (never scanned, so never carried unscanned); absent when none was)
  (USER.md entries only with ``includeUserProfile``; ``contents`` what the pack holds per component, as
  ``inspect`` says it): with ``path`` (absolute)
  the pack is written there (0600, durably; never inside a storage root but its exports folder); with
  ``save`` and no path into ``<global root>/state/pack-exports/`` (the command line's default, never the
  current directory, where ``git add .`` would commit the memory); otherwise its bytes come back base64
  (the reference's transport).
- ``packs.exportFolder`` ``{workspace?}`` -> ``{folder, path}``: the file an export with ``save`` would
  write, which the editors propose instead of the workspace folder.
- ``packs.inspect`` ``{workspace?, path? | base64?}`` -> what the pack holds (never writes).
- ``packs.import`` ``{workspace?, path? | base64?, mode?: merge|replace, components?, dryRun?,
  replaceUserProfile?}`` -> the receipt (:func:`mnemon_ls.packs.import_pack`). The language server then
  refreshes the other folders on the same root and sends ``mnemon/packImported`` (an observer,
  :mod:`mnemon_ls.lsp.packs`).

The pack operations take the root's pack gate themselves (``gated=False``). Errors: ``pack-invalid``,
``pack-refused``, ``runtime-capacity``, ``document-capacity``, ``invalid-input``.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, StrictBool

from ..errors import InvalidInput, echo_path, echo_repr, echo_value
from ..packs.backups import KEEP as KEEP_BACKUPS
from ..packs.format import MAX_ARCHIVE_BYTES as MAX_PACK_BYTES
from ..packs.format import describe_source
from ..roots_checks import path_error
from ..settings import own_home_path
from .base import Call, CliArg, CliCommand, LspMethod, Operation, WorkspaceParams

#: The pack components (:data:`mnemon_ls.packs.format.COMPONENTS`).
Component = Literal["runtime", "documents", "memory-spaces"]


# ------------------------------------------------------------------ params


class PackExportParams(WorkspaceParams):
    """``mnemon/pack/export``: ``{workspace?, packScope?, path?, includeUserProfile?, save?}``."""

    pack_scope: Literal["full", "runtime", "documents", "memory-spaces"] = Field(
        "full", alias="packScope", description="what goes in: full (default), runtime, documents or memory-spaces")
    path: str | None = Field(None, description="the pack file to write (absolute)")
    include_user_profile: StrictBool = Field(False, alias="includeUserProfile",
                                             description="also carry your user profile (USER.md entries); left out "
                                                         "by default")
    save: StrictBool = Field(False, description="without path: write the pack into the exports folder "
                                                "(<global root>/state/pack-exports) instead of answering base64")


class PackExportFolderParams(WorkspaceParams):
    """``mnemon/pack/exportFolder``: ``{workspace?}``."""


class PackSourceParams(WorkspaceParams):
    """``mnemon/pack/inspect``: ``{workspace?, path? | base64?}``: the pack as a file or as base64 bytes."""

    path: str | None = Field(None, description="the pack file (absolute)")
    base64: str | None = Field(None, description="the pack's bytes, base64")


class PackImportParams(PackSourceParams):
    """``mnemon/pack/import``: ``{workspace?, path? | base64?, mode?, components?, dryRun?, replaceUserProfile?}``."""

    mode: Literal["merge", "replace"] = Field("merge", description="merge (default) or replace the chosen components")
    dry_run: StrictBool = Field(False, alias="dryRun", description="validate the pack and say exactly what the "
                                                                   "import would do; write nothing")
    replace_user_profile: StrictBool = Field(False, alias="replaceUserProfile",
                                             description="replace mode: also replace a shared (global) USER.md with "
                                                         "the pack's user profile")
    #: ``None``: every component the pack holds; a given list names at least one (``[]`` is refused, never
    #: read as "all")
    components: list[Component] | None = Field(None, min_length=1, description="import only these components "
                                                                               "(default: all the pack has)")


# ------------------------------------------------------------------ runs


def _absolute(path: str, field: str = "path") -> Path:
    """``path`` as a :class:`Path`, ``~`` and ``~/`` expanded to your home; :class:`InvalidInput` naming ``field``
    for a relative path, one holding NUL or one that starts with ``~name`` (another user's home:
    :func:`~mnemon_ls.settings.own_home_path`)."""
    expanded = own_home_path(path, field)
    if "\x00" in path or not os.path.isabs(expanded):
        raise InvalidInput(field, f"must be an absolute file path (got {echo_repr(path)})")
    return Path(expanded)


def pack_bytes(path: str | None, encoded: str | None) -> bytes:
    """The pack a request names: exactly one of ``path`` (absolute) and ``base64``, at most 48 MiB; raises
    :class:`InvalidInput` naming the field."""
    if (path is None) == (encoded is None):
        raise InvalidInput("path", "give exactly one of path and base64")
    if encoded is not None:
        if len(encoded) > (MAX_PACK_BYTES * 4) // 3 + 4:
            raise InvalidInput("base64", f"the pack is larger than {MAX_PACK_BYTES} bytes (48 MiB)")
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput("base64", "is not base64") from None
    file = _absolute(path or "")
    shown = echo_value(str(file))  # a path someone typed: control characters escaped, clipped
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        raise InvalidInput("path", f"{shown} does not exist") from None
    except OSError as exc:
        raise path_error(exc, file, "path") from None
    if not file.is_file():
        raise InvalidInput("path", f"{shown} is not a file")
    if size > MAX_PACK_BYTES:
        raise InvalidInput("path", f"{shown} is {size} bytes; a pack holds at most {MAX_PACK_BYTES} bytes (48 MiB)")
    return file.read_bytes()


def _from_source(path: str | None, encoded: str | None, read: Any) -> Any:
    """``read(pack bytes)`` of the pack a request names (:func:`pack_bytes`), but an error about the pack as a
    whole that ``read`` raises (:class:`~mnemon_ls.errors.PackInvalid` naming ``pack``: not a ZIP archive, too
    many entries...) names the parameter the pack came in, as every other refusal of it does: ``path`` with the
    file it was read from (``path: /home/me/x.zip is not a ZIP archive (...)``, the path escaped,
    :func:`~mnemon_ls.errors.echo_path`), as a file that does not exist is named; ``base64`` for a pack sent so
    (``base64: is not a ZIP archive (...)``). The CLI shows ``path`` as its ``FILE`` argument."""
    from ..errors import PackInvalid

    data = pack_bytes(path, encoded)
    try:
        return read(data)
    except PackInvalid as exc:
        if exc.field != "pack":
            raise
        rest = {key: value for key, value in exc.data.items() if key not in ("field", "rule")}
        if path is None:  # named by the parameter that sent it, as a bad base64 is
            raise PackInvalid("base64", exc.rule, **rest) from None
        raise PackInvalid("path", f"{echo_path(str(_absolute(path)))} {exc.rule}", **rest) from None


def _export(call: Call, p: PackExportParams) -> dict[str, Any]:
    from ..packs.backups import default_export_path, write_export

    target = _absolute(p.path) if p.path is not None else None
    exported = call.host.export_pack(p.pack_scope, include_user_profile=p.include_user_profile)
    described = exported.pack.describe()
    data = exported.to_dict() | {"contents": {key: described[key] for key in ("runtime", "documents", "spaces")}}
    if target is None and not p.save:
        return data | {"base64": base64.b64encode(exported.data).decode("ascii")}
    if target is None:
        target = default_export_path(call.host, exported.file_name)
    try:
        write_export(call.host, exported.data, target)
    except InvalidInput as exc:  # write_pack_file names its target ``output``
        raise InvalidInput("path" if exc.field == "output" else exc.field, exc.rule) from None
    return data | {"path": str(target)}


def _export_folder(call: Call, _p: Any) -> dict[str, Any]:
    from ..packs.backups import default_export_path

    path = default_export_path(call.host)
    return {"folder": str(path.parent), "path": str(path)}


def _import(call: Call, p: PackImportParams) -> dict[str, Any]:
    return _from_source(p.path, p.base64, lambda data: call.host.import_pack(
        data, p.mode, p.components, dry_run=p.dry_run, replace_user_profile=p.replace_user_profile))


# ------------------------------------------------------------------ text for a person (CLI)


def _export_text(data: dict[str, Any], call: Call, _p: Any) -> str:
    contents = {"summary": data["summary"], **data["contents"]}
    lines = [f"exported {data['scope']} pack of {call.host.root} to {echo_path(data['path'])} ({data['bytes']} bytes)",
             *hand_edit_lines(data["handEdits"]), *summary_lines(contents)]
    if data["userProfile"]["leftOut"]:
        lines.append(f"  USER.md: {_plural(data['userProfile']['leftOut'], 'entry', 'entries')} about you left out "
                     "(--include-user-profile carries them)")
    elif data["userProfile"]["carried"]:
        lines.append(f"  USER.md: carries {_plural(data['userProfile']['carried'], 'entry', 'entries')} "
                     "about you (your user profile)")
    if data["providerSpaces"]["leftOut"]:
        lines.append(f"  memory-spaces: {_plural(data['providerSpaces']['leftOut'], 'provider space')} (third-party) "
                     "left out: packs never carry third-party connections; their content stays with the provider")
    for left in (data.get("foreignTables") or {}).get("leftOut", ()):
        lines.append(f"  memory-spaces: table {echo_repr(left['table'])} of space {left['space']} left out: the "
                     "Mnemon format does not define it, so it was not scanned for credentials (--secrets allow "
                     "exports the store as stored)")
    if data.get("redacted"):  # (the line the command line adds says how many: mnemon_ls.redact.describe)
        lines.append("  credentials another program stored are redacted in the pack, the stores are unchanged "
                     "(--secrets allow exports them as stored)")
    return "\n".join(lines)


def _inspect_text(data: dict[str, Any], _call: Call, p: PackSourceParams) -> str:
    # source.plugin is always the format's (the TypeScript plugin's name): the writer says who wrote it
    lines = [f"{echo_path(p.path)}: a valid {data['scope']} pack exported {data['exportedAt']} (format mnemonpack "
             f"{data.get('version', 1)}, {describe_source(data['source'])})",
             *summary_lines(data)]
    if data["userProfile"]:
        lines.append(f"  USER.md: carries {_plural(data['userProfile'], 'entry', 'entries')} about a person "
                     "(a user profile); importing it adds them to your USER.md (a --replace with "
                     "--replace-user-profile replaces your USER.md with them)")
    for doc in data["documents"] or ():
        lines.append(f"  document {doc['id']} [{doc['status']}] {doc['title']}")
    for space in data["spaces"] or ():
        lines.append(f"  space {space['id']}{' (active)' if space['active'] else ''}: {space['name']}, "
                     f"{_plural(space['items'], 'item')}")
    return "\n".join(lines)


def _import_text(data: dict[str, Any], call: Call, p: PackImportParams) -> str:
    return "\n".join(receipt_lines(data, echo_path(p.path) if p.path else "the pack", call.host.root))


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


# ------------------------------------------------------------------ declarations

_FILE = CliArg("path", dest="file", metavar="FILE", path=True, names_errors=True, also=("pack",), help="")

OPERATIONS = (
    Operation(
        "packs.export", PackExportParams, _export, "Export this root's memory as a Mnemon Pack (a file, or base64).",
        gated=False, lsp=LspMethod("mnemon/pack/export"),
        cli=CliCommand(("pack", "export"), "write this root's memory to a pack", (
            CliArg("pack_scope", flag="--pack-scope"), CliArg("include_user_profile", flag="--include-user-profile",
                                                              kind="flag"),
            CliArg("path", flag="--output", aliases=("-o",), metavar="FILE", path=True, names_errors=True,
                   help="pack file (default: <global root>/state/pack-exports/mnemon-backup-<time>.zip, "
                        "~/.mnemon/state/pack-exports unless MNEMON_DATA_DIR or --scope global --data-dir DIR says "
                        "otherwise; never the current "
                        "directory, where `git add .` would commit your memory)")),
            text=_export_text, fixed={"save": True})),
    Operation(
        "packs.exportFolder", PackExportFolderParams, _export_folder,
        "The file an export into the exports folder would write ({folder, path}).", gated=False,
        lsp=LspMethod("mnemon/pack/exportFolder")),
    Operation(
        "packs.inspect", PackSourceParams, lambda c, p: _from_source(p.path, p.base64, c.host.inspect_pack),
        "Validate a pack and say what it holds (never writes).", gated=False,
        lsp=LspMethod("mnemon/pack/inspect"),
        cli=CliCommand(("pack", "inspect"), "validate a pack and list what it holds", (_FILE,), text=_inspect_text)),
    Operation(
        "packs.import", PackImportParams, _import, "Import a pack (merge by default; replace saves a backup first).",
        effect="write", gated=False, lsp=LspMethod("mnemon/pack/import"),
        cli=CliCommand(("pack", "import"), "import a pack (merge by default)", (
            _FILE,
            CliArg("mode", flag="--replace", kind="flag", default="replace",
                   help="replace the chosen components instead of merging (a pack without spaces never empties a "
                        "root that has stores); what is replaced is saved first in <root>/state/pack-backups "
                        f"(the newest {KEEP_BACKUPS} are kept)"),
            CliArg("replace_user_profile", flag="--replace-user-profile", kind="flag",
                   help="with --replace: also replace a shared (global) USER.md with the pack's user profile; "
                        "without it a shared USER.md only gets the pack's entries added"),
            CliArg("dry_run", flag="--dry-run", kind="flag",
                   help="validate the pack and print exactly what the import would do; writes nothing"),
            CliArg("components", flag="--component", repeat=True, metavar="COMPONENT",
                   help="import only this component (runtime, documents, memory-spaces; repeatable; default: all "
                        "the pack has)")), text=_import_text)),
)
