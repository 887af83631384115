"""Where each record scope lives (seed 002 section 1) and the ``scopeKey`` of each scope.

=================  =====================================================================  ==================
scope              file                                                                   scopeKey
=================  =====================================================================  ==================
``session``        ``<home>/workspace-memory/sessions/<sha256 hex of scopeKey>.jsonl``     ``<sessionId>|<rootId>``
``project``        ``<workspace>/.dsh/workspace-memory/records.jsonl``                    ``<rootId>``
``shared-project`` ``<workspace>/.dsh/workspace-memory/shared.jsonl``                     the project (below)
``user``           ``<home>/workspace-memory/user.jsonl``                                 ``<userId>``
=================  =====================================================================  ==================

``<home>`` is :func:`records_home`: ``$DSH_HOME`` when set (seed 002's layout, so the DSH tools on one
machine read the same files); else ``$MNEMON_DATA_DIR`` when set (a person who moved mnemon-ls's data out
of ``~`` gets nothing written under ``~``; a host with ``--scope global --data-dir X`` passes ``X`` as it,
:func:`mnemon_ls.roots.global_env`); else ``~/.dsh``. ``rootId`` is the first 16 hex of the sha256 of the canonical
workspace path (the same hash the ``workspaces`` storage scope uses). The ``user`` file holds every user's records; each
record's ``scopeKey`` is its ``userId`` and reads only return the caller's. The shared-project file is committed and
travels with the code: its key names the project, the same in every clone (``git:<root commit>``,
:mod:`.project`); :func:`locate` gives it this clone's ``rootId`` (what keys were before, still accepted) and
the Records Source the project's. Resolving a path never writes.
"""

from __future__ import annotations

import functools
import getpass
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..errors import InvalidInput, control_rule, echo_repr
from ..roots import home_directory, workspace_hash

MEMORY_DIR = "workspace-memory"


def records_home(env: Mapping[str, str] | None = None) -> Path:
    """The directory whose ``workspace-memory/`` holds the ``user`` and ``session`` scopes: ``$DSH_HOME``
    when set (trimmed, ``~`` expanded, made absolute), else ``$MNEMON_DATA_DIR`` when set (the same form;
    then nothing of the records lands under ``~``), else ``~/.dsh``. ``env`` defaults to ``os.environ``.
    Raises :class:`InvalidInput` naming the variable that holds a NUL (``MNEMON_DATA_DIR`` also a relative
    path: :func:`~mnemon_ls.roots.global_root`). Never writes."""
    env = os.environ if env is None else env
    if (env.get("DSH_HOME") or "").strip():
        return home_directory("DSH_HOME", ".dsh", env)
    if (env.get("MNEMON_DATA_DIR") or "").strip():
        return home_directory("MNEMON_DATA_DIR", ".mnemon", env, absolute=True)
    return home_directory("DSH_HOME", ".dsh", env)


def records_home_dir(env: Mapping[str, str] | None = None) -> Path:
    """``<records_home>/workspace-memory``: the folder of ``user.jsonl`` and ``sessions/`` (errors of
    :func:`records_home`)."""
    return records_home(env) / MEMORY_DIR


def root_id(workspace: Path) -> str:
    """The 16-hex id of a canonical workspace path (prefix of :func:`mnemon_ls.roots.workspace_hash`)."""
    return workspace_hash(workspace)[:16]


def scope_key_hash(scope_key: str) -> str:
    """sha256 hex of a scopeKey's UTF-8 bytes (the session file's name; its first 16 hex go in auto ids)."""
    return hashlib.sha256(scope_key.encode("utf-8")).hexdigest()


def default_user_id(env: Mapping[str, str] | None = None) -> str:
    """The user partition: ``$DSH_USER_ID`` when set, else the login name (:func:`getpass.getuser`)."""
    env = os.environ if env is None else env
    value = (env.get("DSH_USER_ID") or "").strip()
    if value:
        return value
    uid = os.getuid() if hasattr(os, "getuid") else None
    return _login_name(tuple(os.environ.get(name) for name in _LOGIN_VARIABLES), uid)


#: The variables :func:`getpass.getuser` reads, in its order, before it asks the password database.
_LOGIN_VARIABLES = ("LOGNAME", "USER", "LNAME", "USERNAME")


@functools.lru_cache(maxsize=8)
def _login_name(_variables: tuple[str | None, ...], _uid: int | None) -> str:
    """:func:`getpass.getuser`, once per value of what it reads (its variables, the process's uid): without
    them it reads the password database, which a wake (``pending_proposals``) would otherwise do every time."""
    try:
        return getpass.getuser()
    except Exception:  # no login name (containers): one local user
        return "local"


@dataclass(frozen=True, slots=True)
class ScopeLocation:
    """One scope's file and key: ``scope``, ``path`` (the JSONL file), ``scope_key``."""

    scope: str
    path: Path
    scope_key: str


def project_dir(workspace: Path) -> Path:
    """``<workspace>/.dsh`` (the folder that gets the partial ``.gitignore``)."""
    return workspace / ".dsh"


