"""The Mnemon Pack container: a ZIP with ``manifest.json``, ``checksums.json`` and an allow-listed payload.

Format source: ``shared/reference/dsh-mnemon.md`` section 9 (the TypeScript plugin's backup format):

- ZIP, deflate level 6, every entry dated 1980-01-01 00:00:00, entries in a stable order
  (``manifest.json``, ``checksums.json``, then the payload sorted by path), regular files only (mode
  0600 in the external attributes). Transported base64 by the language server.
- Limits: archive <= :data:`MAX_ARCHIVE_BYTES` (48 MiB), expanded <= :data:`MAX_EXPANDED_BYTES`
  (256 MiB), <= :data:`MAX_FILES` (4096) entries, <= :data:`MAX_FILE_BYTES` (128 MiB) per entry; on top
  of the reference an entry over 1 MiB may not expand more than :data:`MAX_RATIO` times its
  compressed size (a zip bomb), and decompression is counted as it runs, so a lying header gains nothing.
- Paths: relative, ``/``-separated, <= 512 characters, no ``\\``, NUL, drive letter, empty, ``.`` or
  ``..`` segment; the payload only from :data:`PAYLOAD_PATTERNS`. A directory entry (a name ending ``/``, no
  data) of a folder of that layout (:data:`PAYLOAD_FOLDERS`) is skipped; any other is refused.
- ``manifest.json``: ``{format: "mnemonpack", version: 1, scope, exportedAt, source: {plugin,
  pluginVersion}, components, summary: [{component, files, bytes, items}]}``; ``components`` exactly the
  scope's (:data:`SCOPES`). ``source.plugin`` is always ``dsh-mnemon`` (the plugin refuses any other), so
  mnemon-ls names itself in two more keys the plugin ignores: ``source.writer`` (``mnemon-ls``) and
  ``source.writerVersion`` (:func:`describe_source` says who wrote a pack).
- ``checksums.json``: ``{algorithm: "sha256", files: {<payload path>: <lowercase hex>}}`` covering
  exactly the payload.

This module is pure (bytes in, bytes out); :mod:`.validate` checks what the payload holds.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from ..errors import PackInvalid, echo_repr, echo_value
from ..jsontext import JsonUnreadable, json_loads

FORMAT = "mnemonpack"
VERSION = 1
MAX_ARCHIVE_BYTES = 48 * 1024 * 1024
MAX_EXPANDED_BYTES = 256 * 1024 * 1024
MAX_FILES = 4096
MAX_FILE_BYTES = 128 * 1024 * 1024
MAX_PATH_CHARS = 512
#: An entry larger than :data:`RATIO_FLOOR_BYTES` may expand at most this many times its compressed size.
MAX_RATIO = 200
RATIO_FLOOR_BYTES = 16 * 1024 * 1024  # above the largest document body; totals bound the rest
MANIFEST = "manifest.json"
CHECKSUMS = "checksums.json"
COMPONENTS = ("runtime", "documents", "memory-spaces")
#: scope -> the components its manifest must list, in this order.
SCOPES: dict[str, tuple[str, ...]] = {
    "full": COMPONENTS, "runtime": ("runtime",), "documents": ("documents",), "memory-spaces": ("memory-spaces",),
}
PLUGIN = "dsh-mnemon"
#: The program named in ``source.writer`` of the packs mnemon-ls writes.
WRITER = "mnemon-ls"
_DATE = (1980, 1, 1, 0, 0, 0)
_NAME = r"[a-zA-Z0-9._-]+"
_ID = r"[a-zA-Z0-9][a-zA-Z0-9_-]*"
#: (component, compiled full-match pattern) of every allowed payload path.
PAYLOAD_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("runtime", re.compile(r"payload/runtime/(?:memories\.json|USER\.md|MEMORY\.md)")),
    ("documents", re.compile(r"payload/documents/index\.json")),
    ("documents", re.compile(rf"payload/documents/(?:active|archived)/{_NAME}\.md")),
    ("memory-spaces", re.compile(r"payload/data/\.dsh-memory-bodies\.json")),
    ("memory-spaces", re.compile(rf"payload/data/{_ID}/mnemon\.db")),
)
#: The folders of the payload layout (each ending ``/``): a ZIP entry naming one of them is a directory entry many
#: zip tools write before the files inside it; it carries no data and is skipped.
PAYLOAD_FOLDERS = re.compile(rf"payload/(?:runtime/|documents/(?:(?:active|archived)/)?|data/(?:{_ID}/)?)?")
_DRIVE = re.compile(r"^[A-Za-z]:")
#: The rule a JSON file of a pack breaks when Python's parser gives up on its depth.
NESTED = "is nested too deeply (JSON arrays or objects inside each other)"


def component_of(path: str) -> str | None:
    """The component an allowed payload path belongs to, or ``None`` when the allow-list has no such path."""
    for component, pattern in PAYLOAD_PATTERNS:
        if pattern.fullmatch(path):
            return component
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` (a ZIP entry name) breaks the path rules (module doc), or ``None``."""
    if not path:
        return "is empty"
    if "\x00" in path:
        return "holds NUL (U+0000)"
    if "\\" in path:
        return "holds a backslash (paths are /-separated)"
    if len(path) > MAX_PATH_CHARS:
        return f"is longer than {MAX_PATH_CHARS} characters"
    if path.startswith("/"):
        return "is absolute"
    if _DRIVE.match(path):
        return "starts with a drive letter"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return f"has an empty, '.' or '..' segment ({segment!r})" if segment else "has an empty segment"
    return None


