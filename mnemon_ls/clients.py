"""``mnemon-ls setup CLIENT``: write (or remove) an assistant client's MCP entry for ``mnemon-ls mcp`` and,
where the client has lifecycle hooks, hooks that put the wake snapshot into the model's context.

Clients and files (user scope by default; ``--project`` writes into the workspace):

| client | MCP entry |
|---|---|
| ``claude-code`` | ``~/.claude.json`` ``mcpServers`` / ``<ws>/.mcp.json`` |
| ``codex`` | ``~/.codex/config.toml`` ``[mcp_servers.mnemon-ls]`` / ``<ws>/.codex/config.toml`` |
| ``cursor`` | ``~/.cursor/mcp.json`` / ``<ws>/.cursor/mcp.json`` ``mcpServers`` |
| ``vscode`` | ``<user config>/Code/User/mcp.json`` / ``<ws>/.vscode/mcp.json`` ``servers`` |

| client | hooks |
|---|---|
| ``claude-code`` | ``~/.claude/settings.json`` / ``<ws>/.claude/settings.json`` |
| ``codex`` | ``~/.codex/hooks.json`` / ``<ws>/.codex/hooks.json`` |
| ``cursor``, ``vscode`` | none |

Claude Code hooks: ``SessionStart`` (matchers startup, resume, clear and compact, so the wake comes back
after a compaction) runs ``mnemon-ls hook session-start``, which prints the bounded wake snapshot;
``UserPromptSubmit`` runs ``mnemon-ls hook prompt``, which prints one recall/writeback cue line (or
nothing, per ``recallMode``/``writebackMode``). Claude Code does not add a ``PreCompact`` hook's output to
the model's context, so none is installed: the ``compact`` matcher of ``SessionStart`` re-injects the wake.

Codex hooks (``hooks.json`` beside its ``config.toml``; on by default since Codex 0.124, feature ``hooks``):
the same two events and matchers, running ``mnemon-ls hook session-start --json`` / ``hook prompt --json``,
which print ``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``: Codex takes plain output
that starts with ``[`` or ``{`` for broken JSON (the cue starts with ``[mnemon]``), and adds
``additionalContext`` to the model's context. Codex runs a new or changed hook only after the person trusts
it (``/hooks`` in Codex), and a project's hooks only in a trusted project: the report says so.

Every edit is idempotent (our entries are recognised by their ``mnemon-ls`` command and replaced, never
duplicated; a run with nothing to do writes nothing), reversible (``--remove`` takes out only our entries,
and a file left with nothing else in it is deleted with the directories that leaves empty), keeps every
other byte of the file (JSON through :mod:`mnemon_ls.jsonedit`, TOML through ``tomlkit``), and refuses
a file it cannot parse (:class:`~mnemon_ls.errors.InvalidInput` naming the file; nothing is written).
VS Code's ``mcp.json`` is JSON with comments (:mod:`mnemon_ls.jsonc`): its comments and trailing commas are
read and kept; the other clients' files are plain JSON, as those clients read them.
Nothing here imports the ``mcp`` SDK.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

from . import jsonedit
from .errors import InvalidInput, choice_rule, echo_repr
from .jsonc import JsoncUnreadable, blank
from .jsontext import JsonUnreadable, json_loads
from .fsio import write_file_atomically
from .hookspec import HOOK_TIMEOUT_SECONDS
from .setupfiles import Change, read_text as _read_text

CLIENTS = ("claude-code", "codex", "cursor", "vscode", "git")
#: The name of our MCP server entry in every client's configuration.
SERVER_NAME = "mnemon-ls"

CLAUDE_HOOK_EVENTS: dict[str, tuple[str | None, str]] = {
    "SessionStart": ("startup|resume|clear|compact", "session-start"),
    "UserPromptSubmit": (None, "prompt"),
}
#: Codex's hook events are Claude Code's (same names, same SessionStart sources); its hooks print JSON.
CODEX_HOOK_EVENTS = CLAUDE_HOOK_EVENTS
#: What ``setup codex`` adds to its report when it wrote a hook (Codex skips an untrusted hook silently).
CODEX_TRUST_NOTE = ("Codex runs a new or changed hook only after you trust it: type /hooks in Codex and trust the "
                    "mnemon-ls hooks (Codex warns at start while a hook waits for review)")
GIT_NOTE = ("commit .gitattributes; .git/config is not committed, so every clone runs `mnemon-ls setup git` "
            "(a clone without it merges the records files line by line)")
CODEX_PROJECT_NOTE = "Codex loads a project's hooks only when you trust the project (it asks when you open it)"


def _launcher(project: bool) -> list[str]:
    """The command that starts mnemon-ls: this interpreter for a user-scope entry (works when the client is
    started outside this shell's PATH), the ``mnemon-ls`` console script for a shared project file."""
    return ["mnemon-ls"] if project else [sys.executable, "-m", "mnemon_ls"]


def _shell_join(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(w) for w in words)


def _is_ours(command: Any) -> bool:
    text = command if isinstance(command, str) else " ".join(map(str, command)) if isinstance(command, list) else ""
    return "mnemon-ls" in text or "mnemon_ls" in text


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (``args[0]`` is the key)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` object hook that refuses a key given twice (the last would silently win)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def _read_json(path: Path, jsonc: bool = False) -> tuple[str | None, dict[str, Any]]:
    """The file's text (``None``: no file) and its object; ``jsonc``: comments and trailing commas allowed
    (VS Code's files). Raises :class:`InvalidInput` naming the file when it cannot be read so."""
    text = _read_text(path)
    if text is None:
        return None, {}
    if not text.strip():
        return text, {}
    try:
        data = json_loads(blank(text) if jsonc else text, object_pairs_hook=_unique_keys)
    except JsoncUnreadable as exc:
        raise InvalidInput(str(path), f"is not valid JSON with comments ({exc}); fix or move it, then run "
                                      "setup again (nothing was written)") from None
    except _DuplicateKey as exc:
        raise InvalidInput(str(path), f"has the key {echo_repr(exc.args[0])} twice in one object (JSON readers "
                                      "disagree on which one counts); fix or move it, then run setup again (nothing "
                                      "was written)") from None
    except JsonUnreadable as exc:
        kind = "JSON with comments" if jsonc else "JSON"
        raise InvalidInput(str(path), f"is not valid {kind} ({exc}); fix or move it, then run setup again "
                                      "(nothing was written)") from None
    if not isinstance(data, dict):
        raise InvalidInput(str(path), "must hold a JSON object; nothing was written")
    return text, data


def _section(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}: {key}", "must be a JSON object; nothing was written")
    return value


def _start_text(before: str | None) -> str:
    """The JSON text edits start from: the file's own, ``{}`` for a missing or blank file."""
    return before if before is not None and before.strip() else "{}\n"


def _empty_dirs(path: Path, base: Path, gone: Collection[Path] = ()) -> list[Path]:
    """The directories between ``path`` and ``base`` (exclusive, innermost first) that hold nothing but
    ``path``, the other files of ``gone`` (deleted by the same setup) or the previous directory of the list:
    what deleting them leaves empty."""
    dirs: list[Path] = []
    leaving, directory = {path, *gone}, path.parent
    while directory != base and base in directory.parents:
        try:
            names = set(os.listdir(directory))
        except OSError:
            break
        if not names or not names <= {p.name for p in leaving if p.parent == directory}:
            break
        dirs.append(directory)
        leaving.add(directory)
        directory = directory.parent
    return dirs


def _finish(path: Path, before: str | None, after: str, summary: list[str], base: Path,
            empty: Callable[[str], bool]) -> Change:
    """The change for ``path``: nothing to do (no summary line) leaves its bytes exactly as they are; an
    edit that leaves nothing in the file (``empty(after)``) deletes it, and the directories it leaves
    empty, unless the file is a symbolic link (a dotfiles checkout keeps its link and its file)."""
    if not summary:
        return Change(path, before, before, summary)
    if empty(after) and not path.is_symlink():
        return Change(path, before, None, summary, _empty_dirs(path, base), base)
    return Change(path, before, after, summary)


def _json_is_empty(text: str) -> bool:
    """Whether the JSON (or JSONC) text holds an empty object and no comment: a file setup may delete."""
    return json.loads(blank(text)) == {} and not jsonedit.has_comment(text, [])


def _was(old: Any) -> str:
    """`` (was: <its command line>)`` for an entry setup replaces (a user's own ``--read-only`` must not
    disappear unsaid), else ``""``."""
    if not isinstance(old, Mapping):
        return ""
    command = old.get("command")
    args = old.get("args") if isinstance(old.get("args"), list) else []
    shown = _shell_join([str(command), *map(str, args)]) if isinstance(command, str) else json.dumps(dict(old))[:200]
    extra = sorted(k for k in old if k not in ("command", "args", "type"))
    return f" (was: {shown}" + (f"; its {', '.join(extra)} dropped" if extra else "") + ")"


def _json_servers(path: Path, key: str, entry: dict[str, Any], remove: bool, base: Path,
                  jsonc: bool = False) -> Change:
    """The change that adds (``remove``: takes out) our entry under ``key`` in the JSON file ``path``;
    ``jsonc``: the file may hold comments and trailing commas (VS Code's ``mcp.json``), which stay: our
    entry is added after the last one, and a ``key`` object left holding only comments stays. Raises
    :class:`InvalidInput` naming the file when it cannot be parsed, or when our old entry holds a comment
    that replacing it would lose (nothing is written)."""
    before, data = _read_json(path, jsonc)
    servers = _section(data, key, path)
    text = _start_text(before)
    summary = []
    if remove:
        if SERVER_NAME in servers:
            text = jsonedit.delete(text, [key, SERVER_NAME])
            if len(servers) == 1 and not jsonedit.has_comment(text, [key]):
                text = jsonedit.delete(text, [key])
            summary.append(f"removed {key}.{SERVER_NAME}")
    elif servers.get(SERVER_NAME) != entry:
        summary.append(f"{'updated' if SERVER_NAME in servers else 'added'} {key}.{SERVER_NAME}: "
                       f"{_shell_join([entry['command'], *entry['args']])}{_was(servers.get(SERVER_NAME))}")
        try:
            text = jsonedit.set_value(text, [key, SERVER_NAME], entry)
        except jsonedit.CommentWouldBeLost:
            raise InvalidInput(f"{path}: {key}.{SERVER_NAME}", "holds a comment that replacing the entry would "
                                                               "lose; move the comment out of the entry (or delete "
                                                               "it), then run setup again (nothing was written)"
                               ) from None
    return _finish(path, before, text, summary, base, _json_is_empty)


def _our_hooks(groups: list[Any]) -> list[tuple[int, int | None]]:
    """Where our hooks are in one event's groups: ``(group, None)`` for a group of ours alone,
    ``(group, hook)`` for one of ours in a group that also runs other commands; in document order."""
    found: list[tuple[int, int | None]] = []
    for g, group in enumerate(groups):
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            continue
        mine = [h for h, hook in enumerate(group["hooks"]) if isinstance(hook, dict) and _is_ours(hook.get("command"))]
        if mine and len(mine) == len(group["hooks"]):
            found.append((g, None))
        else:
            found.extend((g, h) for h in mine)
    return found


def _hook_file(path: Path, launcher: list[str], remove: bool, base: Path,
               events: Mapping[str, tuple[str | None, str]] = CLAUDE_HOOK_EVENTS,
               flags: tuple[str, ...] = ()) -> Change:
    """Our hooks in a ``{"hooks": {EVENT: [{matcher?, hooks: [{type, command, timeout}]}]}}`` file (Claude
    Code's ``settings.json``, Codex's ``hooks.json``): one group per event running ``mnemon-ls hook VERB
    FLAGS``; other groups and other hooks of a shared group are kept byte for byte."""
    before, data = _read_json(path)
    hooks = _section(data, "hooks", path)
    text = _start_text(before)
    summary = []
    for event, (matcher, verb) in events.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{path}: hooks.{event}", "must be a JSON array; nothing was written")
        command = _shell_join([*launcher, "hook", verb, *flags])
        wanted: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}]}
        if matcher:
            wanted = {"matcher": matcher, **wanted}
        ours = _our_hooks(groups)
        if not ours and remove:
            continue
        if not remove and len(ours) == 1 and ours[0][1] is None and groups[ours[0][0]] == wanted:
            continue  # already there, exactly as we would write it
        for g, h in reversed(ours):  # last first, so the earlier positions still hold
            text = jsonedit.delete(text, ["hooks", event, g] if h is None else ["hooks", event, g, "hooks", h])
        if remove:
            if not json.loads(text)["hooks"][event]:
                text = jsonedit.delete(text, ["hooks", event])
            summary.append(f"removed the mnemon-ls hook of hooks.{event}")
        else:
            text = jsonedit.append(text, ["hooks", event], wanted)
            summary.append(f"{'updated' if ours else 'added'} hooks.{event}: {command}")
    if remove and summary and json.loads(text).get("hooks") == {}:
        text = jsonedit.delete(text, ["hooks"])
    return _finish(path, before, text, summary, base, _json_is_empty)


def _toml_cut(text: str, block: str) -> str | None:
    """``text`` without ``block`` where :func:`_toml_append` put it (at the end, after one newline), or
    ``None`` when it is not there that way."""
    if not text.endswith(block):
        return None
    rest = text[:len(text) - len(block)]
    return rest[:-1] if rest.endswith("\n") else "" if not rest else None


def _toml_append(text: str, block: str) -> str:
    """``text`` with ``block`` added at the end after one newline (a blank line when ``text`` ends with a
    line end), so :func:`_toml_cut` gives ``text`` back byte for byte."""
    return text + "\n" + block if text else block


def _codex(path: Path, launcher: list[str], remove: bool, base: Path) -> Change:
    import tomlkit
    from tomlkit.exceptions import ParseError

    before = _read_text(path)
    try:
        doc = tomlkit.parse(before or "")
    except ParseError as exc:
        raise InvalidInput(str(path), f"is not valid TOML ({exc}); fix or move it, then run setup again "
                                      "(nothing was written)") from None
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise InvalidInput(f"{path}: mcp_servers", "must be a table; nothing was written")
    wanted = {"command": launcher[0], "args": [*launcher[1:], "mcp"]}
    block = f"[mcp_servers.{SERVER_NAME}]\n" + tomlkit.dumps(wanted)
    summary = []
    after = before or ""
    if remove:
        if servers is not None and SERVER_NAME in servers:
            del servers[SERVER_NAME]
            if not servers:
                del doc["mcp_servers"]
            summary.append(f"removed [mcp_servers.{SERVER_NAME}]")
            cut = _toml_cut(after, block)
            after = cut if cut is not None and tomlkit.parse(cut).unwrap() == doc.unwrap() else tomlkit.dumps(doc)
    elif servers is None or servers.get(SERVER_NAME) != wanted:
        present = servers is not None and SERVER_NAME in servers
        previous = servers.get(SERVER_NAME) if servers is not None else None
        summary.append(f"{'updated' if present else 'added'} [mcp_servers.{SERVER_NAME}]: "
                       f"{_shell_join([*launcher, 'mcp'])}"
                       f"{_was(previous.unwrap() if hasattr(previous, 'unwrap') else previous)}")
        from tomlkit.items import InlineTable

        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        # an inline ``mcp_servers = { other = {...} }`` holds inline tables only: ours is one there too
        entry = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
        entry["command"] = wanted["command"]
        entry["args"] = wanted["args"]
        try:
            servers[SERVER_NAME] = entry
        except ValueError as exc:
            raise InvalidInput(f"{path}: mcp_servers", f"cannot take the mnemon-ls entry ({exc}); write it as "
                                                       "[mcp_servers.NAME] tables, then run setup again (nothing "
                                                       "was written)") from None
        appended = _toml_append(after, block)
        try:
            same = not present and tomlkit.parse(appended).unwrap() == doc.unwrap()
        except ParseError:  # e.g. mcp_servers is an inline table, which a [mcp_servers.x] header cannot extend
            same = False
        after = appended if same else tomlkit.dumps(doc)
    return _finish(path, before, after, summary, base, lambda text: not text.strip())


def _vscode_user_dir(env: Mapping[str, str]) -> Path:
    if sys.platform == "darwin":
        return Path(env.get("HOME", "~")).expanduser() / "Library" / "Application Support" / "Code" / "User"
    if os.name == "nt":
        return Path(env.get("APPDATA", "~")).expanduser() / "Code" / "User"
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "Code" / "User"


def plan(client: str, *, workspace: Path, project: bool = False, remove: bool = False,
         env: Mapping[str, str] | None = None) -> list[Change]:
    """The file changes ``mnemon-ls setup <client>`` makes (nothing is written). Raises
    :class:`InvalidInput` for an unknown client or a configuration file that cannot be parsed."""
    if client == "git":  # not a client: the records merge driver in the repository (mnemon_ls.gitmerge)
        from .gitmerge import plan as plan_git

        return plan_git(workspace, remove=remove)
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    launcher = _launcher(project)
    stdio = {"type": "stdio", "command": launcher[0], "args": [*launcher[1:], "mcp"]}
    base = workspace if project else home
    vscode_user = _vscode_user_dir(env)
    builders: dict[str, Callable[[], list[Change]]] = {
        "claude-code": lambda: [
            _json_servers(workspace / ".mcp.json" if project else home / ".claude.json", "mcpServers", stdio, remove,
                          base),
            _hook_file(base / ".claude" / "settings.json", launcher, remove, base),
        ],
        "codex": lambda: [_codex(base / ".codex" / "config.toml", launcher, remove, base),
                          _hook_file(base / ".codex" / "hooks.json", launcher, remove, base, CODEX_HOOK_EVENTS,
                                     ("--json",))],
        "cursor": lambda: [_json_servers(base / ".cursor" / "mcp.json", "mcpServers",
                                         {"command": stdio["command"], "args": stdio["args"]}, remove, base)],
        "vscode": lambda: [_json_servers(workspace / ".vscode" / "mcp.json", "servers", stdio, remove, workspace,
                                         jsonc=True)
                           if project else _json_servers(vscode_user / "mcp.json", "servers", stdio, remove,
                                                         vscode_user.parent.parent, jsonc=True)],
    }
    if client not in builders:
        raise InvalidInput("client", choice_rule(CLIENTS, client))
    changes = builders[client]()
    # two files of one directory deleted (Codex's config.toml and hooks.json): the last one takes the directory
    deleted = [change for change in changes if change.changed and change.after is None and change.base is not None]
    claimed: set[Path] = set()
    for change in reversed(deleted):
        assert change.base is not None
        change.empty_dirs = [d for d in _empty_dirs(change.path, change.base, [c.path for c in deleted])
                             if d not in claimed]
        claimed.update(change.empty_dirs)
    if project:
        inside = Path(os.path.realpath(workspace))
        for change in changes:
            real = Path(os.path.realpath(change.path))
            if real != inside and inside not in real.parents:
                # a symbolic link committed in the repository (``.vscode -> /elsewhere``) would make setup
                # edit a file outside it
                raise InvalidInput(str(change.path), f"leads outside the workspace (to {real}) through a symbolic "
                                                     "link; setup --project writes only inside the workspace "
                                                     "(nothing was written)")
    return changes


def apply(changes: list[Change]) -> list[Path]:
    """Write every changed file durably (temp file, fsync, rename); returns the paths written or deleted.
    A file left with nothing but what we took out is deleted, then the directories that leaves empty
    (:attr:`Change.empty_dirs`; one that is no longer empty stays). A configuration file that is a
    symbolic link (a dotfiles checkout) is written through the link, so the link stays and its target gets
    the change."""
    written = []
    for change in changes:
        if not change.changed:
            continue
        if change.after is None:
            change.path.unlink()
            for directory in change.empty_dirs:
                try:
                    directory.rmdir()
                except OSError:  # something appeared in it meanwhile: it stays
                    break
            written.append(change.path)
            continue
        target = Path(os.path.realpath(change.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        write_file_atomically(target, change.after.encode("utf-8"), mode=mode)
        written.append(change.path)
    return written


def _would(item: str) -> str:
    """``"removed X"`` -> ``"would remove X"`` (and added/updated/appended/wrote): a dry run's entry line."""
    verb, _, rest = item.partition(" ")
    present = {"removed": "remove", "added": "add", "updated": "update", "appended": "append", "wrote": "write",
               "replaced": "replace", "deleted": "delete", "created": "create"}.get(verb)
    return f"would {present} {rest}" if present else item


def notes(client: str, *, project: bool, remove: bool) -> list[str]:
    """What a person must still do for the client to use what setup wrote: for Codex's hooks, trust them
    (and, for ``--project``, the project); nothing for the other clients or a removal."""
    if client == "git":
        return [] if remove else [GIT_NOTE]
    if client != "codex" or remove:
        return []
    return [CODEX_TRUST_NOTE, *([CODEX_PROJECT_NOTE] if project else [])]


def report_text(report: dict[str, Any]) -> str:
    """What ``mnemon-ls setup`` prints for a :func:`report`: one line when nothing changes (already set up, or
    already removed), else each file's fate (``created``, ``updated``, ``deleted``, ``unchanged``; ``would ...``
    for a dry run) and, under it, exactly the entries it touched and the directories it removes; then the
    :func:`notes`."""
    client, dry_run, remove = report["client"], report["dryRun"], report["remove"]
    scope = ("this repository" if client == "git" else "this workspace" if report["project"]
             else "your user files")
    after = [f"note: {note}" for note in report["notes"]]
    files = report["files"]
    if not report["changed"]:
        state = "not set up" if remove else "already set up"
        lines = [f"mnemon-ls is {state} for {client} in {scope}; nothing {'would change' if dry_run else 'changed'}"]
        # an unchanged file's text is the same before and after: none means it does not exist
        return "\n".join(lines + [f"{f['path']}: {'unchanged' if f['after'] is not None else 'absent'}"
                                   for f in files] + after)
    lines = []
    for f in files:
        state = f["state"]
        if dry_run and f["changed"]:
            state = "would be " + state
        lines.append(f"{f['path']}: {state}")
        # an entry line is in the past tense ("removed mcpServers.mnemon-ls"); a dry run says what it would do
        lines.extend(f"  {_would(item) if dry_run else item}" for item in f["summary"])
        if f["after"] is None and f["changed"]:
            lines.append("  nothing else was in it, so the file goes")
            lines.extend(f"  {'would remove' if dry_run else 'removed'} the empty directory {d}"
                         for d in f["removedDirs"])
    return "\n".join(lines + after)


def report(client: str, changes: list[Change], *, project: bool, remove: bool, dry_run: bool,
           written: list[Path]) -> dict[str, Any]:
    """What ``mnemon-ls setup`` answers (``--json``; :func:`report_text` says it in words): ``changed``
    (whether any file changes), and per file its ``path``, ``state`` (see :attr:`Change.state`), ``summary``,
    ``after`` text (``null``: deleted) and ``removedDirs``; ``written`` lists the files written or deleted (empty
    for a dry run); ``notes`` what the person must still do (:func:`notes`)."""
    return {"client": client, "project": project, "dryRun": dry_run, "remove": remove,
            "changed": any(change.changed for change in changes),
            "notes": notes(client, project=project, remove=remove),
            "files": [{"path": str(c.path), "changed": c.changed, "state": c.state, "summary": c.summary,
                       "after": c.after, "removedDirs": [str(d) for d in c.empty_dirs] if c.changed else []}
                      for c in changes],
            "written": [str(p) for p in written]}