#: The longest ``scopeKey`` (:class:`~mnemon_ls.records.model.Record`); a session's key adds ``|`` and 16 hex.
MAX_SCOPE_KEY = 1024
_ROOT_ID_SUFFIX = 17


def check_identity(field: str, value: str, longest: int) -> str:
    """``value`` (a ``sessionId`` or ``userId``, which becomes a record's scopeKey) when it has no control
    character and at most ``longest`` characters; else :class:`InvalidInput` naming ``field`` and the rule (it
    was refused only when a write built the record, as ``scopeKey: string should have at most 1024
    characters``, and a newline was stored in every record's key)."""
    rule = control_rule(value)
    if rule is None and len(value) > longest:
        rule = f"must be at most {longest} characters (got {len(value)})"
    if rule is not None:
        raise InvalidInput(field, rule)
    return value


def locate(scope: str, *, workspace: Path | None, session_id: str | None, user_id: str,
           env: Mapping[str, str] | None = None) -> ScopeLocation:
    """The file and scopeKey of ``scope``. Raises :class:`InvalidInput` (field ``recordScope``) for an
    unknown scope, a project scope without a workspace, or the session scope without a session id; naming
    ``sessionId``/``userId`` for one the scope uses that breaks :func:`check_identity`."""
    home = records_home_dir(env)
    if scope == "user":
        return ScopeLocation(scope, home / "user.jsonl", check_identity("userId", user_id, MAX_SCOPE_KEY))
    if scope in ("project", "shared-project", "session") and workspace is None:
        raise InvalidInput("recordScope", f"{scope} needs a workspace (none is open)")
    if scope == "session":
        if not session_id:
            raise InvalidInput("sessionId", "is required for the session scope (a session is one server lifetime)")
        check_identity("sessionId", session_id, MAX_SCOPE_KEY - _ROOT_ID_SUFFIX)
        key = f"{session_id}|{root_id(workspace)}"  # type: ignore[arg-type]
        return ScopeLocation(scope, home / "sessions" / f"{scope_key_hash(key)}.jsonl", key)
    if scope == "project":
        path = project_dir(workspace) / MEMORY_DIR / "records.jsonl"  # type: ignore[arg-type]
        return ScopeLocation(scope, path, root_id(workspace))  # type: ignore[arg-type]
    if scope == "shared-project":
        path = project_dir(workspace) / MEMORY_DIR / "shared.jsonl"  # type: ignore[arg-type]
        return ScopeLocation(scope, path, root_id(workspace))  # type: ignore[arg-type]
    raise InvalidInput("recordScope", "must be one of session, project, shared-project, user (got "
                                      f"{echo_repr(scope)})")


def reachable_scopes(workspace: Path | None, session_id: str | None) -> list[str]:
    """The scopes a records source of ``workspace`` and ``session_id`` can reach: ``session`` needs both,
    ``project``/``shared-project`` a workspace; ``user`` always."""
    out = []
    if workspace is not None and session_id:
        out.append("session")
    if workspace is not None:
        out += ["project", "shared-project"]
    return out + ["user"]


def any_file(workspace: Path | None, session_id: str | None = None, user_id: str | None = None,
             env: Mapping[str, str] | None = None) -> bool:
    """Whether a records file of a :func:`reachable_scopes` scope exists (a look, nothing read: the wake asks
    it before it opens the records source)."""
    user = user_id or default_user_id(env)
    source = os.environ if env is None else env
    homes = tuple(source.get(name) for name in _HOME_VARIABLES)
    uid = os.getuid() if hasattr(os, "getuid") else None
    # a relative home is made absolute from the working directory: then that is part of what the paths depend on
    cwd = os.getcwd() if any(value and not os.path.isabs(os.path.expanduser(value.strip()))
                             for value in homes) else None
    return any(map(os.path.exists, _scope_files(workspace, session_id, user, homes, os.environ.get("HOME"), uid,
                                                cwd)))


#: The variables :func:`records_home` reads from its ``env``.
_HOME_VARIABLES = ("DSH_HOME", "MNEMON_DATA_DIR")


@functools.lru_cache(maxsize=32)
def _scope_files(workspace: Path | None, session_id: str | None, user: str, homes: tuple[str | None, ...],
                 _home: str | None, _uid: int | None, _cwd: str | None) -> tuple[str, ...]:
    """The files of :func:`reachable_scopes`, once per value of what :func:`locate` reads (``homes``: the
    :data:`_HOME_VARIABLES`; ``~`` expands from ``$HOME``, else the uid's password entry; ``_cwd``: the working
    directory when a home is relative, else ``None``): the wake asks :func:`any_file` every time."""
    env = {name: value for name, value in zip(_HOME_VARIABLES, homes) if value is not None}
    return tuple(str(locate(scope, workspace=workspace, session_id=session_id, user_id=user, env=env).path)
                 for scope in reachable_scopes(workspace, session_id))