def pack_file_name(moment: datetime) -> str:
    """``mnemon-backup-<ISO time with : and . as -, T as _, no Z>.zip`` (the reference's name)."""
    iso = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return "mnemon-backup-" + iso.replace(":", "-").replace(".", "-").replace("T", "_") + ".zip"


def iso_ms(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC), the reference's timestamp."""
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _json_bytes(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def build_manifest(scope: str, exported_at: str, plugin_version: str,
                   summary: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest document for ``scope`` (module doc); ``summary`` rows ``{component, files, bytes, items}``;
    ``plugin_version`` is mnemon-ls's version (``source.pluginVersion`` and ``source.writerVersion``)."""
    return {"format": FORMAT, "version": VERSION, "scope": scope, "exportedAt": exported_at,
            "source": {"plugin": PLUGIN, "pluginVersion": plugin_version, "writer": WRITER,
                       "writerVersion": plugin_version},
            "components": list(SCOPES[scope]), "summary": summary}


def write_archive(manifest: Mapping[str, Any], payload: Mapping[str, bytes]) -> bytes:
    """The pack's bytes: ``manifest.json``, ``checksums.json`` and ``payload`` (path -> bytes) in sorted
    order, deflate level 6, every entry dated 1980-01-01 and mode 0600 (module doc). Byte-identical for
    identical inputs."""
    import zipfile  # lazy: the CLI imports this module at start for its choices

    checksums = {"algorithm": "sha256", "files": {path: sha256_hex(payload[path]) for path in sorted(payload)}}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, data in ((MANIFEST, _json_bytes(manifest)), (CHECKSUMS, _json_bytes(checksums)),
                           *((path, payload[path]) for path in sorted(payload))):
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix: the external attributes below are a file mode
            info.external_attr = (stat.S_IFREG | 0o600) << 16
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    return out.getvalue()


@dataclass(frozen=True)
class Archive:
    """A pack read by :func:`read_archive`: its ``manifest`` document, its ``checksums`` file map and
    ``payload`` (path -> bytes, every checksum verified)."""

    manifest: dict[str, Any]
    payload: dict[str, bytes]

    @property
    def scope(self) -> str:
        """The manifest's scope."""
        return self.manifest["scope"]

    @property
    def components(self) -> tuple[str, ...]:
        """The manifest's components."""
        return tuple(self.manifest["components"])


def _folder_entry(info: Any, stored: str, field: str, mode: int) -> None:
    """Check a directory entry (``info``, a ``zipfile.ZipInfo`` whose name ``stored`` ends with ``/``): it is
    skipped when it names a folder of the payload layout (:data:`PAYLOAD_FOLDERS`: ``payload/``,
    ``payload/runtime/``, ``payload/documents/active/``, ``payload/data/<space>/``...) and carries no data.
    Raises :class:`~mnemon_ls.errors.PackInvalid` naming ``field`` (the entry) otherwise: an unsafe path (the
    path rules of a file, its one trailing ``/`` apart), a folder outside the layout, one with data, or one whose
    mode says it is not a directory (a symbolic link named ``x/``)."""
    problem = path_problem(stored[:-1])
    if problem:
        raise PackInvalid(field, f"unsafe path: {problem}")
    if mode and stat.S_IFMT(mode) and not stat.S_ISDIR(mode):
        raise PackInvalid(field, "ends with / but is not a directory; a pack holds regular files and the folders "
                                 "of its layout only")
    if not PAYLOAD_FOLDERS.fullmatch(stored):
        raise PackInvalid(field, "is a directory entry outside the pack layout (a pack's folders are payload/, "
                                 "payload/runtime/, payload/documents/active/ or archived/, payload/data/ and "
                                 "payload/data/<space>/)")
    if info.file_size:
        raise PackInvalid(field, f"is a directory entry that holds {info.file_size} bytes; a folder holds none")


def read_archive(data: bytes) -> Archive:
    """Open and check a pack container (module doc: size limits, path rules, allow-list, no links, manifest,
    checksums); a directory entry of a folder of the layout (``payload/runtime/``, which zip tools write) is
    skipped, any other refused (:func:`_folder_entry`). Raises :class:`~mnemon_ls.errors.PackInvalid` naming the
    entry or field and the rule; never writes anything."""
    import zipfile

    if not isinstance(data, (bytes, bytearray)):
        raise PackInvalid("pack", "must be the bytes of a ZIP archive")
    if len(data) > MAX_ARCHIVE_BYTES:
        raise PackInvalid("pack", f"is {len(data)} bytes; a pack holds at most {MAX_ARCHIVE_BYTES} bytes (48 MiB)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise PackInvalid("pack", f"is not a ZIP archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_FILES:
            raise PackInvalid("pack", f"has {len(infos)} entries; at most {MAX_FILES} are allowed")
        names: set[str] = set()
        declared = 0
        for info in infos:
            name = info.filename
            # zipfile cuts a name at NUL; the name as stored is orig_filename (named whole, NUL as \x00)
            stored = getattr(info, "orig_filename", name)
            field = "entry:" + echo_value(stored)  # escaped (NUL as \x00, control characters) and clipped
            mode = info.external_attr >> 16
            if name.endswith("/") and stored.endswith("/"):  # a directory entry (dir/): checked, then skipped
                _folder_entry(info, stored, field, mode)
                if name in names:
                    raise PackInvalid(field, "appears twice in the archive")
                names.add(name)
                continue
            problem = path_problem(stored) or path_problem(name)
            if problem:
                raise PackInvalid(field, f"unsafe path: {problem}")
            if name in names:
                raise PackInvalid(field, "appears twice in the archive")
            names.add(name)
            if info.is_dir() or (mode and stat.S_ISDIR(mode)):
                raise PackInvalid(field, "is a directory entry; a pack holds regular files only")
            if mode and stat.S_ISLNK(mode):
                raise PackInvalid(field, "is a symbolic link; a pack holds regular files only")
            if mode and not stat.S_ISREG(mode) and stat.S_IFMT(mode):
                raise PackInvalid(field, "is not a regular file")
            if name not in (MANIFEST, CHECKSUMS) and component_of(name) is None:
                raise PackInvalid(field, "is not an allowed pack path (payload/runtime/..., payload/documents/..., "
                                         "payload/data/...)")
            if info.file_size > MAX_FILE_BYTES:
                raise PackInvalid(field, f"expands to {info.file_size} bytes; at most {MAX_FILE_BYTES} per file")
            if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise PackInvalid(field, f"expands {info.file_size // max(info.compress_size, 1)} times its compressed "
                                         f"size (at most {MAX_RATIO}): a zip bomb")
            declared += info.file_size
            if declared > MAX_EXPANDED_BYTES:
                raise PackInvalid("pack", f"expands to more than {MAX_EXPANDED_BYTES} bytes (256 MiB)")
        files: dict[str, bytes] = {}
        total = 0
        for info in infos:
            if info.filename.endswith("/"):  # a folder of the layout, checked above: no data
                continue
            limit = min(MAX_FILE_BYTES, max(info.file_size, 0))
            try:
                with archive.open(info) as handle:
                    body = handle.read(limit + 1)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError,
                    RuntimeError, ValueError) as exc:
                raise PackInvalid(f"entry:{info.filename}", f"cannot be read ({exc})") from None
            if len(body) > limit:
                raise PackInvalid(f"entry:{info.filename}", "expands past the size its header declares")
            total += len(body)
            if total > MAX_EXPANDED_BYTES:
                raise PackInvalid("pack", f"expands to more than {MAX_EXPANDED_BYTES} bytes (256 MiB)")
            files[info.filename] = body
    if MANIFEST not in files:
        raise PackInvalid("manifest.json", "is missing")
    if CHECKSUMS not in files:
        raise PackInvalid("checksums.json", "is missing")
    manifest = parse_manifest(files.pop(MANIFEST))
    checksums = _parse_json(files.pop(CHECKSUMS), "checksums.json")
    _check_checksums(checksums, files)
    wanted = set(manifest["components"])
    for path in files:
        component = component_of(path)
        if component not in wanted:
            raise PackInvalid(f"entry:{path}", f"belongs to the {component} component, which the manifest's scope "
                                               f"{echo_repr(manifest['scope'])} does not include")
    return Archive(manifest, files)


def _parse_json(data: bytes, name: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackInvalid(name, f"is not UTF-8 (byte {exc.start})") from None
    try:
        return json_loads(text.lstrip("\ufeff"))
    except JsonUnreadable as exc:
        raise PackInvalid(name, f"is not valid JSON: {exc}") from None
    except RecursionError:
        raise PackInvalid(name, NESTED) from None


def parse_manifest(data: bytes) -> dict[str, Any]:
    """Parse and check ``manifest.json`` bytes (module doc). Raises :class:`PackInvalid` naming
    ``manifest.<field>``."""
    doc = _parse_json(data, "manifest.json")
    if not isinstance(doc, dict):
        raise PackInvalid("manifest.json", "must hold a JSON object")
    if doc.get("format") != FORMAT:
        raise PackInvalid("manifest.format", f"must be {FORMAT!r} (got {echo_repr(doc.get('format'))})")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise PackInvalid("manifest.version", f"must be the integer {VERSION} (got {echo_repr(version)})")
    if version != VERSION:
        newer = " (a newer format than this mnemon-ls reads)" if version > VERSION else ""
        raise PackInvalid("manifest.version", f"must be {VERSION} (got {version}){newer}")
    scope = doc.get("scope")
    if scope not in SCOPES:
        raise PackInvalid("manifest.scope", f"must be one of {', '.join(SCOPES)} (got {echo_repr(scope)})")
    components = doc.get("components")
    if not isinstance(components, list) or not all(isinstance(c, str) for c in components):
        raise PackInvalid("manifest.components", "must be an array of component names")
    if len(set(components)) != len(components) or set(components) != set(SCOPES[scope]):
        raise PackInvalid("manifest.components", f"must be exactly {list(SCOPES[scope])} for scope "
                                                 f"{echo_repr(scope)} "
                                                 f"(got {echo_repr(components)})")
    if not isinstance(doc.get("exportedAt"), str):
        raise PackInvalid("manifest.exportedAt", "must be a string (ISO time)")
    source = doc.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("plugin"), str) \
            or not isinstance(source.get("pluginVersion"), str):
        raise PackInvalid("manifest.source", "must be {plugin, pluginVersion} (strings)")
    for key in ("writer", "writerVersion"):
        if key in source and not isinstance(source[key], str):
            raise PackInvalid(f"manifest.source.{key}", "must be a string when present")
    summary = doc.get("summary")
    if not isinstance(summary, list):
        raise PackInvalid("manifest.summary", "must be an array")
    for index, row in enumerate(summary):
        if not isinstance(row, dict) or row.get("component") not in components:
            raise PackInvalid(f"manifest.summary[{index}].component", "must name one of the manifest's components")
        for key in ("files", "bytes", "items"):
            value = row.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise PackInvalid(f"manifest.summary[{index}].{key}", "must be a non-negative integer")
    return doc


def _check_checksums(doc: Any, payload: Mapping[str, bytes]) -> None:
    if not isinstance(doc, dict):
        raise PackInvalid("checksums.json", "must hold a JSON object")
    if doc.get("algorithm") != "sha256":
        raise PackInvalid("checksums.algorithm", f"must be 'sha256' (got {echo_repr(doc.get('algorithm'))})")
    listed = doc.get("files")
    if not isinstance(listed, dict):
        raise PackInvalid("checksums.files", "must be an object of payload path -> sha256 hex")
    for path in payload:
        if path not in listed:
            raise PackInvalid(f"checksums.files.{path}", "is missing: every payload file needs a checksum")
    for path, digest in listed.items():
        if path not in payload:
            raise PackInvalid(f"checksums.files.{path}", "names a file the pack does not hold")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise PackInvalid(f"checksums.files.{path}", "must be 64 lowercase hex digits")
        if sha256_hex(payload[path]) != digest:
            raise PackInvalid(f"checksums.files.{path}", "checksum mismatch: the file differs from its sha256")


def describe_source(source: Any) -> str:
    """Who wrote a pack, from its manifest's ``source``: ``written by mnemon-ls 0.1.0`` when it names its
    writer; else ``written in the dsh-mnemon plugin's format (pluginVersion 0.1.0; the program that wrote
    it is not recorded)`` (the plugin records no more, and mnemon-ls before it named itself did not either)."""
    source = source if isinstance(source, dict) else {}
    writer, version = source.get("writer"), source.get("writerVersion")
    if isinstance(writer, str) and writer:
        return f"written by {writer}" + (f" {version}" if isinstance(version, str) and version else "")
    return (f"written in the {source.get('plugin', PLUGIN)} plugin's format (pluginVersion "
            f"{source.get('pluginVersion', '?')}; the program that wrote it is not recorded)")
