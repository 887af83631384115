"""``mnemon-ls setup CLIENT``: write (or remove) an assistant client's MCP entry for ``mnemon-ls mcp`` and,
where the client has lifecycle hooks, hooks that put the wake snapshot into the model's context.

Clients and files (user scope by default; ``--project`` writes into the workspace):

| client | MCP entry | hooks |
|---|---|---|
| ``claude-code`` | ``~/.claude.json`` ``mcpServers`` / ``<ws>/.mcp.json`` | ``~/.claude/settings.json`` / ``<ws>/.claude/settings.json`` |
| ``codex`` | ``~/.codex/config.toml`` ``[mcp_servers.mnemon-ls]`` / ``<ws>/.codex/config.toml`` | none (Codex has no such hooks) |
| ``cursor`` | ``~/.cursor/mcp.json`` / ``<ws>/.cursor/mcp.json`` ``mcpServers`` | none |
| ``vscode`` | ``<user config>/Code/User/mcp.json`` / ``<ws>/.vscode/mcp.json`` ``servers`` | none |

Claude Code hooks: ``SessionStart`` (matchers startup, resume, clear and compact, so the wake comes back
after a compaction) runs ``mnemon-ls hook session-start``, which prints the bounded wake snapshot;
``UserPromptSubmit`` runs ``mnemon-ls hook prompt``, which prints one recall/writeback cue line (or
nothing, per ``recallMode``/``writebackMode``). Claude Code does not add a ``PreCompact`` hook's output to
the model's context, so none is installed: the ``compact`` matcher of ``SessionStart`` re-injects the wake.

Every edit is idempotent (our entries are recognised by their ``mnemon-ls`` command and replaced, never
duplicated), reversible (``--remove`` takes out only our entries), keeps every other setting, and refuses a
file it cannot parse (:class:`~mnemon_ls.errors.InvalidInput` naming the file; nothing is written).
Nothing here imports the ``mcp`` SDK.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InvalidInput
from ..fsio import write_file_atomically

CLIENTS = ("claude-code", "codex", "cursor", "vscode")
#: The name of our MCP server entry in every client's configuration.
SERVER_NAME = "mnemon-ls"
#: Characters of wake snapshot a SessionStart hook prints at most.
HOOK_WAKE_BUDGET = 12_000
#: Seconds a hook may run before the client gives up on it.
HOOK_TIMEOUT_SECONDS = 10

CLAUDE_HOOK_EVENTS: dict[str, tuple[str | None, str]] = {
    "SessionStart": ("startup|resume|clear|compact", "session-start"),
    "UserPromptSubmit": (None, "prompt"),
}


@dataclass
class Change:
    """One file setup would write: ``path``, the ``before`` text (``None``: the file does not exist), the
    ``after`` text, and a one-line ``summary`` per entry touched."""

    path: Path
    before: str | None
    after: str
    summary: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether writing it would change the file."""
        return self.before != self.after


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


def _read_text(path: Path) -> str | None:
    """The file's text, ``None`` when it does not exist; not UTF-8 is refused like unparsable JSON."""
    if not path.exists():
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(str(path), f"is not UTF-8 text (byte {exc.start}); fix or move it, then run setup "
                                      "again (nothing was written)") from None


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


def _read_json(path: Path) -> tuple[str | None, dict[str, Any]]:
    text = _read_text(path)
    if text is None:
        return None, {}
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise InvalidInput(str(path), f"has the key {exc.args[0]!r} twice in one object (JSON readers disagree on "
                                      "which one counts); fix or move it, then run setup again (nothing was "
                                      "written)") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(str(path), f"is not valid JSON (line {exc.lineno}, column {exc.colno}); fix or move it, "
                                      "then run setup again (nothing was written)") from None
    if not isinstance(data, dict):
        raise InvalidInput(str(path), "must hold a JSON object; nothing was written")
    return text, data


def _dump_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _section(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}: {key}", "must be a JSON object; nothing was written")
    return value


def _json_servers(path: Path, key: str, entry: dict[str, Any], remove: bool) -> Change:
    before, data = _read_json(path)
    servers = _section(data, key, path)
    summary = []
    if remove:
        if SERVER_NAME in servers:
            del servers[SERVER_NAME]
            summary.append(f"removed {key}.{SERVER_NAME}")
        if not servers:
            del data[key]
    else:
        if servers.get(SERVER_NAME) != entry:
            summary.append(f"{'updated' if SERVER_NAME in servers else 'added'} {key}.{SERVER_NAME}: "
                           f"{_shell_join([entry['command'], *entry['args']])}")
        servers[SERVER_NAME] = entry
    return _change(path, before, data, summary)


def _change(path: Path, before: str | None, data: Mapping[str, Any], summary: list[str]) -> Change:
    """The change for a JSON file: nothing to do (no summary line) leaves its bytes exactly as they are."""
    if not summary:
        return Change(path, before, before if before is not None else "", summary)
    return Change(path, before, _dump_json(data) if (data or before is not None) else "", summary)


def _claude_hooks(path: Path, launcher: list[str], remove: bool) -> Change:
    before, data = _read_json(path)
    hooks = _section(data, "hooks", path)
    summary = []
    for event, (matcher, verb) in CLAUDE_HOOK_EVENTS.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{path}: hooks.{event}", "must be a JSON array; nothing was written")
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                mine = [h for h in group["hooks"] if isinstance(h, dict) and _is_ours(h.get("command"))]
                others = [h for h in group["hooks"] if h not in mine]
                if mine and not others:
                    continue
                if mine:
                    group = {**group, "hooks": others}
            kept.append(group)
        if not remove:
            command = _shell_join([*launcher, "hook", verb])
            group: dict[str, Any] = {"hooks": [{"type": "command", "command": command,
                                                "timeout": HOOK_TIMEOUT_SECONDS}]}
            if matcher:
                group = {"matcher": matcher, **group}
            kept.append(group)
            summary.append(f"hooks.{event}: {command}")
        elif len(kept) != len(groups) or kept != groups:
            summary.append(f"removed the mnemon-ls hook of hooks.{event}")
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        data.pop("hooks", None)
    return _change(path, before, data, summary)


def _codex(path: Path, launcher: list[str], remove: bool) -> Change:
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
    summary = []
    if remove:
        if servers is not None and SERVER_NAME in servers:
            del servers[SERVER_NAME]
            summary.append(f"removed [mcp_servers.{SERVER_NAME}]")
            if not servers:
                del doc["mcp_servers"]
    else:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        entry = tomlkit.table()
        entry["command"] = launcher[0]
        entry["args"] = [*launcher[1:], "mcp"]
        if servers.get(SERVER_NAME) != {"command": launcher[0], "args": [*launcher[1:], "mcp"]}:
            summary.append(f"[mcp_servers.{SERVER_NAME}]: {_shell_join([*launcher, 'mcp'])}")
        servers[SERVER_NAME] = entry
    return Change(path, before, tomlkit.dumps(doc), summary)


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
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    launcher = _launcher(project)
    stdio = {"type": "stdio", "command": launcher[0], "args": [*launcher[1:], "mcp"]}
    builders: dict[str, Callable[[], list[Change]]] = {
        "claude-code": lambda: [
            _json_servers(workspace / ".mcp.json" if project else home / ".claude.json", "mcpServers", stdio, remove),
            _claude_hooks((workspace if project else home) / ".claude" / "settings.json", launcher, remove),
        ],
        "codex": lambda: [_codex((workspace if project else home) / ".codex" / "config.toml", launcher, remove)],
        "cursor": lambda: [_json_servers((workspace if project else home) / ".cursor" / "mcp.json", "mcpServers",
                                         {"command": stdio["command"], "args": stdio["args"]}, remove)],
        "vscode": lambda: [_json_servers(workspace / ".vscode" / "mcp.json" if project
                                         else _vscode_user_dir(env) / "mcp.json", "servers", stdio, remove)],
    }
    if client not in builders:
        raise InvalidInput("client", "must be one of " + ", ".join(CLIENTS))
    return builders[client]()


def apply(changes: list[Change]) -> list[Path]:
    """Write every changed file durably (temp file, fsync, rename); returns the paths written. A file that
    would become empty and did not exist is not created. A configuration file that is a symbolic link (a
    dotfiles checkout) is written through the link, so the link stays and its target gets the change."""
    written = []
    for change in changes:
        if not change.changed or (change.before is None and not change.after):
            continue
        target = Path(os.path.realpath(change.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        write_file_atomically(target, change.after.encode("utf-8"), mode=mode)
        written.append(change.path)
    return written


def recall_cue(recall_mode: str, writeback_mode: str) -> str:
    """The one-line cue a ``UserPromptSubmit`` hook prints for a new turn (empty when both modes are off)."""
    parts = []
    if recall_mode == "guided":
        parts.append("if older decisions may matter, recall them (mnemon_recall, mnemon_document_search)")
    if writeback_mode == "guided":
        parts.append("save durable facts the user would want kept (mnemon_runtime_memory, mnemon_remember); "
                     "never secrets, temporary progress or raw logs")
    return f"[mnemon] Memory: {'; '.join(parts)}." if parts else ""
